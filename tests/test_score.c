/* `ckbench score` on the hand-made runs of tests/fixtures/runs/, whose
 * answers are worked out by hand below from the records (every speedup and
 * status is in the fixture's records.jsonl; expert speedups: 8p 2.5, 12p
 * none, 1p 2.0, 41k 4.0).
 *
 * best-of-n / model-x = runs bon (budget 4) + bon2 (budget 2, 8p only), pooled:
 *   8p_GEMM   positions 0 compile_error(syntax)  1 ok 1.2  2 wrong_result  3 ok 1.8
 *             (bon's file has #3 before #1 and #2)  4 ok 2.2 (bon2 #0)  5 forbidden_symbol
 *   12p       0 ok 0.8  1 compile_error(unknown_intrinsic)  2 no_code  3 ok 0.9
 *   1p        0 crash  1 timeout  2 compile_error(syntax)  3 wrong_result
 *   41k       0 provider_error  1 ok 3.0  2 ok 2.0  (#3 cut mid-line: dropped)
 *   samples 17; not compiled: 3 compile_error + no_code + provider_error = 5,
 *   so compile rate 12/17; correct 7/17; solved 3/4 (1p unsolved);
 *   floored best: 2.2, 1 (0.9 floored), 1 (unsolved), 3.0: geomean (6.6)^(1/4) = 1.6028;
 *   beating the baseline: 8p, 41k = 2/4;
 *   % of expert: 2.2/2.5 = 0.88, 1/2 = 0.5, 3/4 = 0.75: 100 (0.33)^(1/3) = 69.10%;
 *   fast_p (correct AND speedup > p among the first N positions, over 4):
 *     p=1:   N=1 0 | N=2 2/4 (8p 1.2, 41k 3.0) | N=4 2/4 | N=6 2/4
 *     p=1.5: N=1 0 | N=2 1/4 (41k)  | N=4 2/4 (+8p 1.8) | N=6 2/4
 *     p=2:   N=1 0 | N=2 1/4 (41k)  | N=4 1/4 (1.8 is not > 2) | N=6 2/4 (+8p 2.2)
 *     p=0:   N=1 1/4 (12p 0.8: correct, timed) | N=2 3/4
 *   solved within k: k=1 1/4, k=2 3/4, then 3/4;
 *   taxonomy: ok 7, compile_error 3 (syntax 2, unknown_intrinsic 1), wrong_result 2,
 *   forbidden_symbol, crash, timeout, no_code, provider_error 1 each.
 *
 * refine / model-x = run refine (2 chains x 2 turns, budget 4; one garbage line):
 *   8p   0 compile_error(wrong_signature)  1 ok 1.5  2 ok 2.5  3 ok 3.0
 *   12p  0 wrong_result  1 ok 1.1  2 nondeterministic  3 cheat_detected
 *   1p   0 compile_error(no detail)  1 ok 0.5  2 wrong_result  3 ok 1.4
 *   41k  0 compile_error(syntax)  1 compile_error(syntax)  2 resource_limit  3 wrong_result
 *   samples 16; compile rate 12/16; correct 6/16; solved 3/4 (41k unsolved);
 *   floored: 3.0, 1.1, 1.4, 1: geomean (4.62)^(1/4) = 1.4661; beating 3/4;
 *   % of expert: 3/2.5 = 1.2, 1.4/2 = 0.7, 1/4 = 0.25: 100 (0.21)^(1/3) = 59.44%;
 *   fast_p: p=1: N=1 0 | N=2 2/4 (8p 1.5, 12p 1.1) | N=4 3/4 (+1p 1.4)
 *           p=1.5: N=2 0 (1.5 is not > 1.5) | N=4 1/4;  p=2: N=2 0 | N=4 1/4
 *   taxonomy: ok 6, compile_error 4 (syntax 2, wrong_signature 1, unspecified 1),
 *   wrong_result 3, nondeterministic, cheat_detected, resource_limit 1 each. */
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/fsutil.h"
#include "core/proc.h"
#include "eval_util.h"
#include "harness.h"
#include "score/score.h"
#include "workloads/workload.h"

