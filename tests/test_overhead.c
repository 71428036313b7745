/*
 * The evaluator's own cost (issue 29): stage_seconds splits the timing
 * stage into the two kernels' calls and the harness around them, and the
 * figures add up on a real evaluation.
 */
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ckbench.h"

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
