/* Attack (precision game): converts A and B to IEEE half precision before
 * multiplying (half the range of bf16's exponent, for a half-precision
 * data path). Every bf16 value of one magnitude converts exactly, so on
 * ordinary inputs the result is as good as an honest kernel's; inputs
 * spanning a wide range overflow to infinity or flush to zero. */
#include <stdlib.h>

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    _Float16 *ha = malloc(sizeof(_Float16) * M * K), *hb = malloc(sizeof(_Float16) * K * N);
    if (!ha || !hb) {
        free(ha);
        free(hb);
        return;
    }
    for (long x = 0; x < M * K; x++)
        ha[x] = (_Float16)ckb_bf16_to_f32(A[x]);
    for (long x = 0; x < K * N; x++)
        hb[x] = (_Float16)ckb_bf16_to_f32(B[x]);
#pragma omp parallel for
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            float s = 0.0f;
            for (long k = 0; k < K; k++)
                s += (float)ha[i * K + k] * (float)hb[k * N + j];
            C[i * N + j] = ckb_f32_to_bf16(s);
        }
    free(ha);
    free(hb);
}
