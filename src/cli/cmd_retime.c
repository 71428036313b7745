/*
 * `ckbench retime RUN...`: measure again the samples of generation runs
 * whose timing was disturbed by other work on the machine (DESIGN §5: such
 * a timing is not a figure); for a suite's folder (results.json), its
 * disturbed entries and timing noise are run again by bench's own resume. Each kernel is evaluated again with the run's
 * protocol (size, threads, warm-up and timed calls from its config.json);
 * an undisturbed evaluation is appended to records.jsonl as a record that
 * re-times the old one (the old line stays, the latest wins), and best/
 * and summary.json follow. Exit status: 0 when every disturbed timing was
 * measured, 1 when some stayed disturbed or the harness failed, 2 for a
 * bad command line.
 */
#include <json-c/json.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/jsonget.h"
#include "bench/suite.h"
#include "gen/gen.h"

/* The run's evaluation protocol from its config.json. */
static int retime__opts(json_object *c, ckb_eval_opts *eo)
{
    ckb_eval_opts_default(eo);
    const char *size = ckb_json_str(c, "size");
    if (size && ckb_size_parse(size, &eo->size) != 0)
        return -1;
    long v;
    eo->threads = (v = ckb_json_long(c, "threads")) > 0 ? (int)v : omp_get_num_procs();
    if ((v = ckb_json_long(c, "warmup")) >= 0)
        eo->warmup = (int)v;
    if ((v = ckb_json_long(c, "iters")) > 0)
        eo->iters = (int)v;
    if ((v = ckb_json_long(c, "seeds")) > 0)
        eo->nseeds = (int)v;
    return 0;
}

static int retime__run(const char *dir, int tries, int quiet)
{
    ckb_err err;
    ckb_run *run = NULL;
    if (ckb_run_resume(dir, &run, &err) != 0) {
        fprintf(stderr, "ckbench: %s\n", err.msg);
        return 1;
    }
    ckb_eval_opts eo;
    int rc = 1;
    if (retime__opts(ckb_run_config(run), &eo) != 0) {
        fprintf(stderr, "ckbench: %s/config.json names an unknown size\n", dir);
        goto cleanup;
    }
    ckb_machine m;
    if (ckb_cli_machine(eo.threads, NULL, &m) != 0)
        goto cleanup;
    eo.peak_gflops = m.bf16_gflops;
    eo.bw_gbs = m.bw_gbs;
    ckb_retime_stats st;
    int ok = ckb_gen_retime(run, &eo, tries, quiet, &st) == 0;
    printf("%s: %d disturbed timing%s, %d measured again, %d still disturbed\n", dir, st.queued,
           st.queued == 1 ? "" : "s", st.measured, st.still_disturbed);
    if (st.still_disturbed)
        fprintf(stderr, "ckbench: %s: %d timing%s stayed disturbed: other work keeps the "
                        "machine busy; run `ckbench retime %s` again when it is quieter\n",
                dir, st.still_disturbed, st.still_disturbed == 1 ? "" : "s", dir);
    rc = ok && st.still_disturbed == 0 ? 0 : 1;
cleanup:
    ckb_run_close(run);
    return rc;
}

/* A suite's folder: the disturbed entries are measured again, up to
 * `tries` rounds with a growing pause, through bench's resume. */
static int retime__suite(const char *dir, int tries)
{
    ckb_suite_opts o;
    memset(&o, 0, sizeof o);
    int nd = 0;
    ckb_err e;
    if (ckb_suite_retime_opts(dir, &o, &nd, &e) != CKB_OK)
        return ckb_cli_fail(&e, 1);
    ckb_machine m;
    if (ckb_cli_machine(o.threads, NULL, &m) != 0)
        return 1;
    o.machine = &m;
    for (int round = 0; round < tries && nd > 0; round++) {
        if (round)
            sleep((unsigned)(10 * round));
        printf("%s: %d disturbed timing%s, measuring again (round %d)\n", dir, nd,
               nd == 1 ? "" : "s", round + 1);
        fflush(stdout);
        if (ckb_suite_run(&o, &e) != CKB_OK || ckb_suite_retime_opts(dir, &o, &nd, &e) != CKB_OK)
            return ckb_cli_fail(&e, 1);
        o.machine = &m;
    }
    printf("%s: %d timing%s still disturbed\n", dir, nd, nd == 1 ? "" : "s");
    return nd ? 1 : 0;
}

static int retime__main(const ckb_cli_args *a)
{
    int tries = (int)ckb_cli_int(a, "tries", CKB_GEN_RETIME_TRIES);
    int quiet = ckb_cli_given(a, "quiet") > 0;
    int rc = 0;
    for (int i = 0; i < a->npos; i++) {
        char records[4200];
        snprintf(records, sizeof records, "%s/records.jsonl", a->pos[i]);
        char results[4200];
        snprintf(results, sizeof results, "%s/results.json", a->pos[i]);
        int r;
        if (access(records, F_OK) == 0) {
            r = retime__run(a->pos[i], tries, quiet);
        } else if (access(results, F_OK) == 0) {
            r = retime__suite(a->pos[i], tries);
        } else {
            fprintf(stderr, "ckbench: %s is neither a generation run (records.jsonl) nor a "
                            "suite's results (results.json)\n", a->pos[i]);
            r = 2;
        }
        if (r > rc)
            rc = r;
    }
    return rc;
}

static const ckb_cli_opt retime__options[] = {
    {"tries", 0, CKB_CLI_INT, "N", 1, 100, 0,
     "rounds of re-evaluation, with a growing pause before each (default: 3)", NULL},
    {"quiet", 0, CKB_CLI_FLAG, NULL, 0, 0, 0, "no progress lines", NULL},
};

const ckb_cli_cmd ckb_cmd_retime = {
    .name = "retime", .args = "RUN|RESULTS...", .min_pos = 1, .max_pos = CKB_CLI_MAX_POS,
    .missing = "needs a RUN folder, e.g. ckbench retime runs/refine-8p",
    .summary = "measure again the timings of runs or suite results that were disturbed",
    .about = "Each kernel of RUN whose timing was disturbed by other work is evaluated again\n"
             "with the run's protocol; an undisturbed result is appended to records.jsonl\n"
             "and replaces the old one (latest wins). For a suite's folder (results.json),\n"
             "its disturbed entries and timing noise are run again and replaced. Exit status:\n"
             "0 every disturbed timing measured, 1 some stayed disturbed.\n",
    .opts = retime__options, .nopts = CKB_CLI_NOPTS(retime__options), .run = retime__main,
};
