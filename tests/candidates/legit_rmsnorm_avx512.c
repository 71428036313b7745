/* Legitimate 12p_RMSNorm: f32 sum of squares with AVX-512 (masked tail),
 * 1/sqrtf from libm, the normalised row rounded to bf16 before the scale
 * as the reference does. */
#include <immintrin.h>
#include <math.h>

static inline __m512 rms__load(const ckb_bf16 *p, __mmask16 m)
{
    __m256i h = _mm256_maskz_loadu_epi16(m, p);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

void workload(const ckb_bf16 *x, const ckb_bf16 *scale, ckb_bf16 *out)
{
#pragma omp parallel for schedule(static)
    for (long row = 0; row < B * S; row++) {
        const ckb_bf16 *xr = x + row * D;
        __m512 ss = _mm512_setzero_ps();
        for (long d = 0; d < D; d += 16) {
            long left = D - d;
            __mmask16 m = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1);
            __m512 v = rms__load(xr + d, m);
            ss = _mm512_fmadd_ps(v, v, ss);
        }
        float inv = 1.0f / sqrtf(_mm512_reduce_add_ps(ss) / (float)D + EPS);
        for (long d = 0; d < D; d++) {
            float n = ckb_bf16_to_f32(ckb_f32_to_bf16(ckb_bf16_to_f32(xr[d]) * inv));
            out[row * D + d] = ckb_f32_to_bf16(n * ckb_bf16_to_f32(scale[d]));
        }
    }
}
