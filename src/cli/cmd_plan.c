/*
 * `ckbench plan`: model calls, evaluations and node-hours of a generation
 * experiment before it runs (methods x workloads x budget).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/expert.h"
#include "cli/cli.h"
#include "exec/executor.h"
#include "exec/plan.h"

/* Scheduling overhead per evaluation of the slurm executor (srun's wall
 * time less the node's own), measured on the one-node test cluster: see
 * the README's cluster section. */
#define PLAN__SLURM_OVERHEAD_S 0.2

static const char plan__usage[] =
    "usage: ckbench plan [--method M[,M...]] [--budget N] [--workloads ID,ID...]\n"
    "                    [--eval-seconds S | --from RUN[,RUN...]] [--overhead S] [--nodes N]\n"
    "                    [--no-expert]\n"
    "  M: best-of-n, refine, refine-docs, beam or all (default all); N: samples per workload\n"
    "  (default 144); workloads default to the suite; S: a node's seconds per evaluation\n"
    "  (default: the mean of RUN's records, else 33 s, a correct kernel at default size).\n";

static int plan__num(const char *flag, const char *v, double lo, double *out)
{
    char *end;
    errno = 0;
    double x = v ? strtod(v, &end) : NAN;
    if (!v || errno || *end || !(x >= lo)) {
        fprintf(stderr, "ckbench: %s needs a number >= %g (got '%s')\n%s", flag, lo,
                v ? v : "", plan__usage);
        return -1;
    }
    *out = x;
    return 0;
}

int ckb_cmd_plan(int argc, char **argv)
{
    const char *methods = "all", *workloads = NULL, *from = NULL;
    double budget = 144, eval_s = NAN, overhead = PLAN__SLURM_OVERHEAD_S, nodes = 1;
    int use_expert = 1, overhead_given = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int rc = 0;
        if (!strcmp(a, "--method"))
            methods = v;
        else if (!strcmp(a, "--workloads"))
            workloads = v;
        else if (!strcmp(a, "--from"))
            from = v;
        else if (!strcmp(a, "--budget"))
            rc = plan__num(a, v, 1, &budget);
        else if (!strcmp(a, "--eval-seconds"))
            rc = plan__num(a, v, 0, &eval_s);
        else if (!strcmp(a, "--overhead"))
            rc = plan__num(a, v, 0, &overhead), overhead_given = 1;
        else if (!strcmp(a, "--nodes"))
            rc = plan__num(a, v, 1, &nodes);
        else if (!strcmp(a, "--no-expert")) {
            use_expert = 0;
            continue;
        } else {
            fprintf(stderr, "ckbench: plan: unknown argument %s\n%s", a, plan__usage);
            return 2;
        }
        if (rc != 0)
            return 2;
        if (!v) {
            fprintf(stderr, "ckbench: %s needs a value\n", a);
            return 2;
        }
        i++;
    }
    /* The workloads and how many have an expert. */
    int nwl = 0, experts = 0;
    char path[1024];
    if (workloads) {
        char *copy = strdup(workloads), *save = NULL;
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
        char *copy = strdup(from), *save = NULL;
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
        char *copy = strdup(methods ? methods : ""), *save = NULL;
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
    if (nm == 0) {
        fprintf(stderr, "ckbench: --method is best-of-n, refine, refine-docs, beam or all\n");
        return 2;
    }
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
