/* `ckbench tune WORKLOAD`: grid search of the expert's parameters. */
#include <stdio.h>

#include "bench/expert.h"
#include "bench/tune.h"
#include "cli/cli.h"

static int tune__run(const ckb_cli_args *a)
{
    ckb_cli_common o;
    ckb_cli_common_get(a, &o);
    int all = ckb_cli_given(a, "all") > 0;
    if (all == (a->npos > 0))
        return ckb_cli_usage_error(a, "give one WORKLOAD or --all");
    int nlimits = ckb_cli_given(a, "param");
    if (all && nlimits)
        return ckb_cli_usage_error(a, "--param narrows one WORKLOAD's grid, not --all's");
    const char *limits[CKB_CLI_MAX_REPEAT];
    for (int i = 0; i < nlimits; i++)
        limits[i] = ckb_cli_at(a, "param", i);
    /* --all: every workload with an expert, in suite order */
    const ckb_workload *ws[128];
    int n = 0;
    char path[1024];
    for (int i = 0; all && i < ckb_workload_count() && n < 128; i++)
        if (ckb_expert_path(ckb_workload_at(i), path, sizeof path))
            ws[n++] = ckb_workload_at(i);
    if (!all && !(ws[n++] = ckb_cli_workload(a->pos[0])))
        return 2;
    /* the size bench runs and reads tuned values for, unless told otherwise */
    o.size = ckb_cli_given(a, "size") ? o.size : CKB_SIZE_HOST;
    ckb_machine m;
    if (ckb_cli_machine(o.threads, o.machine, &m) != 0 ||
        ckb_cli_host_sizes(o.size, &m, o.threads, ws, n) != 0)
        return 1;
    ckb_tune_opts to = {.size = o.size, .threads = o.threads, .warmup = o.warmup,
                        .iters = o.iters, .dry_run = ckb_cli_given(a, "dry-run") > 0,
                        .machine = &m, .limits = limits, .nlimits = nlimits,
                        .confirm_rounds = (int)ckb_cli_int(a, "confirm", CKB_TUNE_CONFIRM_ROUNDS)};
    int failed = 0;
    for (int i = 0; i < n; i++) {
        if (all)
            printf("== %s (%d of %d)\n", ws[i]->id, i + 1, n);
        ckb_err e;
        int rc = ckb_tune_run(ws[i], &to, &e);
        if (rc == CKB_E_USAGE)
            return ckb_cli_fail(&e, 2); /* a --param off the grid: nothing run */
        if (rc != CKB_OK)
            ckb_cli_fail(&e, 1);
        failed += rc != CKB_OK;
    }
    if (all && failed)
        fprintf(stderr, "ckbench: tune --all: %d of %d experts could not be tuned\n", failed, n);
    return failed ? 1 : 0;
}

/* the confirm pass's constants as text, so the help says what runs */
#define TUNE__STR(x) #x
#define TUNE__XSTR(x) TUNE__STR(x)

static const ckb_cli_opt tune__opts[] = {
    CKB_CLI_OPT_SIZE_HOST,
    CKB_CLI_OPT_THREADS,
    CKB_CLI_OPT_WARMUP,
    CKB_CLI_OPT_ITERS,
    {"dry-run", 0, CKB_CLI_FLAG, NULL, 0, 0, 0, "list the grid without timing anything", NULL},
    {"all", 0, CKB_CLI_FLAG, NULL, 0, 0, 0,
     "tune every workload that has an expert, one after another, instead of one WORKLOAD", NULL},
    {"param", 0, CKB_CLI_KV, "NAME=V[,V...]", 0, 0, CKB_MAX_PARAMS,
     "search only these values of NAME, each one of its grid (default: the whole grid; "
     "the stored entry lists the limits)", NULL},
    {"confirm", 0, CKB_CLI_INT, "N", 0, CKB_TUNE_CONFIRM_MAX_ROUNDS, 0,
     "before storing, time the untuned defaults and the best again alternately, N rounds "
     "each, and store the best only if the medians say it is faster by more than the noise "
     "(under " TUNE__XSTR(CKB_TUNE_CONFIRM_MAX_RATIO) " of untuned's time; disturbed rounds do "
     "not count) (default: " TUNE__XSTR(CKB_TUNE_CONFIRM_ROUNDS) "; 0: store the "
     "search's best single timing unconfirmed)", NULL},
    CKB_CLI_OPT_MACHINE,
};

const ckb_cli_cmd ckb_cmd_tune = {
    .name = "tune", .args = "[WORKLOAD]", .min_pos = 0, .max_pos = 1,
    .summary = "grid-search the expert's parameters, store a confirmed best in "
               "workloads/<id>/tuned.json",
    .about = "Only correct configurations compete, ranked by their speedup over the baseline\n"
             "timed beside them. The winner is then timed again against the untuned\n"
             "defaults, alternately (--confirm), and stored only if it is still faster by more\n"
             "than the noise; otherwise nothing is stored (exit 0) and it says why.\n"
             "$CKBENCH_TUNED_DIR, when set, holds the tuned.json files instead\n"
             "(DIR/<id>/tuned.json), for tune and for every command that reads them.\n",
    .opts = tune__opts, .nopts = CKB_CLI_NOPTS(tune__opts), .run = tune__run,
};
