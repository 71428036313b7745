/*
 * eval_priv.h — what the files of one evaluation share (src/eval/eval*.c;
 * not for use outside them): the context of one evaluation and the
 * functions between the pipeline (eval.c), the compile stage
 * (eval_compile.c), the sandboxes and their calls (eval_calls.c) and the
 * correctness, timing and final-check stages (eval_timing.c).
 */
#ifndef CKB_EVAL_PRIV_H
#define CKB_EVAL_PRIV_H

#include <stdint.h>

#include "eval/check.h"
#include "eval/eval.h"
#include "eval/sandbox.h"
#include "eval/verdict.h"

/* One sandboxed process and the trusted side's view of its OUT memfd. */
typedef struct {
    ckb_sandbox sb;
    int root_fd;   /* the folder its sandbox sees (a compiled kernel's), -1: none */
    int started;
    int opened;    /* it is about to open (or has opened) the candidate: from then on
                      the candidate's code, not ours, decides how it ends */
    int out_fd;
    void *out;
    ckb_proto_header *h;
} eval__proc;

/* Everything one evaluation holds; freed by eval__release. */
typedef struct {
    const ckb_instance *inst; /* what is evaluated: every dim and byte count comes from it */
    const ckb_workload *w;    /* inst->w */
    const ckb_eval_opts *o;
    ckb_eval_result *r;
    char workdir[256];
    int own_workdir;
    int root_fd;           /* workdir/root: all a candidate's sandbox can see */
    ckb_proto_layout lay;
    int in_fd;
    void *in;              /* the input set of the next call, written here only */
    eval__proc base;       /* the baseline, in every mode */
    eval__proc cand;       /* the candidate (or a second baseline, in SELF mode) */
    eval__proc expert;     /* the workload's expert, with expert_src (--vs-expert) */
    int expert_root_fd;    /* workdir/expert/root: all the expert's sandbox sees */
    double expert_s;       /* the expert's slowest checked call */
    unsigned seq;          /* calls made, the next call's sequence number */
    void *want[CKB_MAX_TENSORS]; /* create_inputs's output arguments: scratch, never read */
    double base_s;         /* the baseline's slowest checked call */
    double cand_s;         /* the candidate's slowest checked call */
    double call_s;         /* wall time inside timed calls, this timing run */
    double harness_cpu_s;  /* our other threads' CPU time inside them */
    int timing;            /* in the timing stage: its calls' costs are added up in r */
} eval__ctx;

/* What one input set through the processes gave (eval__pair). */
typedef struct {
    double cand_ms, base_ms, expert_ms;
    ckb_check check;
} eval__pair_result;

/* ---- eval.c: the pipeline ---- */

/* Ends the evaluation with verdict v (its status and detail: verdict.def,
 * the only place either comes from) and a message. */
void eval__fail(eval__ctx *c, ckb_verdict v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Seeds are odd: 0 never reaches a workload's create_inputs. */
uint64_t eval__draw_seed(const ckb_eval_opts *o, int i);

/* One instance through every stage into r (ckb_eval_run's contract). */
int eval__run_instance(const ckb_instance *in, const char *src, const ckb_eval_opts *o,
                       ckb_eval_result *r);

/* ---- eval_configs.c: a workload of several configurations ---- */

/* Every configuration of w through eval__run_instance, judged as one
 * (eval.h: ckb_eval_run's contract, the result's configs filled). */
int eval__run_configs(const ckb_workload *w, const char *src, const ckb_eval_opts *o,
                      ckb_eval_result *r);
/* The figures of one configuration's evaluation, kept into k. */
void eval__keep_config(const ckb_instance *in, const ckb_eval_result *one,
                       ckb_eval_config_result *k);

/* ---- eval_compile.c: the compile stage ---- */

/* The kernel in src compiled, its imports checked and its root made; the
 * candidate (expert = 0) or the expert of --vs-expert (expert = 1). 0, or
 * -1 with the evaluation's verdict set. */
int eval__compile_kernel(eval__ctx *c, const char *src, int expert);

/* ---- eval_calls.c: the sandboxes and the call protocol ---- */

/* The shared input memfd, and the scratch for create_inputs's outputs. */
int eval__map_in(eval__ctx *c);
int eval__alloc_outputs(eval__ctx *c);
/* Starts p's sandbox (the candidate object, or the baseline alone) and
 * leaves it stopped until its first call; -1 with the verdict set. */
int eval__start(eval__ctx *c, eval__proc *p, int runs_candidate);
int eval__pair(eval__ctx *c, uint64_t seed, int cand_first, int expert_slot, double limit_s,
               eval__pair_result *pr);
/* A check's worst figures into the result (the first miss's element kept). */
void eval__note_check(eval__ctx *c, const ckb_check *k);

/* ---- eval_timing.c: the stages after the sandboxes start ---- */

int eval__correctness(eval__ctx *c);
int eval__timing(eval__ctx *c);
int eval__final_check(eval__ctx *c);

#endif /* CKB_EVAL_PRIV_H */
