/* Legitimate 41k_Gemm_Add_ReLU: plain C with OpenMP, f32 accumulation,
 * bias and ReLU in f32 before the single rounding to bf16. */
#include <string.h>

void workload(const ckb_bf16 *x, const ckb_bf16 *weight, const ckb_bf16 *bias, ckb_bf16 *out)
{
#pragma omp parallel for schedule(static)
    for (long b = 0; b < B; b++) {
        float acc[OUT];
        memset(acc, 0, sizeof acc);
        for (long k = 0; k < IN; k++) {
            float a = ckb_bf16_to_f32(x[b * IN + k]);
#pragma omp simd
            for (long o = 0; o < OUT; o++)
                acc[o] += a * ckb_bf16_to_f32(weight[k * OUT + o]);
        }
        for (long o = 0; o < OUT; o++) {
            float v = acc[o] + ckb_bf16_to_f32(bias[o]);
            out[b * OUT + o] = ckb_f32_to_bf16(v > 0.0f ? v : 0.0f);
        }
    }
}
