/*
 * What a model is shown is true and the expert's is never in it (issue 32):
 * - no prompt of any workload, method or docs choice carries the expert
 *   (its sources' lines, its tuning grid and parameter settings, tuning
 *   words), a GFLOP/s figure this host did not measure, or a protocol
 *   statement the code contradicts ("same process");
 * - the prompt's roofs are the roof the result of the same workload and
 *   size is divided by (the real `ckbench eval` of a kernel, under a
 *   profile stored for the test);
 * - the feedback of a fixed result gives the error and the worst element's
 *   share of its tolerance, the previous kernel's medians, % of the compute
 *   and of the memory roof with the one that binds, and the spread.
 */
#include <ctype.h>
#include <glob.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "bench/expert.h"
#include "core/fsutil.h"
#include "core/strbuf.h"
#include "docs/docs.h"
#include "eval/check.h"
#include "gen/gen.h"
#include "gen/prompt.h"
#include "gen/refsrc.h"
#include "machine/isa.h"
#include "machine/roofline.h"
#include "eval_util.h"
#include "harness.h"

/* A measured-looking profile of this host's facts. */
static void truth_machine(ckb_machine *m)
{
    ckb_machine_probe(2, m);
    m->f32_gflops = 347, m->bf16_dot_gflops = 171, m->bf16_gflops = 347;
    m->f32_gflops_1t = 181, m->bf16_gflops_1t = 181, m->bf16_dot_gflops_1t = 88;
    m->l2_gbs = 211, m->l3_gbs = 93, m->bw_gbs = 27;
    snprintf(m->measured_at, sizeof m->measured_at, "2026-01-01T00:00:00Z");
}

/* Whether v is one of the n figures (as %.0f or %.4g would print it). */
static int truth_known(double v, const double *figs, int n)
{
    for (int i = 0; i < n; i++)
        if (figs[i] > 0 && fabs(v - figs[i]) <= 0.5 + 1e-3 * figs[i])
            return 1;
    return 0;
}

/* Fails for every "<number> GFLOP/s" of text that is not among figs. */
static void truth_gflops(const char *what, const char *text, const double *figs, int n)
{
    for (const char *p = text; (p = strstr(p, " GFLOP/s")); p++) {
        const char *b = p;
        while (b > text && (isdigit((unsigned char)b[-1]) || b[-1] == '.'))
            b--;
        if (b == p)
            continue;
        double v = strtod(b, NULL);
        CKBT_EXPECT(truth_known(v, figs, n), "%s: a GFLOP/s figure not measured here: %.60s",
                    what, b);
    }
}

/* The non-empty lines of text, trimmed (a NULL-terminated array of owned
 * strings; free with truth_lines_free). */
static char **truth_lines(const char *text, int *n)
{
    int cap = 64;
    char **v = malloc(sizeof *v * (size_t)cap);
    *n = 0;
    for (const char *p = text; p && *p;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        const char *b = p;
        while (len && isspace((unsigned char)*b))
            b++, len--;
        while (len && isspace((unsigned char)b[len - 1]))
            len--;
        if (len) {
            if (*n + 1 >= cap)
                v = realloc(v, sizeof *v * (size_t)(cap *= 2));
            v[(*n)++] = strndup(b, len);
        }
        p = eol ? eol + 1 : NULL;
    }
    v[*n] = NULL;
    return v;
}

static void truth_lines_free(char **v, int n)
{
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* A block of the expert's sources a model must never see: three
 * consecutive lines of an expert.c or of the kit's headers (each of 20 or
 * more characters once trimmed, so not braces or a lone `#endif`) that
 * stand one after another in the text. */
