/* expert-kit/ckb_kit_simd.h's math and bf16 forms applied to an array, one
 * vector at a time, built with the tests' flags, for test_kit_gemm.c. */
#include <stdint.h>
#include <string.h>

#include "../expert-kit/ckb_kit_simd.h"
#include "ckbench.h"
#include "kit_gemm.h"

int ckbt_kit_simd(ckbt_kit_fn fn, const float *in, float *out, int64_t n)
{
    const int lanes = fn & 1 ? 16 : 8;
#if defined(__AVX2__) && defined(__FMA__)
    if (lanes == 8) {
        for (int64_t i = 0; i + 8 <= n; i += 8) {
            const __m256 x = _mm256_loadu_ps(in + i);
            __m256 y;
            switch (fn) {
            case CKBT_KIT_EXP8:
                y = ckb_kit_exp8(x);
                break;
            case CKBT_KIT_EXP2_8:
                y = ckb_kit_exp2_8(x);
                break;
            case CKBT_KIT_TANH8:
                y = ckb_kit_tanh8(x);
                break;
            case CKBT_KIT_GELU8:
                y = ckb_kit_gelu8(x);
                break;
            case CKBT_KIT_BF16X8_TOP:
                y = _mm256_castsi256_ps(ckb_kit_bf16x8_top(x));
                break;
            default: /* the bf16 rounding, widened back (exact) */
                y = ckb_kit_f32x8(ckb_kit_bf16x8(x));
            }
            _mm256_storeu_ps(out + i, y);
        }
        return 0;
    }
#endif
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
    if (lanes == 16) {
        for (int64_t i = 0; i + 16 <= n; i += 16) {
            const __m512 x = _mm512_loadu_ps(in + i);
            __m512 y;
            switch (fn) {
            case CKBT_KIT_EXP16:
                y = ckb_kit_exp16(x);
                break;
            case CKBT_KIT_EXP2_16:
                y = ckb_kit_exp2_16(x);
                break;
            case CKBT_KIT_TANH16:
                y = ckb_kit_tanh16(x);
                break;
            default:
                y = ckb_kit_gelu16(x);
            }
            _mm512_storeu_ps(out + i, y);
        }
        return 0;
    }
#endif
    (void)in, (void)out, (void)n;
    return -2;
}

int ckbt_kit_bf16_io(const ckb_bf16 *src, int64_t n, float *wide, ckb_bf16 *back)
{
#if defined(__AVX2__) && defined(__FMA__)
    /* load8_n / store8_n a vector at a time, the last one ragged; widen8
     * over the whole row into a padded one */
    for (int64_t i = 0; i < n; i += 8)
        ckb_kit_store8_n(back + i, ckb_kit_load8_n(src + i, n - i), n - i);
    ckb_kit_widen8(src, n, (n + 7) / 8 * 8, wide);
    return 0;
#else
    (void)src, (void)n, (void)wide, (void)back;
    return -2;
#endif
}
