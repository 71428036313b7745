/* The generation engine: best-of-n, refine, refine-docs (beam: beam.c). */
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/expert.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/jsonget.h"
#include "core/parallel.h"
#include "core/say.h"
#include "core/utf8.h"
#include "docs/docs.h"
#include "gen/refsrc.h"
#include "gen/sample.h"

static const char *const gen__methods[CKB_GEN_METHOD_COUNT] = {"best-of-n", "refine",
                                                               "refine-docs", "beam"};

const char *ckb_gen_method_name(ckb_gen_method m)
{
    return (unsigned)m < CKB_GEN_METHOD_COUNT ? gen__methods[m] : "unknown";
}

int ckb_gen_method_parse(const char *s, ckb_gen_method *out)
{
    for (int i = 0; s && i < CKB_GEN_METHOD_COUNT; i++)
        if (strcmp(s, gen__methods[i]) == 0) {
            *out = (ckb_gen_method)i;
            return 0;
        }
    return -1;
}

int ckb_gen_method_uses_docs(ckb_gen_method m)
{
    return m == CKB_GEN_REFINE_DOCS || m == CKB_GEN_BEAM;
}

void ckb_gen_opts_default(ckb_gen_opts *o)
{
    memset(o, 0, sizeof *o);
    o->method = CKB_GEN_BEST_OF_N;
    o->budget = 144;
    o->turns = 8;
    o->beam_width = 3;
    o->beam_candidates = 6;
    o->translate_iters = 4;
    o->jobs = 1;
    o->concurrency = 4;
    o->use_expert = 1;
    ckb_eval_opts_default(&o->eval);
}

void ckb_gen_refine_shape(const ckb_gen_opts *o, int *chains, int *turns)
{
    int t = o->turns > 0 ? o->turns : 8;
    if (t > o->budget)
        t = o->budget;
    int c = o->chains > 0 ? o->chains : (o->budget + t - 1) / t;
    *chains = c;
    *turns = t;
}

int ckb_gen_task_load(const ckb_workload *w, ckb_size size, int threads, int with_docs,
                      const char *docs_target, ckb_gen_task *t, ckb_err *err)
{
    memset(t, 0, sizeof *t);
    t->w = w;
    t->size = size;
    t->threads = threads;
    t->reference = ckb_gen_reference_source(w, err);
    if (!t->reference)
        return err ? err->code : CKB_E_NOT_FOUND;
    ckb_gen_machine(threads, &t->machine, &t->measured);
    if (with_docs) {
        ckb_strbuf sb = {0};
        int rc = ckb_docs_for_workload(w, docs_target, &sb, NULL, err);
        if (rc != CKB_OK) {
            ckb_strbuf_free(&sb);
            ckb_gen_task_free(t);
            return rc;
        }
        t->docs = ckb_strbuf_take(&sb);
    }
    return CKB_OK;
}

void ckb_gen_task_free(ckb_gen_task *t)
{
    free((char *)t->reference);
    free((char *)t->docs);
    memset(t, 0, sizeof *t);
}

static void gen__prompt_append(ckb_strbuf *sb, ckb_strbuf *sizes, const ckb_gen_prompt *p,
                               const char *title)
{
    char *text = ckb_gen_prompt_render(p);
    if (title)
        ckb_strbuf_printf(sb, "##### %s\n", title);
    ckb_strbuf_append(sb, text, strlen(text));
    free(text);
    long chars = ckb_gen_prompt_chars(p);
    ckb_strbuf_printf(sizes, "%s%s%ld chars, ~%ld tokens\n", title ? title : "", title ? ": " : "",
                      chars, chars / 4);
}

char *ckb_gen_prompt_text(const ckb_workload *w, ckb_gen_method m, int docs, ckb_size size,
                          int threads, const char *docs_target, char **sizes, ckb_err *err)
{
    ckb_gen_task t;
    if (ckb_gen_task_load(w, size, threads, docs || ckb_gen_method_uses_docs(m), docs_target, &t,
                          err) != 0)
        return NULL;
    ckb_strbuf sb = {0}, sz = {0};
    ckb_gen_prompt p;
    if (m == CKB_GEN_BEAM) {
        ckb_gen_prev root = {0};
        ckb_gen_prompt_plan(&t, &root, "translate", 1, 4, &p);
        gen__prompt_append(&sb, &sz, &p, "plan request");
        ckb_gen_prompt_free(&p);
        ckb_gen_prompt_implement(&t, &root, "<the plan the model replied>", &p);
        ckb_strbuf_append(&sb, "\n", 1);
        gen__prompt_append(&sb, &sz, &p, "implementation request");
    } else {
        ckb_gen_prompt_oneshot(&t, &p);
        gen__prompt_append(&sb, &sz, &p, NULL);
    }
    ckb_gen_prompt_free(&p);
    ckb_gen_task_free(&t);
    if (sizes)
        *sizes = ckb_strbuf_take(&sz);
    else
        ckb_strbuf_free(&sz);
    return ckb_strbuf_take(&sb);
}

