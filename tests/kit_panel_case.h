/*
 * kit_panel_case.h — one unit of expert-kit/ckb_kit_gemm.h's panel GEMM
 * (ckb_kit_panel_*, 29k's and 32k's), built into a function KIT_PANEL_FN by
 * a file that sets the unit first (CKB_KIT_PANEL_UNIT, and the emulated
 * tiles for AMX). The row blocks go through ckb_kit_panel_rows on a team of
 * threads, as the experts run them, and each block's f32 sums are copied
 * out of the thread's scratch, so the test sees what every block computed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../expert-kit/ckb_kit_gemm.h"
#include "kit_gemm.h"

#if defined(__AVX512BF16__) && defined(__AVX512BW__) && defined(__AVX512VL__)
struct kit_panel_case {
    const ckb_bf16 *a;
    const uint32_t *bp;
    int64_t np, k, kc, mb;
    float *c;
};

static void kit_panel_case_rows(void *ctx, int64_t i0, void *scratch)
{
    const struct kit_panel_case *e = ctx;
    const int64_t n = 16 * e->np;
    memset(scratch, 0xff, (size_t)(e->mb * n) * 4); /* NaN: a sum left unwritten shows */
    ckb_kit_panel_gemm_f32(e->a + i0 * e->k, e->k, e->bp, e->k, e->kc, scratch, n, e->mb, e->np);
    memcpy(e->c + i0 * n, scratch, (size_t)(e->mb * n) * 4);
}
#endif

int KIT_PANEL_FN(const ckb_bf16 *a, const ckb_bf16 *b, int bt, int64_t m, int64_t np, int64_t k,
                 int64_t kc, int64_t mb, float *c)
{
#if defined(__AVX512BF16__) && defined(__AVX512BW__) && defined(__AVX512VL__)
    uint32_t *bp = ckb_kit_alloc64((size_t)(np * k / 2 * 16) * 4);
    if (!bp)
        return -1;
    /* in two runs of panels, as the experts pack them a share per thread */
    const int64_t split = np / 2;
    if (bt) {
        ckb_kit_panel_pack_nk(b, k, 0, split, bp);
        ckb_kit_panel_pack_nk(b, k, split, np, bp);
    } else {
        ckb_kit_panel_pack_kn(b, 16 * np, k, 0, split, bp);
        ckb_kit_panel_pack_kn(b, 16 * np, k, split, np, bp);
    }
    struct kit_panel_case e = {a, bp, np, k, kc, mb, c};
#pragma omp parallel num_threads(3)
    ckb_kit_panel_rows(m, mb, (size_t)(mb * 16 * np) * 4, kit_panel_case_rows, &e);
    free(bp);
    return CKB_KIT_PANEL_UNIT;
#else
    (void)a, (void)b, (void)bt, (void)m, (void)np, (void)k, (void)kc, (void)mb, (void)c;
    return -2;
#endif
}
