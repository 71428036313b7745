/*
 * tune.h — `ckbench tune`: a grid search over an expert's declared
 * parameters, every configuration compiled and evaluated with the full
 * protocol (correctness first: only correct configurations compete), the
 * best stored where `bench` reads it.
 */
#ifndef CKB_TUNE_H
#define CKB_TUNE_H

#include "machine/profile.h"
#include "workloads/workload.h"

typedef struct {
    ckb_size size;
    int threads;
    int warmup, iters;
    int dry_run;          /* search, print, but do not store */
    const ckb_machine *machine;
} ckb_tune_opts;

/* 0 when the search ran and found a correct configuration; -1 otherwise. */
int ckb_tune_run(const ckb_workload *w, const ckb_tune_opts *o);

#endif /* CKB_TUNE_H */
