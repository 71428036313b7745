/*
 * executor.h — where an evaluation runs (DESIGN §6b). Two executors behind
 * one call:
 *
 * - local: in this process (ckb_eval_run), under the machine-wide timing
 *   lock (core/excl.h), so no two timings of any ckbench process overlap;
 * - slurm: one `srun --exclusive -N1 -n1 ckbench __exec JOB` per
 *   evaluation, so each timing has a node to itself. The job file, the
 *   node's result (JSON) and its raw form live in a folder both sides see
 *   (the run folder on the cluster's shared file system). A result already
 *   there for the same evaluation is taken as it is (a resumed run re-runs
 *   nothing that finished); a job still queued or running from a killed
 *   driver is waited for, not submitted again; a job that Slurm failed
 *   (node lost, preempted, cancelled: srun ends without the node's answer)
 *   is submitted again, at most `retries` times.
 *
 * Every result carries "executor": {name, node, cpu, attempts, job_id,
 * machine (the node's profile)}; a result from a node whose CPU differs from
 * the first one this executor saw is warned about (core/say.h) and counted in
 * ckb_exec_nodes_json, so speedups from different CPUs are never pooled
 * silently.
 */
#ifndef CKB_EXEC_EXECUTOR_H
#define CKB_EXEC_EXECUTOR_H

#include <stddef.h>

#include "core/error.h"
#include "eval/eval.h"

struct json_object;

typedef enum { CKB_EXEC_LOCAL = 0, CKB_EXEC_SLURM } ckb_exec_kind;

typedef struct {
    ckb_exec_kind kind;
    const char *partition;   /* NULL: $CKB_SLURM_PARTITION, else Slurm's default */
    const char *account;     /* NULL: $CKB_SLURM_ACCOUNT, else none */
    int max_jobs;            /* sruns in flight at once (0: the partition's node count) */
    int retries;             /* re-submissions after a Slurm failure (default 3) */
    double submit_gap_s;     /* at least this long between two submissions (0.05) */
    const char *srun;        /* the srun program (default: $CKB_SRUN, else "srun") */
    const char *extra_args;  /* more srun options, split on spaces ($CKB_SLURM_ARGS) */
    const char *ckbench;     /* the binary the nodes run (NULL: this one, on a shared path) */
    int quiet;
    int isolate;             /* local: each evaluation in a child `ckbench __exec JOBFILE`
                                (as a node runs it) instead of in this process, so that a
                                long-lived caller (serve) can cancel it and outlives its
                                crashes; needs job->dir and job->name */
} ckb_exec_config;

void ckb_exec_config_default(ckb_exec_config *c);
/* "local" / "slurm" -> kind; 0, or -1 for another name. */
int ckb_exec_kind_parse(const char *s, ckb_exec_kind *out);
const char *ckb_exec_kind_name(ckb_exec_kind k);

typedef struct ckb_exec ckb_exec;

/* An executor; NULL with a message in err (slurm without srun on PATH).
 * Free with ckb_exec_close. */
ckb_exec *ckb_exec_open(const ckb_exec_config *c, ckb_err *err);
void ckb_exec_close(ckb_exec *x);
ckb_exec_kind ckb_exec_kind_of(const ckb_exec *x);
/* How many evaluations it runs at once (slurm: the sruns in flight). */
int ckb_exec_slots(const ckb_exec *x);

/* One evaluation to run. */
typedef struct {
    const ckb_workload *w;
    const char *src;          /* the candidate file (NULL in the baseline modes) */
    const ckb_eval_opts *eo;
    const char *dir;          /* slurm: the shared folder for the job's files */
    const char *name;         /* names its files and the Slurm job, e.g. "8p_GEMM-3" */
    const int *cancel;        /* NULL, or a flag (read atomically) that, once non-zero,
                                 stops the evaluation: its processes are killed (and its
                                 Slurm job cancelled) and ckb_exec_eval returns
                                 CKB_E_HARNESS with "cancelled"; slurm and isolated
                                 local only */
} ckb_exec_job;

/* Runs the evaluation. 0 when it ran, whatever its verdict: *json (the
 * caller owns it) is the result as ckb_eval_result_json writes it plus the
 * "executor" block, and r, when not NULL, the result itself. CKB_E_HARNESS
 * when the harness failed (here or on the node) or Slurm failed more than
 * `retries` times: err says why. Thread-safe: generate calls it from many threads. */
int ckb_exec_eval(ckb_exec *x, const ckb_exec_job *job, ckb_eval_result *r,
                  struct json_object **json, ckb_err *err);

/* The nodes seen so far: {"<node>": {"cpu": ..., "evaluations": n}, ...,
 * "mixed_cpus": bool}. The caller owns it. */
struct json_object *ckb_exec_nodes_json(ckb_exec *x);

/* The node side: `ckbench __exec JOBFILE` (argv[2]). Runs the evaluation the
 * job file describes with this node's machine profile and writes the
 * result next to it; exit 0 when it ran, 1 when the harness failed (the
 * reason in JOBFILE's .harness file), 2 for an unusable job file, with err
 * holding the whole line to print (it names "ckbench __exec"). */
int ckb_exec_node_main(int argc, char **argv, ckb_err *err);

/* Default seconds per evaluation for `ckbench plan` when no run is given to
 * measure it from: the 8p expert at default size took 32.9 s on a 2-core
 * node (README, "Cost of one evaluation"). */
#define CKB_EXEC_DEFAULT_EVAL_S 33.0

#endif /* CKB_EXEC_EXECUTOR_H */
