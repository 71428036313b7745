/* `ckbench score`: the metrics of generation runs, as tables and score.json. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/fsutil.h"
#include "core/strbuf.h"
#include "score/score.h"

static int score__run(const ckb_cli_args *a)
{
    const char *paths[CKB_SCORE_MAX_RUNS], *out = ckb_cli_str(a, "out", NULL);
    double ps[CKB_SCORE_MAX_P];
    int ns[CKB_SCORE_MAX_N];
    int n = a->npos, np = ckb_cli_given(a, "p"), nn = ckb_cli_given(a, "n");
    int json = ckb_cli_given(a, "json") > 0, verbose = ckb_cli_given(a, "verbose") > 0;
    for (int i = 0; i < n; i++)
        paths[i] = a->pos[i];
    for (int i = 0; i < np; i++)
        ps[i] = strtod(ckb_cli_at(a, "p", i), NULL);
    for (int i = 0; i < nn; i++)
        ns[i] = (int)strtol(ckb_cli_at(a, "n", i), NULL, 10);
    ckb_score_set set;
    ckb_err err;
    if (ckb_score_load(paths, n, ps, np, ns, nn, &set, &err) != 0) {
        fprintf(stderr, "ckbench: score: %s\n", err.msg);
        return 1;
    }
    int rc = 1;
    json_object *j = ckb_score_json(&set);
    const char *text = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY |
                                                              JSON_C_TO_STRING_NOSLASHESCAPE);
    /* One run's score lives with the run; several runs' goes here. */
    char dflt[4096];
    if (!out) {
        if (n == 1)
            snprintf(dflt, sizeof dflt, "%s/score.json", paths[0]);
        else
            snprintf(dflt, sizeof dflt, "score.json");
        out = dflt;
    }
    ckb_strbuf body = {0};
    ckb_strbuf_printf(&body, "%s\n", text);
    if (ckb_write_file_atomic(out, body.data, body.len) != 0) {
        fprintf(stderr, "ckbench: score: cannot write %s: %s (give another place with --out)\n",
                out, strerror(errno));
        goto cleanup;
    }
    if (json) {
        fputs(body.data, stdout);
    } else {
        ckb_strbuf tables = {0};
        ckb_score_text(&set, verbose, &tables);
        fputs(tables.data ? tables.data : "", stdout);
        printf("\nscore.json: %s\n", out);
        ckb_strbuf_free(&tables);
    }
    rc = 0;
cleanup:
    ckb_strbuf_free(&body);
    json_object_put(j);
    ckb_score_free(&set);
    return rc;
}

static const ckb_cli_opt score__opts[] = {
    {"json", 0, CKB_CLI_FLAG, NULL, 0, 0, 0, "print score.json instead of the tables", NULL},
    {"out", 0, CKB_CLI_STR, "FILE", 0, 0, 0,
     "where score.json goes (default: RUN/score.json for one run, ./score.json for several)", NULL},
    {"verbose", 'v', CKB_CLI_FLAG, NULL, 0, 0, 0, "add the per-workload tables", NULL},
    {"p", 0, CKB_CLI_NUM, "X", 0, 1e9, CKB_SCORE_MAX_P,
     "a fast_p speedup threshold beside 1, 1.5 and 2, e.g. --p 3", NULL},
    {"n", 0, CKB_CLI_INT, "N", 1, 1000000, CKB_SCORE_MAX_N,
     "a fast_p sample count beside 1, 8, 32 and the budget, e.g. --n 16", NULL},
};

const ckb_cli_cmd ckb_cmd_score = {
    .name = "score", .args = "RUN...", .min_pos = 1, .max_pos = CKB_SCORE_MAX_RUNS,
    .missing = "needs at least one run folder (written by `ckbench generate`), e.g. ckbench "
               "score runs/best-of-n",
    .summary = "score generation runs per method and model; writes score.json",
    .about = "Metrics: compile rate, correctness, solved, floored geomean speedup, fast_p@N,\n"
             "% of expert, failure taxonomy (docs/FORMATS.md).\n"
             "A RUN is a folder written by `ckbench generate`, e.g. ckbench score runs/best-of-n\n",
    .opts = score__opts, .nopts = CKB_CLI_NOPTS(score__opts), .run = score__run,
};
