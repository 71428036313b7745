/* Option parsing and lookups shared by the commands. */
#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static int options__int(const char *flag, const char *v, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long x = v ? strtol(v, &end, 10) : 0;
    if (!v || errno || *end || x < lo || x > hi) {
        fprintf(stderr, "ckbench: %s needs an integer in %d..%d (got '%s')\n", flag, lo, hi,
                v ? v : "");
        return -1;
    }
    *out = (int)x;
    return 0;
}

int ckb_cli_parse(int argc, char **argv, int first, ckb_cli_opts *o)
{
    memset(o, 0, sizeof *o);
    o->size = CKB_SIZE_DEFAULT;
    o->threads = omp_get_num_procs();
    o->seeds = 3;
    o->warmup = 5;
    o->iters = 50;
    o->timeout_scale = 1.0;
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = 1;
        if (strcmp(a, "--size") == 0) {
            if (!v || ckb_size_parse(v, &o->size) != 0) {
                fprintf(stderr, "ckbench: --size is small, default or paper (got '%s')\n",
                        v ? v : "");
                return -1;
            }
        } else if (strcmp(a, "--threads") == 0) {
            if (options__int(a, v, 1, 1024, &o->threads))
                return -1;
        } else if (strcmp(a, "--seeds") == 0) {
            if (options__int(a, v, 1, 7, &o->seeds))
                return -1;
        } else if (strcmp(a, "--warmup") == 0) {
            if (options__int(a, v, 0, 100, &o->warmup))
                return -1;
        } else if (strcmp(a, "--iters") == 0) {
            if (options__int(a, v, 1, 400, &o->iters))
                return -1;
        } else if (strcmp(a, "--seed") == 0) {
            char *end;
            o->seed = v ? strtoull(v, &end, 0) : 0;
            if (!v || *end || o->seed == 0) {
                fprintf(stderr, "ckbench: --seed needs a non-zero integer\n");
                return -1;
            }
        } else if (strcmp(a, "--timeout-scale") == 0) {
            char *end;
            o->timeout_scale = v ? strtod(v, &end) : 0;
            if (!v || *end || o->timeout_scale <= 0) {
                fprintf(stderr, "ckbench: --timeout-scale needs a positive number\n");
                return -1;
            }
        } else if (strcmp(a, "--define") == 0) {
            if (!v || !strchr(v, '=') || o->ndefines == 8) {
                fprintf(stderr, "ckbench: --define needs NAME=VALUE (at most 8)\n");
                return -1;
            }
            o->defines[o->ndefines++] = v;
        } else if (strcmp(a, "--slurm-max-jobs") == 0) {
            if (options__int(a, v, 1, 100000, &o->slurm_max_jobs))
                return -1;
        } else if (strcmp(a, "--executor") == 0 || strcmp(a, "--partition") == 0 ||
                   strcmp(a, "--account") == 0) {
            if (!v) {
                fprintf(stderr, "ckbench: %s needs a value\n", a);
                return -1;
            }
            *(a[2] == 'e' ? &o->executor : a[2] == 'p' ? &o->partition : &o->account) = v;
        } else if (strcmp(a, "--out") == 0 || strcmp(a, "--workloads") == 0 ||
                   strcmp(a, "--machine") == 0 || strcmp(a, "--keep") == 0) {
            if (!v) {
                fprintf(stderr, "ckbench: %s needs a value\n", a);
                return -1;
            }
            if (a[2] == 'o')
                o->out = v;
            else if (a[2] == 'w')
                o->workloads = v;
            else if (a[2] == 'm')
                o->machine = v;
            else
                o->keep = v;
        } else {
            takes = 0;
            if (strcmp(a, "--force") == 0)
                o->force = 1;
            else if (strcmp(a, "--resume") == 0)
                o->resume = 1;
            else if (strcmp(a, "--no-expert") == 0)
                o->no_expert = 1;
            else if (strcmp(a, "--dry-run") == 0)
                o->dry_run = 1;
            else if (a[0] == '-' && a[1]) {
                fprintf(stderr, "ckbench: unknown option %s (see ckbench --help)\n", a);
                return -1;
            } else if (o->npositional < 8) {
                o->positional[o->npositional++] = a;
            } else {
                fprintf(stderr, "ckbench: too many arguments\n");
                return -1;
            }
        }
        i += takes;
    }
    return 0;
}

int ckb_cli_machine(const ckb_cli_opts *o, ckb_machine *m)
{
    if (ckb_machine_get(o->threads, o->machine, m) != 0) {
        fprintf(stderr, "ckbench: cannot measure or load the machine profile\n");
        return -1;
    }
    return 0;
}

const ckb_workload *ckb_cli_workload(const char *name)
{
    const ckb_workload *w = ckb_workload_find(name);
    if (w)
        return w;
    fprintf(stderr, "ckbench: unknown workload '%s'; known:", name ? name : "");
    for (int i = 0; i < ckb_workload_count(); i++)
        fprintf(stderr, " %s", ckb_workload_at(i)->id);
    fprintf(stderr, "\n");
    return NULL;
}
