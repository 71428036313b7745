/* The command line describes itself: `ckbench CMD --help` for every
 * command, options that do not apply refused, --version, and the refine
 * shape of `generate` checked before anything runs. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/fsutil.h"
#include "core/proc.h"
#include "core/strbuf.h"
#include "harness.h"

/* Runs ckbench with the arguments (NULL-terminated); returns the exit
 * status and, in *out, stdout and stderr (caller frees). */
static int cli_run(char **out, ...)
{
    char *argv[32];
    int n = 0;
    argv[n++] = (char *)ckbt_bin();
    va_list ap;
    va_start(ap, out);
    for (char *a; n < 31 && (a = va_arg(ap, char *));)
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    ckb_proc_result r;
    if (ckb_proc_run(argv, 60, 1 << 20, &r) != 0) {
        ckbt_fail(__FILE__, __LINE__, "cannot run %s", argv[0]);
        *out = strdup("");
        return -1;
    }
    int code = r.exited ? r.exit_code : 128 + r.signal;
    *out = r.output;
    r.output = NULL;
    ckb_proc_result_free(&r);
    return code;
}

/* The options each command had before the tables, which must all stay. */
static const struct {
    const char *cmd, *opts[24];
} cli_expected[] = {
    {"list", {NULL}},
    {"describe", {"--size", NULL}},
    {"machine", {"--threads", "--out", "--force", NULL}},
    {"size", {"--workloads", "--threads", "--min-ms", "--max-ms", "--force", "--verbose", "--json",
              "--machine", NULL}},
    {"eval", {"--size", "--seeds", "--threads", "--warmup", "--iters", "--seed", "--keep",
              "--timeout-scale", "--define", "--machine", NULL}},
    {"bench", {"--size", "--workloads", "--threads", "--out", "--resume", "--no-expert",
               "--warmup", "--iters", NULL}},
    {"tune", {"--size", "--threads", "--warmup", "--iters", "--dry-run", "--all", NULL}},
    {"report", {"--out", NULL}},
    {"score", {"--json", "--out", "--verbose", "--p", "--n", NULL}},
    {"generate", {"--method", "--provider", "--model", "--workloads", "--budget", "--size",
                  "--out", "--resume", "--jobs", "--concurrency", "--base-url", "--command",
                  "--replay", "--prices", "--chains", "--turns", "--beam-width",
                  "--beam-candidates", "--max-retries", "--timeout", "--temperature", NULL}},
    {"prompt", {"--method", "--docs", "--size", "--threads", "--docs-target", "--feedback",
                NULL}},
    {"retime", {"--tries", "--quiet", NULL}},
    {"plan", {"--method", "--budget", "--workloads", "--eval-seconds", "--from", "--overhead",
              "--nodes", "--no-expert", NULL}},
    {"serve", {"--listen", "--db", "--tokens", "--add-token", "--executor", "--max-queue",
               "--max-body", "--tls-cert", "--tls-key", NULL}},
};

CKBT_TEST(cli_help_for_every_command, "quick")
{
    int n = (int)(sizeof cli_expected / sizeof *cli_expected);
    CKBT_EXPECT(n == ckb_cli_ncommands, "every command is checked (%d of %d)", n,
                ckb_cli_ncommands);
    for (int i = 0; i < n; i++) {
        char *out;
        int rc = cli_run(&out, cli_expected[i].cmd, "--help", NULL);
        char head[64];
        snprintf(head, sizeof head, "usage: ckbench %s", cli_expected[i].cmd);
        CKBT_EXPECT(rc == 0, "ckbench %s --help exits 0 (got %d): %.300s", cli_expected[i].cmd,
                    rc, out);
        CKBT_EXPECT(strncmp(out, head, strlen(head)) == 0, "%s --help starts with '%s': %.200s",
                    cli_expected[i].cmd, head, out);
        CKBT_EXPECT(strstr(out, "-h, --help") != NULL, "%s --help lists --help",
                    cli_expected[i].cmd);
        for (int k = 0; cli_expected[i].opts[k]; k++) {
            char line[64], alias[64];
            snprintf(line, sizeof line, "\n  %s ", cli_expected[i].opts[k]);
            snprintf(alias, sizeof alias, ", %s ", cli_expected[i].opts[k]);
            CKBT_EXPECT(strstr(out, line) || strstr(out, alias), "%s --help describes %s",
                        cli_expected[i].cmd, cli_expected[i].opts[k]);
        }
        /* And every option of the table is described: help comes from it. */
        const ckb_cli_cmd *c = ckb_cli_command(cli_expected[i].cmd);
        for (int k = 0; c && k < c->nopts; k++) {
            char name[64];
            snprintf(name, sizeof name, "--%s", c->opts[k].name);
            CKBT_EXPECT(strstr(out, name) != NULL, "%s --help shows %s", c->name, name);
        }
        free(out);
        /* `ckbench help CMD` prints the same. */
        char *again;
        rc = cli_run(&again, "help", cli_expected[i].cmd, NULL);
        CKBT_EXPECT(rc == 0 && strncmp(again, head, strlen(head)) == 0, "ckbench help %s",
                    cli_expected[i].cmd);
        free(again);
    }
    char *out;
    int rc = cli_run(&out, "--help", NULL);
    CKBT_EXPECT(rc == 0, "ckbench --help exits 0");
    for (int i = 0; i < n; i++) {
        char line[64];
        snprintf(line, sizeof line, "\n  ckbench %s", cli_expected[i].cmd);
        CKBT_EXPECT(strstr(out, line) != NULL, "ckbench --help lists %s", cli_expected[i].cmd);
    }
    free(out);
}

