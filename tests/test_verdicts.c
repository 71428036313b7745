/*
 * Every verdict the evaluator can give, documented and produced (issue 34).
 *
 * The (status, detail) pairs are one enumerated list, src/eval/verdict.def,
 * which eval__fail and compile.c take their verdicts from: a detail outside
 * it does not compile. docs/VERDICTS.md must have a row for each pair, say
 * what it means and name the test that produces it (or why none can); each
 * test it names must exist. Then the tests for the verdicts nothing else
 * produced: a wrong timed call, a wrong final check, OpenMP's settings and
 * denormals-are-zero left changed, the CPU-time limit, and a sandbox that is
 * not under exactly the harness's filter.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/fsutil.h"
#include "eval/eval.h"
#include "eval/stage.h"
#include "eval/verdict.h"

#include "eval_util.h"
#include "harness.h"

/* ---- docs/VERDICTS.md ------------------------------------------------ */

enum { VERDICTS__MAX_ROWS = 128 };

typedef struct {
    char status[64], detail[64];
    char produced[1024]; /* the last cell: test references, or "none: why" */
    int line;
} verdicts__row;

/* A cell without its blanks and backticks. */
static void verdicts__cell(const char *from, const char *to, char *out, size_t n)
{
    size_t k = 0;
    for (const char *p = from; p < to && k + 1 < n; p++)
        if (*p != '`' && !(k == 0 && (*p == ' ' || *p == '\t')))
            out[k++] = *p;
    while (k > 0 && (out[k - 1] == ' ' || out[k - 1] == '\t'))
        k--;
    out[k] = '\0';
}

/* The rows of the table whose first cell is a status in backticks. */
static int verdicts__read(const char *md, verdicts__row *rows, int max)
{
    int n = 0, line = 1;
    for (const char *l = md; l && *l;) {
        const char *end = strchr(l, '\n');
        if (!end)
            end = l + strlen(l);
        if (strncmp(l, "| `", 3) == 0 && n < max) {
            const char *bar[6];
            int nb = 0;
            for (const char *p = l; p < end && nb < 6; p++)
                if (*p == '|' && (p == l || p[-1] != '\\')) /* \| is a | inside a cell */
                    bar[nb++] = p;
            if (nb >= 5) {
                verdicts__row *r = &rows[n++];
                verdicts__cell(bar[0] + 1, bar[1], r->status, sizeof r->status);
                verdicts__cell(bar[1] + 1, bar[2], r->detail, sizeof r->detail);
                verdicts__cell(bar[3] + 1, bar[4], r->produced, sizeof r->produced);
                r->line = line;
            }
        }
        l = *end ? end + 1 : NULL;
        line++;
    }
    return n;
}

static const verdicts__row *verdicts__find(const verdicts__row *rows, int n, const char *status,
                                           const char *detail)
{
    for (int i = 0; i < n; i++)
        if (strcmp(rows[i].status, status) == 0 && strcmp(rows[i].detail, detail) == 0)
            return &rows[i];
    return NULL;
}

/* Each `tests/FILE.c: NAME` of a cell names a CKBT_TEST in that file, and
 * each candidate it names (a bare FILE.c) is in tests/candidates. Returns
 * how many tests it names. */
