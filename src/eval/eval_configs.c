/*
 * eval_configs.c — a workload of several configurations (DESIGN §4): the
 * pipeline of eval.c once per configuration, each its own instance, judged
 * as upstream JAXBench's evaluation_utils.summarize_results judges a task
 * of several input shapes: correct only when every configuration is, the
 * first that fails giving the verdict, the speedup the geometric mean.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/proc.h"
#include "eval/eval_priv.h"
#include "eval/verdict.h"

/* What the evaluation of in found, kept as its configuration's figures. */
void eval__keep_config(const ckb_instance *in, const ckb_eval_result *one,
                       ckb_eval_config_result *k)
{
    snprintf(k->name, sizeof k->name, "%s", in->config_name);
    memcpy(k->dims, in->dims, sizeof k->dims);
    k->status = one->status;
    k->stage = one->stage;
    k->correct = one->correct;
    k->atol = in->atol;
    k->rtol = in->rtol;
    k->max_abs_err = one->max_abs_err;
    k->max_rel_err = one->max_rel_err;
    k->worst_tol_share = one->worst_tol_share;
    k->cand = one->cand;
    k->base = one->base;
    k->expert = one->expert;
    k->speedup = one->speedup;
    k->speedup_vs_expert = one->speedup_vs_expert;
    k->flops = one->flops;
    k->bytes = one->bytes;
    k->disturbed_pct = one->disturbed_pct;
}

/* The geometric mean of x[0..n-1] (NaN when one is not a positive figure). */
static double eval__geomean(const double *x, int n)
{
    double l = 0;
    for (int i = 0; i < n; i++) {
        if (!(x[i] > 0) || !isfinite(x[i]))
            return NAN;
        l += log(x[i]);
    }
    return n > 0 ? exp(l / n) : NAN;
}

/* The per-call statistics of several configurations as one: each figure
 * the geometric mean of theirs, so that speedup = baseline median over
 * candidate median still holds of the aggregate; std has no such mean. */
static ckb_stats eval__geomean_stats(const ckb_eval_result *r, size_t field)
{
    double med[CKB_MAX_CONFIGS], mean[CKB_MAX_CONFIGS], mn[CKB_MAX_CONFIGS], mx[CKB_MAX_CONFIGS];
    ckb_stats out = {0};
    for (int c = 0; c < r->nconfigs; c++) {
        const ckb_stats *s = (const ckb_stats *)((const char *)&r->configs[c] + field);
        med[c] = s->median;
        mean[c] = s->mean;
        mn[c] = s->min;
        mx[c] = s->max;
        out.n = c == 0 || s->n < out.n ? s->n : out.n;
    }
    out.median = eval__geomean(med, r->nconfigs);
    out.mean = eval__geomean(mean, r->nconfigs);
    out.min = eval__geomean(mn, r->nconfigs);
    out.max = eval__geomean(mx, r->nconfigs);
    out.std = NAN;
    return out;
}

/* Every configuration passed: r (the last one's result, with the account
 * of them all) becomes the result of them all (eval.h). */
static void eval__aggregate(ckb_eval_result *r)
{
    double sp[CKB_MAX_CONFIGS], spx[CKB_MAX_CONFIGS], fl[CKB_MAX_CONFIGS], by[CKB_MAX_CONFIGS];
    for (int c = 0; c < r->nconfigs; c++) {
        const ckb_eval_config_result *k = &r->configs[c];
        sp[c] = k->speedup;
        spx[c] = k->speedup_vs_expert;
        fl[c] = k->flops;
        by[c] = k->bytes;
        if (k->max_abs_err > r->max_abs_err)
            r->max_abs_err = k->max_abs_err;
        if (k->max_rel_err > r->max_rel_err)
            r->max_rel_err = k->max_rel_err;
        if (k->worst_tol_share > r->worst_tol_share)
            r->worst_tol_share = k->worst_tol_share;
    }
    r->cand = eval__geomean_stats(r, offsetof(ckb_eval_config_result, cand));
    r->base = eval__geomean_stats(r, offsetof(ckb_eval_config_result, base));
    if (r->has_expert)
        r->expert = eval__geomean_stats(r, offsetof(ckb_eval_config_result, expert));
    /* upstream's summarize_results: the task's speedup is the geometric mean
     * of its configurations' (and so is GFLOP/s, flops / median) */
    r->speedup = eval__geomean(sp, r->nconfigs);
    r->speedup_vs_expert = r->has_expert ? eval__geomean(spx, r->nconfigs) : 0;
    r->flops = eval__geomean(fl, r->nconfigs);
    r->bytes = eval__geomean(by, r->nconfigs);
}

/* Adds configuration one's costs and disturbance into acc, the account of
 * them all: seconds add up, the worst disturbance stands for them all (a
 * disturbed configuration makes the aggregate's figures disturbed). */