static void truth_expert_lines(const char *what, const char *text, const char *src,
                               const char *api)
{
    int nt, ns;
    char **t = truth_lines(text, &nt), **e = truth_lines(src, &ns);
    for (int i = 0; i + 2 < ns; i++) {
        if (strlen(e[i]) < 20 || strlen(e[i + 1]) < 20 || strlen(e[i + 2]) < 20)
            continue;
        for (int j = 0; j + 2 < nt; j++)
            if (!strcmp(t[j], e[i]) && !strcmp(t[j + 1], e[i + 1]) && !strcmp(t[j + 2], e[i + 2])) {
                /* the documented API's own code (the vector exp), which the
                 * kit reuses, is the model's to see */
                CKBT_EXPECT(api && strstr(api, e[i]) && strstr(api, e[i + 1]) &&
                                strstr(api, e[i + 2]),
                            "%s: the expert's source, from '%s'", what, e[i]);
                i += 2;
                break;
            }
    }
    truth_lines_free(t, nt);
    truth_lines_free(e, ns);
}

/* Every check on one message a model gets. */
static const char *truth_api; /* every target's API blocks, concatenated */

static void truth_check(const char *what, const ckb_workload *w, const char *text,
                        const double *figs, int nfigs, const char *const *expert_srcs,
                        int nsrc)
{
    static const char *const banned[] = {
        "same process", "expert.c", "expert-kit", "ckb_kit_", "tuned.json", "ckbench tune",
        "**Expert**", "Tunable",
        /* a README's grid size, "(60 configurations)"; the word alone is the
         * input configurations a workload is judged on, the model's to see */
        "configurations)", "configurations, all correct", "configurations; ", "1065", "1.07x", "1.73x", "1946 GFLOP",
        "reference machine", "the AMX host", "on the issue-",
    };
    for (size_t i = 0; i < sizeof banned / sizeof *banned; i++)
        CKBT_EXPECT(!strstr(text, banned[i]), "%s: '%s' in what the model sees", what,
                    banned[i]);
    /* the expert's parameter settings and grids: "MR=6", "`MR` {5, 6}" */
    for (int k = 0; k < CKB_MAX_PARAMS && w->params[k].name; k++) {
        const char *name = w->params[k].name;
        char a[64], b[64], c[64];
        snprintf(a, sizeof a, "%s=", name);
        snprintf(b, sizeof b, "`%s` {", name);
        snprintf(c, sizeof c, "%s {", name);
        for (const char *p = text; (p = strstr(p, a)); p++) {
            int word = p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
            CKBT_EXPECT(!(word && isdigit((unsigned char)p[strlen(a)])),
                        "%s: the expert's setting '%.20s'", what, p);
        }
        CKBT_EXPECT(!strstr(text, b) && !strstr(text, c), "%s: the expert's grid of %s", what,
                    name);
    }
    truth_gflops(what, text, figs, nfigs);
    for (int i = 0; i < nsrc; i++)
        truth_expert_lines(what, text, expert_srcs[i], truth_api);
}

/* The eval result of a correct kernel on w at size s, as `ckbench eval`
 * writes it, with the roof of m. */
