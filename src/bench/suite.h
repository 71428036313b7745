/*
 * suite.h — `ckbench bench`, JAXBench's run_all: every chosen workload's
 * baseline and, where present, its expert, with the timing protocol; a
 * timing-noise measurement (one baseline timed against itself); results
 * written after every workload (so a killed run resumes) as results.json
 * and results.csv, and a table on stdout.
 */
#ifndef CKB_SUITE_H
#define CKB_SUITE_H

#include <stddef.h>
#include <stdint.h>

#include "exec/executor.h"
#include "machine/profile.h"
#include "workloads/workload.h"

typedef struct {
    ckb_size size;
    int threads;
    const char *out_dir;                /* results.json and results.csv go here */
    const ckb_workload *list[128];
    int n;
    int use_expert;                     /* 0: baselines only */
    int resume;                         /* keep finished workloads of out_dir/results.json */
    int warmup, iters;
    const char *noise_workload;         /* NULL: 8p_GEMM if chosen, else the first */
    const ckb_machine *machine;
    ckb_exec *exec;                     /* where evaluations run; NULL: local */
} ckb_suite_opts;

/* 0 when every workload was run (whatever their statuses), -1 when the
 * harness failed (results so far are kept on disk). */
int ckb_suite_run(const ckb_suite_opts *o);

/* The hash recorded as an expert's "source_hash" (FNV-1a 64 of the file's
 * bytes, written as 16 hex digits), for a report to check the source it
 * shows is the one that ran. */
uint64_t ckb_suite_source_hash(const char *text, size_t n);

#endif /* CKB_SUITE_H */
