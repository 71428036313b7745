/* ckbench — the command-line entry point: dispatch to one command. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "eval/child.h"
#include "eval/quiet_harness.h"
#include "exec/executor.h"
#include "workloads/oracle.h"

/* `ckbench __oracle-dump WORKLOAD SEED DIR [SIZE [CONFIG]]`: writes the
 * workload's inputs for SEED and its reference's outputs at SIZE (small) in
 * configuration CONFIG (by name; the first by default) into DIR, for the
 * independent oracle (scripts/oracle/oracle.py; workloads/oracle.h).
 * Internal: not listed among the commands. */
static int oracle_dump_main(int argc, char **argv)
{
    if (argc < 5 || argc > 7) {
        fputs("usage: ckbench __oracle-dump WORKLOAD SEED DIR [SIZE [CONFIG]]\n", stderr);
        return 2;
    }
    const ckb_workload *w = ckb_workload_find(argv[2]);
    char *end;
    unsigned long long seed = strtoull(argv[3], &end, 10);
    ckb_size s = CKB_SIZE_SMALL;
    int config = 0;
    if (w && argc == 7) {
        config = -1;
        for (int c = 0; c < ckb_workload_config_count(w); c++)
            if (strcmp(ckb_workload_config_name(w, c), argv[6]) == 0)
                config = c;
    }
    if (!w || *end || end == argv[3] || (argc >= 6 && ckb_size_parse(argv[5], &s) != 0) ||
        s == CKB_SIZE_HOST || config < 0) {
        fputs("ckbench __oracle-dump: unknown workload, bad seed, bad size or unknown "
              "configuration\n", stderr);
        return 2;
    }
    ckb_err err;
    if (ckb_oracle_dump(w, s, config, seed, argv[4], &err) != CKB_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "__sandbox") == 0)
        return ckb_child_main(argc, argv);
    ckb_harness_quiet_omp(argv);
    ckb_cli_say_install();
    if (argc >= 2 && strcmp(argv[1], "__exec") == 0) { /* a Slurm node's evaluation */
        ckb_err err;
        int rc = ckb_exec_node_main(argc, argv, &err);
        if (rc != 0 && err.msg[0])
            fprintf(stderr, "%s\n", err.msg);
        return rc;
    }
    if (argc >= 2 && strcmp(argv[1], "__oracle-dump") == 0)
        return oracle_dump_main(argc, argv);
    if (argc < 2) {
        ckb_cli_print_commands(stderr);
        return 2;
    }
    const char *first = argv[1];
    if (!strcmp(first, "-h") || !strcmp(first, "--help") || !strcmp(first, "help")) {
        /* `ckbench help CMD` is `ckbench CMD --help`. */
        const ckb_cli_cmd *c = argc >= 3 ? ckb_cli_command(argv[2]) : NULL;
        if (argc >= 3 && !c) {
            fprintf(stderr, "ckbench: unknown command '%s' (see ckbench --help)\n", argv[2]);
            return 2;
        }
        if (c)
            ckb_cli_print_help(c, stdout);
        else
            ckb_cli_print_commands(stdout);
        return 0;
    }
    if (!strcmp(first, "--version") || !strcmp(first, "-V")) {
        printf("ckbench %s (commit %s, built with cc %s)\n", ckb_cli_version(),
               ckb_cli_build_commit(), __VERSION__);
        return 0;
    }
    const ckb_cli_cmd *c = ckb_cli_command(first);
    if (!c) {
        fprintf(stderr, "ckbench: unknown %s '%s'\n\n", first[0] == '-' ? "option" : "command",
                first);
        ckb_cli_print_commands(stderr);
        return 2;
    }
    ckb_cli_args a;
    int rc = ckb_cli_parse(c, argc - 1, argv + 1, &a);
    if (rc != 0)
        return rc == 1 ? 0 : 2;
    return c->run(&a);
}