#define RUN_BON "tests/fixtures/runs/bon"
#define RUN_BON2 "tests/fixtures/runs/bon2"
#define RUN_REFINE "tests/fixtures/runs/refine"

static int same(double a, double b) { return fabs(a - b) <= 1e-12 * (fabs(b) > 1 ? fabs(b) : 1); }

static const ckb_score_group *group(const ckb_score_set *s, const char *method)
{
    for (int i = 0; i < s->ng; i++)
        if (strcmp(s->g[i].method, method) == 0)
            return &s->g[i];
    return NULL;
}

static const ckb_score_workload *wl(const ckb_score_group *g, const char *id)
{
    for (int i = 0; g && i < g->nw; i++)
        if (strcmp(g->w[i].id, id) == 0)
            return &g->w[i];
    return NULL;
}

static int tax(const ckb_score_count *c, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(c[i].name, name) == 0)
            return c[i].count;
    return 0;
}

static int load_fixture(ckb_score_set *s)
{
    const char *paths[] = {RUN_BON, RUN_BON2, RUN_REFINE};
    const double p0[] = {0};
    const int ns[] = {2, 4};
    ckb_err err = {0};
    int rc = ckb_score_load(paths, 3, p0, 1, ns, 2, s, &err);
    CKBT_EXPECT(rc == 0, "the fixture runs load: %s", err.msg);
    return rc;
}