/* The expert's speedup at this size and thread budget: evaluated once per
 * run (RUN/expert/<id>.json), NAN when the workload has none or it failed. */
static double gen__expert(ckb_gen_wl *g)
{
    char src[1024], dir[1100], path[1400];
    if (!g->o->use_expert || !ckb_expert_path(g->w, src, sizeof src))
        return NAN;
    snprintf(dir, sizeof dir, "%s/expert", ckb_run_dir(g->run));
    snprintf(path, sizeof path, "%s/%s.json", dir, g->w->id);
    json_object *j = json_object_from_file(path);
    if (j && ckb_json_timing_disturbed(j)) {
        json_object_put(j); /* saved by an older ckbench: not a figure, time it again */
        j = NULL;
    }
    /* A disturbed timing is not a figure: a few tries, then none. */
    for (int t = 0; !j && t < CKB_GEN_RETIME_TRIES; t++) {
        ckb_eval_opts eo = g->o->eval;
        ckb_expert_config cfg;
        ckb_expert_config_load(g->w, eo.size, eo.threads, g->o->machine, &cfg);
        eo.defines = cfg.defines;
        eo.ndefines = cfg.n;
        if (!g->o->quiet)
            ckb_say("[%s] timing the expert%s (for %% of expert)\n", g->w->id,
                    t ? " again: its timing was disturbed" : " once");
        char name[200];
        snprintf(name, sizeof name, "expert-%s-%d", g->w->id, t);
        if (ckb_gen_eval(g, name, src, &eo, &j) != 0) {
            ckb_say("ckbench: [%s] the expert's evaluation failed: %s\n", g->w->id, g->error);
            g->error[0] = 0;
            return NAN;
        }
        if (ckb_json_timing_disturbed(j)) {
            json_object_put(j);
            j = NULL;
            continue;
        }
        const char *text = ckb_json_text(j, JSON_C_TO_STRING_PRETTY);
        if (ckb_mkdirs(dir) != 0 || ckb_write_file_atomic(path, text, strlen(text)) != 0)
            ckb_say("ckbench: cannot save %s (the expert is timed again on resume)\n", path);
    }
    if (!j) {
        ckb_say("[%s] the expert's timing stayed disturbed: no %% of expert for now "
                "(timed again on resume)\n",
                g->w->id);
        return NAN;
    }
    double s = ckb_rec_correct(j) ? ckb_json_num(j, "speedup") : NAN;
    json_object_put(j);
    return s;
}

/* ---- best-of-n ---------------------------------------------------------- */

static void gen__bon_one(void *ctx, int i)
{
    ckb_gen_wl *g = ctx;
    ckb_sample_spec s = {.kind = CKB_SAMPLE_ONESHOT, .index = i, .chain = -1, .turn = -1,
                         .parent = -1};
    ckb_gen_sample(g, &s);
}

/* ---- refine ------------------------------------------------------------- */

/* One chain: turn 0 from the one-shot prompt, each later turn from the
 * chain's latest kernel (the last reply that had code) and its feedback. */
static void gen__chain(void *ctx, int c)
{
    ckb_gen_wl *g = ctx;
    int chains, turns;
    ckb_gen_refine_shape(g->o, &chains, &turns);
    json_object *last_code = NULL, *last = NULL, *code_before = NULL;
    int last_code_index = -1;
    for (int t = 0; t < turns && !g->failed; t++) {
        int index = c * turns + t;
        if (index >= g->o->budget)
            break;
        ckb_sample_spec s = {.kind = t == 0 ? CKB_SAMPLE_ONESHOT : CKB_SAMPLE_REFINE,
                             .index = index, .chain = c, .turn = t, .parent = -1};
        if (t > 0) {
            if (last_code) {
                s.prev = ckb_rec_prev(last_code);
                s.parent = last_code_index;
                s.prev.no_code_after = last != last_code;
                /* the kernel before it in the chain: its medians beside */
                s.prev.before = code_before ? ckb_rec_prev(code_before).eval : NULL;
            } else {
                /* No kernel yet in this chain: the last failure is the feedback. */
                s.prev.status = ckb_rec_str(last, "status");
                s.parent = index - 1;
            }
        }
        last = ckb_gen_sample(g, &s);
        if (!last)
            return;
        json_object *code;
        if (json_object_object_get_ex(last, "code", &code) && code) {
            code_before = last_code;
            last_code = last;
            last_code_index = index;
        }
    }
}

/* ---- a workload, the run ------------------------------------------------ */

