/*
 * A workload of several configurations (DESIGN §4): the candidate is
 * compiled, checked and timed on each; it is correct only when every one
 * passes, the first that fails names the verdict, its speedup is the
 * geometric mean of theirs, and the result keeps each one's figures.
 *
 * The workload is the tests' own: 8p_GEMM's declaration with two
 * configurations of other K, found by its id (the sandbox child, which is
 * this binary again, looks it up so) but no part of the suite.
 */
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fsutil.h"
#include "core/strbuf.h"
#include "eval/eval.h"
#include "gen/prompt.h"
#include "workloads/instance.h"
#include "workloads/workload.h"

#include "harness.h"

static ckb_workload configs_gemm;

/* Before the sandbox's entry (test_gen.c, a constructor of default
 * priority): the child must find this workload by its id. */
__attribute__((constructor(101))) static void configs_register(void)
{
    const ckb_workload *g = ckb_workload_find("8p_GEMM");
    if (!g)
        return;
    configs_gemm = *g;
    configs_gemm.id = "ckbt_gemm_two_configs";
    configs_gemm.nparams = 0;
    configs_gemm.nconfigs = 2;
    configs_gemm.configs[0] = (ckb_config){
        .name = "k128", .nset = 2, .set = {{"K", {128, 128, 128}}, {"N", {128, 128, 128}}}};
    configs_gemm.configs[1] = (ckb_config){
        .name = "k256", .nset = 2, .set = {{"K", {256, 256, 256}}, {"N", {128, 128, 128}}}};
    ckb_workload_add_for_tests(&configs_gemm);
}

static void configs_opts(ckb_eval_opts *o)
{
    ckb_eval_opts_default(o);
    o->size = CKB_SIZE_SMALL;
    o->nseeds = 1;
    o->warmup = 1;
    o->iters = 5;
}

static json_object *configs_at(json_object *j, int i)
{
    json_object *cs = NULL;
    json_object_object_get_ex(j, "configs", &cs);
    return cs && (int)json_object_array_length(cs) > i ? json_object_array_get_idx(cs, i) : NULL;
}

static const char *configs_str(json_object *j, const char *k)
{
    json_object *v = NULL;
    return j && json_object_object_get_ex(j, k, &v) && v ? json_object_get_string(v) : "";
}

static double configs_num(json_object *j, const char *k)
{
    json_object *v = NULL;
    return j && json_object_object_get_ex(j, k, &v) && v ? json_object_get_double(v) : NAN;
}

CKBT_TEST(configs_instances_differ_in_the_dims_they_set, "quick")
{
    ckb_instance a, b;
    CKBT_EXPECT(ckb_instance_resolve(&configs_gemm, CKB_SIZE_SMALL, 0, &a) == 0 &&
                    ckb_instance_resolve(&configs_gemm, CKB_SIZE_SMALL, 1, &b) == 0,
                "both configurations resolve");
    CKBT_EXPECT(a.dims[1] == 128 && b.dims[1] == 256 && a.dims[2] == 128 && a.dims[0] == 256 &&
                    a.tensor_bytes[0] == 256 * 128 * 2 && b.tensor_bytes[0] == 256 * 256 * 2,
                "dims M K N %lld %lld %lld / %lld %lld %lld", (long long)a.dims[0],
                (long long)a.dims[1], (long long)a.dims[2], (long long)b.dims[0],
                (long long)b.dims[1], (long long)b.dims[2]);
    char *h = ckb_instance_header(&b);
    CKBT_EXPECT(strstr(h, "#define K 256L") && strstr(h, "configuration k256"),
                "dims.h of k256:\n%s", h);
    free(h);
    ckb_instance x;
    CKBT_EXPECT(ckb_instance_resolve(&configs_gemm, CKB_SIZE_SMALL, 2, &x) != 0,
                "a third configuration resolved");
}

