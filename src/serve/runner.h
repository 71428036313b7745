/*
 * runner.h — the server's workers: each takes the oldest queued evaluation
 * from the store, runs it through the executor (an isolated `ckbench
 * __exec` child on this host, or a Slurm job) in a folder of its own, and
 * stores its result. Local: one worker, and the child takes the machine's
 * timing lock (core/excl.h), so no timed call of the server overlaps
 * another's or the CLI's. Slurm: one worker per evaluation in flight.
 */
#ifndef CKB_SERVE_RUNNER_H
#define CKB_SERVE_RUNNER_H

#include "exec/executor.h"
#include "serve/store.h"

typedef struct ckb_runner ckb_runner;

typedef struct {
    ckb_store *store;
    ckb_exec *exec;
    const char *work_dir;    /* <work_dir>/<id>/: an evaluation's files while it runs */
    int workers;
    double timeout_scale;
    /* called after an evaluation ended (any state), from a worker thread;
     * result: the evaluation's JSON when it ran, else NULL */
    void (*on_end)(void *ctx, const ckb_store_row *row, struct json_object *result);
    void *ctx;
} ckb_runner_config;

/* Starts the workers. NULL when a thread cannot be started. */
ckb_runner *ckb_runner_start(const ckb_runner_config *c);

/* Something was queued: wake an idle worker now. */
void ckb_runner_kick(ckb_runner *r);

/* Cancels owner's evaluation id in the store and, when it runs, stops it:
 * returns once its processes are gone (at most ~10 s). Returns what
 * ckb_store_cancel returned, out as it filled it. */
ckb_store_rc ckb_runner_cancel(ckb_runner *r, const char *owner, const char *id,
                               ckb_store_row *out);

/* Evaluations running now. */
int ckb_runner_running(ckb_runner *r);

/* Stops every worker: running evaluations are killed and left queued in
 * the store, to run again at the next start. */
void ckb_runner_stop(ckb_runner *r);

#endif /* CKB_SERVE_RUNNER_H */
