/* `ckbench bench`: the suite, JAXBench's run_all. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/suite.h"
#include "cli/cli.h"
#include "core/alloc.h"
#include "exec/executor.h"

static int bench__run(const ckb_cli_args *a)
{
    ckb_cli_common o;
    ckb_cli_common_get(a, &o);
    ckb_suite_opts so = {0};
    /* bench times at this host's sizes unless told otherwise (DESIGN §6) */
    so.size = ckb_cli_given(a, "size") ? o.size : CKB_SIZE_HOST;
    so.threads = o.threads;
    so.out_dir = ckb_cli_str(a, "out", "results");
    so.use_expert = !ckb_cli_given(a, "no-expert");
    so.resume = ckb_cli_given(a, "resume") > 0;
    so.warmup = o.warmup;
    so.iters = o.iters;
    const char *list = ckb_cli_str(a, "workloads", NULL);
    if (list) {
        char *copy = ckb_xstrdup(list), *save = NULL;
        for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            const ckb_workload *w = ckb_cli_workload(t);
            if (!w) {
                free(copy);
                return 2;
            }
            if (so.n < 128)
                so.list[so.n++] = w;
        }
        free(copy);
    } else {
        for (int i = 0; i < ckb_workload_count() && i < 128; i++)
            so.list[so.n++] = ckb_workload_at(i);
    }
    ckb_err e;
    if (ckb_suite_check(&so, &e) != CKB_OK)
        return ckb_cli_fail(&e, 2);
    ckb_exec_config ec;
    if (ckb_cli_executor(a, &ec) != 0)
        return 2;
    ckb_err err;
    ckb_exec *exec = ckb_exec_open(&ec, &err);
    if (!exec) {
        fprintf(stderr, "ckbench: %s\n", err.msg);
        return 2;
    }
    ckb_machine m;
    if (ckb_cli_machine(o.threads, o.machine, &m) != 0) {
        ckb_exec_close(exec);
        return 1;
    }
    if (so.size == CKB_SIZE_HOST) {
        /* a resumed run keeps the dims its entries ran with; the others get
         * this host's choice */
        const ckb_workload *adopted[128], *rest[128];
        int na = so.resume ? ckb_suite_adopt_host_dims(so.out_dir, adopted, 128) : 0, nr = 0;
        for (int i = 0; i < so.n; i++) {
            int taken = 0;
            for (int k = 0; k < na; k++)
                taken |= adopted[k] == so.list[i];
            if (!taken)
                rest[nr++] = so.list[i];
        }
        if (ckb_cli_host_sizes(so.size, &m, o.threads, rest, nr) != 0) {
            ckb_exec_close(exec);
            return 1;
        }
    }
    so.machine = &m;
    so.exec = exec;
    int rc = ckb_suite_run(&so, &e);
    ckb_exec_close(exec);
    return rc == CKB_OK ? 0 : ckb_cli_fail(&e, rc == CKB_E_CONFLICT ? 2 : 1);
}

static const ckb_cli_opt bench__opts[] = {
    CKB_CLI_OPT_SIZE_HOST,
    {"workloads", 0, CKB_CLI_STR, "ID,ID...", 0, 0, 0, "the workloads to run (default: all)", NULL},
    CKB_CLI_OPT_THREADS,
    {"out", 0, CKB_CLI_STR, "DIR", 0, 0, 0,
     "where results.json and results.csv go; a new or empty folder unless --resume "
     "(default: results)", NULL},
    {"resume", 0, CKB_CLI_FLAG, NULL, 0, 0, 0,
     "continue the results in DIR (same size, threads, warm-up and iterations): keep every "
     "workload it holds, run the missing ones", NULL},
    {"no-expert", 0, CKB_CLI_FLAG, NULL, 0, 0, 0, "time the baselines only", NULL},
    CKB_CLI_OPT_WARMUP,
    CKB_CLI_OPT_ITERS,
    CKB_CLI_OPT_MACHINE,
    CKB_CLI_OPTS_EXECUTOR,
};

const ckb_cli_cmd ckb_cmd_bench = {
    .name = "bench", .args = "", .min_pos = 0, .max_pos = 0,
    .summary = "the suite (JAXBench's run_all): baselines and experts, results.json/.csv",
    .about = "Results are written after every workload, so a killed run continues with --resume.\n",
    .opts = bench__opts, .nopts = CKB_CLI_NOPTS(bench__opts), .run = bench__run,
};
