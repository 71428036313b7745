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

static const char score_usage[] =
    "ckbench score RUN [RUN...] [--json] [--out FILE] [--verbose] [--p X]... [--n N]...";

int ckb_cmd_score(int argc, char **argv)
{
    const char *paths[CKB_SCORE_MAX_RUNS], *out = NULL;
    double ps[CKB_SCORE_MAX_P];
    int ns[CKB_SCORE_MAX_N];
    int n = 0, np = 0, nn = 0, json = 0, verbose = 0;
    /* Own parsing: any number of runs, repeatable --p and --n. */
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (strcmp(a, "--json") == 0) {
            json = 1;
        } else if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0) {
            verbose = 1;
        } else if (strcmp(a, "--out") == 0) {
            if (!v) {
                fprintf(stderr, "ckbench: --out needs a file name (usage: %s)\n", score_usage);
                return 2;
            }
            out = v;
            i++;
        } else if (strcmp(a, "--p") == 0) {
            double p = v ? strtod(v, &end) : -1;
            if (!v || *end || !(p >= 0) || np == CKB_SCORE_MAX_P) {
                fprintf(stderr, "ckbench: --p needs a speedup threshold >= 0, e.g. --p 3 "
                                "(at most %d)\n",
                        CKB_SCORE_MAX_P);
                return 2;
            }
            ps[np++] = p;
            i++;
        } else if (strcmp(a, "--n") == 0) {
            long k = v ? strtol(v, &end, 10) : 0;
            if (!v || *end || k < 1 || k > 1000000 || nn == CKB_SCORE_MAX_N) {
                fprintf(stderr, "ckbench: --n needs a sample count >= 1, e.g. --n 16 "
                                "(at most %d)\n",
                        CKB_SCORE_MAX_N);
                return 2;
            }
            ns[nn++] = (int)k;
            i++;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "ckbench: unknown option %s (usage: %s)\n", a, score_usage);
            return 2;
        } else if (n < CKB_SCORE_MAX_RUNS) {
            paths[n++] = a;
        } else {
            fprintf(stderr, "ckbench: score takes at most %d runs\n", CKB_SCORE_MAX_RUNS);
            return 2;
        }
    }
    if (n == 0) {
        fprintf(stderr, "ckbench: score needs at least one run folder (written by `ckbench "
                        "generate`), e.g. ckbench score runs/best-of-n\nusage: %s\n",
                score_usage);
        return 2;
    }
    ckb_score_set set;
    char err[1024];
    if (ckb_score_load(paths, n, ps, np, ns, nn, &set, err, sizeof err) != 0) {
        fprintf(stderr, "ckbench: score: %s\n", err);
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
