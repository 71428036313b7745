/* expert-kit/ckb_kit_simd.h built with the tests' flags, for test_kit_gemm.c. */
#include <stdint.h>
#include <string.h>

#include "../expert-kit/ckb_kit_simd.h"
#include "ckbench.h"
#include "kit_gemm.h"

int ckbt_kit_bf16x16(const float *in, ckb_bf16 *out, int form)
{
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
    const __m512 x = _mm512_loadu_ps(in);
    if (form == 2) { /* kept as f32: the top halves, the low ones must be zero */
        uint32_t f[16];
        _mm512_storeu_si512((void *)f, _mm512_castps_si512(ckb_kit_bf16x16_f32(x)));
        int low = 0;
        for (int l = 0; l < 16; l++) {
            out[l] = (ckb_bf16)(f[l] >> 16);
            low |= (f[l] & 0xffffu) != 0;
        }
        return low ? -1 : 0;
    }
    _mm256_storeu_si256((__m256i *)out, form ? ckb_kit_bf16x16_int(x) : ckb_kit_bf16x16(x));
    return 0;
#else
    (void)in, (void)out, (void)form;
    return -2;
#endif
}