static json_object *truth_result(const ckb_workload *w, ckb_size s, const ckb_machine *m,
                                 double cand_ms, double base_ms)
{
    int64_t d[CKB_MAX_DIMS];
    ckb_workload_dims(w, s, d);
    ckb_roof r;
    ckb_roof_for_workload(m, w, s, &r);
    json_object *j = json_object_new_object(), *c = json_object_new_object(),
                *b = json_object_new_object();
    json_object_object_add(j, "workload", json_object_new_string(w->id));
    json_object_object_add(j, "size", json_object_new_string(ckb_size_name(s)));
    json_object_object_add(j, "status", json_object_new_string("ok"));
    json_object_object_add(j, "correct", json_object_new_boolean(1));
    json_object_object_add(j, "max_abs_err", json_object_new_double(0.0039));
    json_object_object_add(j, "worst_tol_share", json_object_new_double(0.41));
    json_object_object_add(c, "median_ms", json_object_new_double(cand_ms));
    json_object_object_add(c, "min_ms", json_object_new_double(cand_ms * 0.95));
    json_object_object_add(c, "max_ms", json_object_new_double(cand_ms * 1.25));
    json_object_object_add(c, "std_ms", json_object_new_double(cand_ms * 0.05));
    json_object_object_add(c, "n", json_object_new_int(50));
    json_object_object_add(b, "median_ms", json_object_new_double(base_ms));
    json_object_object_add(b, "min_ms", json_object_new_double(base_ms * 0.98));
    json_object_object_add(b, "max_ms", json_object_new_double(base_ms * 1.1));
    json_object_object_add(b, "std_ms", json_object_new_double(base_ms * 0.02));
    json_object_object_add(b, "n", json_object_new_int(50));
    json_object_object_add(j, "candidate", c);
    json_object_object_add(j, "baseline", b);
    json_object_object_add(j, "flops", json_object_new_double(w->flops(d)));
    json_object_object_add(j, "bytes", json_object_new_double(w->bytes(d)));
    json_object_object_add(j, "arithmetic_intensity",
                           json_object_new_double(w->flops(d) / w->bytes(d)));
    json_object_object_add(j, "gflops", json_object_new_double(w->flops(d) / cand_ms / 1e6));
    json_object_object_add(j, "timing_disturbed", json_object_new_boolean(0));
    json_object_object_add(j, "roof", ckb_roof_to_json(&r));
    return j;
}