CKBT_TEST(cli_refuses_options_that_do_not_apply, "quick")
{
    char *out;
    int rc = cli_run(&out, "list", "--iters", "7", "--keep", "/x", NULL);
    CKBT_EXPECT(rc == 2, "list --iters exits 2 (got %d)", rc);
    CKBT_EXPECT(strstr(out, "--iters does not apply to list") != NULL, "says why: %.300s", out);
    CKBT_EXPECT(strstr(out, "eval") && strstr(out, "bench"), "says who takes it: %.300s", out);
    free(out);
    rc = cli_run(&out, "report", "results", "--resume", NULL);
    CKBT_EXPECT(rc == 2 && strstr(out, "--resume does not apply to report"),
                "report --resume exits 2 (%d): %.300s", rc, out);
    free(out);
    rc = cli_run(&out, "describe", "8p", "--bogus", NULL);
    CKBT_EXPECT(rc == 2 && strstr(out, "unknown option --bogus"), "unknown option (%d): %.300s",
                rc, out);
    free(out);
    rc = cli_run(&out, "eval", "8p", "x.c", "--iters", "0", NULL);
    CKBT_EXPECT(rc == 2 && strstr(out, "--iters needs an integer in 1..400"),
                "a value out of range (%d): %.300s", rc, out);
    free(out);
    rc = cli_run(&out, "eval", "8p", NULL);
    CKBT_EXPECT(rc == 2 && strstr(out, "needs WORKLOAD FILE"), "a missing argument (%d): %.300s",
                rc, out);
    free(out);
    rc = cli_run(&out, "bench", "--threads", NULL);
    CKBT_EXPECT(rc == 2 && strstr(out, "--threads needs a value"), "a missing value (%d): %.300s",
                rc, out);
    free(out);
    rc = cli_run(&out, "bench", "12p", NULL);
    CKBT_EXPECT(rc == 2 && strstr(out, "takes no arguments"), "a stray argument (%d): %.300s",
                rc, out);
    free(out);
    rc = cli_run(&out, "generate", "--workloads", "12p", NULL);
    CKBT_EXPECT(rc == 2 && strstr(out, "--provider is needed (or --resume)"),
                "a needed option missing (%d): %.300s", rc, out);
    free(out);
    rc = cli_run(&out, "nonsense", NULL);
    CKBT_EXPECT(rc == 2 && strstr(out, "unknown command 'nonsense'"), "unknown command (%d)", rc);
    free(out);
}

CKBT_TEST(cli_version_names_the_commit, "quick")
{
    char *out;
    int rc = cli_run(&out, "--version", NULL);
    CKBT_EXPECT(rc == 0, "--version exits 0 (got %d)", rc);
    char want[128];
    snprintf(want, sizeof want, "ckbench %s (commit %s", ckb_cli_version(), ckb_cli_build_commit());
    CKBT_EXPECT(strncmp(out, want, strlen(want)) == 0, "'%s...' (got %.200s)", want, out);
    CKBT_EXPECT(strlen(ckb_cli_build_commit()) > 0, "a commit or 'unknown'");
    free(out);
}

