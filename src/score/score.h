/*
 * score.h — `ckbench score`: the metrics of DESIGN §8 per (method, model)
 * over one or more generation runs, for the score command's table and
 * score.json and for the report's generation sections (one computation,
 * shown by both).
 *
 * Runs of the same method and model are pooled: the group's workloads are
 * the union of the runs' workloads, and a workload present in several runs
 * has its samples in the order the runs were given, then by index (the
 * second run's sample 0 follows the first run's last budgeted sample), so
 * "the first N samples" of fast_p@N and of the solved-vs-samples curve is
 * well defined.
 *
 * Definitions (per group; W = its workloads):
 *   compile rate            samples whose status is not compile_error, no_code or
 *                           provider_error, over samples
 *   per-sample correctness  correct samples over samples
 *   solved                  workloads with a correct sample (of W; the suite's
 *                           count when W is the whole suite)
 *   speedup of a workload   the best correct sample's speedup floored at 1x; an
 *                           unsolved workload (or a correct one never timed) is 1x
 *   geomean speedup         the geometric mean of those over W
 *   beating the baseline    workloads with a correct sample of speedup > 1, over W
 *   fast_p@N                workloads with a correct sample of speedup > p among
 *                           their first N samples, over W (KernelBench's fast_p)
 *   % of expert             100 x the geometric mean over the workloads with an
 *                           expert of (floored speedup / the expert's speedup)
 *   taxonomy                samples per status; compile_error split by eval.detail
 *
 * JAXBench's own summary (MaxKernel/evaluation/evaluation_utils.py,
 * summarize_results, at accelerator-agents c4f3b17), with a workload as
 * its task and the workload's best correct sample as the task's kernel:
 *   compiled / correct      workloads with a compiled / a correct sample
 *   improved / slower       solved workloads whose best speedup is > 1 / < 1
 *   max_speedup             the largest best speedup clipped at 1 (1 when none)
 *   arithmetic mean         the mean over W of the best speedups clipped at 1,
 *                           an unsolved workload counting 1
 *   geometric mean          the same as a geometric mean (= geomean speedup)
 *   *_ratio_pct             each count over W, in percent
 */
#ifndef CKB_SCORE_H
#define CKB_SCORE_H

#include <stddef.h>

#include "core/error.h"
#include "core/strbuf.h"
#include "score/runs.h"

struct json_object;

enum { CKB_SCORE_MAX_P = 16, CKB_SCORE_MAX_N = 16, CKB_SCORE_MAX_RUNS = 64 };

/* The default thresholds and sample counts of fast_p (the budget is added
 * per group). */
#define CKB_SCORE_DEFAULT_P {1.0, 1.5, 2.0}
#define CKB_SCORE_DEFAULT_N {1, 8, 32}

typedef struct {
    const char *id;                    /* borrowed from a run */
    int budget;                        /* pooled: the budgets of its runs added */
    int samples, correct;
    int disturbed;                     /* correct samples whose timing was disturbed */
    const ckb_score_sample **pool;     /* its samples in pooled order (owned array) */
    int *pos;                          /* the pooled position of each (owned) */
    int *run_of;                       /* the run (index into the set) of each (owned) */
    int npool;
    int best;                          /* index into pool of the best correct sample, -1 */
    int first_correct;                 /* pooled position of the first correct sample, -1 */
    double best_speedup;               /* raw; NAN when unsolved or never timed */
    double speedup;                    /* floored at 1 */
    double expert_speedup;             /* median over its records; NAN: no expert */
    double pct_of_expert;              /* 100 x speedup / expert_speedup; NAN: no expert */
} ckb_score_workload;

typedef struct {
    char name[CKB_SCORE_NAME_MAX];
    int count;
} ckb_score_count;

typedef struct {
    char method[CKB_SCORE_ID_MAX], model[CKB_SCORE_ID_MAX];
    char label[2 * CKB_SCORE_ID_MAX + 4]; /* "method / model" */
    int runs[CKB_SCORE_MAX_RUNS], nruns;  /* indices into the set's runs */
    ckb_score_workload *w;                /* owned */
    int nw;
    int budget;                           /* the largest pooled workload budget */
    int samples, compiled, correct, solved;
    int covers_suite;                     /* W is every workload of the suite */
    double compile_rate, per_sample_correctness;    /* NAN without samples */
    double geomean_speedup, share_beating_baseline; /* NAN without workloads */
    double pct_of_expert;                 /* NAN when no workload has an expert */
    int expert_workloads;
    /* JAXBench's summary (above); NAN / 0 without workloads */
    int jb_compiled, jb_improved, jb_slower;
    double jb_max_speedup, jb_arithmetic_mean_speedup;
    ckb_score_count *taxonomy;            /* per status, canonical order first (owned) */
    int ntax;
    ckb_score_count *compile_kinds;       /* compile_error per eval.detail (owned) */
    int nck;
} ckb_score_group;

typedef struct {
    ckb_score_run runs[CKB_SCORE_MAX_RUNS];
    int nruns;
    ckb_score_group *g;                   /* in the order first seen (owned) */
    int ng;
    double p[CKB_SCORE_MAX_P];            /* fast_p thresholds, ascending */
    int np;
    int n[CKB_SCORE_MAX_N];               /* fast_p sample counts asked for, ascending */
    int nn;
    int n_given[CKB_SCORE_MAX_N];         /* 1: asked for by the user (kept past the budget) */
} ckb_score_set;

/* Reads the runs (folders; 1 to CKB_SCORE_MAX_RUNS), groups and scores
 * them. extra_p / extra_n add fast_p thresholds and sample counts to the
 * defaults (may be NULL with a count of 0). CKB_OK, or a code with the
 * reason in err. */
int ckb_score_load(const char *const *paths, int n, const double *extra_p, int nextra_p,
                   const int *extra_n, int nextra_n, ckb_score_set *s, ckb_err *err);
void ckb_score_free(ckb_score_set *s);

/* fast_p@N of a group: workloads with a correct sample of speedup > p among
 * their first N pooled samples, over its workloads. NAN without workloads. */
double ckb_score_fast_p(const ckb_score_group *g, double p, int n);
/* The share of the group's workloads with a correct sample among their
 * first k samples (the correctness-vs-samples curve). */
double ckb_score_solved_within(const ckb_score_group *g, int k);
/* The sample counts fast_p is reported at for this group: the set's,
 * without defaults beyond the group's budget, plus the budget; ascending.
 * Returns how many (at most max). */
int ckb_score_n_values(const ckb_score_set *s, const ckb_score_group *g, int *out, int max);
/* Every N that any group reports, each once, ascending (at most max): the
 * columns of a fast_p@N table. Returns how many. */
int ckb_score_all_n_values(const ckb_score_set *s, int *out, int max);

/* The place of a status in the taxonomy's order (ok, compile_error, ...,
 * no_code, provider_error); every unknown status after them. */
int ckb_score_status_rank(const char *status);

/* score.json (docs/FORMATS.md, "Scores"); the caller puts it. */
struct json_object *ckb_score_json(const ckb_score_set *s);
/* The aligned text tables: one row per group (the paper's table), fast_p,
 * the failure taxonomy; with verbose, each group's workloads. */
void ckb_score_text(const ckb_score_set *s, int verbose, ckb_strbuf *out);

#endif /* CKB_SCORE_H */