static int verdicts__check_refs(const verdicts__row *r)
{
    int tests = 0;
    for (const char *p = strstr(r->produced, "tests/"); p; p = strstr(p + 1, "tests/")) {
        char file[256], name[128];
        size_t k = 0;
        while (p[k] && p[k] != ':' && p[k] != ' ' && k + 1 < sizeof file) {
            file[k] = p[k];
            k++;
        }
        file[k] = '\0';
        const char *q = p + k;
        if (*q != ':')
            continue;
        q++;
        while (*q == ' ')
            q++;
        size_t m = 0;
        while ((q[m] == '_' || (q[m] >= 'a' && q[m] <= 'z') || (q[m] >= '0' && q[m] <= '9')) &&
               m + 1 < sizeof name) {
            name[m] = q[m];
            m++;
        }
        name[m] = '\0';
        tests++;
        char *src = ckb_read_file(file, NULL);
        char want[200];
        snprintf(want, sizeof want, "CKBT_TEST(%s,", name);
        CKBT_EXPECT(src && m > 0 && strstr(src, want),
                    "docs/VERDICTS.md:%d (%s/%s) names %s: %s, which is no test there", r->line,
                    r->status, r->detail, file, name);
        free(src);
    }
    /* candidates: words ending in .c with no folder */
    for (const char *p = strstr(r->produced, ".c"); p; p = strstr(p + 1, ".c")) {
        if (p[2] == '_' || (p[2] >= 'a' && p[2] <= 'z'))
            continue;
        const char *b = p;
        while (b > r->produced && (b[-1] == '_' || (b[-1] >= 'a' && b[-1] <= 'z') ||
                                   (b[-1] >= '0' && b[-1] <= '9')))
            b--;
        if (b == p || (b > r->produced && b[-1] == '/'))
            continue;
        char path[300];
        snprintf(path, sizeof path, "tests/candidates/%.*s.c", (int)(p - b), b);
        CKBT_EXPECT(access(path, R_OK) == 0, "docs/VERDICTS.md:%d (%s/%s) names %s, not there",
                    r->line, r->status, r->detail, path);
    }
    return tests;
}

/* Where a detail could be written other than by eval__fail: each file of
 * src/eval and src/exec that names a detail field (->detail, .detail), and
 * how often: eval__fail writes it, result.c reads it into the JSON,
 * verdict.c holds the table; nothing else may. */
static void verdicts__check_writers(void)
{
    static const char *const dirs[] = {"src/eval", "src/exec"};
    int files = 0;
    for (size_t d = 0; d < 2; d++) {
        DIR *dir = opendir(dirs[d]);
        CKBT_EXPECT(dir != NULL, "cannot list %s", dirs[d]);
        for (struct dirent *e; dir && (e = readdir(dir));) {
            size_t len = strlen(e->d_name);
            if (len < 2 || strcmp(e->d_name + len - 2, ".c") != 0)
                continue;
            char path[300];
            snprintf(path, sizeof path, "%s/%s", dirs[d], e->d_name);
            char *src = ckb_read_file(path, NULL);
            int uses = 0;
            for (const char *p = src ? strstr(src, "detail") : NULL; p; p = strstr(p + 1, "detail"))
                uses += (p[-1] == '>' || p[-1] == '.') &&
                        !(p[6] == '_' || (p[6] >= 'a' && p[6] <= 'z'));
            /* eval__fail's one snprintf (2), result.c's read (2), the table (2) */
            int allowed = strcmp(path, "src/eval/eval.c") == 0 ||
                                  strcmp(path, "src/eval/result.c") == 0 ||
                                  strcmp(path, "src/eval/verdict.c") == 0
                              ? 2
                              : 0;
            CKBT_EXPECT(uses == allowed,
                        "%s names a result's detail %d times (expected %d): a detail set other "
                        "than through eval__fail and verdict.def escapes docs/VERDICTS.md",
                        path, uses, allowed);
            files += src != NULL;
            free(src);
        }
        if (dir)
            closedir(dir);
    }
    CKBT_EXPECT(files > 10, "read only %d source files", files);
}