CKBT_TEST(configs_one_wrong_configuration_makes_the_kernel_wrong, "quick")
{
    ckb_eval_opts o;
    ckb_eval_result *r = calloc(1, sizeof *r);
    configs_opts(&o);
    int rc = ckb_eval_run(&configs_gemm, "tests/candidates/gemm_wrong_at_k256.c", &o, r);
    json_object *j = ckb_eval_result_json(&configs_gemm, &o, r);
    CKBT_EXPECT(rc == 0 && r->status == CKB_ST_WRONG_RESULT && !r->correct,
                "rc %d, status %s: %s", rc, ckb_status_name(r->status), r->message);
    CKBT_EXPECT(strcmp(configs_str(j, "failed_config"), "k256") == 0 &&
                    strncmp(r->message, "configuration k256: ", 20) == 0,
                "the verdict names k256: failed_config '%s', message %s",
                configs_str(j, "failed_config"), r->message);
    json_object *c0 = configs_at(j, 0), *c1 = configs_at(j, 1);
    CKBT_EXPECT(c0 && c1 && !configs_at(j, 2), "two configurations kept");
    CKBT_EXPECT(strcmp(configs_str(c0, "status"), "ok") == 0 &&
                    strcmp(configs_str(c1, "status"), "wrong_result") == 0 &&
                    configs_num(c0, "speedup") > 0 && configs_num(c1, "max_abs_err") >= 0.5,
                "k128 %s (speedup %g), k256 %s (max_abs_err %g)", configs_str(c0, "status"),
                configs_num(c0, "speedup"), configs_str(c1, "status"),
                configs_num(c1, "max_abs_err"));
    json_object *d1 = NULL;
    json_object_object_get_ex(c1, "dims", &d1);
    CKBT_EXPECT(configs_num(d1, "K") == 256, "k256's dims kept: K %g", configs_num(d1, "K"));
    /* the model's feedback names the configuration that failed, with its dims */
    ckb_strbuf sb = {0};
    ckb_gen_feedback(&sb, "wrong_result", j, NULL);
    char *fb = ckb_strbuf_take(&sb);
    CKBT_EXPECT(strstr(fb, "Configuration k256 ( M=256 K=256 N=128 ): wrong_result, the verdict "
                           "above is this configuration's") &&
                    strstr(fb, "Configuration k128 ( M=256 K=128 N=128 ): ok"),
                "the feedback:\n%s", fb);
    free(fb);
    json_object_put(j);
    free(r);
}

CKBT_TEST(configs_speedup_is_the_geometric_mean, "quick")
{
    ckb_eval_opts o;
    ckb_eval_result *r = calloc(1, sizeof *r);
    configs_opts(&o);
    /* --vs-expert: a plain "expert" timed beside it, on each configuration */
    o.expert_src = "tests/candidates/gemm_plain.c";
    int rc = ckb_eval_run(&configs_gemm, "tests/candidates/gemm_slow_at_k256.c", &o, r);
    json_object *j = ckb_eval_result_json(&configs_gemm, &o, r);
    CKBT_EXPECT(rc == 0 && r->status == CKB_ST_OK && r->correct, "rc %d, status %s: %s", rc,
                ckb_status_name(r->status), r->message);
    json_object *c0 = configs_at(j, 0), *c1 = configs_at(j, 1);
    double s0 = configs_num(c0, "speedup"), s1 = configs_num(c1, "speedup");
    double g = configs_num(j, "speedup");
    CKBT_EXPECT(c0 && c1 && fabs(g - sqrt(s0 * s1)) <= 1e-9 * g,
                "speedup %g, the configurations' %g and %g (geometric mean %g)", g, s0, s1,
                sqrt(s0 * s1));
    double x0 = configs_num(c0, "speedup_vs_expert"), x1 = configs_num(c1, "speedup_vs_expert"),
           xg = configs_num(j, "speedup_vs_expert");
    CKBT_EXPECT(x0 > 0 && x1 > 0 && fabs(xg - sqrt(x0 * x1)) <= 1e-9 * xg,
                "speedup_vs_expert %g, the configurations' %g and %g", xg, x0, x1);
    /* 8 times the work on k256 only: its speedup alone drops (by about 8),
     * unless other work disturbed the timings past every retry (a loaded
     * machine), when the figures are not figures (DESIGN §5) */
    json_object *d0 = json_object_object_get(c0, "timing_disturbed"),
                *d1 = json_object_object_get(c1, "timing_disturbed");
    if (!json_object_get_boolean(d0) && !json_object_get_boolean(d1))
        CKBT_EXPECT(s1 < 0.5 * s0, "k256's speedup %g is not well under k128's %g", s1, s0);
    /* the aggregate's medians are the configurations' geometric means, so
     * the headline ratio still holds */
    double cm = configs_num(json_object_object_get(j, "candidate"), "median_ms"),
           bm = configs_num(json_object_object_get(j, "baseline"), "median_ms");
    CKBT_EXPECT(fabs(bm / cm - g) <= 1e-9 * g, "baseline %g / candidate %g != speedup %g", bm,
                cm, g);
    CKBT_EXPECT(json_object_get_type(json_object_object_get(j, "failed_config")) ==
                    json_type_null,
                "no configuration failed");
    json_object_put(j);
    free(r);
}

