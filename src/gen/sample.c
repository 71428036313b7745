/* One sample of a generation run (see sample.h). */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/cleanup.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/jsonget.h"
#include "core/proc.h"
#include "core/say.h"
#include "gen/extract.h"
#include "gen/sample.h"
#include "machine/roofline.h"

static pthread_mutex_t sample__print = PTHREAD_MUTEX_INITIALIZER;

const char *ckb_rec_str(json_object *rec, const char *key)
{
    json_object *v;
    return rec && json_object_object_get_ex(rec, key, &v) && v ? json_object_get_string(v) : "";
}

int ckb_rec_correct(json_object *rec)
{
    json_object *v;
    return rec && json_object_object_get_ex(rec, "correct", &v) && json_object_get_boolean(v);
}

static void sample__put_userdata(json_object *o, void *userdata)
{
    (void)o;
    json_object_put(userdata);
}

/* The evaluation a model is shown for a record whose timing was disturbed:
 * no timing figures, and the status detail saying why (made once, kept
 * with the record). */
static json_object *sample__disturbed_view(json_object *rec, json_object *eval)
{
    json_object *view = json_object_get_userdata(rec);
    if (view)
        return view;
    if (json_object_deep_copy(eval, &view, NULL) != 0)
        return eval;
    static const char *const figures[] = {"candidate", "baseline", "speedup", "gflops",
                                          "baseline_gflops", "pct_of_peak",
                                          "baseline_pct_of_peak"};
    for (size_t i = 0; i < sizeof figures / sizeof *figures; i++)
        json_object_object_del(view, figures[i]);
    json_object_object_add(view, "detail",
                           json_object_new_string("correct; its timing was disturbed by other "
                                                  "work on the machine, so its speed was not "
                                                  "measured"));
    json_object_set_userdata(rec, view, sample__put_userdata);
    return view;
}

ckb_gen_prev ckb_rec_prev(json_object *rec)
{
    ckb_gen_prev p = {0};
    json_object *code, *eval;
    if (json_object_object_get_ex(rec, "code", &code) && code)
        p.code = json_object_get_string(code);
    p.status = ckb_rec_str(rec, "status");
    if (json_object_object_get_ex(rec, "eval", &eval) && eval)
        p.eval = ckb_json_timing_disturbed(rec) ? sample__disturbed_view(rec, eval) : eval;
    return p;
}

static void sample__now(char *buf, size_t n)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char s[24];
    strftime(s, sizeof s, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, n, "%.20s.%03dZ", s, (int)(ts.tv_nsec / 1000000));
}

static json_object *sample__int_or_null(int v) { return v >= 0 ? json_object_new_int(v) : NULL; }
static json_object *sample__num(double v) { return isfinite(v) ? json_object_new_double(v) : NULL; }

/* The provider call's fields of a record (plan calls nest the same). */
static void sample__reply_fields(json_object *o, const ckb_gen_prompt *pr, const ckb_reply *r)
{
    char sha[65];
    ckb_gen_prompt_sha256(pr, sha);
    json_object_object_add(o, "prompt_sha256", json_object_new_string(sha));
    json_object_object_add(o, "prompt_chars", json_object_new_int64(ckb_gen_prompt_chars(pr)));
    json_object_object_add(o, "reply_status",
                           json_object_new_string(ckb_reply_status_name(r->status)));
    if (r->status != CKB_REPLY_OK && r->error[0])
        json_object_object_add(o, "reply_error", json_object_new_string(r->error));
    json_object_object_add(o, "reply", r->text ? json_object_new_string(r->text) : NULL);
}

static void sample__usage_fields(json_object *o, const ckb_reply *r)
{
    json_object_object_add(o, "tokens_in", r->tokens_in >= 0 ? json_object_new_int64(r->tokens_in)
                                                              : NULL);
    json_object_object_add(o, "tokens_out",
                           r->tokens_out >= 0 ? json_object_new_int64(r->tokens_out) : NULL);
    json_object_object_add(o, "cost_usd", r->cost_usd >= 0 ? json_object_new_double(r->cost_usd)
                                                            : NULL);
    json_object_object_add(o, "latency_s", json_object_new_double(r->latency_s));
    json_object_object_add(o, "attempts", json_object_new_int(r->attempts));
}

