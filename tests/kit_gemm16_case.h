/*
 * kit_gemm16_case.h — one unit of expert-kit/ckb_kit_gemm.h's resident
 * driver (ckb_kit_gemm16_*), built into a function KIT_GEMM16_FN by a file that
 * sets CKB_KIT_GEMM16_UNIT (and MR, NR) first: the unit and the tile are
 * compile-time choices, one translation unit each. Its epilogues store the
 * f32 sums, so the test sees the driver's product unrounded.
 */
#include <stdint.h>
#include <stdlib.h>

#include "../expert-kit/ckb_kit_gemm.h"
#include "kit_gemm.h"

#if defined(__AVX512BF16__) && defined(__AVX512BW__) && defined(__AVX512VL__)
struct kit16_case {
    float *c;
    int64_t ldc;
};

static inline __attribute__((always_inline)) void
kit16_case_epi(void *ctx, __m512 acc[][CKB_KIT_GEMM16_NV], int64_t i, int64_t j, int mr, int nr)
{
    const struct kit16_case *e = ctx;
    for (int r = 0; r < mr; r++)
        for (int v = 0; v < CKB_KIT_GEMM16_NV; v++)
            _mm512_mask_storeu_ps(e->c + (i + r) * e->ldc + j + 16 * v, ckb_kit_mask16(nr - 16 * v),
                                  acc[r][v]);
}

static inline __attribute__((always_inline)) void kit16_case_epi_amx(void *ctx, const float *tile,
                                                                     int64_t i, int64_t j)
{
    const struct kit16_case *e = ctx;
    for (int r = 0; r < 32; r++)
        for (int x = 0; x < 32; x++)
            e->c[(i + r) * e->ldc + j + x] = tile[r * 32 + x];
}

/* c[m][n] = a[m][k] @ b[k][n] through ckb_kit_gemm16_run with blocks mc, nc
 * and tn threads along n. Returns the unit that ran (the kit's fallback
 * resolved), -2 where the target has no AVX-512 BF16. */
int KIT_GEMM16_FN(const ckb_bf16 *a, const ckb_bf16 *b, int64_t m, int64_t n, int64_t k, int64_t mc,
                  int64_t nc, int tn, float *c)
{
    struct kit16_case e = {c, n};
    const ckb_kit_gemm16_job g = {.a = a, .lda = k, .b = b, .ldb = n, .m = m, .n = n, .k = k,
                                  .mc = mc, .nc = nc, .tn = tn, .ctx = &e};
    ckb_kit_gemm16_run(&g);
    return CKB_KIT_GEMM16_UNIT;
}
#else
int KIT_GEMM16_FN(const ckb_bf16 *a, const ckb_bf16 *b, int64_t m, int64_t n, int64_t k, int64_t mc,
                  int64_t nc, int tn, float *c)
{
    (void)a, (void)b, (void)m, (void)n, (void)k, (void)mc, (void)nc, (void)tn, (void)c;
    return -2; /* no AVX-512 BF16: the resident driver does not exist here */
}
#endif
