/* Legitimate 8p_GEMM: a 1 GiB, 2 MiB-aligned scratch allocation inside the
 * call (a packed copy of B goes at its start), freed before returning. */
#include <stdlib.h>

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    float *big = aligned_alloc(1 << 21, (size_t)1 << 30);
    if (!big)
        return;
    for (long k = 0; k < K; k++)
        for (long j = 0; j < N; j++)
            big[j * K + k] = ckb_bf16_to_f32(B[k * N + j]);
#pragma omp parallel for
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            float s = 0.0f;
            for (long k = 0; k < K; k++)
                s += ckb_bf16_to_f32(A[i * K + k]) * big[j * K + k];
            C[i * N + j] = ckb_f32_to_bf16(s);
        }
    free(big);
}