CKBT_TEST(cli_generate_refine_shape_must_match_the_budget, "quick")
{
    char *out, dir[600];
    snprintf(dir, sizeof dir, "%s/run", ckbt_tmpdir());
    int rc = cli_run(&out, "generate", "--method", "refine", "--provider", "command", "--command",
                     "cat", "--workloads", "12p", "--budget", "6", "--chains", "4", "--turns",
                     "3", "--out", dir, NULL);
    CKBT_EXPECT(rc == 2, "budget 6 with 4 chains x 3 turns exits 2 (got %d)", rc);
    CKBT_EXPECT(strstr(out, "--budget 6 is not --chains 4 x --turns 3"), "says why: %.300s", out);
    free(out);
    rc = cli_run(&out, "generate", "--method", "refine", "--provider", "command", "--command",
                 "cat", "--workloads", "12p", "--budget", "7", "--chains", "2", "--out", dir,
                 NULL);
    CKBT_EXPECT(rc == 2 && strstr(out, "does not split into 2 chains"),
                "budget 7 in 2 chains exits 2 (%d): %.300s", rc, out);
    free(out);
    rc = cli_run(&out, "generate", "--method", "best-of-n", "--provider", "command", "--command",
                 "cat", "--workloads", "12p", "--turns", "3", "--out", dir, NULL);
    CKBT_EXPECT(rc == 2 && strstr(out, "apply to --method refine"),
                "--turns with best-of-n exits 2 (%d): %.300s", rc, out);
    free(out);
    rc = cli_run(&out, "generate", "--method", "best-of-n", "--provider", "openai", "--workloads",
                 "12p", "--budget", "1", "--out", dir, NULL);
    CKBT_EXPECT(rc == 2 && strstr(out, "--model"), "openai without --model exits 2 (%d): %.300s",
                rc, out);
    free(out);
}

/* ckbench's own OpenMP threads wait passively (eval/quiet_harness.c, by a
 * re-exec with OMP_WAIT_POLICY=passive); the programs it starts, here a
 * model command, still see the caller's OMP_WAIT_POLICY, set or not. */
CKBT_TEST(cli_programs_started_see_the_callers_omp_wait_policy, "quick")
{
    char *saved = ckbt_env_save("OMP_WAIT_POLICY");
    const char *cases[] = {NULL, "active"};
    for (int i = 0; i < 2; i++) {
        char file[600], dir[600], cmd[800];
        snprintf(file, sizeof file, "%s/policy-%d", ckbt_tmpdir(), i);
        snprintf(dir, sizeof dir, "%s/policy-run-%d", ckbt_tmpdir(), i);
        snprintf(cmd, sizeof cmd, "printf '%%s' \"${OMP_WAIT_POLICY-unset}\" > %s", file);
        if (cases[i])
            setenv("OMP_WAIT_POLICY", cases[i], 1);
        else
            unsetenv("OMP_WAIT_POLICY");
        char *out;
        int rc = cli_run(&out, "generate", "--method", "best-of-n", "--provider", "command",
                         "--command", cmd, "--workloads", "12p", "--budget", "1", "--out", dir,
                         NULL);
        free(out);
        char got[64] = "";
        FILE *f = fopen(file, "r");
        if (f) {
            size_t n = fread(got, 1, sizeof got - 1, f);
            got[n] = 0;
            fclose(f);
        }
        const char *want = cases[i] ? cases[i] : "unset";
        CKBT_EXPECT(rc == 0 && strcmp(got, want) == 0,
                    "the model command saw OMP_WAIT_POLICY '%s', wanted '%s' (exit %d)", got, want,
                    rc);
    }
    ckbt_env_restore("OMP_WAIT_POLICY", saved);
}

/* README's command-line block is `ckbench --help`'s synopsis, line for line. */
CKBT_TEST(cli_readme_block_is_the_help_synopsis, "quick")
{
    char *help;
    int rc = cli_run(&help, "--help", NULL);
    CKBT_EXPECT(rc == 0, "ckbench --help exits 0");
    char *readme = ckb_read_file("README.md", NULL);
    CKBT_EXPECT(readme != NULL, "README.md readable from the test's folder");
    char *sec = readme ? strstr(readme, "## The command line") : NULL;
    char *block = sec ? strstr(sec, "```\n") : NULL;
    char *end = block ? strstr(block + 4, "```") : NULL;
    CKBT_EXPECT(end != NULL, "README has a code block under 'The command line'");
    if (end) {
        /* The synopsis lines of the help: "  ckbench ..." and their continuations. */
        ckb_strbuf want = {0};
        for (char *save = NULL, *l = strtok_r(help, "\n", &save); l;
             l = strtok_r(NULL, "\n", &save)) {
            char first = l[strspn(l, " ")];
            if (strncmp(l, "  ckbench ", 10) == 0 ||
                (strncmp(l, "   ", 3) == 0 && (first == '[' || first == '-')))
                ckb_strbuf_printf(&want, "%s\n", l + 2);
        }
        size_t n = (size_t)(end - (block + 4));
        CKBT_EXPECT(want.data && strlen(want.data) == n && strncmp(want.data, block + 4, n) == 0,
                    "README block:\n%.*s\nckbench --help:\n%s", (int)n, block + 4,
                    want.data ? want.data : "");
        ckb_strbuf_free(&want);
    }
    free(readme);
    free(help);
}
