/*
 * The compile's limits (eval/confine.h), end to end through `ckbench eval`:
 * a source that makes the compiler take memory, CPU, disk or output
 * without end ends as compile_error naming the limit, soon, with the host
 * untouched; a normal kernel and the largest expert still compile. Each
 * bomb runs under wait4, whose rusage covers ckbench and every process of
 * the compile: its peak resident set shows what the host gave.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/fsutil.h"
#include "core/proc.h"
#include "eval/confine.h"

#include "eval_util.h"
#include "harness.h"

extern char **environ;

enum { LIMITS_MAX_OUTPUT = 4 << 20, LIMITS_WAIT_S = 300 };

typedef struct {
    json_object *j;  /* the evaluation's JSON, or NULL */
    int code;        /* ckbench's exit status */
    double wall_s;   /* the whole `ckbench eval` */
    long maxrss_kib; /* the largest peak resident set of ckbench and its descendants */
} limits__run;

/* Reads the child's output until EOF (or LIMITS_WAIT_S: then kills it). */
static char *limits__read_all(int fd, pid_t pid)
{
    char *buf = malloc(LIMITS_MAX_OUTPUT + 1);
    size_t len = 0;
    double t0 = ckb_now();
    while (buf) {
        double left = LIMITS_WAIT_S - (ckb_now() - t0);
        if (left <= 0) {
            kill(pid, SIGKILL);
            break;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, (int)(left * 1000) + 1) <= 0)
            continue;
        char chunk[8192];
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        size_t keep = len + (size_t)n > LIMITS_MAX_OUTPUT ? LIMITS_MAX_OUTPUT - len : (size_t)n;
        memcpy(buf + len, chunk, keep);
        len += keep;
    }
    if (buf)
        buf[len] = '\0';
    return buf;
}

/* `ckbench eval WORKLOAD tests/candidates/FILE --size small ...` (FILE
 * itself when absolute; plus --keep KEEP), waited for with wait4. */
static limits__run limits__eval(const char *workload, const char *file, const char *keep)
{
    limits__run r = {.code = -1};
    char path[512];
    snprintf(path, sizeof path, "%s%s", file[0] == '/' ? "" : "tests/candidates/", file);
    char *argv[] = {(char *)ckbt_bin(), "eval", (char *)workload, path, "--size", "small",
                    "--seeds", "1", "--warmup", "1", "--iters", "2", "--seed", "42",
                    keep ? "--keep" : NULL, (char *)keep, NULL};
    int pipefd[2];
    CKBT_EXPECT(pipe2(pipefd, O_CLOEXEC) == 0, "pipe");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
    pid_t pid;
    double t0 = ckb_now();
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pipefd[1]);
    CKBT_EXPECT(rc == 0, "cannot start %s: %s", argv[0], strerror(rc));
    if (rc != 0) {
        close(pipefd[0]);
        return r;
    }
    char *out = limits__read_all(pipefd[0], pid);
    close(pipefd[0]);
    int status = 0;
    struct rusage ru = {0};
    while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
    }
    r.wall_s = ckb_now() - t0;
    r.maxrss_kib = ru.ru_maxrss;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    const char *brace = out ? strchr(out, '{') : NULL;
    r.j = brace ? json_tokener_parse(brace) : NULL;
    CKBT_EXPECT(r.j != NULL, "%s: no JSON: %.300s", file, out ? out : "");
    free(out);
    return r;
}

static double limits__compile_s(json_object *j)
{
    json_object *st = NULL;
    json_object_object_get_ex(j, "stage_seconds", &st);
    return ckbt_num(st, "compile");
}

/* A compile_error at the compile stage, detail `kind`, whose message opens
 * by naming the limit (`says`), after at most max_s seconds. */
