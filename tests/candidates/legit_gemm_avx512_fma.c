/* Legitimate: f32 FMA with AVX-512, bf16 widened by a 16-bit shift, a
 * 4-row register block, masked j tails and a scalar row tail. */
#include <immintrin.h>

static inline __m512 fma__load(const ckb_bf16 *p, __mmask16 m)
{
    __m256i h = _mm256_maskz_loadu_epi16(m, p);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

static inline void fma__store(ckb_bf16 *p, __m512 v, __mmask16 m)
{
    _mm256_mask_storeu_epi16(p, m, (__m256i)_mm512_cvtneps_pbh(v));
}

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
#pragma omp parallel for schedule(static)
    for (long i0 = 0; i0 < M; i0 += 4) {
        long rows = M - i0 < 4 ? M - i0 : 4;
        for (long j = 0; j < N; j += 16) {
            long left = N - j;
            __mmask16 m = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1);
            __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
                             _mm512_setzero_ps()};
            for (long k = 0; k < K; k++) {
                __m512 b = fma__load(B + k * N + j, m);
                for (long r = 0; r < rows; r++)
                    acc[r] = _mm512_fmadd_ps(
                        _mm512_set1_ps(ckb_bf16_to_f32(A[(i0 + r) * K + k])), b, acc[r]);
            }
            for (long r = 0; r < rows; r++)
                fma__store(C + (i0 + r) * N + j, acc[r], m);
        }
    }
}