/* The backquoted names in the first cells of FORMATS.md's table NAME. */
static int configs_documented(const char *table, const char *field)
{
    char *text = ckb_read_file("docs/FORMATS.md", NULL), mark[64], want[64];
    snprintf(mark, sizeof mark, "<!-- fields: %s -->", table);
    snprintf(want, sizeof want, "`%s`", field);
    int found = 0;
    for (char *line = text ? strstr(text, mark) : NULL; line && !found;) {
        line = strchr(line, '\n');
        if (!line || (line[1] != '|' && line[1] != '\n'))
            break;
        line++;
        char *end = strchr(line, '\n'), *cell = strchr(line + 1, '|');
        if (cell && (!end || cell < end)) {
            *cell = '\0';
            found = strstr(line, want) != NULL;
            *cell = '|';
        }
    }
    free(text);
    return found;
}

CKBT_TEST(configs_fields_are_in_formats_md, "quick")
{
    ckb_eval_opts o;
    ckb_eval_result *r = calloc(1, sizeof *r);
    configs_opts(&o);
    ckb_eval_run(&configs_gemm, "tests/candidates/gemm_wrong_at_k256.c", &o, r);
    json_object *j = ckb_eval_result_json(&configs_gemm, &o, r);
    CKBT_EXPECT(configs_documented("eval", "configs") && configs_documented("eval", "failed_config"),
                "FORMATS.md's eval table lacks configs or failed_config");
    for (int i = 0; i < 2; i++) {
        json_object *c = configs_at(j, i);
        CKBT_EXPECT(c != NULL, "configuration %d kept", i);
        if (!c)
            continue;
        json_object_object_foreach(c, key, val)
        {
            (void)val;
            CKBT_EXPECT(configs_documented("config", key),
                        "configs[].%s is written but FORMATS.md does not document it", key);
        }
    }
    json_object_put(j);
    free(r);
}

CKBT_TEST(configs_a_workload_of_one_keeps_its_json, "quick")
{
    /* the suite's workloads of one configuration: no configs array */
    const ckb_workload *w = ckb_workload_find("8p_GEMM");
    ckb_eval_opts o;
    ckb_eval_result *r = calloc(1, sizeof *r);
    configs_opts(&o);
    o.iters = 1;
    ckb_eval_run(w, "tests/candidates/gemm_plain.c", &o, r);
    json_object *j = ckb_eval_result_json(w, &o, r), *v = NULL;
    CKBT_EXPECT(r->status == CKB_ST_OK && r->nconfigs == 1, "status %s, %d configurations",
                ckb_status_name(r->status), r->nconfigs);
    CKBT_EXPECT(!json_object_object_get_ex(j, "configs", &v) &&
                    !json_object_object_get_ex(j, "failed_config", &v),
                "a workload of one configuration gained configuration fields");
    json_object_put(j);
    free(r);
}

CKBT_TEST(configs_prompt_shows_every_configuration, "quick")
{
    ckb_gen_task t = {.w = &configs_gemm, .size = CKB_SIZE_SMALL, .threads = 2};
    ckb_gen_prompt p = {0};
    ckb_gen_prompt_oneshot(&t, &p);
    const char *text = p.n > 1 ? p.text[1] : "";
    CKBT_EXPECT(strstr(text, "judged on 2 configurations") &&
                    strstr(text, "Configuration k128, dims (size small, atol 0.01, rtol 0.01): "
                                 "M=256 K=128 N=128") &&
                    strstr(text, "Configuration k256, dims (size small, atol 0.01, rtol 0.01): "
                                 "M=256 K=256 N=128"),
                "the workload's part of the prompt:\n%.3000s", text);
    ckb_gen_prompt_free(&p);
}
