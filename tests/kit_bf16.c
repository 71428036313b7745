/* expert-kit/ckb_kit_bf16.h built with the tests' flags, for test_kit_gemm.c. */
#include <stdint.h>
#include <string.h>

#include "../expert-kit/ckb_kit_bf16.h"
#include "ckbench.h"
#include "kit_gemm.h"

int ckbt_kit_bf16x16(const float *in, ckb_bf16 *out, int integer_form)
{
#if defined(__AVX512F__) && defined(__AVX512BW__)
    const __m512 x = _mm512_loadu_ps(in);
    _mm256_storeu_si256((__m256i *)out, integer_form ? ckb_kit_bf16x16_int(x) : ckb_kit_bf16x16(x));
    return 0;
#else
    (void)in, (void)out, (void)integer_form;
    return -2;
#endif
}