static void eval__add_costs(ckb_eval_result *acc, const ckb_eval_result *one)
{
    int first = acc->nconfigs == 1;
    acc->compile_s += one->compile_s;
    acc->correctness_s += one->correctness_s;
    acc->timing_s += one->timing_s;
    acc->setup_s += one->setup_s;
    acc->final_check_s += one->final_check_s;
    acc->kernel_calls_s += one->kernel_calls_s;
    acc->inputs_s += one->inputs_s;
    acc->checks_s += one->checks_s;
    acc->switch_s += one->switch_s;
    acc->timing_runs += one->timing_runs;
    acc->parent_timing_ms += one->parent_timing_ms;
    acc->beyond_roofline |= one->beyond_roofline;
    acc->disturbance_judged = first ? one->disturbance_judged
                                    : acc->disturbance_judged && one->disturbance_judged;
    if (first || one->disturbed_pct > acc->disturbed_pct) {
        acc->disturbed_pct = one->disturbed_pct;
        acc->steal_pct = one->steal_pct;
        acc->others_pct = one->others_pct;
        acc->harness_pct = one->harness_pct;
        acc->wait_pct = one->wait_pct;
    }
    if (first) { /* the first configuration's dims and seeds stand for the result's */
        snprintf(acc->size_label, sizeof acc->size_label, "%s", one->size_label);
        memcpy(acc->dims, one->dims, sizeof acc->dims);
        acc->nseeds = one->nseeds;
        memcpy(acc->seeds, one->seeds, sizeof acc->seeds);
        acc->final_seed = one->final_seed;
        acc->warmup = one->warmup;
        acc->iters = one->iters;
    }
}

/* r (the last configuration's result: its verdict, message and worst
 * element) with the account of every configuration run. */
static void eval__take_account(ckb_eval_result *r, const ckb_eval_result *acc)
{
    memcpy(r->configs, acc->configs, sizeof r->configs);
    r->nconfigs = acc->nconfigs;
    r->compile_s = acc->compile_s;
    r->correctness_s = acc->correctness_s;
    r->timing_s = acc->timing_s;
    r->setup_s = acc->setup_s;
    r->final_check_s = acc->final_check_s;
    r->kernel_calls_s = acc->kernel_calls_s;
    r->inputs_s = acc->inputs_s;
    r->checks_s = acc->checks_s;
    r->switch_s = acc->switch_s;
    r->timing_runs = acc->timing_runs;
    r->parent_timing_ms = acc->parent_timing_ms;
    r->beyond_roofline = acc->beyond_roofline;
    r->disturbance_judged = acc->disturbance_judged;
    r->disturbed_pct = acc->disturbed_pct;
    r->steal_pct = acc->steal_pct;
    r->others_pct = acc->others_pct;
    r->harness_pct = acc->harness_pct;
    r->wait_pct = acc->wait_pct;
    snprintf(r->size_label, sizeof r->size_label, "%s", acc->size_label);
    memcpy(r->dims, acc->dims, sizeof r->dims);
    r->nseeds = acc->nseeds;
    memcpy(r->seeds, acc->seeds, sizeof r->seeds);
    r->final_seed = acc->final_seed;
    r->warmup = acc->warmup;
    r->iters = acc->iters;
    r->failed_config = -1;
}

/* A workload of several configurations (DESIGN §4): the candidate through
 * every stage once per configuration (dims.h is compile-time: one compile
 * each), in order; the first that fails gives the verdict; when all pass,
 * the figures are their geometric means. */
int eval__run_configs(const ckb_workload *w, const char *src, const ckb_eval_opts *o,
                      ckb_eval_result *r)
{
    int n = ckb_workload_config_count(w), rc = 0;
    ckb_eval_result *acc = ckb_xcalloc(1, sizeof *acc);
    ckb_eval_opts oc = *o;
    char dir[300], msg[sizeof r->message];
    double t0 = ckb_now();
    memset(r, 0, sizeof *r);
    r->failed_config = -1;
    for (int c = 0; c < n; c++) {
        ckb_instance in;
        if (ckb_eval_instance(w, o, c, &in) != 0) {
            eval__ctx x = {.w = w, .o = o, .r = r};
            eval__fail(&x, CKB_V_HARNESS_OPTIONS, "%s has no configuration %d at size %s", w->id,
                       c, ckb_size_name(o->size));
            rc = -1;
            break;
        }
        if (o->workdir) { /* --keep DIR: one folder per configuration */
            snprintf(dir, sizeof dir, "%s/%s", o->workdir, in.config_name);
            oc.workdir = dir;
        }
        /* r holds this configuration's result, acc the account of them all */
        rc = eval__run_instance(&in, src, &oc, r);
        eval__keep_config(&in, r, &acc->configs[acc->nconfigs++]);
        eval__add_costs(acc, r);
        if (rc != 0 || r->status != CKB_ST_OK) {
            eval__take_account(r, acc);
            /* a harness error is ckbench's, not the candidate's verdict on it */
            if (r->status != CKB_ST_HARNESS_ERROR)
                r->failed_config = c;
            /* the message names the configuration first: a reader of the
             * message alone must know which one it came from */
            snprintf(msg, sizeof msg, "configuration %.31s: %.4000s", in.config_name, r->message);
            snprintf(r->message, sizeof r->message, "%s", msg);
            break;
        }
        if (c == n - 1) {
            eval__take_account(r, acc);
            eval__aggregate(r);
        }
    }
    free(acc);
    r->total_s = ckb_now() - t0;
    return rc;
}

