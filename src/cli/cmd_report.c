/* `ckbench report`: Markdown and HTML from suite results and generation runs. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "report/report.h"

int ckb_cmd_report(int argc, char **argv)
{
    const char *paths[CKB_REPORT_MAX_PATHS], *out = NULL;
    int n = 0;
    /* Own parsing: any number of paths, and only --out. */
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--out") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "ckbench: --out needs a folder\n");
                return 2;
            }
            out = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "ckbench: report takes PATH... [--out DIR] (unknown option %s)\n",
                    argv[i]);
            return 2;
        } else if (n < CKB_REPORT_MAX_PATHS) {
            paths[n++] = argv[i];
        } else {
            fprintf(stderr, "ckbench: report takes at most %d paths (%d suite results)\n",
                    CKB_REPORT_MAX_PATHS, CKB_REPORT_MAX_INPUTS);
            return 2;
        }
    }
    if (n == 0) {
        fprintf(stderr, "ckbench: report needs at least one results.json (or its folder) or "
                        "generation run folder, e.g. ckbench report results runs/refine --out "
                        "report\n");
        return 2;
    }
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
    char err[1024];
    if (ckb_report_write(paths, n, out, err, sizeof err) != 0) {
        fprintf(stderr, "ckbench: report: %s\n", err);
        return 1;
    }
    printf("report: %s/report.md, %s/report.html\n", out, out);
    return 0;
}
