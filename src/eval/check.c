#include "eval/check.h"

#include <float.h>
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

/*
 * The common verdict, every element finite and within tolerance, in one
 * vectorised pass over both cores (the scalar loop below, with its switch
 * per element, was most of the checking between timed calls: issue 29).
 * The same double arithmetic as that loop, so max_abs_err is the same
 * value; any element it does not pass (outside tolerance, NaN, Inf) sends
 * the caller to the scalar loop, which alone names the worst. Run between
 * calls only, while every sandbox is stopped, as the input drawing is.
 */
/* |got - want| when both are finite and within tolerance, else -1 (NaN
 * fails every comparison). Branch-free, so the loops vectorise. */
static inline double check__pass(double g, double w, double atol, double rtol)
{
    const double err = fabs(g - w);
    const int pass = (fabs(w) <= DBL_MAX) & (fabs(g) <= DBL_MAX) &
                     (err - (atol + rtol * fabs(w)) <= 0.0);
    return pass ? err : -1.0;
}

/* The share of its tolerance an error uses: err / (atol + rtol*|want|);
 * a zero tolerance is used up by any error (share 0 or +Inf). */
static inline double check__share(double err, double w, double atol, double rtol)
{
    const double tol = atol + rtol * fabs(w);
    return tol > 0.0 ? err / tol : (err > 0.0 ? INFINITY : 0.0);
}

/* Each pass returns the elements it did not pass, and the largest error
 * over those it did. Parallel only where that pays for waking the pool.
 * One loop for every element type (a switch per element would not
 * vectorise): LOAD widens an element to what check__pass takes. */
#define CHECK__FAST(name, type, load)                                                         \
    static int64_t name(const type *g, const type *w, int64_t n, double atol, double rtol,   \
                        double *max_err, double *max_share, double *max_rel)                  \
    {                                                                                         \
        int64_t fails = 0;                                                                    \
        double m = 0.0, sh = 0.0, rel = 0.0;                                                  \
        _Pragma("omp parallel for simd reduction(+ : fails) reduction(max : m, sh, rel) if (n > 65536)") \
        for (int64_t i = 0; i < n; i++) {                                                     \
            const double wi = load(w[i]);                                                     \
            const double err = check__pass(load(g[i]), wi, atol, rtol);                      \
            const double share = check__share(err, wi, atol, rtol);                          \
            fails += err < 0.0;                                                               \
            m = err > m ? err : m;                                                            \
            sh = share > sh ? share : sh;                                                     \
            const double r = fabs(wi) > 0.0 ? err / fabs(wi) : 0.0;                          \
            rel = r > rel ? r : rel;                                                          \
        }                                                                                     \
        *max_err = m;                                                                         \
        *max_share = sh;                                                                      \
        *max_rel = rel;                                                                       \
        return fails;                                                                         \
    }

CHECK__FAST(check__fast_bf16, ckb_bf16, ckb_bf16_to_f32)
CHECK__FAST(check__fast_f32, float, (double))
CHECK__FAST(check__fast_i32, int32_t, (double))

/* 1 when the fast pass found every element within tolerance (out filled). */
static int check__all_pass(ckb_dtype t, const void *got, const void *want, int64_t n,
                           double atol, double rtol, ckb_check *out)
{
    double m = 0.0, sh = 0.0, rel = 0.0;
    int64_t fails = 1;
    switch (t) {
    case CKB_BF16: fails = check__fast_bf16(got, want, n, atol, rtol, &m, &sh, &rel); break;
    case CKB_F32: fails = check__fast_f32(got, want, n, atol, rtol, &m, &sh, &rel); break;
    case CKB_I32: fails = check__fast_i32(got, want, n, atol, rtol, &m, &sh, &rel); break;
    }
    if (fails)
        return 0;
    memset(out, 0, sizeof *out);
    out->worst = -1;
    out->max_abs_err = m;
    out->max_tol_share = sh;
    out->max_rel_err = rel;
    out->ok = 1;
    return 1;
}

void ckb_check_allclose(ckb_dtype t, const void *got, const void *want, int64_t n, double atol,
                        double rtol, ckb_check *out)
{
    if (check__all_pass(t, got, want, n, atol, rtol, out))
        return;
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
            double err = fabs(g - w), share = check__share(err, w, atol, rtol);
            if (err > out->max_abs_err)
                out->max_abs_err = err;
            if (share > out->max_tol_share)
                out->max_tol_share = share;
            if (w != 0.0 && err / fabs(w) > out->max_rel_err)
                out->max_rel_err = err / fabs(w);
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
    if (b->max_tol_share > a->max_tol_share)
        a->max_tol_share = b->max_tol_share;
    if (b->max_rel_err > a->max_rel_err)
        a->max_rel_err = b->max_rel_err;
    if (a->ok && !b->ok) {
        a->worst = b->worst;
        a->got = b->got;
        a->want = b->want;
    }
    a->nbad += b->nbad;
    a->nonfinite += b->nonfinite;
    a->ok = a->ok && b->ok;
}
