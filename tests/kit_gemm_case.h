/*
 * kit_gemm_case.h — one unit of expert-kit/ckb_kit_gemm.h's driver, built
 * into a function KIT_GEMM_FN by a file that sets CKB_KIT_GEMM_UNIT first (the
 * unit is a compile-time choice: one translation unit per unit).
 */
#include <stdint.h>
#include <stdlib.h>

#include "../expert-kit/ckb_kit_gemm.h"

#if defined(__AVX2__) && defined(__FMA__)
struct kit_case_epi {
    float *c;
    int64_t ldc;
};

/* The tile epilogue: stores the f32 sums of the tile's real rows/columns. */
static void kit_case_store(void *ctx, const float *tile, int64_t i, int64_t j, int mr, int nr)
{
    const struct kit_case_epi *e = ctx;
    for (int r = 0; r < mr; r++)
        for (int x = 0; x < nr; x++)
            e->c[(i + r) * e->ldc + j + x] = tile[r * CKB_KIT_GEMM8_NR + x];
}

/* c[m][n] = a[m][k] @ (bt ? b[n][k]^T : b[k][n]) through the kit's driver,
 * with its blocks (kc < k: partial sums in t) and, with use_epi, the tile
 * epilogue; else the sums left in t (t_whole). Returns the unit it ran, -1
 * when a buffer could not be had. */
int KIT_GEMM_FN(const ckb_bf16 *a, const ckb_bf16 *b, int bt, int64_t m, int64_t n, int64_t k,
                int64_t mc, int64_t nc, int64_t kc, int use_epi, int prepack, float *c)
{
    struct kit_case_epi e = {c, n};
    ckb_kit_gemm8_job g = {.a = a, .lda = k, .b = b, .ldb = bt ? k : n, .bt = bt, .k = k, .n = n,
                           .mc = mc, .nc = nc, .kc = kc, .epi = use_epi ? kit_case_store : NULL,
                           .ctx = &e};
    const int64_t npad = (n + CKB_KIT_GEMM8_NR - 1) / CKB_KIT_GEMM8_NR * CKB_KIT_GEMM8_NR;
    g.ldt = npad;
    g.t_whole = 1;
    float *t = ckb_kit_alloc64((size_t)(m * npad) * sizeof(float));
    float *ap = ckb_kit_alloc64(ckb_kit_gemm8_ap_floats(&g) * sizeof(float));
    float *bp = ckb_kit_alloc64(ckb_kit_gemm8_bp_floats(&g) * sizeof(float));
    float *pre = prepack ? ckb_kit_alloc64(ckb_kit_gemm8_prepack_floats(&g) * sizeof(float)) : NULL;
    int rc = -1;
    if (t && ap && bp && (!prepack || pre)) {
        g.t = t;
        if (pre) {
            ckb_kit_gemm8_prepack(&g, pre, 0, npad / CKB_KIT_GEMM8_NR);
            g.bpre = pre;
        }
        ckb_kit_gemm8_run(&g, 0, m, 0, n, ap, bp);
        if (!use_epi)
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < n; j++)
                    c[i * n + j] = t[i * npad + j];
        rc = CKB_KIT_GEMM_UNIT;
    }
    free(t);
    free(ap);
    free(bp);
    free(pre);
    return rc;
}
#else
int KIT_GEMM_FN(const ckb_bf16 *a, const ckb_bf16 *b, int bt, int64_t m, int64_t n, int64_t k,
                int64_t mc, int64_t nc, int64_t kc, int use_epi, int prepack, float *c)
{
    (void)a, (void)b, (void)bt, (void)m, (void)n, (void)k, (void)mc, (void)nc, (void)kc;
    (void)use_epi, (void)prepack, (void)c;
    return -2; /* no AVX2 + FMA: the kit's driver does not exist here */
}
#endif