CKBT_TEST(verdicts_every_verdict_is_documented_with_its_test, "quick")
{
    char *md = ckb_read_file("docs/VERDICTS.md", NULL);
    CKBT_EXPECT(md != NULL, "docs/VERDICTS.md is missing");
    if (!md)
        return;
    static verdicts__row rows[VERDICTS__MAX_ROWS];
    int n = verdicts__read(md, rows, VERDICTS__MAX_ROWS);
    CKBT_EXPECT(n >= CKB_V_COUNT, "read %d rows from docs/VERDICTS.md for %d verdicts", n,
                CKB_V_COUNT);
    /* (a) every verdict the evaluator can give is a row */
    for (int v = 0; v < CKB_V_COUNT; v++) {
        const char *st = ckb_status_name(ckb_verdict_status((ckb_verdict)v));
        CKBT_EXPECT(verdicts__find(rows, n, st, ckb_verdict_detail((ckb_verdict)v)) != NULL,
                    "%s / %s (src/eval/verdict.def) has no row in docs/VERDICTS.md", st,
                    ckb_verdict_detail((ckb_verdict)v));
    }
    CKBT_EXPECT(verdicts__find(rows, n, "ok", "—") != NULL, "no row for ok (detail —)");
    /* every status has at least one row */
    for (int s = 0; s < CKB_ST_COUNT; s++) {
        int seen = 0;
        for (int i = 0; i < n; i++)
            seen |= strcmp(rows[i].status, ckb_status_name((ckb_status)s)) == 0;
        CKBT_EXPECT(seen, "status %s has no row", ckb_status_name((ckb_status)s));
    }
    /* no row the evaluator cannot give; (b) each names its tests, which exist */
    for (int i = 0; i < n; i++) {
        const verdicts__row *r = &rows[i];
        int is_ok = strcmp(r->status, "ok") == 0 && strcmp(r->detail, "—") == 0;
        int st = -1;
        for (int s = 0; s < CKB_ST_COUNT; s++)
            if (strcmp(r->status, ckb_status_name((ckb_status)s)) == 0)
                st = s;
        CKBT_EXPECT(is_ok || (st >= 0 && ckb_verdict_find((ckb_status)st, r->detail) >= 0),
                    "docs/VERDICTS.md:%d: %s / %s is no verdict of src/eval/verdict.def",
                    r->line, r->status, r->detail);
        int tests = verdicts__check_refs(r);
        CKBT_EXPECT(tests > 0 || strncmp(r->produced, "none:", 5) == 0,
                    "docs/VERDICTS.md:%d: %s / %s names no test and no reason (\"none: ...\")",
                    r->line, r->status, r->detail);
    }
    verdicts__check_writers();
    free(md);
}

/* ---- the verdicts no other test produced ---------------------------- */

/* `ckbench eval 8p_GEMM FILE --size small --seed 42` and the extra
 * arguments (NULL-terminated); status, detail and stage must be these. */
static void verdicts__expect(const char *file, const char *status, const char *detail,
                             const char *stage, ...)
{
    char *extra[24];
    int n = 0;
    extra[n++] = "--seed";
    extra[n++] = "42";
    va_list ap;
    va_start(ap, stage);
    for (char *a; n < 23 && (a = va_arg(ap, char *));)
        extra[n++] = a;
    va_end(ap);
    extra[n] = NULL;
    int code = -1;
    json_object *j = ckbt_eval_argv("8p_GEMM", file, &code, extra);
    CKBT_EXPECT(j != NULL && code == 0, "%s: exit code %d", file, code);
    if (!j)
        return;
    CKBT_EXPECT(strcmp(ckbt_str(j, "status"), status) == 0 &&
                    strcmp(ckbt_str(j, "detail"), detail) == 0,
                "%s: %s / %s, wanted %s / %s (%s)", file, ckbt_str(j, "status"),
                ckbt_str(j, "detail"), status, detail, ckbt_str(j, "message"));
    CKBT_EXPECT(strcmp(ckbt_str(j, "stage"), stage) == 0, "%s: stage %s, wanted %s", file,
                ckbt_str(j, "stage"), stage);
    CKBT_EXPECT(!json_object_get_boolean(json_object_object_get(j, "correct")),
                "%s: marked correct", file);
    json_object_put(j);
}

/* Right on the 3 + 1 checked calls, one element off on every timed call. */
CKBT_TEST(verdict_wrong_timed_call, "quick")
{
    verdicts__expect("attack_wrong_when_timed.c", "wrong_result", "timed_call", "timing",
                     "--seeds", "3", "--warmup", "1", "--iters", "3", "--define",
                     "CKBT_CHECKED_CALLS=4", NULL);
}

