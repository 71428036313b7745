/* An evaluation result as JSON: the eval fields and JAXBench's columns. */
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>

#include "eval/eval.h"

static json_object *result__num(double v)
{
    /* JSON has no NaN/Inf; a missing figure is null. */
    return isfinite(v) ? json_object_new_double(v) : NULL;
}

static json_object *result__stats(const ckb_stats *s)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "median_ms", result__num(s->median));
    json_object_object_add(o, "mean_ms", result__num(s->mean));
    json_object_object_add(o, "std_ms", result__num(s->std));
    json_object_object_add(o, "min_ms", result__num(s->min));
    json_object_object_add(o, "max_ms", result__num(s->max));
    json_object_object_add(o, "n", json_object_new_int(s->n));
    return o;
}

static json_object *result__seed(uint64_t s)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)s);
    return json_object_new_string(buf); /* 64-bit seeds do not fit a JSON double */
}

/* dims as {"B": 1, ...}, named by w's dims. */
static json_object *result__dims(const ckb_workload *w, const int64_t *dims)
{
    json_object *o = json_object_new_object();
    for (int i = 0; i < w->ndims; i++)
        json_object_object_add(o, w->dims[i].name, json_object_new_int64(dims[i]));
    return o;
}

/* One configuration's figures (a workload of several: DESIGN §9). */
static json_object *result__config(const ckb_workload *w, const ckb_eval_opts *o,
                                   const ckb_eval_config_result *k, json_object *verdict)
{
    json_object *c = json_object_new_object();
    int timed = k->cand.n > 0;
    json_object_object_add(c, "name", json_object_new_string(k->name));
    json_object_object_add(c, "dims", result__dims(w, k->dims));
    json_object_object_add(c, "status", json_object_new_string(ckb_status_name(k->status)));
    json_object_object_add(c, "stage", json_object_new_string(ckb_stage_name(k->stage)));
    /* only a failed configuration has a detail, the result's own (the
     * evaluation stopped there) */
    json_object *d = NULL;
    if (k->status != CKB_ST_OK && json_object_object_get_ex(verdict, "detail", &d))
        json_object_object_add(c, "detail", json_object_get(d));
    json_object_object_add(c, "correct", json_object_new_boolean(k->correct));
    json_object_object_add(c, "atol", result__num(k->atol));
    json_object_object_add(c, "rtol", result__num(k->rtol));
    json_object_object_add(c, "max_abs_err", result__num(k->max_abs_err));
    json_object_object_add(c, "max_rel_diff", result__num(k->max_rel_err));
    json_object_object_add(c, "worst_tol_share", result__num(k->worst_tol_share));
    json_object_object_add(c, "median_ms", timed ? result__num(k->cand.median) : NULL);
    json_object_object_add(c, "baseline_median_ms", k->base.n > 0 ? result__num(k->base.median)
                                                                  : NULL);
    json_object_object_add(c, "speedup", timed ? result__num(k->speedup) : NULL);
    if (k->expert.n > 0) {
        json_object_object_add(c, "expert_median_ms", result__num(k->expert.median));
        json_object_object_add(c, "speedup_vs_expert",
                               timed ? result__num(k->speedup_vs_expert) : NULL);
    }
    json_object_object_add(c, "flops", result__num(k->flops));
    json_object_object_add(c, "bytes", result__num(k->bytes));
    json_object_object_add(c, "gflops",
                           timed ? result__num(k->flops / (k->cand.median * 1e-3) / 1e9) : NULL);
    json_object_object_add(c, "timing_disturbed",
                           timed ? json_object_new_boolean(k->disturbed_pct > o->max_steal_pct)
                                 : NULL);
    return c;
}

