/*
 * plan.h — what a generation experiment costs before it runs (`ckbench
 * plan`): model calls and evaluations for a method, budget and workload
 * count, and node-hours from a cost per evaluation (measured from earlier
 * runs' records, or CKB_EXEC_DEFAULT_EVAL_S).
 */
#ifndef CKB_GEN_PLAN_H
#define CKB_GEN_PLAN_H

#include "gen/gen.h"

typedef struct {
    long model_calls;  /* provider calls (beam: a plan call and an implementation call) */
    long evaluations;  /* at most: every sample with code, plus one per expert */
} ckb_plan_counts;

/* The counts for method o->method with o->budget samples per workload over
 * `workloads` workloads, `experts` of which have an expert timed once (when
 * o->use_expert). */
void ckb_plan_count(const ckb_gen_opts *o, int workloads, int experts, ckb_plan_counts *out);

/* Costs measured from runs' records, pooled over runs. */
typedef struct {
    double node_sum;  /* seconds a node spent per evaluation: eval.executor.node_s
                         where the slurm executor ran it, else the record's eval_s */
    long node_n;
    double over_sum;  /* slurm: srun's wall time less the node's (queueing included) */
    long over_n;
} ckb_plan_cost;

/* Adds a run's records to *c. -1 when the run has no records.jsonl. */
int ckb_plan_measure(const char *run, ckb_plan_cost *c);

#endif /* CKB_GEN_PLAN_H */
