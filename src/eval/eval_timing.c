/*
 * eval_timing.c — the stages after the sandboxes start (DESIGN §4, §5):
 * correctness on the checked sets and the limits of a checked call, the
 * timing runs with their judgement of disturbance (CPU time, schedstat
 * wait, retries), and the final check on fresh inputs.
 */
#include "eval/eval_priv.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/proc.h"
#include "core/say.h"
#include "core/stats.h"
#include "eval/check.h"
#include "eval/limits.h"
#include "eval/verdict.h"

/* The wall-clock limit of a checked call (limits.h). */
static double eval__checked_limit_s(const eval__ctx *c)
{
    return CKB_EVAL_CHECKED_CALL_BASE_S + CKB_EVAL_CHECKED_CALL_PER_BASE * c->base_s;
}

int eval__correctness(eval__ctx *c)
{
    c->r->stage = CKB_STAGE_CORRECTNESS;
    double t0 = ckb_now();
    /* Each seed once, then the first again: the same input must give the
     * same verdict (a kernel that varies between calls is caught here). */
    for (int k = 0; k <= c->o->nseeds; k++) {
        uint64_t seed = c->r->seeds[k < c->o->nseeds ? k : 0];
        eval__pair_result pr;
        if (eval__pair(c, seed, 0, 2, eval__checked_limit_s(c), &pr) != 0)
            return -1;
        eval__note_check(c, &pr.check);
        if (!pr.check.ok) {
            const ckb_check *k_ = &pr.check;
            int repeat = k == c->o->nseeds;
            eval__fail(c, repeat           ? CKB_V_NONDETERMINISTIC_REPEAT
                          : k_->nonfinite ? CKB_V_WRONG_NONFINITE
                                          : CKB_V_WRONG_MISMATCH,
                       "%s%s: %lld of %lld elements outside tolerance (atol %g, rtol %g); "
                       "worst at index %lld: got %g, expected %g%s",
                       repeat ? "the same input gave a different answer the second time; "
                              : "",
                       c->r->worst_tensor, (long long)k_->nbad,
                       (long long)eval__output_numel(c), ckb_workload_atol(c->w),
                       ckb_workload_rtol(c->w), (long long)k_->worst, k_->got, k_->want,
                       k_->nonfinite ? " (NaN/Inf where the baseline has none)" : "");
            c->r->correctness_s = ckb_now() - t0;
            return -1;
        }
        if (pr.base_ms * 1e-3 > c->base_s)
            c->base_s = pr.base_ms * 1e-3;
        if (pr.cand_ms * 1e-3 > c->cand_s)
            c->cand_s = pr.cand_ms * 1e-3;
        if (pr.expert_ms * 1e-3 > c->expert_s)
            c->expert_s = pr.expert_ms * 1e-3;
    }
    c->r->correctness_s = ckb_now() - t0;
    return 0;
}

/* A timed call whose output misses: a kernel that was right on every
 * checked set and then leaves most of an output unwritten (the poison) or
 * wrong did less work when it was timed; a few elements a little outside
 * the tolerance on new inputs is an imprecise kernel. */
static void eval__timed_miss(eval__ctx *c, int call, int calls, const ckb_check *k)
{
    int64_t n = eval__output_numel(c);
    int lazy = k->nonfinite > 0 || k->nbad * 2 > n;
    /* The first sentence's shape is read back by the feedback (gen/prompt.c). */
    eval__fail(c, lazy ? CKB_V_CHEAT_TIMED_OUTPUT : CKB_V_WRONG_TIMED_CALL,
               "%stimed call %d of %d gave a wrong %s: %lld elements outside tolerance; worst at "
               "index %lld: got %g, expected %g (%lld of %lld output elements wrong, atol %g, "
               "rtol %g%s)",
               lazy ? "correct when checked, but " : "", call + 1, calls, c->r->worst_tensor,
               (long long)k->nbad, (long long)k->worst, k->got, k->want, (long long)k->nbad,
               (long long)n, ckb_workload_atol(c->w), ckb_workload_rtol(c->w),
               k->nonfinite ? ", NaN/Inf included" : "");
}

