/*
 * sample.h — inside the generation engine: one workload's state and one
 * sample (prompt -> provider -> extraction -> evaluation -> record), shared
 * by the methods (gen.c, beam.c).
 */
#ifndef CKB_GEN_SAMPLE_H
#define CKB_GEN_SAMPLE_H

#include <pthread.h>

#include "gen/gen.h"

struct json_object;

/* What the workloads of a run share: the provider's health. After
 * CKB_GEN_INFRA_STOP infrastructure failures in a row (no call between
 * them reached the model) the provider counts as unreachable and the run
 * stops. */
enum { CKB_GEN_INFRA_STOP = 3 };
typedef struct {
    pthread_mutex_t mu;
    int infra_streak;      /* infrastructure failures in a row */
    int infra_total;       /* samples recorded as infra_error by this process */
    volatile int unreachable;
    char infra_error[512]; /* the last one's message */
} ckb_gen_shared;

typedef struct {
    const ckb_gen_opts *o;
    ckb_gen_shared *sh;
    ckb_provider *p;
    ckb_run *run;
    const ckb_workload *w;
    ckb_gen_task task;
    double expert_speedup; /* NAN: none */
    ckb_exec *exec;        /* o->exec, or the run's local executor */
    volatile int failed;   /* the harness failed: stop this workload */
    char error[512];
} ckb_gen_wl;

typedef enum { CKB_SAMPLE_ONESHOT, CKB_SAMPLE_REFINE, CKB_SAMPLE_BEAM } ckb_sample_kind;

typedef struct {
    ckb_sample_kind kind;
    int index;
    int chain, turn;      /* -1: null */
    int parent;           /* the revised sample's index, -1: none */
    const char *phase;    /* beam: "translate" / "optimize" */
    int iter, niters;     /* beam: iteration i of n (1-based in the prompt) */
    ckb_gen_prev prev;    /* refine: the previous kernel; beam: the parent */
} ckb_sample_spec;

/* The record of the sample: the run's when it has it already, else made
 * now and appended. NULL when the harness failed (g->failed is set). */
struct json_object *ckb_gen_sample(ckb_gen_wl *g, const ckb_sample_spec *s);

/* Record fields. */
const char *ckb_rec_str(struct json_object *rec, const char *key); /* "" if absent */
int ckb_rec_correct(struct json_object *rec);
/* The prev view of a record (code, status, eval), borrowed from it. */
ckb_gen_prev ckb_rec_prev(struct json_object *rec);

/* Evaluates the file src through g->exec as job `name` (its files, for
 * slurm, in RUN/evals/). 0 with *eval set, or -1 with g->error set. */
int ckb_gen_eval(ckb_gen_wl *g, const char *name, const char *src, const ckb_eval_opts *eo,
                 struct json_object **eval);

/* The beam search (beam.c). */
int ckb_gen_beam(ckb_gen_wl *g);

#endif /* CKB_GEN_SAMPLE_H */