static void limits__expect(const limits__run *r, const char *file, const char *kind,
                           const char *says, double max_s)
{
    const char *msg = ckbt_str(r->j, "message");
    CKBT_EXPECT(r->code == 0, "%s: exit code %d", file, r->code);
    CKBT_EXPECT(strcmp(ckbt_str(r->j, "status"), "compile_error") == 0, "%s: status %s (%s)", file,
                ckbt_str(r->j, "status"), msg);
    CKBT_EXPECT(strcmp(ckbt_str(r->j, "stage"), "compile") == 0, "%s: stage %s", file,
                ckbt_str(r->j, "stage"));
    CKBT_EXPECT(strcmp(ckbt_str(r->j, "detail"), kind) == 0, "%s: detail %s, wanted %s (%.300s)",
                file, ckbt_str(r->j, "detail"), kind, msg);
    CKBT_EXPECT(strstr(msg, says) == msg, "%s: the message does not open with \"%s\": %.300s",
                file, says, msg);
    CKBT_EXPECT(r->wall_s < max_s, "%s: %.1f s, wanted under %.0f s", file, r->wall_s, max_s);
}

/* The peak of every process of the evaluation stays under the compile's
 * memory limit (plus the slack of ckbench's own resident set, which is
 * counted on its own: wait4 reports the largest single process). */
static void limits__expect_bounded_memory(const limits__run *r, const char *file)
{
    long limit_kib = (long)(CKB_CONFINED_MEM_BYTES >> 10), slack_kib = 256L << 10;
    CKBT_EXPECT(r->maxrss_kib > 0 && r->maxrss_kib < limit_kib + slack_kib,
                "%s: a process of the evaluation peaked at %ld MiB (limit %ld MiB)", file,
                r->maxrss_kib >> 10, limit_kib >> 10);
}

/* The 2^27-element initialiser: past 12 GiB in 80 s without the limit.
 * cc1 reaches 2 GiB after about 15 s of CPU here; on a host slow enough
 * to spend its 30 s of CPU first, the CPU limit ends it, as sound. */
CKBT_TEST(eval_compile_memory_bomb_stops_at_the_memory_limit, "full")
{
    const char *file = "attack_compile_memory_bomb.c";
    limits__run r = limits__eval("8p_GEMM", file, NULL);
    const char *kind = ckbt_str(r.j, "detail");
    int cpu = strcmp(kind, "cpu_limit") == 0;
    limits__expect(&r, file, cpu ? "cpu_limit" : "memory_limit",
                   cpu ? "the compile went past its CPU-time limit (30 s"
                       : "the compile went past its memory limit (2 GiB",
                   60);
    limits__expect_bounded_memory(&r, file);
    json_object_put(r.j);
}

/* The assembler reads 10^9 empty lines: stopped at its 30 s of CPU, well
 * before the wall clock's 120 s. */
CKBT_TEST(eval_compile_cpu_bomb_stops_at_the_cpu_limit, "full")
{
    const char *file = "attack_compile_cpu_bomb.c";
    limits__run r = limits__eval("8p_GEMM", file, NULL);
    limits__expect(&r, file, "cpu_limit", "the compile went past its CPU-time limit (30 s", 90);
    limits__expect_bounded_memory(&r, file);
    json_object_put(r.j);
}

/* Bytes in the files under dir, and the largest of them. */
static long long limits__tree_bytes(const char *dir, long long *largest)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "find '%s' -type f -printf '%%s\\n'", dir);
    FILE *f = popen(cmd, "r");
    long long total = 0, size;
    while (f && fscanf(f, "%lld", &size) == 1) {
        total += size;
        if (size > *largest)
            *largest = size;
    }
    if (f)
        pclose(f);
    return total;
}

/* Makes a sparse source of `bytes` (NUL bytes; it takes no disk). */
static void limits__sparse(const char *path, long long bytes)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    CKBT_EXPECT(fd >= 0 && ftruncate(fd, (off_t)bytes) == 0, "cannot make %s", path);
    if (fd >= 0)
        close(fd);
}

/* One file past the limit (a 512 MiB object file); files each under it
 * that are past it together (a 200 MiB object file, then the linker's
 * 200 MiB object); a source past it (refused before it is copied) and one
 * of exactly the limit (that fills the tmpfs with dims.h beside it). All
 * end at the disk limit, and the compile leaves no object on the host. */
