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
