/*
 * tune.h — `ckbench tune`: a grid search over an expert's declared
 * parameters, every configuration compiled and evaluated with the full
 * protocol (correctness first: only correct configurations compete), the
 * best stored where `bench` reads it.
 */
#ifndef CKB_TUNE_H
#define CKB_TUNE_H

#include "core/error.h"
#include "machine/profile.h"
#include "workloads/workload.h"

typedef struct {
    ckb_size size;
    int threads;
    int warmup, iters;
    int dry_run;          /* search, print, but do not store */
    const ckb_machine *machine;
    /* --param NAME=V[,V...]: NAME's grid narrowed to these values (each one
     * of its grid on this host), for a quick search or a test; nlimits of
     * them. The stored entry lists them (param_limits). */
    const char *const *limits;
    int nlimits;
    /* --confirm N: rounds of the confirm pass (CKB_TUNE_CONFIRM_ROUNDS by
     * default); 0 stores the search's best single timing unconfirmed. */
    int confirm_rounds;
} ckb_tune_opts;

/* The confirm pass. The search keeps the best of many single timings, and
 * the best of many noisy figures is lucky (the winner's curse); the untuned
 * defaults were timed once, first, cold. So before storing, the untuned
 * defaults and the winner are timed again, alternately (untuned, winner,
 * untuned, ...), this many rounds each; each side's figure is the median of
 * its rounds' medians. */
#define CKB_TUNE_CONFIRM_ROUNDS 3
#define CKB_TUNE_CONFIRM_MAX_ROUNDS 20 /* --confirm's upper bound */
/* The winner is stored only when its confirmed median is under this share
 * of the untuned one's (a gain over 1/0.98 = 1.02x). Why 2%: one baseline
 * timed against itself (bench's timing_noise) reads 0.987 to 1.005 on the
 * hosts measured, so a single evaluation's median moves by up to ~1.5% with
 * nothing changed; a median of three alternated rounds narrows that, and a
 * gain of 2% stays outside it. A smaller one is not told from noise, and
 * the host model's blocks (which need no tuned.json) then stand. */
#define CKB_TUNE_CONFIRM_MAX_RATIO 0.98

/* One timing of the confirm pass: its median per-call milliseconds and its
 * speedup over the baseline timed beside it; speedup -1: not correct, -2:
 * still disturbed by other work after the retries (not a figure: it does
 * not count). */
typedef struct {
    double ms, speedup;
} ckb_tune_timing;

/* What the confirm pass concludes. */
typedef struct {
    int store;                /* 1: store the winner */
    int untuned_counted, best_counted;      /* rounds that count (correct, undisturbed) */
    int untuned_disturbed, best_disturbed;  /* rounds left out as disturbed */
    double untuned_ms, best_ms;             /* median of the counted rounds' medians; -1: none */
    double untuned_speedup, best_speedup;   /* the same of their speedups; -1: none */
    double gain;              /* untuned_ms / best_ms; -1 when a side has no figure */
    double speedup_gain;      /* best_speedup / untuned_speedup; -1 the same */
    char why[256];            /* when not stored, or stored without a gain: why, for the user */
} ckb_tune_confirmed;

/* The decision, from the timings alone (pure: no timing, no I/O, so it is
 * tested without a clock). untuned[i] and best[i] are round i's, rounds of
 * each (at most CKB_TUNE_CONFIRM_MAX_ROUNDS; more are not read). Each side
 * needs more than half of its rounds to count (a median of mostly disturbed
 * rounds would be one lucky timing again). Stored when the
 * winner's median is under CKB_TUNE_CONFIRM_MAX_RATIO of untuned's and its
 * speedup over the baseline timed beside it bears that out (untuned's under
 * the same share of the winner's: milliseconds alone move with the load
 * between two timings, the baseline beside each does not); not stored
 * when either is not, when too few rounds count, or when the winner was
 * not correct in a round; stored without a gain when the untuned defaults
 * are not correct (any correct configuration beats them). Returns c->store. */
int ckb_tune_confirm_decide(const ckb_tune_timing *untuned, const ckb_tune_timing *best,
                            int rounds, ckb_tune_confirmed *c);

/* CKB_OK when the search ran and found a correct configuration, whether
 * the confirm pass then stored it or not (it says which, and why); another
 * code with err filled otherwise; CKB_E_USAGE when a --param limit names no
 * parameter or a value off its grid (nothing is run). The search's lines go
 * through core/say.h (ckb_say_out). */
int ckb_tune_run(const ckb_workload *w, const ckb_tune_opts *o, ckb_err *err);

#endif /* CKB_TUNE_H */