static int gen__workload(ckb_gen_wl *g)
{
    ckb_err err;
    if (g->sh->unreachable)
        return 0; /* the run stops; ckb_gen_run says why */
    if (ckb_gen_task_load(g->w, g->o->eval.size, g->o->eval.threads,
                          ckb_gen_method_uses_docs(g->o->method), g->o->docs_target, &g->task,
                          &err) != 0) {
        ckb_err_prefix(&err, "%s: ", g->w->id);
        snprintf(g->error, sizeof g->error, "%.500s", err.msg);
        return -1;
    }
    g->task.nseeds = g->o->eval.nseeds;
    g->task.warmup = g->o->eval.warmup;
    g->task.iters = g->o->eval.iters;
    g->expert_speedup = gen__expert(g);
    ckb_run_set_expert(g->run, g->w->id, g->expert_speedup);
    int chains, turns;
    switch (g->o->method) {
    case CKB_GEN_BEST_OF_N:
        ckb_parallel_for(g->o->budget, g->o->concurrency, gen__bon_one, g);
        break;
    case CKB_GEN_REFINE:
    case CKB_GEN_REFINE_DOCS:
        ckb_gen_refine_shape(g->o, &chains, &turns);
        ckb_parallel_for(chains, g->o->concurrency, gen__chain, g);
        break;
    case CKB_GEN_BEAM:
        ckb_gen_beam(g);
        break;
    default:
        break;
    }
    ckb_run_write_summary(g->run);
    return g->failed ? -1 : 0;
}

typedef struct {
    ckb_gen_wl *wl;
    int rc;
} gen__all;

static void gen__one_workload(void *ctx, int i)
{
    gen__all *a = ctx;
    if (gen__workload(&a->wl[i]) != 0) {
        ckb_say("ckbench: %s\n", a->wl[i].error);
        __atomic_store_n(&a->rc, -1, __ATOMIC_RELAXED);
    }
}

int ckb_gen_run(ckb_provider *p, ckb_run *run, const ckb_workload *const *workloads, int n,
                const ckb_gen_opts *o)
{
    gen__all a = {ckb_xcalloc((size_t)n, sizeof(ckb_gen_wl)), 0};
    ckb_gen_shared sh = {.mu = PTHREAD_MUTEX_INITIALIZER};
    ckb_exec *local = NULL;
    if (!o->exec) {
        ckb_exec_config ec;
        ckb_err err;
        ckb_exec_config_default(&ec);
        if (!(local = ckb_exec_open(&ec, &err))) {
            ckb_say("ckbench: %s\n", err.msg);
            free(a.wl);
            return -1;
        }
    }
    for (int i = 0; i < n; i++)
        a.wl[i] = (ckb_gen_wl){.o = o, .sh = &sh, .p = p, .run = run, .w = workloads[i],
                               .exec = o->exec ? o->exec : local, .expert_speedup = NAN};
    ckb_parallel_for(n, o->jobs, gen__one_workload, &a);
    ckb_run_write_summary(run);
    /* Drain the disturbed timings: a figure is measured undisturbed or it
     * is not one (DESIGN §5). */
    ckb_retime_stats rs = {0};
    if (!sh.unreachable && ckb_gen_retime_on(run, &o->eval, o->exec ? o->exec : local,
                                             CKB_GEN_RETIME_TRIES, o->quiet, &rs) != 0)
        a.rc = -1;
    if (rs.still_disturbed)
        ckb_say("ckbench: %d correct sample%s kept a disturbed timing after %d rounds: shown as "
                "disturbed, not counted as a speedup; run `ckbench retime %s` when the machine "
                "is quieter\n",
                rs.still_disturbed, rs.still_disturbed == 1 ? "" : "s", CKB_GEN_RETIME_TRIES,
                ckb_run_dir(run));
    if (sh.unreachable)
        ckb_say("ckbench: stopped: the provider cannot be reached (%d calls in a row failed; "
                "last: %s). Nothing was counted against the model; fix the provider and run "
                "`ckbench generate --resume %s`\n",
                sh.infra_streak, sh.infra_error, ckb_run_dir(run));
    else if (sh.infra_total)
        ckb_say("ckbench: %d model call%s failed on the provider's side (last: %s); recorded "
                "as infra_error, not counted; `ckbench generate --resume %s` asks %s again\n",
                sh.infra_total, sh.infra_total == 1 ? "" : "s", sh.infra_error, ckb_run_dir(run),
                sh.infra_total == 1 ? "it" : "them");
    if (sh.unreachable || sh.infra_total)
        a.rc = -1;
    for (int i = 0; i < n; i++)
        ckb_gen_task_free(&a.wl[i].task);
    free(a.wl);
    ckb_exec_close(local);
    return a.rc;
}
