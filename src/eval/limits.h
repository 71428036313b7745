/*
 * limits.h — every limit of one evaluation (eval*.c), each with its reason.
 * The compile's own limits are confine.h's (CKB_CONFINED_*); the protocol's
 * array sizes (CKB_PROTO_MAX_CALLS, _SEEDS) are protocol.h's.
 *
 * Every wall-clock limit here is multiplied by ckb_eval_opts.timeout_scale
 * (--timeout-scale, default 1) where it is applied, and so is the CPU
 * backstop: a slow host (a sanitizer build, an emulator) scales them all
 * at once. The wall-clock and memory limits are margins meant to stop a
 * kernel that hangs, spins or grows, not to judge speed: an evaluation's
 * figures never depend on them. (None was derived from a measurement; each
 * reason below is the limit's purpose.)
 */
#ifndef CKB_EVAL_LIMITS_H
#define CKB_EVAL_LIMITS_H

#include <stddef.h>

/* ---- the defaults of ckb_eval_opts (ckb_eval_opts_default) ---- */

/* Input sets checked before timing (--seeds), then the first once more:
 * more than one draw, so that a kernel right by chance on one set is
 * caught before it is timed. */
#define CKB_EVAL_DEFAULT_SEEDS 3
/* Warm-up and timed calls of each kernel (--warmup, --iters; DESIGN §5):
 * the warm-up calls bring caches, pages and OpenMP's threads to their
 * steady state before any call counts; the timed calls' median is the
 * figure. */
#define CKB_EVAL_DEFAULT_WARMUP 5
#define CKB_EVAL_DEFAULT_ITERS 50
/* Seconds of calls one timing run may take (max_timing_s): a slow
 * candidate gets fewer calls rather than a timeout, so that an evaluation
 * of a slow kernel still ends in minutes (DESIGN §5). */
#define CKB_EVAL_DEFAULT_MAX_TIMING_S 60.0
/* The share (%) of the machine's CPU time that may go elsewhere during a
 * timing run before it counts as disturbed and is redone (max_steal_pct;
 * $CKBENCH_MAX_DISTURBED_PCT replaces it): above it, other work shares
 * the kernels' cores often enough to move a median (DESIGN §5). */
#define CKB_EVAL_DEFAULT_MAX_DISTURBED_PCT 10.0

/* ---- the sandboxes (eval__start) ---- */

/* Address space of each sandbox beyond its input and output buffers: 8 GiB
 * for the process itself (libraries, OpenMP's stacks) and whatever scratch
 * a kernel allocates inside its call; a kernel that wants more is stopped
 * (resource_limit) instead of taking the host's memory. */
#define CKB_EVAL_SANDBOX_SPARE_BYTES ((size_t)8 << 30)
/* CPU seconds of a sandbox over its whole life (RLIMIT_CPU), per thread of
 * the budget: a backstop behind the per-call wall clock, for a process
 * that spins where no call is watched. 600 s covers loading and the
 * checked calls; 20 x max_timing_s covers the timing runs (at most
 * CKB_EVAL_TIMING_RUNS of max_timing_s each, with a wide margin). */
#define CKB_EVAL_SANDBOX_CPU_BASE_S 600.0
#define CKB_EVAL_SANDBOX_CPU_PER_TIMING_S 20.0
/* Seconds a sandbox may take to load, waited twice for a candidate's (up
 * to "about to open the object", then to "ready"): loading runs the
 * object's constructors and IFUNC resolvers, the candidate's code before
 * any call, so a hang there must end too; a minute is room for a loaded
 * host. */
#define CKB_EVAL_LOAD_WAIT_S 60.0

/* ---- one call (eval__call's limit_s) ---- */

/* A checked call (correctness and the final check): 30 s plus 100 times
 * the baseline's slowest checked call so far (0 before the first). After
 * the first set, a candidate may be up to 100x slower than the baseline
 * before it ends `timeout`, the verdict for a kernel that hangs or is too
 * slow to be worth timing; the 30 s is the floor for the first call and
 * for fast baselines. */
#define CKB_EVAL_CHECKED_CALL_BASE_S 30.0
#define CKB_EVAL_CHECKED_CALL_PER_BASE 100.0
/* A timed call: 30 s plus 20 times the slower kernel's slowest checked
 * call. Both kernels have run on checked sets by then, so a timed call
 * that takes 20x its own checked time is not noise but a kernel that
 * behaves differently when timed. */
#define CKB_EVAL_TIMED_CALL_BASE_S 30.0
#define CKB_EVAL_TIMED_CALL_PER_SLOWEST 20.0

/* ---- the timing runs (eval__timing_runs) ---- */

/* When fewer than this many calls fit max_timing_s, warm-up shrinks to one
 * call so that the time goes to timed calls. */
#define CKB_EVAL_CALLS_TO_KEEP_WARMUP 20
/* Timed calls a slow candidate gets at the least, whatever max_timing_s
 * says: a median of fewer is no figure. */
#define CKB_EVAL_MIN_ITERS 3
/* Timing runs at most: a disturbed run is redone up to this many runs in
 * all, and the least disturbed kept (flagged timing_disturbed when even
 * that one is). More would only lengthen an evaluation on a busy host. */
#define CKB_EVAL_TIMING_RUNS 3
/* Seconds a timing run must last before other processes' and the
 * hypervisor's share of the CPU counts: /proc's clock ticks are 10 ms, so
 * a shorter run's share is mostly rounding. (The harness's own share is
 * measured precisely and counts at any length.) */
#define CKB_EVAL_JUDGED_RUN_S 0.5

/* ---- where each stage's seeds come from (eval__draw_seed's index) ----
 * Not limits, but numbers that must not change: with --seed, a run draws
 * the same input sets as before only while these stay. The checked sets
 * use indices 0..nseeds-1. */
#define CKB_EVAL_SEED_FINAL_CHECK 1000
/* Timed call `it` of timing run `run`: 5000 + 1000 * run + it (at most
 * CKB_PROTO_MAX_CALLS calls, fewer than 1000). */
#define CKB_EVAL_SEED_TIMED 5000
#define CKB_EVAL_SEED_PER_RUN 1000

#endif /* CKB_EVAL_LIMITS_H */
