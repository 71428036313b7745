/* The kit's GEMM driver on the f32 FMA unit. */
#define CKB_KIT_GEMM_UNIT 1
#define KIT_GEMM_FN ckbt_kit_gemm_fma
#include "kit_gemm.h"
#include "kit_gemm_case.h"

/* The kit's thread grid, for the test: thread t's share of C [m][n]. */
void ckbt_kit_grid_share(int nthr, int tn_want, int t, int64_t m, int64_t rstep, int64_t n,
                         int64_t unit, int *nteam, int64_t *m0, int64_t *m1, int64_t *n0,
                         int64_t *n1)
{
    ckb_kit_gemm_grid g = ckb_kit_gemm_grid_make(nthr, tn_want, (n + unit - 1) / unit);
    *nteam = g.tm * g.tn;
    ckb_kit_gemm_grid_share(g, t, m, rstep, n, unit, m0, m1, n0, n1);
}

/* The kit's portable GEMM (ckb_kit_gemm_rows), its row epilogue copying each
 * finished row into c[m][n]. */
struct kit_rows {
    float *c;
    int64_t n;
};

static void kit_rows_copy(void *ctx, int64_t i, float *acc)
{
    const struct kit_rows *e = ctx;
    for (int64_t j = 0; j < e->n; j++)
        e->c[i * e->n + j] = acc[j];
}

void ckbt_kit_gemm_rows(const ckb_bf16 *a, const ckb_bf16 *b, int64_t m, int64_t n, int64_t k,
                        const ckb_bf16 *init, float *c)
{
    struct kit_rows e = {c, n};
    ckb_kit_gemm_rows(a, m, k, b, n, init, kit_rows_copy, &e);
}
