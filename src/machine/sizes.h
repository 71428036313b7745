/*
 * sizes.h — the `host` size (DESIGN §6): per workload, the value of its
 * scale dim (workload.h) at which this host's baseline is worth timing.
 *
 * The fixed `default` dims were chosen on one machine; on a slower one a
 * baseline call takes seconds and `make bench` hours, on a faster one a call
 * is too short to time. `ckbench size` searches, per workload, a ladder of
 * scale values (default / 2^k down to the small value, up to 4 x default):
 * the smallest value whose baseline call takes at least min_ms and, for a
 * matmul-heavy workload (tags matmul or conv), reaches `share` of the
 * host's roof (JAXBench's 60% rule); never one whose call takes more than
 * max_ms, unless even the smallest does. A matmul-heavy baseline that never
 * reaches the share within the window gets the value where it came
 * closest, and the file says so.
 *
 * The choice is stored per host (CPU, ISA level in force, thread budget)
 * beside the machine profile; `bench` runs at size host by default, records
 * the dims of every entry, and a resumed run keeps the dims it started with.
 */
#ifndef CKB_MACHINE_SIZES_H
#define CKB_MACHINE_SIZES_H

#include <stdint.h>
#include <stdio.h>

#include "core/error.h"
#include "machine/profile.h"
#include "workloads/workload.h"

typedef struct {
    double min_ms, max_ms; /* the window for one baseline call (default 10, 100) */
    double share;          /* of the roof a matmul-heavy baseline should reach (0.6) */
    int calls;             /* timed baseline calls per probe, after one warm-up (3) */
    int any_window;        /* 1: a stored choice made with other min_ms/max_ms/share
                              is used as it is (bench, eval); 0: searched again */
    FILE *log;             /* a line per probe, or NULL */
    /* Times one baseline call of w at dims, in ms (the median of `calls`);
     * < 0 when it cannot run. NULL: the real baseline, in this process. */
    double (*probe)(void *ctx, const ckb_workload *w, const int64_t *dims, int threads,
                    int calls);
    void *probe_ctx;
} ckb_sizes_opts;

void ckb_sizes_opts_default(ckb_sizes_opts *o);

typedef struct {
    int64_t value;      /* the scale dim's value chosen (the default's when fixed) */
    double baseline_ms; /* its baseline call, as probed; NAN when fixed */
    double gflops, pct_of_roof;
    int fixed;          /* the workload has no scale dim */
    char why[48];       /* "share reached", "closest to the share", "min_ms reached",
                           "max_ms", "largest value", "fixed" */
} ckb_size_choice;

/* The ladder of scale values for w, ascending; returns how many (<= max). */
int ckb_sizes_ladder(const ckb_workload *w, int64_t *values, int max);

/* Searches w's scale value on machine m with `threads`. CKB_OK, or
 * CKB_E_HARNESS with err saying which probe could not run (then *out holds
 * the default). */
int ckb_sizes_search(const ckb_machine *m, int threads, const ckb_workload *w,
                     const ckb_sizes_opts *o, ckb_size_choice *out, ckb_err *err);

/* $XDG_CACHE_HOME/ckbench/sizes-<threads>t-<level>.json (else ~/.cache). */
void ckb_sizes_default_path(int threads, char *buf, size_t n);

/* Makes the host size of each of the n workloads this host's: the stored
 * choice when path (NULL: the default path) holds one made on this host
 * with these options, else a search, stored as soon as it is made (a
 * killed search keeps what it found). force: search again. Sets the
 * process's host scale values (ckb_workload_set_host_scale). CKB_OK, or a
 * code with err filled. The search's progress is said (core/say.h). */
int ckb_sizes_get(const ckb_machine *m, int threads, const ckb_workload *const *ws, int n,
                  const char *path, int force, const ckb_sizes_opts *o, ckb_err *err);

/* The stored choices as JSON text for `ckbench size` (caller frees), or
 * NULL when path has none for this host. */
char *ckb_sizes_describe(const ckb_machine *m, int threads, const char *path);

#endif /* CKB_MACHINE_SIZES_H */