CKBT_TEST(prompt_never_shows_the_expert, "quick")
{
    /* Every workload, every method, with and without the documentation
     * (this host's target), and a refine turn with feedback: no expert, no
     * figure from elsewhere, no "same process". */
    ckb_machine m;
    truth_machine(&m);
    ckb_machine stored;
    int measured = 0;
    ckb_gen_machine(2, &stored, &measured);
    /* the figures a prompt may quote: the fake profile's, the stored one's
     * (ckb_gen_prompt_text reads it), and the feedback's own rates */
    double figs[32];
    int nf = 0;
    const ckb_machine *ms[2] = {&m, &stored};
    for (int k = 0; k < (measured ? 2 : 1); k++) {
        const ckb_machine *x = ms[k];
        double v[] = {x->f32_gflops,    x->bf16_dot_gflops,    x->bf16_amx_gflops,
                      x->bf16_gflops,   x->f32_gflops_1t,      x->bf16_gflops_1t,
                      x->bf16_dot_gflops_1t, ckb_roof_compute(x, CKB_PREC_BF16, NULL)};
        for (size_t i = 0; i < sizeof v / sizeof *v; i++)
            figs[nf++] = v[i];
    }
    const ckb_gen_method methods[] = {CKB_GEN_BEST_OF_N, CKB_GEN_REFINE, CKB_GEN_REFINE_DOCS,
                                      CKB_GEN_BEAM};
    /* every header of the kit, once (a new header is checked without a list to keep) */
    char *srcs[32];
    int nkit = 0;
    char pattern[1024];
    snprintf(pattern, sizeof pattern, "%s/expert-kit/*.h", ckb_home());
    glob_t kit;
    CKBT_EXPECT(glob(pattern, 0, NULL, &kit) == 0 && kit.gl_pathc >= 7 &&
                    kit.gl_pathc < sizeof srcs / sizeof *srcs,
                "the kit's headers (%s): %zu", pattern, (size_t)kit.gl_pathc);
    for (size_t i = 0; i < kit.gl_pathc && i + 1 < sizeof srcs / sizeof *srcs; i++) {
        srcs[nkit] = ckb_read_file(kit.gl_pathv[i], NULL);
        CKBT_EXPECT(srcs[nkit], "cannot read %s", kit.gl_pathv[i]);
        if (srcs[nkit])
            nkit++;
    }
    globfree(&kit);
    ckb_strbuf api = {0};
    static const char *const targets[] = {"x86-avx512", "x86-avx2", "generic-c"};
    for (size_t k = 0; k < 3; k++) {
        ckb_docs_set ds;
        char dpath[1024];
        ckb_err err;
        snprintf(dpath, sizeof dpath, "%s/docs/%s", ckb_home(), targets[k]);
        if (ckb_docs_load(dpath, &ds, &err) != 0)
            continue;
        for (int i = 0; i < ds.n; i++)
            if (ds.v[i].kind == CKB_DOCS_API)
                ckb_strbuf_printf(&api, "%s\n", ds.v[i].body);
        ckb_docs_set_free(&ds);
    }
    truth_api = api.data;
    int nprompts = 0;
    for (int wi = 0; wi < ckb_workload_count(); wi++) {
        const ckb_workload *w = ckb_workload_at(wi);
        char path[1024];
        int nsrc = nkit;
        if (ckb_expert_path(w, path, sizeof path))
            srcs[nsrc] = ckb_read_file(path, NULL), nsrc += srcs[nsrc] != NULL;
        for (size_t mi = 0; mi < sizeof methods / sizeof *methods; mi++)
            for (int docs = 0; docs < 2; docs++) {
                ckb_err err;
                char what[160];
                char *text = ckb_gen_prompt_text(w, methods[mi], docs, CKB_SIZE_DEFAULT, 2, NULL,
                                                 NULL, &err);
                CKBT_EXPECT(text, "%s: %s", w->id, err.msg);
                snprintf(what, sizeof what, "%s %s%s", w->id, ckb_gen_method_name(methods[mi]),
                         docs ? " --docs" : "");
                if (text)
                    truth_check(what, w, text, figs, nf, (const char *const *)srcs, nsrc);
                free(text);
                nprompts++;
            }
        /* a refine turn on the fake profile, docs rendered for it */
        ckb_strbuf d = {0};
        ckb_err err;
        ckb_docs_opts o = {.cache_dir = "", .machine = &m};
        CKBT_EXPECT(ckb_docs_build(w, &o, &d, NULL, &err) == 0, "%s docs: %s", w->id, err.msg);
        ckb_gen_task t = {.w = w, .size = CKB_SIZE_DEFAULT, .threads = 2,
                          .reference = ckb_gen_shown(w), .docs = d.data, .machine = m,
                          .measured = 1};
        json_object *before = truth_result(w, CKB_SIZE_DEFAULT, &m, 40, 30);
        json_object *now = truth_result(w, CKB_SIZE_DEFAULT, &m, 20, 30);
        ckb_gen_prev prev = {.code = "void workload(void) {}\n", .status = "ok", .eval = now,
                             .before = before};
        int64_t dd[CKB_MAX_DIMS];
        ckb_workload_dims(w, CKB_SIZE_DEFAULT, dd);
        double more[40];
        int nm = nf;
        memcpy(more, figs, sizeof(double) * (size_t)nf);
        more[nm++] = w->flops(dd) / 20e-3 / 1e9; /* the feedback's own rate */
        ckb_roof r;
        ckb_roof_for_workload(&m, w, CKB_SIZE_DEFAULT, &r);
        more[nm++] = r.compute_gflops;
        ckb_gen_prompt p;
        ckb_gen_prompt_refine(&t, &prev, &p);
        for (int k = 0; k < p.n; k++) {
            char what[160];
            snprintf(what, sizeof what, "%s refine turn, message %d", w->id, k);
            truth_check(what, w, p.msgs[k].content, more, nm, (const char *const *)srcs, nsrc);
        }
        ckb_gen_prompt_free(&p);
        json_object_put(before);
        json_object_put(now);
        ckb_strbuf_free(&d);
        for (int i = nkit; i < nsrc; i++)
            free(srcs[i]);
    }
    for (int i = 0; i < nkit; i++)
        free(srcs[i]);
    CKBT_EXPECT(nprompts == ckb_workload_count() * 8, "%d prompts", nprompts);
    truth_api = NULL;
    ckb_strbuf_free(&api);
}

