/* `ckbench size`: choose this host's sizes (machine/sizes.h) and show them. */
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/alloc.h"
#include "core/jsonget.h"
#include "machine/sizes.h"

int ckb_cli_host_sizes(ckb_size s, const ckb_machine *m, int threads,
                       const ckb_workload *const *ws, int n)
{
    if (s != CKB_SIZE_HOST)
        return 0;
    ckb_sizes_opts so;
    ckb_sizes_opts_default(&so);
    so.any_window = 1;
    ckb_err err;
    if (ckb_sizes_get(m, threads, ws, n, NULL, 0, &so, &err) != CKB_OK) {
        ckb_cli_fail(&err, 1);
        fprintf(stderr, "ckbench: cannot choose this host's sizes; give --size default\n");
        return -1;
    }
    return 0;
}

/* The workloads of --workloads ID,ID..., else all; -1 after naming an
 * unknown one. */
static int size__list(const ckb_cli_args *a, const ckb_workload **ws, int max)
{
    const char *list = ckb_cli_str(a, "workloads", NULL);
    int n = 0;
    if (!list) {
        for (int i = 0; i < ckb_workload_count() && n < max; i++)
            ws[n++] = ckb_workload_at(i);
        return n;
    }
    char *copy = ckb_xstrdup(list), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        const ckb_workload *w = ckb_cli_workload(t);
        if (!w) {
            free(copy);
            return -1;
        }
        if (n < max)
            ws[n++] = w;
    }
    free(copy);
    return n;
}

static void size__table(const ckb_workload *const *ws, int n, json_object *all)
{
    printf("%-44s %-5s %8s %8s %11s %9s %7s  %s\n", "workload", "dim", "default", "host",
           "baseline ms", "GFLOP/s", "% roof", "why");
    for (int i = 0; i < n; i++) {
        const ckb_workload *w = ws[i];
        int d = ckb_workload_scale_dim(w);
        if (d < 0) {
            printf("%-44.44s %-5s %8s %8s %11s %9s %7s  %s\n", w->id, "-", "-", "-", "-", "-",
                   "-", "no scale dim: default dims");
            continue;
        }
        json_object *e = ckb_json_obj(all, w->id);
        double ms = e ? ckb_json_num(e, "baseline_ms") : NAN;
        double g = e ? ckb_json_num(e, "gflops") : NAN;
        double pct = e ? ckb_json_num(e, "pct_of_roof") : NAN;
        printf("%-44.44s %-5s %8lld %8lld %11.2f %9.1f %7.1f  %s\n", w->id, w->dims[d].name,
               (long long)w->dims[d].value[CKB_SIZE_DEFAULT],
               (long long)ckb_workload_host_scale(w), ms, g, pct,
               e && ckb_json_str(e, "why") ? ckb_json_str(e, "why") : "?");
    }
}

static int size__run(const ckb_cli_args *a)
{
    ckb_cli_common o;
    ckb_cli_common_get(a, &o);
    const ckb_workload *ws[128];
    int n = size__list(a, ws, 128);
    if (n < 0)
        return 2;
    ckb_sizes_opts so;
    ckb_sizes_opts_default(&so);
    so.min_ms = ckb_cli_num(a, "min-ms", so.min_ms);
    so.max_ms = ckb_cli_num(a, "max-ms", so.max_ms);
    if (so.min_ms >= so.max_ms)
        return ckb_cli_usage_error(a, "--min-ms must be below --max-ms");
    so.log = ckb_cli_given(a, "verbose") ? stderr : NULL;
    ckb_machine m;
    if (ckb_cli_machine(o.threads, o.machine, &m) != 0)
        return 1;
    ckb_err err;
    if (ckb_sizes_get(&m, o.threads, ws, n, NULL, ckb_cli_given(a, "force") > 0, &so, &err) !=
        CKB_OK)
        return ckb_cli_fail(&err, 1);
    char *text = ckb_sizes_describe(&m, o.threads, NULL);
    json_object *j = text ? json_tokener_parse(text) : NULL;
    free(text);
    if (!j) {
        fprintf(stderr, "ckbench: the sizes could not be stored\n");
        return 1;
    }
    if (ckb_cli_given(a, "json"))
        printf("%s\n", json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY |
                                                             JSON_C_TO_STRING_NOSLASHESCAPE));
    else {
        printf("host sizes for %s | %s, %d thread%s (%s):\n", m.cpu, m.isa_level, o.threads,
               o.threads == 1 ? "" : "s", ckb_json_str(j, "path"));
        size__table(ws, n, ckb_json_obj(j, "workloads"));
    }
    json_object_put(j);
    return 0;
}

static const ckb_cli_opt size__opts[] = {
    {"workloads", 0, CKB_CLI_STR, "ID,ID...", 0, 0, 0, "the workloads to size (default: all)",
     NULL},
    CKB_CLI_OPT_THREADS,
    {"min-ms", 0, CKB_CLI_NUM, "MS", 0.1, 1e5, 0,
     "a baseline call takes at least this long (default: 10)", NULL},
    {"max-ms", 0, CKB_CLI_NUM, "MS", 1, 1e6, 0,
     "and at most this long, unless even the smallest size does not (default: 100)", NULL},
    {"force", 0, CKB_CLI_FLAG, NULL, 0, 0, 0, "search again even where a choice is stored",
     NULL},
    {"verbose", 'v', CKB_CLI_FLAG, NULL, 0, 0, 0, "print every probe on stderr", NULL},
    {"json", 0, CKB_CLI_FLAG, NULL, 0, 0, 0, "print the stored file instead of a table", NULL},
    CKB_CLI_OPT_MACHINE,
};

const ckb_cli_cmd ckb_cmd_size = {
    .name = "size", .args = "", .min_pos = 0, .max_pos = 0,
    .summary = "choose this host's sizes (size host): time each baseline on a ladder of its "
               "scale dim",
    .about = "Per workload, the smallest value of its scale dim (default / 2^k ... 4 x default)\n"
             "at which one baseline call takes at least --min-ms and, for a matmul-heavy\n"
             "workload, reaches 60% of this host's roof, never past --max-ms. Stored per host\n"
             "and thread budget beside the machine profile; bench runs at size host by default.\n",
    .opts = size__opts, .nopts = CKB_CLI_NOPTS(size__opts), .run = size__run,
};