/* speedup and timing_disturbed of a record from its evaluation: a timing
 * disturbed by other work is not a figure (DESIGN §5), so speedup is null
 * and what it said is kept as speedup_disturbed. */
void ckb_gen_record_speedup(json_object *rec, json_object *eval)
{
    double sp = eval ? ckb_json_num(eval, "speedup") : NAN;
    json_object *d;
    int timed = eval && json_object_object_get_ex(eval, "timing_disturbed", &d);
    int disturbed = timed && json_object_get_boolean(d);
    json_object_object_add(rec, "speedup", sample__num(disturbed ? NAN : sp));
    if (timed)
        json_object_object_add(rec, "timing_disturbed", json_object_new_boolean(disturbed));
    if (disturbed)
        json_object_object_add(rec, "speedup_disturbed", sample__num(sp));
}

/* Sums of two calls' usage (-1 / unknown stays unknown only if both are). */
static long sample__sum_l(long a, long b) { return a < 0 ? b : b < 0 ? a : a + b; }
static double sample__sum_d(double a, double b) { return a < 0 ? b : b < 0 ? a : a + b; }

/* Evaluates code through the executor. 0 with *eval set, or -1
 * when the harness failed (message in g->error). */
static int sample__eval(ckb_gen_wl *g, int index, const char *code, json_object **eval,
                        double *eval_s)
{
    /* kernel.c in a folder of its own: the compiler's messages name it, and
     * the feedback shows only that name (prompt.c), not the run's path. */
    char dir[1200], path[1400];
    snprintf(dir, sizeof dir, "%s/tmp/%s-%d", ckb_run_dir(g->run), g->w->id, index);
    snprintf(path, sizeof path, "%s/kernel.c", dir);
    ckb_cleanup_add_dir(dir); /* a signal takes it away with the rest */
    if (ckb_mkdirs(dir) != 0 || ckb_write_file_atomic(path, code, strlen(code)) != 0) {
        snprintf(g->error, sizeof g->error, "cannot write %.300s: %s", path, strerror(errno));
        return -1;
    }
    ckb_eval_opts eo = g->o->eval;
    if (g->o->seed)
        eo.seed = g->o->seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)(index + 1)) ^
                  ckb_hash64(g->o->seed, (uint64_t)strlen(g->w->id));
    char name[200];
    snprintf(name, sizeof name, "%s-%d", g->w->id, index);
    double t0 = ckb_now();
    int rc = ckb_gen_eval(g, name, path, &eo, eval);
    *eval_s = ckb_now() - t0;
    unlink(path);
    rmdir(dir);
    ckb_cleanup_forget_dir(dir);
    if (rc != 0) {
        char why[400];
        snprintf(why, sizeof why, "%.399s", g->error);
        snprintf(g->error, sizeof g->error, "evaluation of %s sample %d failed: %s", g->w->id,
                 index, why);
        return -1;
    }
    return 0;
}

int ckb_gen_eval(ckb_gen_wl *g, const char *name, const char *src, const ckb_eval_opts *eo,
                 json_object **eval)
{
    char dir[1200];
    snprintf(dir, sizeof dir, "%s/evals", ckb_run_dir(g->run));
    /* This workload's roofs at this size (machine/roofline.h), as `ckbench
     * eval` makes them, so the record's figures and the roof the feedback
     * quotes are the ones the prompt stated; a node replaces them by its own
     * and records those. */
    ckb_eval_opts own = *eo;
    ckb_roof roof;
    int have_roof = 0;
    if (g->o->machine) {
        ckb_roof_for_workload(g->o->machine, g->w, eo->size, &roof);
        have_roof = roof.compute_gflops > 0 && roof.mem_gbs > 0;
        if (have_roof) {
            own.peak_gflops = roof.compute_gflops;
            own.bw_gbs = roof.mem_gbs;
        }
    }
    ckb_exec_job job = {.w = g->w, .src = src, .eo = &own, .dir = dir, .name = name};
    ckb_err err;
    int rc = ckb_exec_eval(g->exec, &job, NULL, eval, &err);
    if (rc != CKB_OK)
        snprintf(g->error, sizeof g->error, "%.500s", err.msg);
    if (rc == 0 && *eval && have_roof && !json_object_object_get_ex(*eval, "roof", NULL))
        json_object_object_add(*eval, "roof", ckb_roof_to_json(&roof));
    return rc;
}