/* Right on 4 checks and 1 + 3 timing calls, wrong on the final check. The
 * timing run must not be redone (that would shift the final check later):
 * a disturbance threshold no run reaches. */
CKBT_TEST(verdict_wrong_final_check, "quick")
{
    char *saved = ckbt_env_save("CKBENCH_MAX_DISTURBED_PCT");
    setenv("CKBENCH_MAX_DISTURBED_PCT", "1e9", 1);
    verdicts__expect("attack_wrong_at_final_check.c", "wrong_result", "final_check",
                     "final_check", "--seeds", "3", "--warmup", "1", "--iters", "3", "--define",
                     "CKBT_RIGHT_CALLS=8", NULL);
    ckbt_env_restore("CKBENCH_MAX_DISTURBED_PCT", saved);
}

/* omp_set_num_threads found in libgomp's symbol table, not imported. */
CKBT_TEST(verdict_omp_state_left_changed, "quick")
{
    verdicts__expect("attack_omp_set_threads_unimported.c", "cheat_detected", "omp_state",
                     "correctness", "--warmup", "1", "--iters", "3", NULL);
}

/* Denormals-are-zero alone (MXCSR bit 6, the lowest control bit; the
 * rounding and flush-to-zero case is attack_mxcsr_round_to_zero). */
CKBT_TEST(verdict_fp_state_denormals_are_zero, "quick")
{
    verdicts__expect("attack_mxcsr_daz.c", "cheat_detected", "fp_state", "correctness",
                     "--warmup", "1", "--iters", "3", NULL);
}

/* The sandbox's CPU seconds, summed over its calls, run out: each call
 * burns ~150 ms, inside its wall-clock limit, until RLIMIT_CPU (1800 s x
 * timeout scale x threads + 1: 19 s here) ends it. Up to 405 calls. */
CKBT_TEST(verdict_resource_limit_cpu_seconds, "full")
{
    verdicts__expect("attack_cpu_time_limit.c", "resource_limit", "SIGKILL", "timing",
                     "--threads", "1", "--timeout-scale", "0.01", "--warmup", "1", "--iters",
                     "400", NULL);
}

/* The trusted side reads from /proc that the candidate's sandbox runs under
 * exactly one seccomp filter, its own, with no_new_privs. A candidate
 * cannot add one (seccomp and prctl are refused), so the check is shown
 * the other way: ckbench started under an allow-everything filter of the
 * test's own, which every process it starts inherits, so the sandbox holds
 * two. An honest kernel then ends as cheat_detected (confinement) at load. */
CKBT_TEST(verdict_confinement_two_filters, "quick")
{
#if defined(__SANITIZE_ADDRESS__)
    ckbt_skip("the filter, and the check that reads it, are compiled out under AddressSanitizer");
    return;
#endif
    int fds[2];
    CKBT_EXPECT(pipe(fds) == 0, "pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid == 0) {
        /* only system calls from here to exec: the test runner has threads */
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0)
            dup2(devnull, 2);
        struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
        struct sock_fprog prog = {.len = 1, .filter = &allow};
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
            prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
            _exit(99);
        execl(ckbt_bin(), "ckbench", "eval", "8p_GEMM", "tests/candidates/gemm_plain.c", "--size",
              "small", "--seed", "42", "--warmup", "1", "--iters", "2", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);
    for (ssize_t k; (k = read(fds[0], out + len, cap - 1 - len)) > 0 && len + 1 < cap;)
        len += (size_t)k;
    out[len] = '\0';
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 99) {
        ckbt_skip("this host lets the test install no seccomp filter");
        free(out);
        return;
    }
    char *brace = strchr(out, '{');
    json_object *j = brace ? json_tokener_parse(brace) : NULL;
    CKBT_EXPECT(j != NULL, "no JSON (exit status %d): %.300s", status, out);
    CKBT_EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "exit status %d", status);
    CKBT_EXPECT(strcmp(ckbt_str(j, "status"), "cheat_detected") == 0 &&
                    strcmp(ckbt_str(j, "detail"), "confinement") == 0,
                "%s / %s, wanted cheat_detected / confinement (%s)", ckbt_str(j, "status"),
                ckbt_str(j, "detail"), ckbt_str(j, "message"));
    CKBT_EXPECT(strcmp(ckbt_str(j, "stage"), "load") == 0, "stage %s", ckbt_str(j, "stage"));
    json_object_put(j);
    free(out);
}

