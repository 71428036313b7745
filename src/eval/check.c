#include "eval/check.h"

#include <math.h>
#include <string.h>

static double check__value(ckb_dtype t, const void *p, int64_t i)
{
    switch (t) {
    case CKB_BF16: return ckb_bf16_to_f32(((const ckb_bf16 *)p)[i]);
    case CKB_F32: return ((const float *)p)[i];
    case CKB_I32: return ((const int32_t *)p)[i];
    }
    return 0.0;
}

void ckb_check_allclose(ckb_dtype t, const void *got, const void *want, int64_t n, double atol,
                        double rtol, ckb_check *out)
{
    memset(out, 0, sizeof *out);
    out->worst = -1;
    double worst_excess = -1.0;
    for (int64_t i = 0; i < n; i++) {
        double g = check__value(t, got, i), w = check__value(t, want, i);
        double excess;
        if (!isfinite(w)) {
            /* The oracle's own NaN/Inf must be matched exactly in kind. */
            int same = (isnan(w) && isnan(g)) || (isinf(w) && g == w);
            excess = same ? -1.0 : INFINITY;
        } else if (!isfinite(g)) {
            out->nonfinite++;
            excess = INFINITY;
        } else {
            double err = fabs(g - w);
            if (err > out->max_abs_err)
                out->max_abs_err = err;
            excess = err - (atol + rtol * fabs(w));
        }
        if (excess > 0.0) {
            out->nbad++;
            if (excess > worst_excess) {
                worst_excess = excess;
                out->worst = i;
                out->got = g;
                out->want = w;
            }
        }
    }
    out->ok = out->nbad == 0;
}

void ckb_check_merge(ckb_check *a, const ckb_check *b)
{
    if (b->max_abs_err > a->max_abs_err)
        a->max_abs_err = b->max_abs_err;
    if (a->ok && !b->ok) {
        a->worst = b->worst;
        a->got = b->got;
        a->want = b->want;
    }
    a->nbad += b->nbad;
    a->nonfinite += b->nonfinite;
    a->ok = a->ok && b->ok;
}