static void sample__progress(ckb_gen_wl *g, const ckb_sample_spec *s, json_object *rec)
{
    if (g->o->quiet)
        return;
    int n, c;
    double best;
    ckb_run_workload_totals(g->run, g->w->id, &n, &c, &best);
    char where[64] = "";
    if (s->chain >= 0)
        snprintf(where, sizeof where, " %s %d/%d", s->kind == CKB_SAMPLE_BEAM ? "elem" : "chain",
                 s->chain, s->turn);
    double sp = ckb_json_num(rec, "speedup");
    pthread_mutex_lock(&sample__print);
    ckb_say("[%s #%d%s%s%s] %s", g->w->id, s->index, where, s->phase ? " " : "",
            s->phase ? s->phase : "", ckb_rec_str(rec, "status"));
    if (isfinite(sp))
        ckb_say(" %.3gx", sp);
    else if (ckb_json_timing_disturbed(rec))
        ckb_say(" (timing disturbed: not measured)");
    ckb_say("  (%d/%d done, %d correct, best %.3gx)\n", n, g->o->budget, c, best);
    pthread_mutex_unlock(&sample__print);
}

/* The provider call of a sample. With the slurm executor an OK reply is
 * journalled (RUN/evals/<key>.reply.json, keyed by the prompt's hash)
 * before its evaluation is submitted: a driver killed while evaluations run
 * on the nodes resumes with the same replies, so the model is not asked
 * again and each evaluation's fingerprint still matches its result. */
static void sample__complete(ckb_gen_wl *g, const ckb_gen_prompt *pr, const char *key,
                             ckb_reply *out)
{
    if (ckb_exec_kind_of(g->exec) != CKB_EXEC_SLURM) {
        ckb_provider_complete(g->p, pr->msgs, pr->n, key, out);
        return;
    }
    char dir[1100], path[1400], name[256], sha[65];
    ckb_gen_prompt_sha256(pr, sha);
    snprintf(name, sizeof name, "%s", key);
    for (char *c = name; *c; c++)
        if (*c == '#' || *c == '/')
            *c = '-';
    snprintf(dir, sizeof dir, "%s/evals", ckb_run_dir(g->run));
    snprintf(path, sizeof path, "%s/%s.reply.json", dir, name);
    json_object *j = json_object_from_file(path);
    const char *text = ckb_json_str(j, "reply"), *was = ckb_json_str(j, "prompt_sha256");
    if (text && was && strcmp(was, sha) == 0) {
        memset(out, 0, sizeof *out);
        out->status = CKB_REPLY_OK;
        out->text = ckb_xstrdup(text);
        ckb_json_copy_str(j, "model", out->model, sizeof out->model);
        out->tokens_in = ckb_json_long(j, "tokens_in");
        out->tokens_out = ckb_json_long(j, "tokens_out");
        double v = ckb_json_num(j, "cost_usd");
        out->cost_usd = isfinite(v) ? v : -1;
        v = ckb_json_num(j, "latency_s");
        out->latency_s = isfinite(v) ? v : 0;
        out->attempts = (int)ckb_json_long(j, "attempts");
        json_object_put(j);
        return;
    }
    json_object_put(j);
    ckb_provider_complete(g->p, pr->msgs, pr->n, key, out);
    if (out->status != CKB_REPLY_OK || !out->text)
        return;
    j = json_object_new_object();
    json_object_object_add(j, "key", json_object_new_string(key));
    json_object_object_add(j, "prompt_sha256", json_object_new_string(sha));
    json_object_object_add(j, "reply", json_object_new_string(out->text));
    json_object_object_add(j, "model", json_object_new_string(out->model));
    json_object_object_add(j, "tokens_in", json_object_new_int64(out->tokens_in));
    json_object_object_add(j, "tokens_out", json_object_new_int64(out->tokens_out));
    json_object_object_add(j, "cost_usd", json_object_new_double(out->cost_usd));
    json_object_object_add(j, "latency_s", json_object_new_double(out->latency_s));
    json_object_object_add(j, "attempts", json_object_new_int(out->attempts));
    const char *t = json_object_to_json_string(j);
    if (ckb_mkdirs(dir) != 0 || ckb_write_file_atomic(path, t, strlen(t)) != 0)
        ckb_say("ckbench: cannot keep the reply in %s (a resume asks again)\n", path);
    json_object_put(j);
}