CKBT_TEST(prompt_states_the_protocol_the_code_runs, "quick")
{
    /* The timing paragraph comes from the evaluator's constants: its
     * defaults, or the run's own counts. */
    const ckb_workload *w = ckb_workload_find("12p");
    ckb_gen_task t = {.w = w, .size = CKB_SIZE_SMALL, .threads = 3,
                      .reference = ckb_gen_shown(w)};
    truth_machine(&t.machine);
    t.measured = 1;
    ckb_eval_opts eo;
    ckb_eval_opts_default(&eo);
    ckb_gen_prompt p;
    ckb_gen_prompt_oneshot(&t, &p);
    char want[256];
    snprintf(want, sizeof want, "%d warm-up and %d timed calls", eo.warmup, eo.iters);
    const char *sys = p.msgs[0].content;
    CKBT_EXPECT(strstr(sys, want) && strstr(sys, "own sandboxed process") &&
                    !strstr(sys, "same process") && strstr(sys, "same CPUs, 3 threads each"),
                "the protocol (%s):\n%s", want, sys);
    snprintf(want, sizeof want, "Checked on %d input sets", eo.nseeds);
    CKBT_EXPECT(strstr(sys, want), "the checked sets (%s)", want);
    snprintf(want, sizeof want, "over %g%% of the machine's CPU time is redone (%d runs",
             eo.max_steal_pct, CKB_EVAL_TIMING_RUNS);
    CKBT_EXPECT(strstr(sys, want), "the disturbance rule (%s):\n%s", want, sys);
    ckb_gen_prompt_free(&p);
    t.warmup = 2, t.iters = 9, t.nseeds = 5;
    ckb_gen_prompt_oneshot(&t, &p);
    CKBT_EXPECT(strstr(p.msgs[0].content, "2 warm-up and 9 timed calls") &&
                    strstr(p.msgs[0].content, "Checked on 5 input sets"),
                "the run's own counts:\n%s", p.msgs[0].content);
    ckb_gen_prompt_free(&p);
}

/* "<label> <number>" in text as a number, NAN when absent. */
static double truth_after(const char *text, const char *label)
{
    const char *p = text ? strstr(text, label) : NULL;
    return p ? strtod(p + strlen(label), NULL) : NAN;
}

static int truth_close(double a, double b) { return fabs(a - b) <= 0.5 + 1e-3 * fabs(b); }