static int eval__timing_runs(eval__ctx *c)
{
    int two = c->o->mode != CKB_MODE_BASELINE;
    double pair_s = c->base_s + (two ? c->cand_s : 0.0) + c->expert_s;
    int warmup = c->o->warmup, iters = c->o->iters;
    /* A slow candidate gets fewer calls rather than a timeout; the counts
     * used are in the result. */
    if (pair_s > 0 && (warmup + iters) * pair_s > c->o->max_timing_s) {
        int calls = (int)(c->o->max_timing_s / pair_s);
        warmup = warmup < 1 ? warmup : (calls >= CKB_EVAL_CALLS_TO_KEEP_WARMUP ? warmup : 1);
        iters = calls - warmup;
        if (iters < CKB_EVAL_MIN_ITERS)
            iters = CKB_EVAL_MIN_ITERS;
        if (iters > c->o->iters)
            iters = c->o->iters;
    }
    if (warmup + iters > CKB_PROTO_MAX_CALLS)
        iters = CKB_PROTO_MAX_CALLS - warmup;
    c->r->warmup = warmup;
    c->r->iters = iters;
    double slowest = c->cand_s > c->base_s ? c->cand_s : c->base_s;
    if (c->expert_s > slowest)
        slowest = c->expert_s;
    double limit = CKB_EVAL_TIMED_CALL_BASE_S + CKB_EVAL_TIMED_CALL_PER_SLOWEST * slowest;
    int calls = warmup + iters;

    double cand[CKB_PROTO_MAX_CALLS], base[CKB_PROTO_MAX_CALLS];
    double run_cand[CKB_PROTO_MAX_CALLS], run_base[CKB_PROTO_MAX_CALLS];
    double expert[CKB_PROTO_MAX_CALLS], run_expert[CKB_PROTO_MAX_CALLS];
    for (int run = 0; run < CKB_EVAL_TIMING_RUNS; run++) {
        pid_t pids[4] = {getpid(), c->base.sb.pid, two ? c->cand.sb.pid : 0,
                         c->r->has_expert ? c->expert.sb.pid : 0};
        ckb_cpu_times t0, t1;
        ckb_sched_times w0, w1;
        ckb_cpu_times_read(pids, 4, &t0);
        ckb_sched_times_read(pids + 1, 3, &w0);
        c->call_s = c->harness_cpu_s = 0;
        double p0 = ckb_now();
        for (int it = 0; it < calls; it++) {
            eval__pair_result pr;
            /* Every call a set of its own, drawn now: nothing the kernel saw
             * before, nothing it can see before its turn. */
            uint64_t seed =
                eval__draw_seed(c->o, CKB_EVAL_SEED_TIMED + CKB_EVAL_SEED_PER_RUN * run + it);
            /* the candidate first on every other call; the expert's place
             * turns over the three */
            if (eval__pair(c, seed, it % 2 == 0, (2 * it) % 3, limit, &pr) != 0)
                return -1;
            eval__note_check(c, &pr.check);
            if (!pr.check.ok) {
                eval__timed_miss(c, it, calls, &pr.check);
                return -1;
            }
            run_cand[it] = pr.cand_ms;
            run_base[it] = pr.base_ms;
            run_expert[it] = pr.expert_ms;
        }
        double elapsed = ckb_now() - p0;
        ckb_cpu_times_read(pids, 4, &t1);
        ckb_sched_times_read(pids + 1, 3, &w1);
        /* The machine's CPU time during the run that went neither to the
         * sandboxes nor to us: stolen by the hypervisor, or used by other
         * processes (whose threads then preempt ours mid-barrier). Clock
         * ticks are 10 ms, so only runs of CKB_EVAL_JUDGED_RUN_S or more
         * are judged (a shorter one's share is a few ticks: noise). */
        double steal_pct, others_pct;
        ckb_cpu_times_disturbance(&t0, &t1, elapsed, &steal_pct, &others_pct);
        /* Our own threads are the other thing that can share the kernels'
         * cores while they run; unlike the rest, measured precisely, so
         * judged at any length. */
        double harness_pct = c->call_s > 0 ? 100.0 * c->harness_cpu_s / (c->call_s * t0.ncpu) : 0;
        /* The kernels' threads' own time waiting for a CPU another task
         * held (schedstat, exact at any length): what a run too short for
         * the ticks is judged by, and the larger of the two otherwise. */
        double wait_pct = ckb_sched_wait_pct(&w0, &w1);
        int ticks_judged = elapsed >= CKB_EVAL_JUDGED_RUN_S;
        int judged = ticks_judged || wait_pct >= 0;
        double elsewhere = ticks_judged ? steal_pct + others_pct : 0.0;
        if (wait_pct > elsewhere)
            elsewhere = wait_pct;
        double disturbed = elsewhere + harness_pct;
        c->r->timing_runs = run + 1;
        if (run == 0 || disturbed < c->r->disturbed_pct) { /* the least disturbed run kept */
            c->r->disturbed_pct = disturbed;
            c->r->disturbance_judged = judged;
            c->r->wait_pct = wait_pct;
            memcpy(cand, run_cand + warmup, sizeof(double) * (size_t)iters);
            memcpy(base, run_base + warmup, sizeof(double) * (size_t)iters);
            memcpy(expert, run_expert + warmup, sizeof(double) * (size_t)iters);
            c->r->steal_pct = steal_pct;
            c->r->others_pct = others_pct;
            c->r->harness_pct = harness_pct;
            c->r->parent_timing_ms = elapsed * 1e3;
        }
        if (disturbed <= c->o->max_steal_pct)
            break;
        ckb_say("ckbench: %s: timing disturbed by other work (%.0f%% of the kernels' "
                "CPU time spent waiting for a CPU, %.0f%% of the machine stolen by the "
                "hypervisor, %.0f%% other processes, %.0f%% the harness); timing again\n",
                c->w->id, wait_pct > 0 ? wait_pct : 0, steal_pct, others_pct, harness_pct);
    }
    c->r->base = ckb_stats_of(base, iters);
    c->r->cand = two ? ckb_stats_of(cand, iters) : c->r->base;
    c->r->speedup = c->r->cand.median > 0 ? c->r->base.median / c->r->cand.median : 0;
    if (c->r->has_expert) {
        c->r->expert = ckb_stats_of(expert, iters);
        c->r->speedup_vs_expert =
            c->r->cand.median > 0 ? c->r->expert.median / c->r->cand.median : 0;
    }

    /* Faster than the roofline: with the clock and every output out of the
     * kernel's reach, only a kernel that does less than the declared work
     * (an exact algebraic rewrite) gets here. It is legal; the result says
     * so, and the workload's README names the rewrite (SECURITY.md). */
    if (c->o->mode == CKB_MODE_CANDIDATE && c->o->peak_gflops > 0 && c->o->bw_gbs > 0) {
        double tc = c->r->flops / (c->o->peak_gflops * 1e9), tm = c->r->bytes / (c->o->bw_gbs * 1e9);
        c->r->beyond_roofline = c->r->cand.median < 1e3 * (tc > tm ? tc : tm);
    }
    return 0;
}