/* The provider's health after a sample's calls: an infrastructure failure
 * (infra) lengthens the streak, any call that reached the model ends it. */
static void sample__health(ckb_gen_wl *g, const ckb_reply *infra, int called)
{
    if (!called)
        return;
    pthread_mutex_lock(&g->sh->mu);
    if (infra) {
        g->sh->infra_streak++;
        g->sh->infra_total++;
        snprintf(g->sh->infra_error, sizeof g->sh->infra_error, "%s", infra->error);
        if (g->sh->infra_streak >= CKB_GEN_INFRA_STOP)
            g->sh->unreachable = 1;
    } else {
        g->sh->infra_streak = 0;
    }
    pthread_mutex_unlock(&g->sh->mu);
}

json_object *ckb_gen_sample(ckb_gen_wl *g, const ckb_sample_spec *s)
{
    json_object *rec = ckb_run_record(g->run, g->w->id, s->index);
    if (rec || g->failed || g->sh->unreachable)
        return rec;
    char started[40], finished[40], key[200], plan_key[220];
    sample__now(started, sizeof started);
    snprintf(key, sizeof key, "%s#%d", g->w->id, s->index);
    ckb_gen_prompt pr = {0}, plan_pr = {0};
    ckb_reply plan = {0}, reply = {0};
    char *plan_text = NULL, *strategy = NULL, *code = NULL;
    json_object *eval = NULL;
    double eval_s = 0;
    int have_plan = 0, called = 0;
    rec = json_object_new_object();

    if (s->kind == CKB_SAMPLE_BEAM) {
        /* Plan first: one strategy from the menu, then its implementation. */
        snprintf(plan_key, sizeof plan_key, "%s/plan", key);
        ckb_gen_prompt_plan(&g->task, &s->prev, s->phase, s->iter, s->niters, &plan_pr);
        sample__complete(g, &plan_pr, plan_key, &plan);
        have_plan = 1;
        if (plan.status == CKB_REPLY_OK) {
            plan_text = ckb_xstrdup(plan.text);
            strategy = ckb_gen_plan_strategy(g->w, plan.text);
            ckb_gen_prompt_implement(&g->task, &s->prev, plan_text, &pr);
        }
    } else if (s->kind == CKB_SAMPLE_REFINE) {
        ckb_gen_prompt_refine(&g->task, &s->prev, &pr);
    } else {
        ckb_gen_prompt_oneshot(&g->task, &pr);
    }
    if (pr.n) {
        sample__complete(g, &pr, key, &reply);
        called = 1;
    }
    const char *status;
    /* The infrastructure failed, not the model: not a sample (provider.h). */
    const ckb_reply *infra = have_plan && plan.status != CKB_REPLY_OK && ckb_reply_is_infra(&plan)
                                 ? &plan
                             : called && reply.status != CKB_REPLY_OK && ckb_reply_is_infra(&reply)
                                 ? &reply
                                 : NULL;
    sample__health(g, infra, called || have_plan);
    if (infra) {
        status = "infra_error";
    } else if (!called || reply.status != CKB_REPLY_OK) {
        status = "provider_error";
    } else if (!(code = ckb_gen_extract(reply.text, "workload"))) {
        status = "no_code";
    } else {
        if (sample__eval(g, s->index, code, &eval, &eval_s) != 0) {
            g->failed = 1;
            json_object_put(rec);
            rec = NULL;
            goto cleanup;
        }
        status = ckb_rec_str(eval, "status");
    }
    sample__now(finished, sizeof finished);

    json_object_object_add(rec, "workload", json_object_new_string(g->w->id));
    json_object_object_add(rec, "index", json_object_new_int(s->index));
    json_object_object_add(rec, "key", json_object_new_string(key));
    json_object_object_add(rec, "method", json_object_new_string(ckb_gen_method_name(g->o->method)));
    json_object_object_add(rec, "provider", json_object_new_string(g->o->provider ? g->o->provider
                                                                                   : ""));
    json_object_object_add(rec, "model", json_object_new_string(g->o->model ? g->o->model : ""));
    const char *reported = called && reply.model[0] ? reply.model : plan.model;
    json_object_object_add(rec, "model_reported",
                           reported[0] ? json_object_new_string(reported) : NULL);
    json_object_object_add(rec, "chain", sample__int_or_null(s->chain));
    json_object_object_add(rec, "turn", sample__int_or_null(s->turn));
    json_object_object_add(rec, "phase", s->phase ? json_object_new_string(s->phase) : NULL);
    json_object_object_add(rec, "parent", sample__int_or_null(s->parent));
    json_object_object_add(rec, "plan", strategy ? json_object_new_string(strategy) : NULL);
    if (have_plan) {
        json_object *pc = json_object_new_object();
        json_object_object_add(pc, "key", json_object_new_string(plan_key));
        sample__reply_fields(pc, &plan_pr, &plan);
        sample__usage_fields(pc, &plan);
        json_object_object_add(rec, "plan_call", pc);
    }
    if (called) {
        sample__reply_fields(rec, &pr, &reply);
    } else { /* the plan call failed: no implementation was asked for */
        sample__reply_fields(rec, &plan_pr, &plan);
    }
    json_object_object_add(rec, "code", code ? json_object_new_string(code) : NULL);
    /* Usage of the sample: the implementation call plus its plan call. */
    ckb_reply usage = called ? reply : plan;
    if (have_plan && called) {
        usage.tokens_in = sample__sum_l(plan.tokens_in, reply.tokens_in);
        usage.tokens_out = sample__sum_l(plan.tokens_out, reply.tokens_out);
        usage.cost_usd = sample__sum_d(plan.cost_usd, reply.cost_usd);
        usage.latency_s = plan.latency_s + reply.latency_s;
        usage.attempts = plan.attempts + reply.attempts;
    }
    sample__usage_fields(rec, &usage);
    json_object_object_add(rec, "status", json_object_new_string(status));
    json_object_object_add(rec, "correct",
                           json_object_new_boolean(eval && ckb_rec_correct(eval)));
    ckb_gen_record_speedup(rec, eval);
    json_object_object_add(rec, "expert_speedup", sample__num(g->expert_speedup));
    json_object_object_add(rec, "eval", eval);
    eval = NULL;
    json_object_object_add(rec, "started", json_object_new_string(started));
    json_object_object_add(rec, "finished", json_object_new_string(finished));
    json_object_object_add(rec, "eval_s", json_object_new_double(eval_s));

    if (infra) {
        /* Kept on disk for the record, but the sample stays undone: resume
         * asks it again. A chain or a beam cannot go on without it. */
        if (!g->o->quiet) {
            pthread_mutex_lock(&sample__print);
            ckb_say("[%s #%d] infra_error (not counted): %s\n", g->w->id, s->index, infra->error);
            pthread_mutex_unlock(&sample__print);
        }
        if (g->o->method != CKB_GEN_BEST_OF_N && !g->failed) {
            snprintf(g->error, sizeof g->error,
                     "%s sample %d: the provider failed (%.300s); stopped this workload, "
                     "nothing counted against the model",
                     g->w->id, s->index, infra->error);
            g->failed = 1;
        }
    }
    ckb_err err;
    if (ckb_run_append(g->run, rec, &err) != CKB_OK) {
        snprintf(g->error, sizeof g->error, "%.500s", err.msg);
        g->failed = 1;
        rec = NULL;
        goto cleanup;
    }
    rec = ckb_run_record(g->run, g->w->id, s->index);
    if (rec)
        sample__progress(g, s, rec);
cleanup:
    json_object_put(eval);
    ckb_gen_prompt_free(&pr);
    ckb_gen_prompt_free(&plan_pr);
    ckb_reply_free(&plan);
    ckb_reply_free(&reply);
    free(plan_text);
    free(strategy);
    free(code);
    return rec;
}
