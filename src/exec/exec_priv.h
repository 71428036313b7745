/*
 * exec_priv.h — inside the executor module: the executor's state, shared by
 * exec.c (common part, local), exec_slurm.c (the driver side of slurm),
 * exec_node.c (the job file and the node side) and nodes.c (the nodes
 * results came from). No two of them call each other both ways: exec.c
 * calls exec_slurm.c, both call nodes.c and exec_node.c, and those two
 * call neither.
 */
#ifndef CKB_EXEC_PRIV_H
#define CKB_EXEC_PRIV_H

#include <pthread.h>

#include "exec/executor.h"

#define EXEC__MAX_NODES 256

struct ckb_exec {
    ckb_exec_config c;
    char partition[128], account[128], srun[512], extra[512];
    char self[1024];              /* this ckbench binary, what the nodes run */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int in_flight;                /* sruns running now */
    double last_submit;           /* ckb_now() of the last submission */
    struct {
        char node[128], cpu[128];
        int n;
    } nodes[EXEC__MAX_NODES];
    int nnodes;
    char first_cpu[128];
    int mixed;
};

/* The raw result a node writes beside its JSON: the struct itself, behind
 * a header that refuses a file of another build's layout. */
typedef struct {
    char magic[8]; /* "CKBRES1" */
    unsigned size; /* sizeof(ckb_eval_result) */
} exec__raw_header;

/* Files of a job: <dir>/<name>.{job.json,json,res,harness,log}. */
void exec__path(const ckb_exec_job *job, const char *ext, char *buf, size_t n);

/* The job file's text for job (the caller frees), and its fingerprint (16
 * hex digits over the job and the candidate's bytes): a result is reused
 * only for the same fingerprint. NULL when the candidate is unreadable. */
char *exec__job_text(const ckb_exec_job *job, char fp[17]);

/* Reads the node's answer for job with fingerprint fp: 1 with *json (and r)
 * filled, 0 when there is none (or it is for another fingerprint). */
int exec__read_result(const ckb_exec_job *job, const char *fp, ckb_eval_result *r,
                      struct json_object **json);

/* Records the node of a result, warns once per new CPU model (nodes.c). */
void exec__note_node(ckb_exec *x, struct json_object *json);

/* slurm, and local with isolate: runs the job in `ckbench __exec JOBFILE`,
 * through srun for slurm (exec_slurm.c); same contract as ckb_exec_eval. */
int exec__job_eval(ckb_exec *x, const ckb_exec_job *job, ckb_eval_result *r,
                   struct json_object **json, ckb_err *err);

#endif /* CKB_EXEC_PRIV_H */
