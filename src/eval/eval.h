/*
 * eval.h — one evaluation of a candidate against a workload's baseline
 * (DESIGN §4, §5): compile, static check, sandboxed correctness on seeds
 * drawn now, interleaved timing, a last check on fresh inputs. The same
 * path times the baseline alone (bench without an expert) and the baseline
 * against itself (the timing noise).
 */
#ifndef CKB_EVAL_H
#define CKB_EVAL_H

#include <stdint.h>

#include "core/stats.h"
#include "eval/limits.h" /* the protocol's counts and every limit, each with its reason */
#include "eval/protocol.h"
#include "eval/stage.h"
#include "workloads/instance.h"
#include "workloads/workload.h"

struct json_object;


typedef struct {
    ckb_size size;
    int64_t host_scale;    /* at size host: the scale dim's value; 0: this process's
                              (ckb_workload_host_scale), as a node's job file names it */
    int threads;           /* the thread budget of candidate and baseline */
    int nseeds;            /* input sets checked before timing (>= 1; default 3) */
    int warmup, iters;     /* default 5 + 50 */
    int mode;              /* CKB_MODE_CANDIDATE, _BASELINE or _SELF */
    const char *workdir;   /* NULL: a fresh temporary folder, removed after */
    const char *const *defines; /* extra NAME=VALUE macros for the compile */
    int ndefines;
    int expert_kit;        /* 1: the file is the workload's expert, whose compile may
                              include expert-kit/ (never a candidate's: the kit is
                              the experts' shared code, not the models') */
    double timeout_scale;  /* multiplies every wall-clock limit (default 1) */
    double max_timing_s;   /* a slow candidate gets fewer calls to fit this */
    double max_steal_pct;  /* ($CKBENCH_MAX_DISTURBED_PCT overrides the default 10)
                              a timing run in which more of the machine's CPU time
                              than this went to the hypervisor or to other
                              processes is redone (up to 3 runs, the least
                              disturbed kept) */
    const char *expert_src; /* not NULL: also time this expert (its kit and these
                              defines) in the same alternation, for speedup_vs_expert
                              (CANDIDATE mode only) */
    const char *const *expert_defines;
    int nexpert_defines;
    uint64_t seed;         /* 0: seeds drawn from the OS now; else derived from it */
    double peak_gflops, bw_gbs; /* the workload's roofs; 0: no roofline figures or note */
} ckb_eval_opts;

void ckb_eval_opts_default(ckb_eval_opts *o);

/* One configuration's figures: every evaluation has at least one (a
 * workload of one configuration: the figures of the whole result). */
typedef struct {
    char name[32];             /* "" for a workload of one configuration */
    int64_t dims[CKB_MAX_DIMS];
    ckb_status status;
    ckb_stage stage;           /* (its detail, when it failed, is the result's) */
    int correct;
    double atol, rtol;
    double max_abs_err, max_rel_err, worst_tol_share;
    ckb_stats cand, base, expert;
    double speedup, speedup_vs_expert;
    double flops, bytes;
    double disturbed_pct;
} ckb_eval_config_result;

typedef struct {
    ckb_status status;
    ckb_stage stage;           /* the stage the evaluation ended in */
    char size_label[96];       /* the instance's: "default", "host(B=512)" */
    int64_t dims[CKB_MAX_DIMS]; /* the instance's (the first configuration's) */
    int nconfigs;              /* configurations evaluated (the workload's, or fewer when
                                  one failed: the evaluation stops at the first) */
    int failed_config;         /* the configuration whose verdict ended it; -1: none */
    ckb_eval_config_result configs[CKB_MAX_CONFIGS];
    char message[4096];        /* compiler or runtime message, trimmed */
    char detail[64];           /* compile error kind, signal name, cheat kind */
    int correct;
    double max_abs_err;
    double worst_tol_share;    /* the largest |got - want| / (atol + rtol*|want|) over every
                                  checked element: <= 1 when correct (how close to the
                                  tolerance the worst element came) */
    double max_rel_err;        /* the largest |got - want| / |want| where want != 0
                                  (upstream MaxKernel harness's max_rel_diff) */
    int64_t nbad, worst_index;
    double worst_got, worst_want;
    char worst_tensor[32];
    int nseeds;
    uint64_t seeds[CKB_PROTO_MAX_SEEDS];
    uint64_t final_seed;
    int warmup, iters;
    ckb_stats cand, base;      /* per-call milliseconds */
    double speedup;            /* base.median / cand.median */
    int has_expert;            /* the expert was timed beside them (expert_src) */
    ckb_stats expert;          /* its per-call milliseconds */
    double speedup_vs_expert;  /* expert.median / cand.median */
    double flops, bytes;
    double compile_s, correctness_s, timing_s, total_s;
    double setup_s;            /* inputs, oracles, the sandbox's start (after compile) */
    double final_check_s;
    /* Inside timing_s (warm-up and timed calls of every timing run): */
    double kernel_calls_s;     /* the two kernels' calls, the sum of their per-call times */
    double inputs_s;           /* drawing each call's input set */
    double checks_s;           /* poisoning the outputs, checking canaries and values */
    double switch_s;           /* letting a sandbox run and stopping it again, around its
                                  calls (the call's wall time less its per-call time) */
    double steal_pct;          /* of the kept timing run: the hypervisor's share */
    double others_pct;         /* ... and other processes' share of the CPU time */
    double harness_pct;        /* ... and ours (the trusted side's threads) inside the
                                  timed calls, as a share of the CPUs they had */
    double disturbed_pct;      /* what the kept run was judged by: the larger of the run-
                                  queue wait and steal + others (long runs), + harness */
    int disturbance_judged;    /* 1: other work's share could be measured: the kernels'
                                  run-queue wait (schedstat), or a run long enough for
                                  the machine's 10 ms CPU-time ticks */
    double wait_pct;           /* the kept run: the share of the kernels' threads' CPU time
                                  spent waiting for a CPU (-1: no schedstat here) */
    int timing_runs;
    double parent_timing_ms;   /* the kept timing run's length */
    int beyond_roofline;       /* median under the roofline bound: less than the declared
                                  work was done (a legal exact rewrite, SECURITY.md) */
} ckb_eval_result;

/* Evaluates the candidate file src (ignored in the baseline modes) on the
 * instance of w that o names (ckb_eval_instance). Returns 0 when the
 * evaluation ran, whatever its verdict; -1 when the harness itself could
 * not run (r->message says why). */
int ckb_eval_run(const ckb_workload *w, const char *src, const ckb_eval_opts *o,
                 ckb_eval_result *r);

/* The instance of w that o names in configuration config: o->size, with
 * o->host_scale, else this process's host scale value. 0, or -1 when there
 * is none (no such configuration, a scale value w refuses). */
int ckb_eval_instance(const ckb_workload *w, const ckb_eval_opts *o, int config,
                      ckb_instance *in);

/* 1 when the kept timing run was still disturbed by other work after every
 * retry (DESIGN §5: then its figures are not figures): the same judgement as
 * the one that decided the retries, never a second one. */
int ckb_eval_timing_disturbed(const ckb_eval_result *r, const ckb_eval_opts *o);

/* The result as JSON (DESIGN §9 columns and the eval fields). */
struct json_object *ckb_eval_result_json(const ckb_workload *w, const ckb_eval_opts *o,
                                         const ckb_eval_result *r);

#endif /* CKB_EVAL_H */
