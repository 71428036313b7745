/* Legitimate 37k_Matmul_Swish_Scaling: sigmoid(z) = (1 + tanh(z/2)) / 2
 * with tanhf in an `omp simd` loop (libmvec may vectorise it). */
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
        float y[OUT];
#pragma omp simd
        for (long o = 0; o < OUT; o++) {
            float z = acc[o] + ckb_bf16_to_f32(bias[o]);
            y[o] = z * 0.5f * (1.0f + tanhf(0.5f * z)) * SCALING_FACTOR;
        }
        for (long o = 0; o < OUT; o++)
            out[b * OUT + o] = ckb_f32_to_bf16(y[o]);
    }
}
