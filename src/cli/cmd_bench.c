/* `ckbench bench`: the suite, JAXBench's run_all. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/suite.h"
#include "cli/cli.h"

int ckb_cmd_bench(int argc, char **argv)
{
    ckb_cli_opts o;
    if (ckb_cli_parse(argc, argv, 2, &o) != 0)
        return 2;
    if (o.npositional) {
        fprintf(stderr, "ckbench: bench takes no positional arguments (use --workloads)\n");
        return 2;
    }
    ckb_suite_opts so = {0};
    so.size = o.size;
    so.threads = o.threads;
    so.out_dir = o.out ? o.out : "results";
    so.use_expert = !o.no_expert;
    so.resume = o.resume;
    so.warmup = o.warmup;
    so.iters = o.iters;
    if (o.workloads) {
        char *list = strdup(o.workloads), *save = NULL;
        for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            const ckb_workload *w = ckb_cli_workload(t);
            if (!w) {
                free(list);
                return 2;
            }
            if (so.n < 128)
                so.list[so.n++] = w;
        }
        free(list);
    } else {
        for (int i = 0; i < ckb_workload_count() && i < 128; i++)
            so.list[so.n++] = ckb_workload_at(i);
    }
    ckb_exec_config ec;
    ckb_exec_config_default(&ec);
    if (o.executor && ckb_exec_kind_parse(o.executor, &ec.kind) != 0) {
        fprintf(stderr, "ckbench: --executor is local or slurm\n");
        return 2;
    }
    ec.partition = o.partition;
    ec.account = o.account;
    if (o.slurm_max_jobs > 0)
        ec.max_jobs = o.slurm_max_jobs;
    char err[512];
    ckb_exec *exec = ckb_exec_open(&ec, err, sizeof err);
    if (!exec) {
        fprintf(stderr, "ckbench: %s\n", err);
        return 2;
    }
    ckb_machine m;
    if (ckb_cli_machine(&o, &m) != 0) {
        ckb_exec_close(exec);
        return 1;
    }
    so.machine = &m;
    so.exec = exec;
    int rc = ckb_suite_run(&so) == 0 ? 0 : 1;
    ckb_exec_close(exec);
    return rc;
}
