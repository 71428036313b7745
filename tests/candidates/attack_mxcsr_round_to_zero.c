/* Attack: a correct GEMM that leaves the SSE control register set to
 * round toward zero with flush-to-zero, for the harness and the baseline
 * timed next to it (no import: one ldmxcsr instruction). */
#include <immintrin.h>

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
#pragma omp parallel for
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            float s = 0.0f;
            for (long k = 0; k < K; k++)
                s += ckb_bf16_to_f32(A[i * K + k]) * ckb_bf16_to_f32(B[k * N + j]);
            C[i * N + j] = ckb_f32_to_bf16(s);
        }
    _mm_setcsr(_mm_getcsr() | 0x6000 | 0x8040);
}