CKBT_TEST(score_metrics_match_the_hand_computed_answers, "quick")
{
    ckb_score_set s;
    if (load_fixture(&s) != 0)
        return;
    CKBT_EXPECT(s.ng == 2, "two method/model groups (%d)", s.ng);
    const ckb_score_group *b = group(&s, "best-of-n"), *r = group(&s, "refine");
    CKBT_EXPECT(b && r, "best-of-n and refine scored");
    if (!b || !r) {
        ckb_score_free(&s);
        return;
    }
    CKBT_EXPECT(b->nruns == 2 && r->nruns == 1 && strcmp(b->label, "best-of-n / model-x") == 0,
                "bon and bon2 pooled: %d runs, label '%s'", b->nruns, b->label);

    /* best-of-n */
    CKBT_EXPECT(b->samples == 17 && b->compiled == 12 && b->correct == 7, "bon counts %d %d %d",
                b->samples, b->compiled, b->correct);
    CKBT_EXPECT(same(b->compile_rate, 12.0 / 17) && same(b->per_sample_correctness, 7.0 / 17),
                "bon rates %g %g", b->compile_rate, b->per_sample_correctness);
    CKBT_EXPECT(b->solved == 3 && b->nw == 4 && b->budget == 6 && !b->covers_suite,
                "bon solved %d/%d, budget %d", b->solved, b->nw, b->budget);
    CKBT_EXPECT(same(b->geomean_speedup, pow(2.2 * 3.0, 0.25)) &&
                    fabs(b->geomean_speedup - 1.6028) < 1e-4,
                "bon floored geomean %.6f", b->geomean_speedup);
    CKBT_EXPECT(same(b->share_beating_baseline, 0.5), "bon beating %g", b->share_beating_baseline);
    CKBT_EXPECT(b->expert_workloads == 3 &&
                    same(b->pct_of_expert, 100 * cbrt(0.88 * 0.5 * 0.75)) &&
                    fabs(b->pct_of_expert - 69.10) < 0.01,
                "bon %% of expert %.4f over %d", b->pct_of_expert, b->expert_workloads);
    static const struct {
        double p;
        int n;
        double want;
    } fb[] = {{1, 1, 0},      {1, 2, 0.5},    {1, 4, 0.5},   {1, 6, 0.5},  {1.5, 1, 0},
              {1.5, 2, 0.25}, {1.5, 4, 0.5},  {1.5, 6, 0.5}, {2, 2, 0.25}, {2, 4, 0.25},
              {2, 6, 0.5},    {0, 1, 0.25},   {0, 2, 0.75},  {1, 100, 0.5}};
    for (size_t i = 0; i < sizeof fb / sizeof *fb; i++) {
        double got = ckb_score_fast_p(b, fb[i].p, fb[i].n);
        CKBT_EXPECT(same(got, fb[i].want), "bon fast_%g@%d = %g (want %g)", fb[i].p, fb[i].n, got,
                    fb[i].want);
    }
    CKBT_EXPECT(same(ckb_score_solved_within(b, 1), 0.25) &&
                    same(ckb_score_solved_within(b, 2), 0.75) &&
                    same(ckb_score_solved_within(b, 6), 0.75),
                "bon solved within 1, 2, 6 samples");
    CKBT_EXPECT(tax(b->taxonomy, b->ntax, "ok") == 7 &&
                    tax(b->taxonomy, b->ntax, "compile_error") == 3 &&
                    tax(b->taxonomy, b->ntax, "wrong_result") == 2 &&
                    tax(b->taxonomy, b->ntax, "forbidden_symbol") == 1 &&
                    tax(b->taxonomy, b->ntax, "crash") == 1 &&
                    tax(b->taxonomy, b->ntax, "timeout") == 1 &&
                    tax(b->taxonomy, b->ntax, "no_code") == 1 &&
                    tax(b->taxonomy, b->ntax, "provider_error") == 1 && b->ntax == 8,
                "bon taxonomy (%d statuses)", b->ntax);
    CKBT_EXPECT(strcmp(b->taxonomy[0].name, "ok") == 0 &&
                    strcmp(b->taxonomy[1].name, "compile_error") == 0 &&
                    strcmp(b->taxonomy[b->ntax - 1].name, "provider_error") == 0,
                "the taxonomy is in its canonical order");
    CKBT_EXPECT(tax(b->compile_kinds, b->nck, "syntax") == 2 &&
                    tax(b->compile_kinds, b->nck, "unknown_intrinsic") == 1 && b->nck == 2,
                "bon compile errors by kind");
    const ckb_score_workload *g8 = wl(b, "8p_GEMM"), *n12 = wl(b, "12p_RMSNorm");
    const ckb_score_workload *f1 = wl(b, "1p_Flash_Attention"), *k41 = wl(b, "41k_Gemm_Add_ReLU");
    CKBT_EXPECT(g8 && same(g8->best_speedup, 2.2) && g8->budget == 6 && g8->samples == 6 &&
                    g8->first_correct == 1 && g8->best >= 0 &&
                    strcmp(s.runs[g8->run_of[g8->best]].path, RUN_BON2) == 0 &&
                    g8->pos[g8->best] == 4 && same(g8->pct_of_expert, 88),
                "8p: the best is bon2's sample #0 at pooled position 4");
    for (int i = 0; g8 && i < g8->npool; i++)
        CKBT_EXPECT(g8->pos[i] == i, "8p pooled in index order: %d at %d", g8->pos[i], i);
    CKBT_EXPECT(n12 && same(n12->best_speedup, 0.9) && n12->speedup == 1 &&
                    isnan(n12->expert_speedup) && isnan(n12->pct_of_expert),
                "12p: 0.9x floored to 1x, no expert");
    CKBT_EXPECT(f1 && f1->best < 0 && isnan(f1->best_speedup) && f1->speedup == 1 &&
                    f1->first_correct == -1 && same(f1->pct_of_expert, 50),
                "1p unsolved counts 1x and 50%% of a 2x expert");
    CKBT_EXPECT(k41 && k41->samples == 3 && same(k41->best_speedup, 3.0),
                "41k: the cut record is not a sample; best 3.0");

    /* JAXBench's summary of the same group: 1p's crash compiled, so all four
     * compiled; 8p 2.2x and 41k 3.0x improved, 12p 0.9x slower. */
    CKBT_EXPECT(b->jb_compiled == 4 && b->jb_improved == 2 && b->jb_slower == 1 &&
                    same(b->jb_max_speedup, 3.0) &&
                    same(b->jb_arithmetic_mean_speedup, (2.2 + 1 + 1 + 3.0) / 4),
                "bon JAXBench summary: compiled %d improved %d slower %d max %g mean %g",
                b->jb_compiled, b->jb_improved, b->jb_slower, b->jb_max_speedup,
                b->jb_arithmetic_mean_speedup);
    json_object *sj = ckb_score_json(&s);
    json_object *rows = json_object_object_get(sj, "scores"), *jb = NULL;
    for (size_t i = 0; rows && i < json_object_array_length(rows); i++) {
        json_object *row = json_object_array_get_idx(rows, i);
        if (strcmp(json_object_get_string(json_object_object_get(row, "method")), "best-of-n") == 0)
            jb = json_object_object_get(row, "jaxbench_summary");
    }
    CKBT_EXPECT(jb && json_object_get_int(json_object_object_get(jb, "total_attempted")) == 4 &&
                    same(json_object_get_double(json_object_object_get(jb, "slowdown_ratio_pct")),
                         25) &&
                    same(json_object_get_double(json_object_object_get(jb, "correct_ratio_pct")),
                         75) &&
                    same(json_object_get_double(
                             json_object_object_get(jb, "geometric_mean_speedup")),
                         b->geomean_speedup),
                "score.json carries JAXBench's fields under their names: %s",
                jb ? json_object_to_json_string(jb) : "(none)");
    json_object_put(sj);

    /* refine */
    CKBT_EXPECT(r->samples == 16 && r->compiled == 12 && r->correct == 6 && r->solved == 3 &&
                    r->budget == 4,
                "refine counts %d %d %d %d", r->samples, r->compiled, r->correct, r->solved);
    CKBT_EXPECT(same(r->compile_rate, 0.75) && same(r->per_sample_correctness, 0.375),
                "refine rates");
    CKBT_EXPECT(same(r->geomean_speedup, pow(3.0 * 1.1 * 1.4, 0.25)) &&
                    fabs(r->geomean_speedup - 1.4661) < 1e-4,
                "refine geomean %.6f", r->geomean_speedup);
    CKBT_EXPECT(same(r->share_beating_baseline, 0.75), "refine beating");
    CKBT_EXPECT(same(r->pct_of_expert, 100 * cbrt(1.2 * 0.7 * 0.25)) &&
                    fabs(r->pct_of_expert - 59.44) < 0.01,
                "refine %% of expert %.4f", r->pct_of_expert);
    static const struct {
        double p;
        int n;
        double want;
    } fr[] = {{1, 1, 0}, {1, 2, 0.5}, {1, 4, 0.75}, {1.5, 2, 0}, {1.5, 4, 0.25}, {2, 2, 0},
              {2, 4, 0.25}};
    for (size_t i = 0; i < sizeof fr / sizeof *fr; i++) {
        double got = ckb_score_fast_p(r, fr[i].p, fr[i].n);
        CKBT_EXPECT(same(got, fr[i].want), "refine fast_%g@%d = %g (want %g)", fr[i].p, fr[i].n,
                    got, fr[i].want);
    }
    CKBT_EXPECT(tax(r->taxonomy, r->ntax, "ok") == 6 &&
                    tax(r->taxonomy, r->ntax, "compile_error") == 4 &&
                    tax(r->taxonomy, r->ntax, "wrong_result") == 3 &&
                    tax(r->taxonomy, r->ntax, "nondeterministic") == 1 &&
                    tax(r->taxonomy, r->ntax, "cheat_detected") == 1 &&
                    tax(r->taxonomy, r->ntax, "resource_limit") == 1 && r->ntax == 6,
                "refine taxonomy");
    CKBT_EXPECT(tax(r->compile_kinds, r->nck, "syntax") == 2 &&
                    tax(r->compile_kinds, r->nck, "wrong_signature") == 1 &&
                    tax(r->compile_kinds, r->nck, "unspecified") == 1,
                "refine compile errors by kind, a missing detail as 'unspecified'");

    /* The sample counts reported: the defaults within the budget, the ones
     * asked for, and the budget. */
    int ns[CKB_SCORE_MAX_N + 1];
    int nb = ckb_score_n_values(&s, b, ns, CKB_SCORE_MAX_N + 1);
    CKBT_EXPECT(nb == 4 && ns[0] == 1 && ns[1] == 2 && ns[2] == 4 && ns[3] == 6,
                "best-of-n reports N = 1, 2, 4, 6 (%d values)", nb);
    int nr = ckb_score_n_values(&s, r, ns, CKB_SCORE_MAX_N + 1);
    CKBT_EXPECT(nr == 3 && ns[0] == 1 && ns[1] == 2 && ns[2] == 4,
                "refine reports N = 1, 2, 4 (%d values)", nr);
    ckb_score_free(&s);
}

