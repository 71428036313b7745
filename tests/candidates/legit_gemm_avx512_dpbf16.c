/* Legitimate: AVX512-BF16 dot products. B is repacked per pair of k rows
 * into the interleaved layout _mm512_dpbf16_ps expects; the j tail (none at
 * the small size, but kept honest) uses masked loads and stores. */
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    const long kp = (K + 1) / 2;
    /* packed[p][j] = {B[2p][j], B[2p+1][j]} as one 32-bit pair. */
    uint32_t *packed = aligned_alloc(64, (size_t)kp * N * sizeof(uint32_t) + 64);
    if (!packed)
        return;
    for (long p = 0; p < kp; p++)
        for (long j = 0; j < N; j++) {
            uint32_t lo = B[2 * p * N + j];
            uint32_t hi = 2 * p + 1 < K ? B[(2 * p + 1) * N + j] : 0;
            packed[p * N + j] = lo | hi << 16;
        }
#pragma omp parallel for schedule(static)
    for (long i = 0; i < M; i++) {
        for (long j = 0; j < N; j += 16) {
            long left = N - j;
            __mmask16 m = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1);
            __m512 acc = _mm512_setzero_ps();
            for (long p = 0; p < kp; p++) {
                uint32_t lo = A[i * K + 2 * p];
                uint32_t hi = 2 * p + 1 < K ? A[i * K + 2 * p + 1] : 0;
                __m512i a = _mm512_set1_epi32((int)(lo | hi << 16));
                __m512i b = _mm512_maskz_loadu_epi32(m, packed + p * N + j);
                acc = _mm512_dpbf16_ps(acc, (__m512bh)a, (__m512bh)b);
            }
            __m256i out = (__m256i)_mm512_cvtneps_pbh(acc);
            _mm256_mask_storeu_epi16(C + i * N + j, m, out);
        }
    }
    free(packed);
}