json_object *ckb_eval_result_json(const ckb_workload *w, const ckb_eval_opts *o,
                                  const ckb_eval_result *r)
{
    json_object *j = json_object_new_object();
    int timed = r->cand.n > 0;
    json_object_object_add(j, "workload", json_object_new_string(w->id));
    json_object_object_add(j, "size", json_object_new_string(ckb_size_name(o->size)));
    json_object_object_add(j, "threads", json_object_new_int(o->threads));
    /* the dims the evaluation resolved, not those this process would now */
    json_object_object_add(j, "dims", result__dims(w, r->dims));
    json_object_object_add(j, "status", json_object_new_string(ckb_status_name(r->status)));
    json_object_object_add(j, "stage", json_object_new_string(ckb_stage_name(r->stage)));
    if (r->detail[0])
        json_object_object_add(j, "detail", json_object_new_string(r->detail));
    json_object_object_add(j, "correct", json_object_new_boolean(r->correct));
    json_object_object_add(j, "max_abs_err", result__num(r->max_abs_err));
    json_object_object_add(j, "worst_tol_share", result__num(r->worst_tol_share));
    json_object_object_add(j, "max_rel_diff", result__num(r->max_rel_err));
    if (r->nbad) {
        json_object *wj = json_object_new_object();
        json_object_object_add(wj, "tensor", json_object_new_string(r->worst_tensor));
        json_object_object_add(wj, "bad_elements", json_object_new_int64(r->nbad));
        json_object_object_add(wj, "index", json_object_new_int64(r->worst_index));
        json_object_object_add(wj, "got", result__num(r->worst_got));
        json_object_object_add(wj, "expected", result__num(r->worst_want));
        json_object_object_add(j, "worst", wj);
    }
    json_object *seeds = json_object_new_array();
    for (int i = 0; i < r->nseeds; i++)
        json_object_array_add(seeds, result__seed(r->seeds[i]));
    json_object_object_add(j, "seeds", seeds);
    if (r->final_seed)
        json_object_object_add(j, "final_seed", result__seed(r->final_seed));
    json_object_object_add(j, "timing_method", json_object_new_string("trusted_clock_kernel_stamps"));
    json_object_object_add(j, "warmup", json_object_new_int(r->warmup));
    json_object_object_add(j, "iters", json_object_new_int(r->iters));
    if (timed) {
        json_object_object_add(j, "candidate", result__stats(&r->cand));
        json_object_object_add(j, "baseline", result__stats(&r->base));
        json_object_object_add(j, "speedup", result__num(r->speedup));
        if (r->has_expert) { /* --vs-expert: upstream's speedup_vs_pallas */
            json_object_object_add(j, "expert", result__stats(&r->expert));
            json_object_object_add(j, "speedup_vs_expert", result__num(r->speedup_vs_expert));
        }
    }
    json_object_object_add(j, "flops", json_object_new_double(r->flops));
    json_object_object_add(j, "bytes", json_object_new_double(r->bytes));
    double ai = r->bytes > 0 ? r->flops / r->bytes : 0;
    json_object_object_add(j, "arithmetic_intensity", result__num(ai));
    if (o->peak_gflops > 0 && o->bw_gbs > 0) {
        double t_compute = r->flops / (o->peak_gflops * 1e9), t_mem = r->bytes / (o->bw_gbs * 1e9);
        json_object_object_add(j, "bound", json_object_new_string(t_compute >= t_mem ? "compute"
                                                                                      : "memory"));
        json_object_object_add(j, "roofline_ms",
                               result__num(1e3 * (t_compute > t_mem ? t_compute : t_mem)));
        json_object_object_add(j, "peak_gflops", result__num(o->peak_gflops));
    }
    if (timed) {
        double g = r->flops / (r->cand.median * 1e-3) / 1e9;
        double gb = r->flops / (r->base.median * 1e-3) / 1e9;
        json_object_object_add(j, "gflops", result__num(g));
        json_object_object_add(j, "baseline_gflops", result__num(gb));
        if (o->peak_gflops > 0) {
            json_object_object_add(j, "pct_of_peak", result__num(100.0 * g / o->peak_gflops));
            json_object_object_add(j, "baseline_pct_of_peak",
                                   result__num(100.0 * gb / o->peak_gflops));
        }
        json_object_object_add(j, "steal_pct", result__num(r->steal_pct));
        json_object_object_add(j, "other_processes_pct", result__num(r->others_pct));
        json_object_object_add(j, "harness_pct", result__num(r->harness_pct));
        /* Still disturbed after every retry: the figures are not to be trusted. */
        json_object_object_add(j, "timing_disturbed",
                               json_object_new_boolean(ckb_eval_timing_disturbed(r, o)));
        json_object_object_add(j, "runqueue_wait_pct",
                               r->wait_pct >= 0 ? result__num(r->wait_pct) : NULL);
        json_object_object_add(j, "disturbance_judged",
                               json_object_new_boolean(r->disturbance_judged));
        json_object_object_add(j, "timing_runs", json_object_new_int(r->timing_runs));
        json_object_object_add(j, "parent_timing_ms", result__num(r->parent_timing_ms));
        json_object_object_add(j, "beyond_roofline",
                               json_object_new_boolean(r->beyond_roofline));
    }
    json_object *st = json_object_new_object();
    json_object_object_add(st, "compile", result__num(r->compile_s));
    json_object_object_add(st, "setup", result__num(r->setup_s));
    json_object_object_add(st, "correctness", result__num(r->correctness_s));
    json_object_object_add(st, "final_check", result__num(r->final_check_s));
    json_object_object_add(st, "timing", result__num(r->timing_s));
    json_object_object_add(st, "total", result__num(r->total_s));
    /* The timing stage split: the kernels' own calls, and what the harness
     * spends around them (issue 29: a reward loop pays it per sample). */
    json_object_object_add(st, "kernel_calls", result__num(r->kernel_calls_s));
    json_object_object_add(st, "harness", result__num(r->timing_s - r->kernel_calls_s));
    json_object_object_add(st, "harness_inputs", result__num(r->inputs_s));
    json_object_object_add(st, "harness_checks", result__num(r->checks_s));
    json_object_object_add(st, "harness_switch", result__num(r->switch_s));
    json_object_object_add(j, "stage_seconds", st);
    json_object_object_add(j, "message", json_object_new_string(r->message));
    if (ckb_workload_config_count(w) > 1) {
        /* Several configurations: each one's figures, in order, up to the
         * first that failed; the figures above are their geometric means
         * (all passed) or the failing one's (it names the verdict). */
        json_object *cs = json_object_new_array();
        for (int c = 0; c < r->nconfigs && c < CKB_MAX_CONFIGS; c++)
            json_object_array_add(cs, result__config(w, o, &r->configs[c], j));
        json_object_object_add(j, "configs", cs);
        json_object_object_add(j, "failed_config",
                               r->failed_config >= 0 && r->failed_config < r->nconfigs
                                   ? json_object_new_string(r->configs[r->failed_config].name)
                                   : NULL);
    }
    return j;
}

int ckb_eval_timing_disturbed(const ckb_eval_result *r, const ckb_eval_opts *o)
{
    return r->disturbed_pct > o->max_steal_pct;
}
