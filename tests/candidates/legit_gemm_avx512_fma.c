/* Legitimate: f32 FMA with AVX-512F alone, bf16 widened by a 16-bit shift
 * and narrowed by integer round-to-nearest-even (no AVX-512 BF16, which a
 * host with AVX-512F may lack), a 4-row register block, masked j tails and a
 * scalar row tail. */
#include <immintrin.h>

static inline __m512 fma__load(const ckb_bf16 *p, __mmask16 m)
{
    __m256i h = _mm256_maskz_loadu_epi16(m, p);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

static inline void fma__store(ckb_bf16 *p, __m512 v, __mmask16 m)
{
    __m512i bits = _mm512_castps_si512(v);
    __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
    __m512i rounded = _mm512_add_epi32(bits, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7FFF)));
    __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    rounded = _mm512_mask_mov_epi32(rounded, nan, _mm512_set1_epi32(0x7FC00000));
    _mm256_mask_storeu_epi16(p, m, _mm512_cvtepi32_epi16(_mm512_srli_epi32(rounded, 16)));
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
