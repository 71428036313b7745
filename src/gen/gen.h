/*
 * gen.h — the generation methods (DESIGN §7) on one sample budget per
 * workload: best-of-n, refine, refine-docs, beam. A sample is one
 * implementation call: prompt -> provider -> extraction -> evaluation ->
 * one record. Workloads run in parallel (jobs), samples of a workload in
 * parallel where the method allows (independent samples, refine chains,
 * the candidates of a beam step); evaluations go through the executor
 * (exec/executor.h): serialized machine-wide (local), or a node each (slurm). Every decision a method takes is a function of the records,
 * so a resumed run takes the same decisions and asks only for what is
 * missing.
 */
#ifndef CKB_GEN_H
#define CKB_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "eval/eval.h"
#include "exec/executor.h"
#include "gen/prompt.h"
#include "gen/run.h"
#include "providers/provider.h"

typedef enum {
    CKB_GEN_BEST_OF_N,
    CKB_GEN_REFINE,
    CKB_GEN_REFINE_DOCS,
    CKB_GEN_BEAM,
    CKB_GEN_METHOD_COUNT
} ckb_gen_method;

const char *ckb_gen_method_name(ckb_gen_method m); /* "best-of-n", ... */
int ckb_gen_method_parse(const char *s, ckb_gen_method *out); /* 0 on success */
int ckb_gen_method_uses_docs(ckb_gen_method m);

typedef struct {
    ckb_gen_method method;
    int budget;                  /* samples per workload (default 144) */
    int chains, turns;           /* refine: 18 x 8 */
    int beam_width, beam_candidates; /* beam: 3 x 6 per element and iteration */
    int translate_iters;         /* beam: at most this many translation iterations (4) */
    int jobs;                    /* workloads at once (default 1) */
    int concurrency;             /* samples of one workload at once (default 4) */
    const char *provider, *model; /* as recorded */
    const char *docs_target;     /* NULL: the machine's default */
    int use_expert;              /* evaluate the expert once for expert_speedup */
    uint64_t seed;               /* 0: eval seeds drawn from the OS; else derived */
    int quiet;                   /* no progress lines */
    ckb_eval_opts eval;
    ckb_exec *exec;              /* where evaluations run; NULL: local (the timing lock) */
} ckb_gen_opts;

void ckb_gen_opts_default(ckb_gen_opts *o);

/* Loads what every prompt of w shares (reference source, README formula,
 * documentation when with_docs). 0, or -1 with a message. */
int ckb_gen_task_load(const ckb_workload *w, ckb_size size, int threads, int with_docs,
                      const char *docs_target, ckb_gen_task *t, char *err, size_t errlen);
void ckb_gen_task_free(ckb_gen_task *t);

/* The refine shape for a budget: chains x turns >= budget (turns fixed,
 * chains rounded up, the last chain cut at the budget). */
void ckb_gen_refine_shape(const ckb_gen_opts *o, int *chains, int *turns);

/* Runs the method over workloads[0..n-1] in the run (created or resumed).
 * 0 when every workload's budget is done; -1 when the harness failed (the
 * records so far stay; resume continues). */
int ckb_gen_run(ckb_provider *p, ckb_run *run, const ckb_workload *const *workloads, int n,
                const ckb_gen_opts *o);

#endif /* CKB_GEN_H */
