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

#include "core/error.h"
#include "eval/eval.h"
#include "exec/executor.h"
#include "gen/prompt.h"
#include "gen/run.h"
#include "providers/provider.h"

struct json_object;

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
    const ckb_machine *machine;  /* the host the expert's host-unit defaults are for */
    uint64_t seed;               /* 0: eval seeds drawn from the OS; else derived */
    int quiet;                   /* no progress lines */
    ckb_eval_opts eval;
    ckb_exec *exec;              /* where evaluations run; NULL: local (the timing lock) */
} ckb_gen_opts;

void ckb_gen_opts_default(ckb_gen_opts *o);

/* Loads what every prompt of w shares (its shown text, the host's facts and
 * stored figures, documentation when with_docs). CKB_OK, or a code with err
 * filled. */
int ckb_gen_task_load(const ckb_workload *w, ckb_size size, int threads, int with_docs,
                      const char *docs_target, ckb_gen_task *t, ckb_err *err);
void ckb_gen_task_free(ckb_gen_task *t);

/* Exactly what `ckbench prompt` prints for w (what a model gets for the
 * method's first sample, with role headers; for beam the plan request,
 * then the implementation request with a placeholder for the plan), for
 * the CLI and the server alike. sizes (may be NULL) gets a line per
 * request with the size a model's budget counts, its messages' contents:
 * "N chars, ~T tokens" (beam: "plan request: ..."). Caller frees both;
 * NULL with err. */
char *ckb_gen_prompt_text(const ckb_workload *w, ckb_gen_method m, int docs, ckb_size size,
                          int threads, const char *docs_target, char **sizes, ckb_err *err);

/* The refine shape for a budget: chains x turns >= budget (turns fixed,
 * chains rounded up, the last chain cut at the budget). */
void ckb_gen_refine_shape(const ckb_gen_opts *o, int *chains, int *turns);

/* Runs the method over workloads[0..n-1] in the run (created or resumed).
 * 0 when every workload's budget is done; -1 when the harness failed (the
 * records so far stay; resume continues). */
int ckb_gen_run(ckb_provider *p, ckb_run *run, const ckb_workload *const *workloads, int n,
                const ckb_gen_opts *o);

/* A timing disturbed by other work is not a figure (DESIGN §5): such
 * samples are correct but unmeasured until they are re-timed. */
typedef struct {
    int queued;          /* correct samples with a disturbed timing at the start */
    int evaluations;     /* evaluations made */
    int measured;        /* re-timed undisturbed: a new record replaces the old */
    int still_disturbed; /* disturbed in every round */
} ckb_retime_stats;

/* Evaluates again, with eo's protocol, the kernel of every correct record
 * of the run whose timing was disturbed, in up to `tries` rounds with a
 * growing pause before each ($CKBENCH_RETIME_PAUSE_S x round seconds,
 * default 5) so that the machine can quiet down. An evaluation that is not
 * disturbed is appended as a record that re-times the old one
 * (ckb_run_retimed: the old line stays, the latest wins), whatever its
 * verdict; a disturbed one is dropped and tried in the next round.
 * 0, or -1 when an evaluation or a write failed. */
int ckb_gen_retime(ckb_run *run, const ckb_eval_opts *eo, int tries, int quiet,
                   ckb_retime_stats *st);
/* The same with the evaluations through executor x (NULL: this process,
 * under the timing lock). */
int ckb_gen_retime_on(ckb_run *run, const ckb_eval_opts *eo, ckb_exec *x, int tries, int quiet,
                      ckb_retime_stats *st);

/* The most rounds generate spends draining its disturbed timings. */
enum { CKB_GEN_RETIME_TRIES = 3 };

/* Sets a record's speedup, timing_disturbed and speedup_disturbed from its
 * evaluation (speedup is null when the timing was disturbed). */
void ckb_gen_record_speedup(struct json_object *rec, struct json_object *eval);

#endif /* CKB_GEN_H */
