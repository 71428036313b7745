/*
 * `ckbench plan`: model calls, evaluations and node-hours of a generation
 * experiment before it runs (methods x workloads x budget).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/expert.h"
#include "cli/cli.h"
#include "core/alloc.h"
#include "exec/executor.h"
#include "gen/plan.h"

/* Scheduling overhead per evaluation of the slurm executor (srun's wall
 * time less the node's own), measured on the one-node test cluster: see
 * the README's cluster section. */
#define PLAN__SLURM_OVERHEAD_S 0.2

static int plan__run(const ckb_cli_args *a)
{
    const char *methods = ckb_cli_str(a, "method", "all");
    const char *workloads = ckb_cli_str(a, "workloads", NULL);
    const char *from = ckb_cli_str(a, "from", NULL);
    double budget = (double)ckb_cli_int(a, "budget", 144);
    double eval_s = ckb_cli_num(a, "eval-seconds", NAN);
    double overhead = ckb_cli_num(a, "overhead", PLAN__SLURM_OVERHEAD_S);
    double nodes = (double)ckb_cli_int(a, "nodes", 1);
    int use_expert = !ckb_cli_given(a, "no-expert");
    int overhead_given = ckb_cli_given(a, "overhead") > 0;
    if (from && ckb_cli_given(a, "eval-seconds"))
        return ckb_cli_usage_error(a, "give --eval-seconds or --from, not both");
    /* The workloads and how many have an expert. */
    int nwl = 0, experts = 0;
    char path[1024];
    if (workloads) {
        char *copy = ckb_xstrdup(workloads), *save = NULL;
        for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            const ckb_workload *w = ckb_cli_workload(t);
            if (!w) {
                free(copy);
                return 2;
            }
            nwl++;
            experts += ckb_expert_path(w, path, sizeof path);
        }
        free(copy);
    } else {
        for (int i = 0; i < ckb_workload_count(); i++, nwl++)
            experts += ckb_expert_path(ckb_workload_at(i), path, sizeof path);
    }
    /* The cost of one evaluation: given, measured from runs, or the default. */
    const char *cost_from = "given";
    const char *over_from = "default: measured on the one-node test cluster";
    if (from) {
        ckb_plan_cost c = {0};
        char *copy = ckb_xstrdup(from), *save = NULL;
        for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
            if (ckb_plan_measure(t, &c) != 0) {
                fprintf(stderr, "ckbench: %s is not a generation run (no records.jsonl)\n", t);
                free(copy);
                return 2;
            }
        free(copy);
        if (isnan(eval_s) && c.node_n > 0) {
            eval_s = c.node_sum / (double)c.node_n;
            cost_from = "measured: the mean over the records of --from";
        } else if (isnan(eval_s)) {
            fprintf(stderr, "ckbench: no evaluation in %s; using the default cost\n", from);
        }
        if (!overhead_given && c.over_n > 0) {
            overhead = c.over_sum / (double)c.over_n;
            over_from = "measured: srun's time less the node's, over the records of --from";
        }
        printf("measured from %s: %ld evaluations, %.2f s each on a node; %ld ran through "
               "srun, %.3f s scheduling overhead each\n\n",
               from, c.node_n, c.node_n ? c.node_sum / (double)c.node_n : 0.0, c.over_n,
               c.over_n ? c.over_sum / (double)c.over_n : 0.0);
    }
    if (isnan(eval_s)) {
        eval_s = CKB_EXEC_DEFAULT_EVAL_S;
        cost_from = "default: a correct kernel at default size, an upper bound";
    }
    printf("%-12s %12s %12s %11s\n", "method", "model calls", "evaluations", "node-hours");
    long tot_calls = 0, tot_evals = 0;
    int nm = 0;
    for (int m = 0; m < CKB_GEN_METHOD_COUNT; m++) {
        const char *name = ckb_gen_method_name((ckb_gen_method)m);
        int chosen = !strcmp(methods ? methods : "", "all");
        char *copy = ckb_xstrdup(methods ? methods : ""), *save = NULL;
        for (char *t = strtok_r(copy, ",", &save); t && !chosen; t = strtok_r(NULL, ",", &save))
            chosen = !strcmp(t, name);
        free(copy);
        if (!chosen)
            continue;
        ckb_gen_opts o;
        ckb_gen_opts_default(&o);
        o.method = (ckb_gen_method)m;
        o.budget = (int)budget;
        o.use_expert = use_expert;
        ckb_plan_counts c;
        ckb_plan_count(&o, nwl, experts, &c);
        printf("%-12s %12ld %12ld %11.2f\n", name, c.model_calls, c.evaluations,
               (double)c.evaluations * (eval_s + overhead) / 3600.0);
        tot_calls += c.model_calls;
        tot_evals += c.evaluations;
        nm++;
    }
    if (nm == 0)
        return ckb_cli_usage_error(a, "--method is best-of-n, refine, refine-docs, beam or all, "
                                      "or a comma-separated list of them (got '%s')",
                                   methods);
    double nh = (double)tot_evals * (eval_s + overhead) / 3600.0;
    printf("%-12s %12ld %12ld %11.2f\n", "total", tot_calls, tot_evals, nh);
    printf("\n%d workloads (%d with an expert timed once per run), budget %d per workload.\n",
           nwl, use_expert ? experts : 0, (int)budget);
    printf("Evaluations are an upper bound: a reply without code is not evaluated.\n");
    printf("Per evaluation: %.1f s on a node (%s)\n  + %.2f s scheduling overhead (%s).\n",
           eval_s, cost_from, overhead, overhead_given ? "given" : over_from);
    printf("On %d node(s): about %.1f hours of wall time, if the model keeps up.\n", (int)nodes,
           nh / nodes);
    return 0;
}

static const ckb_cli_opt plan__opts[] = {
    {"method", 0, CKB_CLI_STR, "M[,M...]", 0, 0, 0,
     "best-of-n, refine, refine-docs, beam, or all (default: all)", NULL},
    {"budget", 0, CKB_CLI_INT, "N", 1, 100000, 0, "samples per workload (default: 144)", NULL},
    {"workloads", 0, CKB_CLI_STR, "ID,ID...", 0, 0, 0, "the workloads (default: all)", NULL},
    {"eval-seconds", 0, CKB_CLI_NUM, "S", 0, 1e6, 0,
     "a node's seconds per evaluation (default: measured by --from, else 33, a correct kernel "
     "at default size)", NULL},
    {"from", 0, CKB_CLI_STR, "RUN[,RUN...]", 0, 0, 0,
     "generation runs to measure the cost per evaluation and the scheduling overhead from",
     NULL},
    {"overhead", 0, CKB_CLI_NUM, "S", 0, 1e6, 0,
     "Slurm's seconds per evaluation (default: measured by --from, else 0.2)", NULL},
    {"nodes", 0, CKB_CLI_INT, "N", 1, 1000000, 0, "nodes for the wall-time estimate (default: 1)",
     NULL},
    {"no-expert", 0, CKB_CLI_FLAG, NULL, 0, 0, 0, "do not count the experts' timings", NULL},
};

const ckb_cli_cmd ckb_cmd_plan = {
    .name = "plan", .args = "", .min_pos = 0, .max_pos = 0,
    .summary = "model calls, evaluations and node-hours of a generation experiment",
    .about = "For each method: model calls (beam: a plan and an implementation call per sample),\n"
             "evaluations (at most one per sample, one per expert) and node-hours.\n",
    .opts = plan__opts, .nopts = CKB_CLI_NOPTS(plan__opts), .run = plan__run,
};
