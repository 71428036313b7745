/* `ckbench tune WORKLOAD`: grid search of the expert's parameters. */
#include <stdio.h>

#include "bench/tune.h"
#include "cli/cli.h"

int ckb_cmd_tune(int argc, char **argv)
{
    ckb_cli_opts o;
    if (ckb_cli_parse(argc, argv, 2, &o) != 0)
        return 2;
    if (o.npositional != 1) {
        fprintf(stderr, "usage: ckbench tune WORKLOAD [--size S] [--threads N] [--iters N]\n");
        return 2;
    }
    const ckb_workload *w = ckb_cli_workload(o.positional[0]);
    if (!w)
        return 2;
    ckb_machine m;
    if (ckb_cli_machine(&o, &m) != 0)
        return 1;
    ckb_tune_opts to = {.size = o.size, .threads = o.threads, .warmup = o.warmup,
                        .iters = o.iters, .dry_run = o.dry_run, .machine = &m};
    return ckb_tune_run(w, &to) == 0 ? 0 : 1;
}
