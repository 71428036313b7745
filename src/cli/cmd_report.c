/* `ckbench report`: Markdown and HTML from suite results and generation runs. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "report/report.h"

static int report__run(const ckb_cli_args *a)
{
    const char *paths[CKB_REPORT_MAX_PATHS], *out = ckb_cli_str(a, "out", NULL);
    int n = a->npos;
    for (int i = 0; i < n; i++)
        paths[i] = a->pos[i];
    /* By default the report goes beside the first results. */
    char dir[1024];
    if (!out) {
        struct stat st;
        snprintf(dir, sizeof dir, "%s", paths[0]);
        if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
            char *slash = strrchr(dir, '/');
            if (slash)
                *slash = '\0';
            else
                snprintf(dir, sizeof dir, ".");
        }
        out = dir;
    }
    ckb_err err;
    if (ckb_report_write(paths, n, out, &err) != 0) {
        fprintf(stderr, "ckbench: report: %s\n", err.msg);
        return 1;
    }
    printf("report: %s/report.md, %s/report.html\n", out, out);
    return 0;
}

static const ckb_cli_opt report__opts[] = {
    {"out", 0, CKB_CLI_STR, "DIR", 0, 0, 0, "where report.md and report.html go (default: the "
                                           "first PATH's folder)", NULL},
};

const ckb_cli_cmd ckb_cmd_report = {
    .name = "report", .args = "PATH...", .min_pos = 1, .max_pos = CKB_REPORT_MAX_PATHS,
    .missing = "needs at least one results.json (or its folder) or generation run folder, "
               "e.g. ckbench report results runs/refine --out report",
    .summary = "report.md and a self-contained report.html from suite results and generation "
               "runs",
    .about = "A PATH is a suite result (results.json or its folder; up to 6, compared side by\n"
             "side) or a generation run (a folder with records.jsonl).\n"
             "Example: ckbench report results runs/refine --out report\n",
    .opts = report__opts, .nopts = CKB_CLI_NOPTS(report__opts), .run = report__run,
};