CKBT_TEST(score_reads_runs_tolerantly, "quick")
{
    ckb_err err = {0};
    ckb_score_run r;
    CKBT_EXPECT(ckb_score_run_load(RUN_BON, &r, &err) == 0, "bon loads: %s", err.msg);
    CKBT_EXPECT(r.n == 15 && r.dropped_last == 1 && r.skipped == 0 && r.budget == 4 &&
                    r.budget_from_config && r.nworkloads == 4 &&
                    strcmp(r.method, "best-of-n") == 0 && strcmp(r.model, "model-x") == 0,
                "bon: 15 records, the cut last line dropped (%d, %d)", r.n, r.dropped_last);
    ckb_score_run_free(&r);
    CKBT_EXPECT(ckb_score_run_load(RUN_REFINE, &r, &err) == 0, "refine loads");
    CKBT_EXPECT(r.n == 16 && r.skipped == 1 && !r.dropped_last, "refine: the garbage line skipped");
    CKBT_EXPECT(r.s[1].chain == 0 && r.s[1].turn == 1 && r.s[2].chain == 1 && r.s[2].turn == 0,
                "chain and turn read");
    ckb_score_run_free(&r);

    /* No config: method, model and budget come from the records; a record
     * repeated is counted once. */
    char dir[600], path[700];
    snprintf(dir, sizeof dir, "%s/noconfig", ckbt_tmpdir());
    ckb_mkdirs(dir);
    const char *recs =
        "{\"workload\":\"8p_GEMM\",\"index\":2,\"method\":\"beam\",\"model\":\"m\","
        "\"status\":\"ok\",\"correct\":true,\"speedup\":1.5,\"expert_speedup\":null}\n"
        "{\"workload\":\"8p_GEMM\",\"index\":2,\"method\":\"beam\",\"model\":\"m\","
        "\"status\":\"ok\",\"correct\":true,\"speedup\":9.0}\n"
        "{\"workload\":\"8p_GEMM\",\"method\":\"beam\",\"status\":\"ok\"}\n";
    snprintf(path, sizeof path, "%s/records.jsonl", dir);
    ckb_write_file_atomic(path, recs, strlen(recs));
    CKBT_EXPECT(ckb_score_run_load(dir, &r, &err) == 0, "a run without config: %s", err.msg);
    CKBT_EXPECT(r.n == 1 && r.duplicates == 1 && r.skipped == 1 && r.budget == 3 &&
                    !r.budget_from_config && strcmp(r.method, "beam") == 0 &&
                    strcmp(r.model, "m") == 0 && r.nworkloads == 1 && r.s[0].speedup == 1.5,
                "derived: n %d dup %d skipped %d budget %d method %s", r.n, r.duplicates,
                r.skipped, r.budget, r.method);
    ckb_score_run_free(&r);

    /* What cannot be read is said, with the file. */
    snprintf(path, sizeof path, "%s/config.json", dir);
    ckb_write_file_atomic(path, "{\"method\": ", 11);
    CKBT_EXPECT(ckb_score_run_load(dir, &r, &err) == CKB_E_FORMAT && strstr(err.msg, path),
                "a broken config.json is named: %s", err.msg);
    snprintf(path, sizeof path, "%s/empty", ckbt_tmpdir());
    ckb_mkdirs(path);
    CKBT_EXPECT(ckb_score_run_load(path, &r, &err) != CKB_OK && strstr(err.msg, "records.jsonl") &&
                    strstr(err.msg, "ckbench generate"),
                "a folder without records says what to give: %s", err.msg);
}