/* The timing stage, its wall time kept whatever its verdict (kernel_calls_s
 * and the harness's parts are within it). */
int eval__timing(eval__ctx *c)
{
    c->r->stage = CKB_STAGE_TIMING;
    c->timing = 1;
    double t0 = ckb_now();
    int rc = eval__timing_runs(c);
    c->r->timing_s = ckb_now() - t0;
    c->timing = 0;
    return rc;
}

int eval__final_check(eval__ctx *c)
{
    double t0 = ckb_now();
    c->r->stage = CKB_STAGE_FINAL_CHECK;
    c->r->final_seed = eval__draw_seed(c->o, CKB_EVAL_SEED_FINAL_CHECK);
    eval__pair_result pr;
    int rc = eval__pair(c, c->r->final_seed, 0, 2, eval__checked_limit_s(c), &pr);
    if (rc == 0) {
        eval__note_check(c, &pr.check);
        if (!pr.check.ok) {
            eval__fail(c, CKB_V_WRONG_FINAL_CHECK,
                       "correct before timing but wrong on fresh inputs after it: %lld elements "
                       "outside tolerance; worst at index %lld: got %g, expected %g",
                       (long long)pr.check.nbad, (long long)pr.check.worst, pr.check.got,
                       pr.check.want);
            rc = -1;
        }
    }
    c->r->final_check_s = ckb_now() - t0;
    return rc;
}
