/*
 * The evaluator's own cost (issue 29): stage_seconds splits the timing
 * stage into the two kernels' calls and the harness around them, and the
 * figures add up on a real evaluation. Also the check's fast pass (every
 * element within tolerance, vectorised) gives the scalar loop's verdict.
 */
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ckbench.h"
#include "eval/check.h"

#include "eval_util.h"
#include "harness.h"

/* Rounding slack: the figures are sums of doubles read off two clocks. */
#define OVERHEAD_EPS 1e-3

CKBT_TEST(eval_stage_seconds_split_the_timing_stage, "quick")
{
    int code = -1;
    json_object *j = ckbt_eval("8p", "gemm_plain.c", &code, "--seeds", "2", "--warmup", "2",
                               "--iters", "9", NULL);
    CKBT_EXPECT(code == 0, "exit code %d", code);
    CKBT_EXPECT(strcmp(ckbt_str(j, "status"), "ok") == 0, "status %s: %s", ckbt_str(j, "status"),
                ckbt_str(j, "message"));
    json_object *st = NULL;
    CKBT_EXPECT(json_object_object_get_ex(j, "stage_seconds", &st) && st, "stage_seconds");
    double compile = ckbt_num(st, "compile"), setup = ckbt_num(st, "setup");
    double corr = ckbt_num(st, "correctness"), fin = ckbt_num(st, "final_check");
    double timing = ckbt_num(st, "timing"), total = ckbt_num(st, "total");
    double kernel = ckbt_num(st, "kernel_calls"), harness = ckbt_num(st, "harness");
    double inputs = ckbt_num(st, "harness_inputs"), checks = ckbt_num(st, "harness_checks");
    double sw = ckbt_num(st, "harness_switch");
    CKBT_EXPECT(kernel > 0 && inputs > 0 && checks > 0 && sw >= 0,
                "every part measured: kernel_calls %g, inputs %g, checks %g, switch %g", kernel,
                inputs, checks, sw);
    CKBT_EXPECT(kernel <= timing, "kernel_calls %g > timing %g", kernel, timing);
    CKBT_EXPECT(fabs(kernel + harness - timing) < OVERHEAD_EPS,
                "kernel_calls %g + harness %g != timing %g", kernel, harness, timing);
    CKBT_EXPECT(inputs + checks + sw <= harness + OVERHEAD_EPS,
                "the harness's parts %g + %g + %g exceed it (%g)", inputs, checks, sw, harness);
    CKBT_EXPECT(compile + setup + corr + timing + fin <= total + OVERHEAD_EPS,
                "the stages (%g) exceed total %g", compile + setup + corr + timing + fin, total);
    /* The kernels' calls: the timed medians over the calls made, give or
     * take the spread (the warm-up calls and the retries are in it too). */
    double med = ckbt_num(json_object_object_get(j, "candidate"), "median_ms") +
                 ckbt_num(json_object_object_get(j, "baseline"), "median_ms");
    int calls = (int)ckbt_num(j, "warmup") + (int)ckbt_num(j, "iters");
    CKBT_EXPECT(kernel >= 0.5 * calls * med * 1e-3,
                "kernel_calls %g s for %d pairs of median %g ms", kernel, calls, med);
    json_object_put(j);
}

/* One element of got per case; the rest equal to want. */
static void overhead__case(ckb_dtype t, int64_t n, int64_t at, double gv)
{
    static float gf[100000], wf[100000];
    static ckb_bf16 gb[100000], wb[100000];
    static int32_t gi[100000], wi[100000];
    for (int64_t i = 0; i < n; i++) {
        wf[i] = gf[i] = (float)((i % 97) - 48) * 0.25f;
        wb[i] = gb[i] = ckb_f32_to_bf16(wf[i]);
        wi[i] = gi[i] = (int32_t)((i % 97) - 48);
        if (i % 7 == 0) { /* small differences inside the tolerance */
            gf[i] += 0.001f;
            gb[i] = ckb_f32_to_bf16(gf[i]);
        }
    }
    gf[at] = (float)gv;
    gb[at] = ckb_f32_to_bf16((float)gv);
    gi[at] = isfinite(gv) ? (int32_t)gv : gi[at];
    const void *g = t == CKB_BF16 ? (const void *)gb : t == CKB_F32 ? (const void *)gf : gi;
    const void *w = t == CKB_BF16 ? (const void *)wb : t == CKB_F32 ? (const void *)wf : wi;
    ckb_check k;
    ckb_check_allclose(t, g, w, n, 0.01, 0.01, &k);
    /* the verdict element by element, as the definition has it */
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double a = t == CKB_BF16 ? ckb_bf16_to_f32(gb[i]) : t == CKB_F32 ? gf[i] : gi[i];
        double b = t == CKB_BF16 ? ckb_bf16_to_f32(wb[i]) : t == CKB_F32 ? wf[i] : wi[i];
        bad += !(isfinite(a) && fabs(a - b) <= 0.01 + 0.01 * fabs(b));
    }
    CKBT_EXPECT(k.nbad == bad && k.ok == (bad == 0),
                "dtype %d, n %lld, got[%lld] = %g: nbad %lld ok %d, wanted %lld", (int)t,
                (long long)n, (long long)at, gv, (long long)k.nbad, k.ok, (long long)bad);
    if (bad)
        CKBT_EXPECT(k.worst == at, "worst %lld, wanted %lld", (long long)k.worst, (long long)at);
    CKBT_EXPECT(k.max_abs_err > 0 || t == CKB_I32 || (bad && !isfinite(gv)),
                "dtype %d: max_abs_err %g", (int)t, k.max_abs_err);
}

CKBT_TEST(check_fast_pass_gives_the_full_verdict, "quick")
{
    const ckb_dtype types[] = {CKB_BF16, CKB_F32, CKB_I32};
    const int64_t sizes[] = {1000, 100000}; /* one thread, and the pool */
    for (int ti = 0; ti < 3; ti++)
        for (int si = 0; si < 2; si++) {
            int64_t n = sizes[si];
            overhead__case(types[ti], n, n / 3, (double)((n / 3) % 97 - 48) * 0.25);
            overhead__case(types[ti], n, n - 1, 1000.0);
            overhead__case(types[ti], n, 5, NAN);
            overhead__case(types[ti], n, n / 2, INFINITY);
        }
}
