/* `ckbench tune WORKLOAD`: grid search of the expert's parameters. */
#include <stdio.h>

#include "bench/tune.h"
#include "cli/cli.h"

static int tune__run(const ckb_cli_args *a)
{
    ckb_cli_common o;
    ckb_cli_common_get(a, &o);
    const ckb_workload *w = ckb_cli_workload(a->pos[0]);
    if (!w)
        return 2;
    ckb_machine m;
    if (ckb_cli_machine(o.threads, o.machine, &m) != 0)
        return 1;
    ckb_tune_opts to = {.size = o.size, .threads = o.threads, .warmup = o.warmup,
                        .iters = o.iters, .dry_run = ckb_cli_given(a, "dry-run") > 0,
                        .machine = &m};
    return ckb_tune_run(w, &to) == 0 ? 0 : 1;
}

static const ckb_cli_opt tune__opts[] = {
    CKB_CLI_OPT_SIZE,
    CKB_CLI_OPT_THREADS,
    CKB_CLI_OPT_WARMUP,
    CKB_CLI_OPT_ITERS,
    {"dry-run", 0, CKB_CLI_FLAG, NULL, 0, 0, 0, "list the grid without timing anything", NULL},
    CKB_CLI_OPT_MACHINE,
};

const ckb_cli_cmd ckb_cmd_tune = {
    .name = "tune", .args = "WORKLOAD", .min_pos = 1, .max_pos = 1,
    .missing = "needs a WORKLOAD, e.g. ckbench tune 8p",
    .summary = "grid-search the expert's parameters, store the best in workloads/<id>/tuned.json",
    .about = "Only correct configurations compete, ranked by their speedup over the baseline\n"
             "timed beside them.\n",
    .opts = tune__opts, .nopts = CKB_CLI_NOPTS(tune__opts), .run = tune__run,
};