CKBT_TEST(prompt_roofs_are_the_results_roof, "full")
{
    /* The roofs the prompt states for a workload and size are the roof its
     * evaluation result is divided by: a real `ckbench eval` and `ckbench
     * prompt` under the same stored profile (the test's, with an L3 big
     * enough that 8p's small working set is an L3 one, not DRAM). */
    char cache[600], dir[700], cmd[4096], prof[800];
    snprintf(cache, sizeof cache, "%s/cache", ckbt_tmpdir());
    snprintf(dir, sizeof dir, "%s/ckbench", cache);
    ckb_mkdirs(dir);
    ckb_machine m;
    truth_machine(&m);
    m.l2 = 64 * 1024; /* 8p small, 0.65 MB: past the L2s, inside the L3 */
    m.l3 = 32 << 20;
    /* the children's default path under the test's cache (not this
     * process's ckb_machine_default_path: its cache folder is fixed at its
     * first use, and the host's stored profile must stay untouched) */
    snprintf(prof, sizeof prof, "%s/machine-2t-%s.json", dir, ckb_isa_name(ckb_isa_level()));
    CKBT_EXPECT(ckb_machine_save(&m, prof) == 0, "cannot store the profile at %s", prof);
    char *saved = ckbt_env_save("XDG_CACHE_HOME");
    setenv("XDG_CACHE_HOME", cache, 1);
    const ckb_workload *w = ckb_workload_find("8p");
    ckb_roof want;
    ckb_roof_for_workload(&m, w, CKB_SIZE_SMALL, &want);
    CKBT_EXPECT(want.mem_level && strcmp(want.mem_level, "l3") == 0, "the test's profile puts "
                "8p small in L3 (%s)", want.mem_level ? want.mem_level : "?");
    /* a correct kernel: the plain reference's loops */
    char src[700], out[700], pout[700];
    snprintf(src, sizeof src, "%s/k.c", ckbt_tmpdir());
    snprintf(out, sizeof out, "%s/eval.json", ckbt_tmpdir());
    snprintf(pout, sizeof pout, "%s/prompt.txt", ckbt_tmpdir());
    const char *k = "void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)\n{\n"
                    "#pragma omp parallel for\n"
                    "    for (long i = 0; i < M; i++)\n"
                    "        for (long j = 0; j < N; j++) {\n"
                    "            float a = 0;\n"
                    "            for (long k = 0; k < K; k++)\n"
                    "                a += ckb_bf16_to_f32(A[i * K + k]) * ckb_bf16_to_f32(B[k * N + j]);\n"
                    "            C[i * N + j] = ckb_f32_to_bf16(a);\n"
                    "        }\n}\n";
    ckb_write_file_atomic(src, k, strlen(k));
    snprintf(cmd, sizeof cmd,
             "%s eval 8p %s --size small --threads 2 --warmup 1 --iters 3 >%s 2>/dev/null && "
             "%s prompt 8p --size small --threads 2 --method refine >%s 2>/dev/null",
             ckbt_bin(), src, out, ckbt_bin(), pout);
    int st = system(cmd);
    CKBT_EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0, "eval and prompt ran (%d)", st);
    json_object *res = json_object_from_file(out), *rj = NULL;
    char *text = ckb_read_file(pout, NULL);
    ckb_roof got;
    CKBT_EXPECT(res && json_object_object_get_ex(res, "roof", &rj) &&
                    ckb_roof_from_json(rj, &got) == 0,
                "the result carries its roof");
    if (res && rj && text) {
        json_object *sh = NULL;
        CKBT_EXPECT(json_object_object_get_ex(res, "worst_tol_share", &sh) && sh &&
                        json_object_get_double(sh) >= 0 && json_object_get_double(sh) <= 1 &&
                        json_object_get_double(sh) > 0,
                    "a correct result's worst_tol_share in (0, 1]: %s",
                    sh ? json_object_get_string(sh) : "absent");
        CKBT_EXPECT(got.compute_gflops == want.compute_gflops && got.mem_gbs == want.mem_gbs &&
                        got.mem_level && strcmp(got.mem_level, "l3") == 0,
                    "the result's roof is the profile's for 8p small: %g %s %g", got.mem_gbs,
                    got.mem_level ? got.mem_level : "?", got.compute_gflops);
        double pc = truth_after(text, "compute roof: "), pm = truth_after(text, "memory roof: ");
        char level[64];
        snprintf(level, sizeof level, "GB/s from %s (", ckb_roof_level_label(got.mem_level));
        CKBT_EXPECT(truth_close(pc, got.compute_gflops) && truth_close(pm, got.mem_gbs) &&
                        strstr(text, level) && strstr(text, ckb_roof_unit_label(got.unit)),
                    "the prompt's roofs (%g GFLOP/s, %g GB/s) are the result's (%g from %s, %g "
                    "from %s):\n%.3000s",
                    pc, pm, got.compute_gflops, ckb_roof_unit_label(got.unit), got.mem_gbs,
                    ckb_roof_level_label(got.mem_level), strstr(text, "- Roofs") ? strstr(text, "- Roofs") : text);
        /* and the feedback on that result quotes the same roofs */
        const char *bound = ckbt_str(res, "bound");
        json_object *dist = NULL;
        int disturbed = json_object_object_get_ex(res, "timing_disturbed", &dist) &&
                        json_object_get_boolean(dist);
        ckb_strbuf fb = {0};
        ckb_gen_feedback(&fb, "ok", res, &m);
        char cr[96], mr[96];
        snprintf(cr, sizeof cr, "of the compute roof (%.4g GFLOP/s, %s)", got.compute_gflops,
                 ckb_roof_unit_label(got.unit));
        snprintf(mr, sizeof mr, "of the memory roof (%.4g GB/s, L3)", got.mem_gbs);
        char binds[64];
        snprintf(binds, sizeof binds, "the %s roof binds", bound ? bound : "?");
        CKBT_EXPECT(disturbed ||
                        (strstr(fb.data, cr) && strstr(fb.data, mr) && strstr(fb.data, binds)),
                    "the feedback's roofs (%s; %s; %s):\n%s", cr, mr, binds, fb.data);
        ckb_strbuf_free(&fb);
    }
    free(text);
    json_object_put(res);
    ckbt_env_restore("XDG_CACHE_HOME", saved);
}