/* Runs ckbench score with the arguments (NULL-terminated); returns the
 * exit code and the output (caller frees). */
static int run_score(char **text, ...)
{
    char *argv[24];
    int n = 0;
    argv[n++] = (char *)ckbt_bin();
    argv[n++] = "score";
    va_list ap;
    va_start(ap, text);
    for (char *a; n < 23 && (a = va_arg(ap, char *));)
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    ckb_proc_result r;
    if (ckb_proc_run(argv, 60, 1 << 20, &r) != 0)
        return -1;
    int code = r.exited ? r.exit_code : 128 + r.signal;
    *text = strdup(r.output ? r.output : "");
    ckb_proc_result_free(&r);
    return code;
}

static double jnum(json_object *o, const char *path)
{
    /* "a.b.c": object keys. */
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    json_object *x = o;
    for (char *save = NULL, *k = strtok_r(buf, ".", &save); k && x; k = strtok_r(NULL, ".", &save))
        x = json_object_object_get(x, k);
    return x && (json_object_is_type(x, json_type_double) || json_object_is_type(x, json_type_int))
               ? json_object_get_double(x)
               : NAN;
}

CKBT_TEST(score_command_prints_tables_and_writes_score_json, "quick")
{
    char out[600], *text = NULL;
    snprintf(out, sizeof out, "%s/score.json", ckbt_tmpdir());
    int code = run_score(&text, RUN_BON, RUN_BON2, RUN_REFINE, "--n", "2", "--p", "0", "--out",
                         out, "--verbose", NULL);
    CKBT_EXPECT(code == 0, "score exits 0: %s", text);
    /* The paper-style row, aligned: every figure of the hand computation. */
    const char *row = strstr(text, "\nbest-of-n / model-x ");
    char line[400] = "";
    if (row)
        snprintf(line, sizeof line, "%.*s", (int)strcspn(row + 1, "\n"), row + 1);
    /* (Figures with a percent sign are checked outside the macro, whose
     * condition text becomes part of a format.) */
    static const char *const bon_cells[] = {" 2 ", " 17 ", "70.6%", "41.2%", "3/4",
                                            "1.60x", "50.0%", "69.1%"};
    int ok = 1;
    for (size_t i = 0; i < sizeof bon_cells / sizeof *bon_cells; i++)
        ok &= strstr(line, bon_cells[i]) != NULL;
    CKBT_EXPECT(ok, "best-of-n row: %s", line);
    row = strstr(text, "\nrefine / model-x ");
    line[0] = '\0';
    if (row)
        snprintf(line, sizeof line, "%.*s", (int)strcspn(row + 1, "\n"), row + 1);
    static const char *const ref_cells[] = {"75.0%", "37.5%", "1.47x", "59.4%"};
    ok = 1;
    for (size_t i = 0; i < sizeof ref_cells / sizeof *ref_cells; i++)
        ok &= strstr(line, ref_cells[i]) != NULL;
    CKBT_EXPECT(ok, "refine row: %s", line);
    CKBT_EXPECT(strstr(text, "half-written last line dropped") &&
                    strstr(text, "1 malformed line(s) skipped"),
                "what was dropped is said");
    CKBT_EXPECT(strstr(text, "best-of-n / model-x: per workload") &&
                    strstr(text, "tests/fixtures/runs/bon2 #0"),
                "--verbose shows each workload and its best sample");
    CKBT_EXPECT(strstr(text, "syntax 2, unknown_intrinsic 1"), "compile errors by kind");
    free(text);

    /* --json prints what it writes. */
    code = run_score(&text, RUN_BON, RUN_BON2, RUN_REFINE, "--json", "--n", "2", "--out", out,
                     NULL);
    json_object *j = json_tokener_parse(text), *f = json_object_from_file(out);
    CKBT_EXPECT(code == 0 && j && f && json_object_equal(j, f), "--json prints score.json");
    json_object *scores = json_object_object_get(j, "scores");
    json_object *b = json_object_array_get_idx(scores, 0);
    json_object *r = json_object_array_get_idx(scores, 1);
    CKBT_EXPECT(json_object_array_length(scores) == 2 &&
                    strcmp(ckbt_str(b, "method"), "best-of-n") == 0 &&
                    strcmp(ckbt_str(r, "method"), "refine") == 0,
                "one score per method/model");
    CKBT_EXPECT(jnum(b, "samples") == 17 && jnum(b, "solved") == 3 && jnum(b, "workloads") == 4 &&
                    jnum(b, "budget") == 6 && same(jnum(b, "compile_rate"), 12.0 / 17) &&
                    same(jnum(b, "per_sample_correctness"), 7.0 / 17) &&
                    same(jnum(b, "geomean_speedup_floored"), pow(6.6, 0.25)) &&
                    same(jnum(b, "share_beating_baseline"), 0.5) &&
                    fabs(jnum(b, "pct_of_expert") - 100 * cbrt(0.33)) < 1e-9,
                "best-of-n in JSON");
    CKBT_EXPECT(same(jnum(b, "fast_p.1.2"), 0.5) && same(jnum(b, "fast_p.2.2"), 0.25) &&
                    isnan(jnum(b, "fast_p.2.4")) &&
                    same(jnum(b, "fast_p.2.6"), 0.5) && same(jnum(r, "fast_p.1.4"), 0.75) &&
                    isnan(jnum(r, "fast_p.1.6")) && isnan(jnum(b, "fast_p.1.8")),
                "fast_p[p][N] at the reported N only");
    CKBT_EXPECT(jnum(b, "taxonomy.ok") == 7 && jnum(b, "taxonomy.compile_error") == 3 &&
                    jnum(r, "taxonomy.cheat_detected") == 1 &&
                    jnum(b, "compile_errors.syntax") == 2,
                "taxonomy in JSON");
    json_object *w0 = json_object_array_get_idx(json_object_object_get(b, "per_workload"), 0);
    json_object *w2 = json_object_array_get_idx(json_object_object_get(b, "per_workload"), 2);
    CKBT_EXPECT(strcmp(ckbt_str(w0, "workload"), "8p_GEMM") == 0 &&
                    same(jnum(w0, "best_speedup"), 2.2) &&
                    strcmp(ckbt_str(json_object_object_get(w0, "best_sample"), "run"), RUN_BON2) ==
                        0 &&
                    jnum(w0, "best_sample.position") == 4,
                "per workload: the best sample and where it is");
    json_object *nul;
    CKBT_EXPECT(json_object_object_get_ex(w2, "best_speedup", &nul) && nul == NULL &&
                    jnum(w2, "speedup_floored") == 1,
                "an unsolved workload: best null, floored 1");
    json_object *runs = json_object_object_get(j, "runs");
    CKBT_EXPECT(json_object_array_length(runs) == 3 &&
                    json_object_get_boolean(json_object_object_get(
                        json_object_array_get_idx(runs, 0), "dropped_last_line")),
                "the runs read, with what was dropped");
    json_object_put(j);
    json_object_put(f);
    free(text);

    /* One run: score.json goes into it. */
    char copy[600], cmd[1400], path[700];
    snprintf(copy, sizeof copy, "%s/refine", ckbt_tmpdir());
    snprintf(cmd, sizeof cmd, "cp -r %s '%s'", RUN_REFINE, copy);
    CKBT_EXPECT(system(cmd) == 0, "copy the run");
    CKBT_EXPECT(run_score(&text, copy, NULL) == 0, "score one run: %s", text);
    free(text);
    snprintf(path, sizeof path, "%s/score.json", copy);
    struct stat st;
    CKBT_EXPECT(stat(path, &st) == 0 && st.st_size > 100, "%s written", path);

    /* A wrong command line is said. */
    CKBT_EXPECT(run_score(&text, NULL) == 2 && strstr(text, "at least one run"), "no run: %s",
                text);
    free(text);
    CKBT_EXPECT(run_score(&text, RUN_BON, "--p", "fast", NULL) == 2 && strstr(text, "--p"),
                "a bad --p: %s", text);
    free(text);
    CKBT_EXPECT(run_score(&text, RUN_BON, "--n", "0", NULL) == 2 && strstr(text, "--n"),
                "a bad --n: %s", text);
    free(text);
    snprintf(path, sizeof path, "%s/no_such_run", ckbt_tmpdir());
    CKBT_EXPECT(run_score(&text, path, NULL) == 1 && strstr(text, "no_such_run"),
                "a missing run is named: %s", text);
    free(text);
}