/* Faults forced on the process end it whatever it is: the signal names the
 * crash. (A signal a kernel sends itself is dropped: the sandbox is PID 1
 * of its namespace. So SIGABRT, SIGXCPU, SIGXFSZ and other signals are not
 * a candidate's to produce; docs/VERDICTS.md says so.) */
CKBT_TEST(verdict_hardware_faults_are_named_crashes, "quick")
{
    /* Under AddressSanitizer the sanitizer's handlers take SIGFPE and SIGBUS
     * (and report, and exit); SIGTRAP it leaves alone. */
    static const struct {
        const char *define, *signal, *san;
    } faults[] = {{"CKBT_FAULT=1", "SIGFPE", "sanitizer"},
                  {"CKBT_FAULT=2", "SIGTRAP", "SIGTRAP"},
                  {"CKBT_FAULT=3", "SIGBUS", "sanitizer"}};
    for (size_t i = 0; i < sizeof faults / sizeof *faults; i++) {
#if defined(__SANITIZE_ADDRESS__)
        const char *want = faults[i].san;
#else
        const char *want = faults[i].signal;
#endif
        verdicts__expect("crash_hardware_fault.c", "crash", want, "correctness", "--define",
                         faults[i].define, "--timeout-scale", "0.2", NULL);
    }
}

/* Compiles and links, but dlopen refuses it (4 MiB of initial-exec TLS). */
CKBT_TEST(verdict_compile_error_load, "quick")
{
    verdicts__expect("gemm_static_tls_too_big.c", "compile_error", "load", "load", "--warmup",
                     "1", "--iters", "3", NULL);
}

/* ckbench's own failures that a test can cause in this process. */
CKBT_TEST(verdict_harness_errors_name_their_cause, "quick")
{
    const ckb_workload *w = ckb_workload_find("8p_GEMM");
    ckb_eval_opts o;
    ckb_eval_result r;
    ckb_eval_opts_default(&o);
    o.size = CKB_SIZE_SMALL;
    o.nseeds = 0;
    int rc = ckb_eval_run(w, "tests/candidates/gemm_plain.c", &o, &r);
    CKBT_EXPECT(rc != 0 && r.status == CKB_ST_HARNESS_ERROR && !strcmp(r.detail, "options"),
                "--seeds 0: rc %d, %s / %s", rc, ckb_status_name(r.status), r.detail);
    ckb_eval_opts_default(&o);
    o.size = CKB_SIZE_SMALL;
    o.workdir = "/proc/ckbt-no-such-folder/work";
    rc = ckb_eval_run(w, "tests/candidates/gemm_plain.c", &o, &r);
    CKBT_EXPECT(rc != 0 && r.status == CKB_ST_HARNESS_ERROR && !strcmp(r.detail, "workdir"),
                "a work folder that cannot be made: rc %d, %s / %s", rc,
                ckb_status_name(r.status), r.detail);
    ckb_eval_opts_default(&o);
    o.size = CKB_SIZE_SMALL;
    rc = ckb_eval_run(w, "tests/candidates/ckbt_does_not_exist.c", &o, &r);
    CKBT_EXPECT(rc != 0 && r.status == CKB_ST_HARNESS_ERROR && !strcmp(r.detail, "input"),
                "a missing source: rc %d, %s / %s", rc, ckb_status_name(r.status), r.detail);
}
