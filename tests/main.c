/* The test runner: ckbench-tests [--tier quick|full] [NAME_SUBSTRING...] */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "harness.h"

enum { MAX_TESTS = 512 };

static struct {
    const char *name, *tier, *file;
    ckbt_fn fn;
} tests[MAX_TESTS];
static int ntests, current_failures, current_skipped;
static char tmpdir[256];

void ckbt_register(const char *name, const char *tier, const char *file, ckbt_fn fn)
{
    if (ntests == MAX_TESTS) {
        fputs("too many tests\n", stderr);
        exit(2);
    }
    tests[ntests].name = name;
    tests[ntests].tier = tier;
    tests[ntests].file = file;
    tests[ntests].fn = fn;
    ntests++;
}

void ckbt_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stdout, "    %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    fflush(stdout);
    current_failures++;
}

void ckbt_skip(const char *fmt, ...)
{
    va_list ap;
    fputs("    (skipped: ", stdout);
    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    fputs(")\n", stdout);
    fflush(stdout);
    current_skipped = 1;
}

const char *ckbt_bin(void)
{
    const char *b = getenv("CKBENCH_BIN");
    return b && *b ? b : "build/ckbench";
}

void ckbt_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

const char *ckbt_tmpdir(void)
{
    if (!tmpdir[0]) {
        snprintf(tmpdir, sizeof tmpdir, "/tmp/ckbt-XXXXXX");
        if (!mkdtemp(tmpdir)) {
            perror("mkdtemp");
            exit(2);
        }
    }
    return tmpdir;
}

char *ckbt_env_save(const char *name)
{
    const char *v = getenv(name);
    return v ? strdup(v) : NULL;
}

void ckbt_env_restore(const char *name, char *saved)
{
    if (saved)
        setenv(name, saved, 1);
    else
        unsetenv(name);
    free(saved);
}

static int selected(const char *name, int argc, char **argv, int first)
{
    if (first >= argc)
        return 1;
    for (int i = first; i < argc; i++)
        if (strstr(name, argv[i]))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    const char *tier = "full";
    int first = 1;
    ckb_cli_say_install(); /* what the library says reaches stderr, as under the CLI */
    if (argc > 2 && strcmp(argv[1], "--tier") == 0) {
        tier = argv[2];
        first = 3;
    }
    int passed = 0, failed = 0, skipped = 0;
    for (int i = 0; i < ntests; i++) {
        if (strcmp(tier, "quick") == 0 && strcmp(tests[i].tier, "quick") != 0)
            continue;
        if (!selected(tests[i].name, argc, argv, first))
            continue;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        current_failures = 0;
        current_skipped = 0;
        tmpdir[0] = '\0';
        printf("  %-48s ...\n", tests[i].name);
        fflush(stdout);
        tests[i].fn();
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
        printf("%s %-48s %.2fs\n",
               current_failures ? "FAIL" : current_skipped ? "skip" : "ok  ", tests[i].name, s);
        fflush(stdout);
        if (current_failures) {
            failed++;
        } else {
            if (current_skipped)
                skipped++;
            else
                passed++;
            if (tmpdir[0]) {
                char cmd[300];
                snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
                if (system(cmd) != 0)
                    fprintf(stderr, "could not remove %s\n", tmpdir);
            }
        }
    }
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