CKBT_TEST(feedback_gives_error_share_previous_roofs_spread, "quick")
{
    static const char want0[] = "Correct; max abs error: 0.0039; the worst element used 41% of its "
                          "tolerance";
    static const char want1[] = "your kernel 250 ms (median of 50 calls; min 237.5, max 312.5, std "
                          "12.5 ms; spread (max - min) / median 30.0%)";
    static const char want2[] = "baseline 300 ms (median of 50 calls; min 294, max 330, std 6 ms; "
                              "spread (max - min) / median 12.0%)";
    static const char want3[] = "Against the previous kernel: its median 400 ms (baseline 300 ms, "
                          "speedup 0.75x) -> this one 250 ms (baseline 300 ms, speedup 1.2x): "
                          "faster by 37.5%";
    static const char want4[] = "79.2% of the compute roof (347 GFLOP/s, f32 FMA (vfmadd))";
    static const char want5[] = "0.994% of the memory roof (27 GB/s, DRAM)";
    static const char want6[] = "Max abs error: 0.5; the worst element used 1250% of its "
                                "tolerance (atol + rtol*|expected|): out of tolerance";
    /* A fixed result, 8p at default size on the test's profile (working set
     * 67 MB: DRAM, compute-bound): the error with the worst element's share
     * of its tolerance, both medians with their spread, the previous
     * kernel's medians beside, % of the compute roof and of the memory roof
     * with the one that binds. */
    ckb_machine m;
    truth_machine(&m);
    m.l3 = 32 << 20;
    const ckb_workload *w = ckb_workload_find("8p");
    json_object *before = truth_result(w, CKB_SIZE_DEFAULT, &m, 400, 300);
    json_object *now = truth_result(w, CKB_SIZE_DEFAULT, &m, 250, 300);
    ckb_strbuf sb = {0};
    ckb_gen_feedback_turn(&sb, "ok", now, before, &m);
    const char *t = sb.data;
    /* 68.72 GFLOP in 250 ms = 274.9 GFLOP/s = 79.2% of 347; 67.1 MB in
     * 250 ms = 0.2684 GB/s = 0.994% of DRAM's 27 */
    CKBT_EXPECT(strstr(t, want0),
                "the error and its share:\n%s", t);
    CKBT_EXPECT(strstr(t, want1) &&
                    strstr(t, want2) &&
                    strstr(t, "speedup 1.2x"),
                "both medians with their spread:\n%s", t);
    CKBT_EXPECT(strstr(t, want3),
                "the previous medians beside:\n%s", t);
    CKBT_EXPECT(strstr(t, "Profile: 274.9 GFLOP/s and 0.2684 GB/s") &&
                    strstr(t, want4) &&
                    strstr(t, want5) &&
                    strstr(t, "the compute roof binds") && strstr(t, "no kernel beats 198 ms"),
                "the roofs, and which binds:\n%s", t);
    ckb_strbuf_free(&sb);
    /* A wrong result: the share over 100%, said to be out of tolerance. */
    json_object_object_add(now, "status", json_object_new_string("wrong_result"));
    json_object_object_add(now, "max_abs_err", json_object_new_double(0.5));
    json_object_object_add(now, "worst_tol_share", json_object_new_double(12.5));
    ckb_gen_feedback_turn(&sb, "wrong_result", now, NULL, &m);
    CKBT_EXPECT(strstr(sb.data, want6),
                "a wrong result's share:\n%s", sb.data);
    ckb_strbuf_free(&sb);
    /* Disturbed: said as before, no figures to act on. */
    json_object_object_add(now, "timing_disturbed", json_object_new_boolean(1));
    ckb_gen_feedback_turn(&sb, "ok", now, before, &m);
    CKBT_EXPECT(strstr(sb.data, "DISTURBED") && !strstr(sb.data, "Against the previous") &&
                    !strstr(sb.data, "roof binds"),
                "disturbed:\n%s", sb.data);
    ckb_strbuf_free(&sb);
    json_object_put(before);
    json_object_put(now);
}

