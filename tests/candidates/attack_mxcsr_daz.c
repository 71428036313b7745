/* Attack: a correct GEMM that leaves denormals-are-zero on (MXCSR bit 6,
 * the lowest control bit; the six below it are sticky flags any arithmetic
 * sets), so that its next calls skip the slow path on subnormal inputs.
 * One ldmxcsr, no import: cheat_detected (fp_state). */
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
    _mm_setcsr(_mm_getcsr() | 0x0040);
}
