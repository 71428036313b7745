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
} ckb_tune_opts;

/* CKB_OK when the search ran and found a correct configuration; another
 * code with err filled otherwise; CKB_E_USAGE when a --param limit names no
 * parameter or a value off its grid (nothing is run). The search's lines go
 * through core/say.h (ckb_say_out). */
int ckb_tune_run(const ckb_workload *w, const ckb_tune_opts *o, ckb_err *err);

#endif /* CKB_TUNE_H */