CKBT_TEST(check_worst_tolerance_share, "quick")
{
    /* The share of its own tolerance the worst element uses, on the fast
     * path (all pass) and the slow one (one fails): |got - want| /
     * (atol + rtol*|want|). */
    float want[200], got[200];
    for (int i = 0; i < 200; i++)
        want[i] = got[i] = 1.0f + (float)i;
    got[7] = 8.0f + 0.04f;   /* tol 0.01 + 0.01*8 = 0.09: 0.04/0.09 = 0.444 */
    got[150] = 151.0f + 0.5f; /* tol 1.52: 0.329 */
    ckb_check c;
    ckb_check_allclose(CKB_F32, got, want, 200, 0.01, 0.01, &c);
    CKBT_EXPECT(c.ok && fabs(c.max_tol_share - 0.04 / 0.09) < 1e-3,
                "all within: ok %d, share %g", c.ok, c.max_tol_share);
    /* JAXBench's max_rel_diff: |got - want| / |want|, 0.04 / 8 = 0.005 the
     * largest (151.5 vs 151: 0.0033); a zero in the reference is skipped */
    CKBT_EXPECT(fabs(c.max_rel_err - 0.04 / 8) < 1e-6, "max relative error %g (want 0.005)",
                c.max_rel_err);
    float wz[2] = {0.0f, 2.0f}, gz[2] = {0.005f, 2.01f};
    ckb_check z;
    ckb_check_allclose(CKB_F32, gz, wz, 2, 0.01, 0.01, &z);
    CKBT_EXPECT(z.ok && fabs(z.max_rel_err - 0.005) < 1e-6,
                "a zero reference element is no division by zero: %g", z.max_rel_err);
    got[3] = 4.0f + 0.25f; /* tol 0.05: 5x its tolerance */
    ckb_check_allclose(CKB_F32, got, want, 200, 0.01, 0.01, &c);
    CKBT_EXPECT(fabs(c.max_rel_err - 0.25 / 4) < 1e-6, "the slow path's relative error %g",
                c.max_rel_err);
    CKBT_EXPECT(!c.ok && c.nbad == 1 && fabs(c.max_tol_share - 5.0) < 1e-3 && c.worst == 3,
                "one out: ok %d, share %g, worst %lld", c.ok, c.max_tol_share,
                (long long)c.worst);
    ckb_check d;
    got[3] = want[3];
    ckb_check_allclose(CKB_F32, got, want, 200, 0.01, 0.01, &d);
    ckb_check_merge(&c, &d);
    CKBT_EXPECT(fabs(c.max_tol_share - 5.0) < 1e-3, "merged: the larger share (%g)",
                c.max_tol_share);
}
