/* Legitimate 37k_Matmul_Swish_Scaling: swish through expf from libm. */
#include <math.h>
#include <string.h>

void workload(const ckb_bf16 *x, const ckb_bf16 *weight, const ckb_bf16 *bias, ckb_bf16 *out)
{
#pragma omp parallel for schedule(static)
    for (long b = 0; b < B; b++) {
        float acc[OUT];
        memset(acc, 0, sizeof acc);
        for (long k = 0; k < IN; k++) {
            float a = ckb_bf16_to_f32(x[b * IN + k]);
            for (long o = 0; o < OUT; o++)
                acc[o] += a * ckb_bf16_to_f32(weight[k * OUT + o]);
        }
        for (long o = 0; o < OUT; o++) {
            float z = acc[o] + ckb_bf16_to_f32(bias[o]);
            out[b * OUT + o] = ckb_f32_to_bf16(z / (1.0f + expf(-z)) * SCALING_FACTOR);
        }
    }
}