CKBT_TEST(eval_compile_disk_bombs_stop_at_the_disk_limit, "quick")
{
    char past[600], full[600];
    snprintf(past, sizeof past, "%s/source_past_the_limit.c", ckbt_tmpdir());
    snprintf(full, sizeof full, "%s/source_of_the_limit.c", ckbt_tmpdir());
    limits__sparse(past, (long long)CKB_CONFINED_DISK_BYTES + 1);
    limits__sparse(full, (long long)CKB_CONFINED_DISK_BYTES);
    const char *files[] = {"attack_compile_disk_bomb.c", "attack_compile_disk_bomb_total.c", past,
                           full};
    for (int i = 0; i < 4; i++) {
        char keep[600];
        snprintf(keep, sizeof keep, "%s/keep-%d", ckbt_tmpdir(), i);
        limits__run r = limits__eval("8p_GEMM", files[i], keep);
        limits__expect(&r, files[i], "disk_limit",
                       "the compile went past its disk limit (256 MiB", 60);
        limits__expect_bounded_memory(&r, files[i]);
        char so[700];
        snprintf(so, sizeof so, "%s/compile/work/candidate.so", keep);
        CKBT_EXPECT(access(so, F_OK) != 0, "%s: an object was left at %s", files[i], so);
        /* What is left is the source's copy (the last one's is 256 MiB) and
         * the headers; the first past the limit was not copied at all. */
        long long largest = 0, total = limits__tree_bytes(keep, &largest);
        CKBT_EXPECT(i == 3 ? largest == (long long)CKB_CONFINED_DISK_BYTES : total < (1 << 20),
                    "%s: the kept folder holds %lld bytes, the largest file %lld", files[i],
                    total, largest);
        json_object_put(r.j);
        if (i == 3) /* 256 MiB on this host's disk: not until the end of the run */
            ckb_remove_tree(keep);
    }
    unlink(past);
    unlink(full);
}

/* 65536 notes, 120 MB of messages unbounded (4.8 s of compile here):
 * stopped at the first MiB, not drained. */
CKBT_TEST(eval_compile_output_flood_stops_at_the_output_limit, "quick")
{
    const char *file = "attack_compile_output_flood.c";
    limits__run r = limits__eval("8p_GEMM", file, NULL);
    limits__expect(&r, file, "output_limit",
                   "the compiler's messages went past their limit (1 MiB)", 60);
    double s = limits__compile_s(r.j);
    CKBT_EXPECT(s > 0 && s < 3, "%s: the compile took %.2f s: drained, not stopped", file, s);
    CKBT_EXPECT(strstr(ckbt_str(r.j, "message"), "#pragma message"),
                "%s: the first messages are not in the message", file);
    json_object_put(r.j);
}

/* Under the limits, a plain kernel and the compile that needs the most
 * memory, CPU and disk of all the experts (3p_MLA_Attention's, with the
 * expert kit: 121 MiB, 1.3 s, 205 KB) still compile and pass. */
CKBT_TEST(eval_compile_limits_pass_normal_kernels, "quick")
{
    limits__run r = limits__eval("8p_GEMM", "gemm_plain.c", NULL);
    CKBT_EXPECT(strcmp(ckbt_str(r.j, "status"), "ok") == 0, "gemm_plain.c: status %s (%s)",
                ckbt_str(r.j, "status"), ckbt_str(r.j, "message"));
    json_object_put(r.j);
    char *argv[] = {(char *)ckbt_bin(), "eval", "3p_MLA_Attention",
                    "workloads/3p_MLA_Attention/expert.c", "--size", "small", "--seeds", "1",
                    "--warmup", "1", "--iters", "2", NULL};
    ckb_proc_result p;
    CKBT_EXPECT(ckb_proc_run(argv, 300, 1 << 20, &p) == 0, "cannot run ckbench");
    const char *brace = strchr(p.output, '{');
    json_object *j = brace ? json_tokener_parse(brace) : NULL;
    CKBT_EXPECT(j && strcmp(ckbt_str(j, "status"), "ok") == 0, "3p's expert: status %s (%.300s)",
                ckbt_str(j, "status"), j ? ckbt_str(j, "message") : p.output);
    json_object_put(j);
    ckb_proc_result_free(&p);
}