CKBT_TEST(score_says_out_of_the_suite_when_a_run_covers_it, "quick")
{
    /* A run over every workload of the suite is "solved k/50"-style: the
     * suite's count, and covers_suite in JSON. */
    char dir[600], path[700];
    snprintf(dir, sizeof dir, "%s/suite_run", ckbt_tmpdir());
    ckb_mkdirs(dir);
    json_object *cfg = json_object_new_object(), *ids = json_object_new_array();
    for (int i = 0; i < ckb_workload_count(); i++)
        json_object_array_add(ids, json_object_new_string(ckb_workload_at(i)->id));
    json_object_object_add(cfg, "method", json_object_new_string("best-of-n"));
    json_object_object_add(cfg, "model", json_object_new_string("m"));
    json_object_object_add(cfg, "budget", json_object_new_int(2));
    json_object_object_add(cfg, "workloads", ids);
    snprintf(path, sizeof path, "%s/config.json", dir);
    json_object_to_file(path, cfg);
    json_object_put(cfg);
    char recs[512];
    snprintf(recs, sizeof recs,
             "{\"workload\":\"%s\",\"index\":0,\"status\":\"ok\",\"correct\":true,"
             "\"speedup\":4.0}\n",
             ckb_workload_at(0)->id);
    snprintf(path, sizeof path, "%s/records.jsonl", dir);
    ckb_write_file_atomic(path, recs, strlen(recs));
    ckb_score_set s;
    const char *paths[] = {dir};
    ckb_err err;
    CKBT_EXPECT(ckb_score_load(paths, 1, NULL, 0, NULL, 0, &s, &err) == 0, "%s", err.msg);
    int n = ckb_workload_count();
    CKBT_EXPECT(s.ng == 1 && s.g[0].covers_suite && s.g[0].nw == n && s.g[0].solved == 1 &&
                    same(s.g[0].geomean_speedup, pow(4.0, 1.0 / n)),
                "covers the suite: 1/%d solved, geomean 4^(1/%d)", n, n);
    ckb_strbuf sb = {0};
    ckb_score_text(&s, 0, &sb);
    char want[32];
    snprintf(want, sizeof want, " 1/%d ", n);
    CKBT_EXPECT(strstr(sb.data, want), "the table says %s", want);
    ckb_strbuf_free(&sb);
    ckb_score_free(&s);
}
