/*
 * Results a user can keep (issue 15). Nothing is left behind: a signal to `ckbench generate` or
 * `ckbench eval` ends the model command's whole process tree and the
 * evaluator's sandbox and removes the work folders; kill -9 of ckbench
 * still ends the model's tree (its keeper has PR_SET_PDEATHSIG); stale
 * work folders of dead ckbench processes are swept. Infrastructure is not
 * the model: a provider that is down stops generate with a non-zero exit,
 * records no sample against the model, and resume asks again.
 *
 * Each test runs ckbench with its own TMPDIR, so the work folders it
 * checks are its own, and a model script that records its pid and its
 * background child's pid.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/cleanup.h"
#include "core/fsutil.h"
#include "core/jsonget.h"
#include "core/jsonl.h"
#include "core/strbuf.h"
#include "core/utf8.h"
#include "gen/extract.h"
#include "gen/prompt.h"
#include "gen/sample.h"
#include "gen_replies.h"
#include "gen/run.h"
#include "providers/provider.h"
#include "eval_util.h"
#include "harness.h"

static const char *ckb_rec_str_keep(json_object *o, const char *key)
{
    json_object *v;
    return o && json_object_object_get_ex(o, key, &v) && v ? json_object_get_string(v) : "";
}

/* A process that still runs (a zombie waiting for init does not). */
static int keep_alive(long pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    return p && p[2] != 'Z' && p[2] != 'X';
}

/* Live processes whose command line mentions needle. */
static int keep_count_cmdline(const char *needle)
{
    DIR *d = opendir("/proc");
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        long pid = strtol(e->d_name, NULL, 10);
        if (pid <= 0 || pid == getpid())
            continue;
        char path[64], buf[4096];
        snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        for (size_t i = 0; i < len; i++)
            if (!buf[i])
                buf[i] = ' ';
        buf[len] = '\0';
        n += strstr(buf, needle) && keep_alive(pid);
    }
    if (d)
        closedir(d);
    return n;
}

/* The test's folder for one case: tmp/ (the TMPDIR ckbench gets), the
 * model script, and the file where the script writes "pid childpid". */
typedef struct {
    char dir[512], tmp[600], script[600], pids[600], run[600];
} keep_case;

/* The model: request #0 gets a kernel that never returns (so an
 * evaluation is under way, with its work folder and sandbox); any other
 * request starts a background sleeper and sleeps itself. */
static void keep_case_make(keep_case *k, const char *name, int with_kernel)
{
    snprintf(k->dir, sizeof k->dir, "%s/%s", ckbt_tmpdir(), name);
    snprintf(k->tmp, sizeof k->tmp, "%s/tmp", k->dir);
    snprintf(k->script, sizeof k->script, "%s/model.sh", k->dir);
    snprintf(k->pids, sizeof k->pids, "%s/pids", k->dir);
    snprintf(k->run, sizeof k->run, "%s/run", k->dir);
    ckb_mkdirs(k->tmp);
    FILE *f = fopen(k->script, "w");
    fprintf(f, "#!/bin/sh\n");
    if (with_kernel)
        fprintf(f,
                "case \"$CKB_REQUEST_KEY\" in *#0)\n"
                "  cat >/dev/null\n"
                "  printf '```c\\nvoid workload(const ckb_bf16 *x, const ckb_bf16 *scale, "
                "ckb_bf16 *out)\\n{ volatile int z = 1; while (z) { } }\\n```\\n'\n"
                "  exit 0;;\nesac\n");
    fprintf(f, "sleep 120 &\necho \"$$ $!\" >> '%s'\nsleep 120\n", k->pids);
    fclose(f);
    chmod(k->script, 0755);
}

/* Starts `ckbench generate` on the case; its pid. */
static pid_t keep_start_generate(const keep_case *k, int budget, int concurrency)
{
    char bud[16], conc[16];
    snprintf(bud, sizeof bud, "%d", budget);
    snprintf(conc, sizeof conc, "%d", concurrency);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("TMPDIR", k->tmp, 1);
        freopen("/dev/null", "w", stderr);
        /* The signals this test sends reach ckbench with their default action. */
        signal(SIGINT, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        execl(ckbt_bin(), "ckbench", "generate", "--method", "best-of-n", "--provider",
              "command", "--command", k->script, "--workloads", "12p", "--size", "small",
              "--budget", bud, "--concurrency", conc, "--no-expert", "--warmup", "1", "--iters",
              "3", "--out", k->run, (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* Reads "pid child" lines of the script; the number of pids put in out. */
static int keep_read_pids(const keep_case *k, long *out, int max)
{
    char *text = ckb_read_file(k->pids, NULL);
    int n = 0;
    for (char *p = text, *end; p && n < max; p = end) {
        long v = strtol(p, &end, 10);
        if (end == p)
            break;
        out[n++] = v;
    }
    free(text);
    return n;
}

/* Waits (at most ms) until no pid of the list runs; how many still do. */
static int keep_wait_gone(const long *pids, int n, int ms)
{
    int alive = n;
    for (int t = 0; t <= ms / 20 && alive; t++) {
        alive = 0;
        for (int i = 0; i < n; i++)
            alive += keep_alive(pids[i]);
        if (alive)
            ckbt_sleep_ms(20);
    }
    return alive;
}

static void keep_signal_case(int sig, const char *name)
{
    keep_case k;
    keep_case_make(&k, name, 1);
    pid_t pid = keep_start_generate(&k, 2, 2);
    /* Wait for the model's tree and for an evaluation under way. */
    long pids[8];
    int npids = 0, spids[8], ns = 0;
    /* the evaluation is under way once its sandbox (`ckbench __sandbox`, a
     * child of generate) runs the kernel that never returns */
    for (int t = 0; t < 3000 && !(npids >= 2 && ns > 0); t++) {
        ckbt_sleep_ms(20);
        npids = keep_read_pids(&k, pids, 8);
        ns = ckbt_sandbox_pids(pid, spids, 8);
    }
    CKBT_EXPECT(npids >= 2 && ns > 0, "%s: the model runs (%d pids) and a sample is being "
                                      "evaluated (%d sandboxes)", name, npids, ns);
    long sandboxes[8];
    for (int i = 0; i < ns && i < 8; i++)
        sandboxes[i] = spids[i];
    kill(pid, sig);
    int st = 0;
    waitpid(pid, &st, 0);
    CKBT_EXPECT(WIFSIGNALED(st) && WTERMSIG(st) == sig, "%s: ckbench dies of the signal (%d)",
                name, st);
    CKBT_EXPECT(keep_wait_gone(pids, npids, 3000) == 0,
                "%s: the model command, its shell and its background child are gone", name);
    CKBT_EXPECT(ns > 0 && keep_wait_gone(sandboxes, ns < 8 ? ns : 8, 3000) == 0,
                "%s: every sandbox of the evaluation (%d) is gone", name, ns);
    CKBT_EXPECT(keep_count_cmdline(k.tmp) == 0, "%s: no process naming its TMPDIR is left",
                name);
    CKBT_EXPECT(ckbt_count_workdirs(k.tmp) == 0, "%s: no ckbench-* work folder is left in %s",
                name, k.tmp);
}

CKBT_TEST(keep_generate_sigterm_leaves_nothing, "quick") { keep_signal_case(SIGTERM, "term"); }
CKBT_TEST(keep_generate_sigint_leaves_nothing, "quick") { keep_signal_case(SIGINT, "int"); }

CKBT_TEST(keep_generate_sighup_leaves_nothing, "quick") { keep_signal_case(SIGHUP, "hup"); }

/* SIGTERM of `ckbench eval` in the middle of a kernel that never returns. */
/* 1 while pid exists and is not a zombie. */
static int keep_pid_alive(int pid)
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *q = strrchr(buf, ')');
    return q && q[1] == ' ' && q[2] != 'Z' && q[2] != 'X';
}

CKBT_TEST(keep_eval_sigterm_leaves_nothing, "quick")
{
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s/eval-tmp", ckbt_tmpdir());
    ckb_mkdirs(tmp);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("TMPDIR", tmp, 1);
        freopen("/dev/null", "w", stdout);
        freopen("/dev/null", "w", stderr);
        signal(SIGTERM, SIG_DFL);
        execl(ckbt_bin(), "ckbench", "eval", "8p", "tests/candidates/gemm_infinite_loop.c",
              "--size", "small", (char *)NULL);
        _exit(127);
    }
    /* the sandboxes are eval's children (`ckbench __sandbox`), started once
     * the confined compile is done */
    int spids[8], ns = 0;
    for (int t = 0; t < 1500 && ns == 0; t++) {
        ckbt_sleep_ms(20);
        ns = ckbt_sandbox_pids(pid, spids, 8);
    }
    CKBT_EXPECT(ns > 0, "the kernel runs in its sandbox");
    ckbt_sleep_ms(200);
    kill(pid, SIGTERM);
    int st = 0;
    waitpid(pid, &st, 0);
    CKBT_EXPECT(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "eval dies of the signal (%d)", st);
    int left = 1;
    for (int t = 0; t < 150 && left; t++) {
        left = keep_count_cmdline(tmp);
        for (int i = 0; i < ns; i++)
            left += keep_pid_alive(spids[i]);
        if (left)
            ckbt_sleep_ms(20);
    }
    CKBT_EXPECT(left == 0, "no sandbox is left");
    CKBT_EXPECT(ckbt_count_workdirs(tmp) == 0, "no ckbench-* work folder is left");
}

CKBT_TEST(keep_generate_kill9_leaves_no_model, "quick")
{
    keep_case k;
    keep_case_make(&k, "kill9", 0);
    pid_t pid = keep_start_generate(&k, 2, 2);
    long pids[8];
    int npids = 0;
    for (int t = 0; t < 1500 && npids < 4; t++) {
        ckbt_sleep_ms(20);
        npids = keep_read_pids(&k, pids, 8);
    }
    CKBT_EXPECT(npids == 4, "both model calls run, each with a background child (%d pids)",
                npids);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    CKBT_EXPECT(keep_wait_gone(pids, npids, 3000) == 0,
                "after kill -9 of ckbench no process of the model's trees runs");
}

CKBT_TEST(keep_stale_workdirs_are_swept, "quick")
{
    char tmp[600], dead[700], mine[700], other[700], file[800];
    snprintf(tmp, sizeof tmp, "%s/sweep", ckbt_tmpdir());
    /* A pid that is surely dead: a child we reaped. */
    pid_t gone = fork();
    if (gone == 0)
        _exit(0);
    waitpid(gone, NULL, 0);
    snprintf(dead, sizeof dead, "%s/ckbench-%ld-AbCdEf", tmp, (long)gone);
    snprintf(mine, sizeof mine, "%s/ckbench-%ld-GhIjKl", tmp, (long)getpid());
    snprintf(other, sizeof other, "%s/ckbench-OLDSTY", tmp); /* no pid: not ours to judge */
    snprintf(file, sizeof file, "%s/sub/candidate.so", dead);
    ckb_mkdirs(mine);
    ckb_mkdirs(other);
    snprintf(file, sizeof file, "%s/sub", dead);
    ckb_mkdirs(file);
    snprintf(file, sizeof file, "%s/sub/candidate.so", dead);
    ckb_write_file_atomic(file, "x", 1);
    char *old = ckbt_env_save("TMPDIR");
    setenv("TMPDIR", tmp, 1);
    int n = ckb_tmpdir_sweep();
    /* A folder made now carries our pid and is not swept by us. */
    char made[700];
    int rc = ckb_tmpdir_make(made, sizeof made);
    ckbt_env_restore("TMPDIR", old);
    CKBT_EXPECT(n == 1 && access(dead, F_OK) != 0, "the dead process's folder is removed (%d)",
                n);
    CKBT_EXPECT(access(mine, F_OK) == 0 && access(other, F_OK) == 0,
                "a live process's folder and an unnamed one stay");
    char want[700];
    snprintf(want, sizeof want, "%s/ckbench-%ld-", tmp, (long)getpid());
    CKBT_EXPECT(rc == 0 && strncmp(made, want, strlen(want)) == 0, "made %s", made);
    CKBT_EXPECT(ckb_remove_tree(made) == 0, "and removed");
}

/* ---- infrastructure is not the model ----------------------------------- */

/* Runs `ckbench ARGS` (no keys in the environment, fast retries); the exit
 * status, and stderr (caller frees); stdout is left in cli.out. */
static int keep_cli(const char *args, char **err)
{
    char cmd[4096], e[700], o[700];
    snprintf(e, sizeof e, "%s/cli.err", ckbt_tmpdir());
    snprintf(o, sizeof o, "%s/cli.out", ckbt_tmpdir());
    snprintf(cmd, sizeof cmd,
             "env -u OPENAI_API_KEY -u ANTHROPIC_API_KEY -u GEMINI_API_KEY CKB_RETRY_BASE_MS=5 "
             "%s %s >%s 2>%s",
             ckbt_bin(), args, o, e);
    int st = system(cmd);
    *err = ckb_read_file(e, NULL);
    if (!*err)
        *err = strdup("");
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Counts the records of a run with each status of interest. */
static void keep_statuses(const char *run, int *infra, int *provider, int *other)
{
    char path[700];
    snprintf(path, sizeof path, "%s/records.jsonl", run);
    char *text = ckb_read_file(path, NULL);
    *infra = *provider = *other = 0;
    for (char *l = text; l && *l;) {
        char *nl = strchr(l, '\n');
        if (nl)
            *nl = '\0';
        if (strstr(l, "\"status\":\"infra_error\""))
            (*infra)++;
        else if (strstr(l, "\"status\":\"provider_error\""))
            (*provider)++;
        else if (*l)
            (*other)++;
        if (!nl)
            break;
        l = nl + 1;
    }
    free(text);
}

CKBT_TEST(keep_reply_infra_classification, "quick")
{
    ckb_reply r = {0};
    r.status = CKB_REPLY_TRANSPORT;
    CKBT_EXPECT(ckb_reply_is_infra(&r), "a transport failure is the infrastructure's");
    r.status = CKB_REPLY_HTTP_ERROR;
    static const int infra[] = {401, 403, 404, 429, 500, 502, 503};
    for (size_t i = 0; i < sizeof infra / sizeof *infra; i++) {
        r.http_code = infra[i];
        CKBT_EXPECT(ckb_reply_is_infra(&r), "HTTP %d is the infrastructure's", infra[i]);
    }
    r.http_code = 400;
    CKBT_EXPECT(!ckb_reply_is_infra(&r), "HTTP 400 (a request the model side refused) is not");
    r.status = CKB_REPLY_MALFORMED;
    r.http_code = 200;
    CKBT_EXPECT(!ckb_reply_is_infra(&r), "a malformed body is the model's");
    r.status = CKB_REPLY_EMPTY;
    CKBT_EXPECT(!ckb_reply_is_infra(&r), "an empty reply is the model's");
}

CKBT_TEST(keep_command_not_found_is_not_the_model, "quick")
{
    char run[600], args[2048], script[600], *err;
    snprintf(run, sizeof run, "%s/down-cmd", ckbt_tmpdir());
    snprintf(args, sizeof args,
             "generate --method best-of-n --provider command --command /nonexistent/model-cli "
             "--workloads 12p --size small --budget 5 --concurrency 1 --no-expert --out %s",
             run);
    int rc = keep_cli(args, &err);
    int infra, provider, other;
    keep_statuses(run, &infra, &provider, &other);
    CKBT_EXPECT(rc != 0 && strstr(err, "cannot be reached"),
                "generate stops with a non-zero exit and says why (%d): %s", rc, err);
    CKBT_EXPECT(infra == 3 && provider == 0 && other == 0,
                "three calls in a row failed, then it stopped: %d infra_error, %d "
                "provider_error, %d other",
                infra, provider, other);
    free(err);
    /* score counts none of them */
    snprintf(args, sizeof args, "score %s --json", run);
    rc = keep_cli(args, &err);
    free(err);
    char path[700];
    snprintf(path, sizeof path, "%s/score.json", run);
    char *sj = ckb_read_file(path, NULL);
    CKBT_EXPECT(rc == 0 && sj && strstr(sj, "\"infra_error_records\":3") &&
                    !strstr(sj, "provider_error"),
                "score: no sample, three infra_error records noted: %s", sj ? sj : "(none)");
    free(sj);
    /* With the provider fixed, resume asks those samples again. */
    snprintf(script, sizeof script, "%s/nocode.sh", ckbt_tmpdir());
    FILE *f = fopen(script, "w");
    fprintf(f, "#!/bin/sh\ncat >/dev/null\necho 'I have no code for you.'\n");
    fclose(f);
    chmod(script, 0755);
    snprintf(args, sizeof args, "generate --resume %s --command %s", run, script);
    rc = keep_cli(args, &err);
    keep_statuses(run, &infra, &provider, &other);
    CKBT_EXPECT(rc == 0 && strstr(err, "asking them again"), "resume finishes (%d): %s", rc,
                err);
    CKBT_EXPECT(infra == 3 && other == 5, "every sample asked once the provider works: %d "
                                          "infra_error kept on disk, %d samples", infra, other);
    free(err);
}

CKBT_TEST(keep_http_endpoint_down_is_not_the_model, "quick")
{
    /* A localhost port nobody listens on: bind one, then close it. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    CKBT_EXPECT(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
                    getsockname(fd, (struct sockaddr *)&a, &alen) == 0,
                "a free port");
    close(fd);
    char run[600], args[2048], *err;
    snprintf(run, sizeof run, "%s/down-http", ckbt_tmpdir());
    snprintf(args, sizeof args,
             "generate --method best-of-n --provider openai --base-url http://127.0.0.1:%d/v1 "
             "--model m --max-retries 1 --workloads 12p --size small --budget 4 "
             "--concurrency 2 --no-expert --out %s",
             ntohs(a.sin_port), run);
    int rc = keep_cli(args, &err);
    int infra, provider, other;
    keep_statuses(run, &infra, &provider, &other);
    CKBT_EXPECT(rc != 0 && strstr(err, "cannot be reached"), "exit %d: %s", rc, err);
    CKBT_EXPECT(infra >= 3 && provider == 0 && other == 0,
                "no sample counted against the model: %d infra_error, %d provider_error, %d "
                "other",
                infra, provider, other);
    free(err);
}

/* ---- readers survive bad bytes; writers write valid UTF-8 --------------- */

static json_object *keep_record(int index, const char *status)
{
    json_object *r = json_object_new_object();
    json_object_object_add(r, "workload", json_object_new_string("12p_RMSNorm"));
    json_object_object_add(r, "index", json_object_new_int(index));
    json_object_object_add(r, "status", json_object_new_string(status));
    json_object_object_add(r, "correct", json_object_new_boolean(0));
    return r;
}

static json_object *keep_run_config(int budget)
{
    json_object *c = json_object_new_object(), *w = json_object_new_array();
    json_object_array_add(w, json_object_new_string("12p_RMSNorm"));
    json_object_object_add(c, "method", json_object_new_string("best-of-n"));
    json_object_object_add(c, "budget", json_object_new_int(budget));
    json_object_object_add(c, "workloads", w);
    return c;
}

static char *keep_line(int index, const char *status)
{
    json_object *r = keep_record(index, status);
    char *s = strdup(json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN));
    json_object_put(r);
    return s;
}

CKBT_TEST(keep_resume_survives_nul_bytes_and_garbage, "quick")
{
    ckb_err err = {0};
    char dir[600], path[700];
    snprintf(dir, sizeof dir, "%s/nul-run", ckbt_tmpdir());
    snprintf(path, sizeof path, "%s/records.jsonl", dir);
    json_object *c = keep_run_config(6);
    ckb_run *run = NULL;
    CKBT_EXPECT(ckb_run_create(dir, c, &run, &err) == 0, "create: %s", err.msg);
    ckb_run_close(run);
    json_object_put(c);
    /* What a crash can leave: a line that starts with NUL bytes (a record
     * behind them), a zero-filled block that swallowed a newline, a record
     * cut in the middle, plain garbage, and a half-written last line. */
    char *l0 = keep_line(0, "no_code"), *l1 = keep_line(1, "compile_error"),
         *l2 = keep_line(2, "no_code"), *l3 = keep_line(3, "no_code"),
         *l5 = keep_line(5, "no_code");
    FILE *f = fopen(path, "wb");
    fprintf(f, "%s\n", l0);
    fwrite("\0\0\0\0\0\0\0\0", 1, 8, f);
    fprintf(f, "%s\n", l1);
    fprintf(f, "%s", l2);
    fwrite("\0\0\0\0", 1, 4, f);
    fprintf(f, "%s\n", l3);
    fwrite("\0\0", 1, 2, f);
    fprintf(f, "%s\n", l5 + 20); /* a record whose start was zeroed: not whole */
    fprintf(f, "\xff\xfe garbage {{{\n");
    fprintf(f, "{\"workload\":\"12p_RMSNorm\",\"index\":4,\"sta");
    fclose(f);
    free(l0), free(l1), free(l2), free(l3), free(l5);

    char errpath[700];
    snprintf(errpath, sizeof errpath, "%s/nul-run.err", ckbt_tmpdir());
    fflush(stderr);
    int saved = dup(2), fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    close(fd);
    int rc = ckb_run_resume(dir, &run, &err);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char *said = ckb_read_file(errpath, NULL);
    CKBT_EXPECT(rc == 0, "resume reads the run: %s", err.msg);
    if (rc == 0) {
        for (int i = 0; i < 4; i++)
            CKBT_EXPECT(ckb_run_record(run, "12p_RMSNorm", i) != NULL,
                        "whole record %d is kept", i);
        CKBT_EXPECT(!ckb_run_record(run, "12p_RMSNorm", 4) &&
                        !ckb_run_record(run, "12p_RMSNorm", 5),
                    "the cut and the zeroed records are missing: asked again");
        /* The next record starts on a line of its own. */
        CKBT_EXPECT(ckb_run_append(run, keep_record(5, "no_code"), &err) == 0, "%s", err.msg);
        ckb_run_close(run);
        run = NULL;
        CKBT_EXPECT(ckb_run_resume(dir, &run, &err) == 0 && ckb_run_record(run, "12p_RMSNorm", 5),
                    "the appended record reads back: %s", err.msg);
        ckb_run_close(run);
    }
    CKBT_EXPECT(said && strstr(said, "NUL byte") && strstr(said, "not a whole JSON record") &&
                    strstr(said, "half-written last record"),
                "each kind of damage is named: %s", said ? said : "");
    free(said);
    /* score reads it too, and says what it skipped */
    char args[800], *serr;
    snprintf(args, sizeof args, "score %s", dir);
    rc = keep_cli(args, &serr);
    free(serr);
    CKBT_EXPECT(rc == 0, "score reads a damaged run (exit %d)", rc);
}

CKBT_TEST(keep_utf8_trim_and_repair, "quick")
{
    /* gcc's curly quotes are three bytes each: a byte-count trim cuts them */
    const char msg[] = "error: \xe2\x80\x98x\xe2\x80\x99 undeclared";
    size_t n = 9; /* inside the first quote */
    CKBT_EXPECT(ckb_utf8_cut(msg, n) == 7, "a cut inside a character moves back (%zu)",
                ckb_utf8_cut(msg, n));
    CKBT_EXPECT(ckb_utf8_cut(msg, 10) == 10, "a cut after a whole character stays");
    CKBT_EXPECT(ckb_utf8_valid(msg, sizeof msg - 1) && !ckb_utf8_valid(msg, 9),
                "validity is judged");
    static const char *const bad[] = {"\xff", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
                                      "ok\xe2\x80"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        size_t m;
        char *fixed = ckb_utf8_fix(bad[i], strlen(bad[i]), &m);
        CKBT_EXPECT(ckb_utf8_valid(fixed, m) && strstr(fixed, "\xef\xbf\xbd"),
                    "case %zu is repaired with U+FFFD", i);
        free(fixed);
    }
    /* A whole tree: every string of it, nested. */
    json_object *o = json_object_new_object(), *a = json_object_new_array();
    json_object_object_add(o, "source", json_object_new_string_len("\x7f" "ELF\x02\x01\x01\x00\xff", 9));
    json_object_array_add(a, json_object_new_string("fine \xe2\x80\x9cquoted\xe2\x80\x9d"));
    json_object_array_add(a, json_object_new_string("cut \xe2\x80"));
    json_object_object_add(o, "messages", a);
    const char *text = ckb_json_text(o, JSON_C_TO_STRING_PLAIN);
    CKBT_EXPECT(ckb_utf8_valid(text, strlen(text)), "the JSON text is valid UTF-8: %s", text);
    json_object *back = json_tokener_parse(text);
    CKBT_EXPECT(back && strstr(text, "\xe2\x80\x9cquoted\xe2\x80\x9d"),
                "it parses, valid characters kept");
    json_object_put(back);
    json_object_put(o);
}

CKBT_TEST(keep_binary_reply_records_are_valid_utf8, "quick")
{
    char dir[600], script[600], args[2048], path[700], *err;
    snprintf(dir, sizeof dir, "%s/binary-run", ckbt_tmpdir());
    snprintf(script, sizeof script, "%s/binary.sh", ckbt_tmpdir());
    FILE *f = fopen(script, "w");
    /* a reply with invalid bytes, a code block with them too (it will not
     * compile; the compiler quotes them back) */
    fprintf(f, "#!/bin/sh\ncat >/dev/null\n"
               "printf 'Here \\377\\376 it is:\\n```c\\nvoid workload(const ckb_bf16 *x, const "
               "ckb_bf16 *scale, ckb_bf16 *out) { \\342\\200 int \\377y = 1; }\\n```\\n'\n");
    fclose(f);
    chmod(script, 0755);
    snprintf(args, sizeof args,
             "generate --method best-of-n --provider command --command %s --workloads 12p "
             "--size small --budget 1 --no-expert --out %s",
             script, dir);
    int rc = keep_cli(args, &err);
    free(err);
    snprintf(path, sizeof path, "%s/records.jsonl", dir);
    size_t len = 0;
    char *text = ckb_read_file(path, &len);
    CKBT_EXPECT(rc == 0 && text && len > 0, "the run finishes (exit %d)", rc);
    CKBT_EXPECT(text && ckb_utf8_valid(text, len), "records.jsonl is valid UTF-8");
    json_object *rec = text ? json_tokener_parse(text) : NULL;
    CKBT_EXPECT(rec && strstr(ckb_rec_str_keep(rec, "reply"), "\xef\xbf\xbd"),
                "the reply is kept, invalid bytes as U+FFFD");
    json_object_put(rec);
    free(text);
}

/* ---- disturbed timings are not figures ---------------------------------- */

/* A recorded run with disturbed records (the fixture): 12p, budget 4.
 *   #0 correct, 1.5x, undisturbed
 *   #1 correct, "9x" but eval.timing_disturbed (as an older ckbench wrote it)
 *   #2 correct, speedup null, timing_disturbed, speedup_disturbed 12 (as now)
 *   #3 wrong_result
 * The expert is 2x: the floored geomean is 1.5x, 75% of expert, whatever
 * the disturbed timings said. */
static json_object *keep_fixture_record(int index, int correct, double speedup, int disturbed,
                                        int old_format, const char *code)
{
    json_object *r = keep_record(index, correct ? "ok" : "wrong_result"), *e;
    json_object_object_add(r, "correct", json_object_new_boolean(correct));
    json_object_object_add(r, "method", json_object_new_string("refine"));
    json_object_object_add(r, "model", json_object_new_string("fixture-model"));
    json_object_object_add(r, "chain", json_object_new_int(0));
    json_object_object_add(r, "turn", json_object_new_int(index));
    json_object_object_add(r, "code", json_object_new_string(code));
    json_object_object_add(r, "expert_speedup", json_object_new_double(2.0));
    e = json_object_new_object();
    json_object_object_add(e, "status", json_object_new_string(correct ? "ok" : "wrong_result"));
    json_object_object_add(e, "correct", json_object_new_boolean(correct));
    if (correct) {
        json_object *c = json_object_new_object(), *b = json_object_new_object();
        json_object_object_add(c, "median_ms", json_object_new_double(1.0 / speedup));
        json_object_object_add(b, "median_ms", json_object_new_double(1.0));
        json_object_object_add(e, "candidate", c);
        json_object_object_add(e, "baseline", b);
        json_object_object_add(e, "speedup", json_object_new_double(speedup));
        json_object_object_add(e, "timing_disturbed", json_object_new_boolean(disturbed));
        json_object_object_add(e, "other_processes_pct", json_object_new_double(disturbed ? 63 : 1));
    }
    json_object_object_add(r, "eval", e);
    if (correct && old_format) {
        json_object_object_add(r, "speedup", json_object_new_double(speedup));
    } else if (correct) {
        json_object_object_add(r, "speedup", disturbed ? NULL : json_object_new_double(speedup));
        json_object_object_add(r, "timing_disturbed", json_object_new_boolean(disturbed));
        if (disturbed)
            json_object_object_add(r, "speedup_disturbed", json_object_new_double(speedup));
    } else {
        json_object_object_add(r, "speedup", NULL);
    }
    return r;
}

static void keep_write_fixture(const char *dir)
{
    char *code = ckb_gen_extract(ckbt_gen_correct, "workload");
    json_object *c = keep_run_config(4);
    json_object_object_add(c, "size", json_object_new_string("small"));
    json_object_object_add(c, "threads", json_object_new_int(2));
    json_object_object_add(c, "warmup", json_object_new_int(1));
    json_object_object_add(c, "iters", json_object_new_int(3));
    json_object_object_add(c, "method", json_object_new_string("refine"));
    json_object_object_add(c, "model", json_object_new_string("fixture-model"));
    char path[700];
    ckb_mkdirs(dir);
    snprintf(path, sizeof path, "%s/config.json", dir);
    json_object_to_file(path, c);
    json_object_put(c);
    snprintf(path, sizeof path, "%s/records.jsonl", dir);
    FILE *f = fopen(path, "w");
    json_object *r[4] = {keep_fixture_record(0, 1, 1.5, 0, 0, code),
                         keep_fixture_record(1, 1, 9.0, 1, 1, code),
                         keep_fixture_record(2, 1, 12.0, 1, 0, code),
                         keep_fixture_record(3, 0, 0, 0, 0, code)};
    for (int i = 0; i < 4; i++) {
        fprintf(f, "%s\n", json_object_to_json_string_ext(r[i], JSON_C_TO_STRING_PLAIN));
        json_object_put(r[i]);
    }
    fclose(f);
    free(code);
}

/* score.json's number at "key" of the first group, NAN when absent. */
static double keep_score_num(const char *dir, const char *key)
{
    char path[700];
    snprintf(path, sizeof path, "%s/score.json", dir);
    json_object *j = json_object_from_file(path), *groups;
    double v = NAN;
    if (j && json_object_object_get_ex(j, "scores", &groups) &&
        json_object_array_length(groups) > 0)
        v = ckb_json_num(json_object_array_get_idx(groups, 0), key);
    json_object_put(j);
    return v;
}

static int keep_count_lines(const char *dir)
{
    char path[700];
    snprintf(path, sizeof path, "%s/records.jsonl", dir);
    char *t = ckb_read_file(path, NULL);
    int n = 0;
    for (char *c = t; c && *c; c++)
        n += *c == '\n';
    free(t);
    return n;
}

CKBT_TEST(keep_disturbed_timings_are_not_figures, "quick")
{
    char dir[600], args[1400], out[700], *err;
    snprintf(dir, sizeof dir, "%s/disturbed-run", ckbt_tmpdir());
    keep_write_fixture(dir);
    /* score: the disturbed 9x and 12x enter no geomean, fast_p or % of expert */
    snprintf(args, sizeof args, "score %s --json", dir);
    int rc = keep_cli(args, &err);
    free(err);
    double g = keep_score_num(dir, "geomean_speedup_floored"), pe = keep_score_num(dir, "pct_of_expert");
    CKBT_EXPECT(rc == 0 && fabs(g - 1.5) < 1e-9, "the geomean is the undisturbed 1.5x (%g)", g);
    CKBT_EXPECT(fabs(pe - 75.0) < 1e-6, "75%% of expert, not 450%% or 600%% (%g)", pe);
    snprintf(out, sizeof out, "%s/cli.out", ckbt_tmpdir());
    snprintf(args, sizeof args, "score %s", dir);
    rc = keep_cli(args, &err);
    char *text = ckb_read_file(out, NULL);
    CKBT_EXPECT(rc == 0 && text && strstr(text, "2 correct sample(s) with a disturbed timing") &&
                    strstr(text, "disturbed, not counted"),
                "score says what it left out: %s", text ? text : "");
    free(text);
    free(err);
    /* report: marked, never shown as a figure */
    snprintf(out, sizeof out, "%s/disturbed-report", ckbt_tmpdir());
    snprintf(args, sizeof args, "report %s --out %s", dir, out);
    rc = keep_cli(args, &err);
    free(err);
    char md[800];
    snprintf(md, sizeof md, "%s/report.md", out);
    text = ckb_read_file(md, NULL);
    CKBT_EXPECT(rc == 0 && text && strstr(text, "2 disturbed timings, not counted") &&
                    strstr(text, "timing disturbed by other work") && !strstr(text, "9.00") &&
                    !strstr(text, "12.00"),
                "the report marks the disturbed samples and shows no 9x or 12x");
    free(text);
    /* best/: the fastest undisturbed kernel */
    ckb_run *run = NULL;
    ckb_err e2;
    CKBT_EXPECT(ckb_run_resume(dir, &run, &e2) == 0, "%s", e2.msg);
    char path[800];
    snprintf(path, sizeof path, "%s/best/12p_RMSNorm.json", dir);
    json_object *best = json_object_from_file(path);
    CKBT_EXPECT(best && ckb_json_long(best, "index") == 0, "best/ is sample #0 (got %ld)",
                best ? ckb_json_long(best, "index") : -1);
    json_object_put(best);
    /* refine feedback: the model is told the timing was disturbed, not a number */
    if (run) {
        ckb_gen_prev prev = ckb_rec_prev(ckb_run_record(run, "12p_RMSNorm", 1));
        ckb_strbuf sb = {0};
        ckb_gen_feedback(&sb, prev.status, prev.eval, NULL);
        CKBT_EXPECT(sb.data && strstr(sb.data, "disturbed") && !strstr(sb.data, "Timing:") &&
                        !strstr(sb.data, "9"),
                    "feedback: %s", sb.data ? sb.data : "");
        ckb_strbuf_free(&sb);
        ckb_run_close(run);
    }
}

CKBT_TEST(keep_retime_measures_disturbed_records_again, "full")
{
    char dir[600], args[1400], *err;
    snprintf(dir, sizeof dir, "%s/retime-run", ckbt_tmpdir());
    keep_write_fixture(dir);
    /* A machine that stays busy: every timing disturbed, nothing replaced. */
    snprintf(args, sizeof args, "retime %s --tries 2", dir);
    setenv("CKBENCH_RETIME_PAUSE_S", "0", 1);
    setenv("CKBENCH_MAX_DISTURBED_PCT", "-1", 1);
    int rc = keep_cli(args, &err);
    CKBT_EXPECT(rc == 1 && strstr(err, "stayed disturbed") && keep_count_lines(dir) == 4,
                "still disturbed: exit %d, %d lines: %s", rc, keep_count_lines(dir), err);
    free(err);
    /* A quiet machine: both are measured and re-timed records appended. */
    setenv("CKBENCH_MAX_DISTURBED_PCT", "100000", 1);
    rc = keep_cli(args, &err);
    CKBT_EXPECT(rc == 0 && keep_count_lines(dir) == 6, "measured: exit %d, %d lines: %s", rc,
                keep_count_lines(dir), err);
    free(err);
    ckb_run *run = NULL;
    ckb_err e2;
    CKBT_EXPECT(ckb_run_resume(dir, &run, &e2) == 0, "%s", e2.msg);
    for (int i = 1; run && i <= 2; i++) {
        json_object *rec = ckb_run_record(run, "12p_RMSNorm", i);
        CKBT_EXPECT(rec && ckb_json_obj(rec, "retimed") && !ckb_json_timing_disturbed(rec) &&
                        (!ckb_rec_correct(rec) || ckb_json_num(rec, "speedup") > 0),
                    "sample %d: the latest record wins, measured", i);
    }
    ckb_run_close(run);
    snprintf(args, sizeof args, "score %s --json", dir);
    rc = keep_cli(args, &err);
    free(err);
    char path[700];
    snprintf(path, sizeof path, "%s/score.json", dir);
    char *sj = ckb_read_file(path, NULL);
    CKBT_EXPECT(sj && strstr(sj, "\"disturbed_timings\":0") && strstr(sj, "\"retimed_records\":2"),
                "score counts the re-timed figures: %s", sj ? sj : "");
    free(sj);

    /* generate drains its disturbed timings before it finishes (here the
     * machine stays busy: bounded rounds, then marked) */
    char run2[600], script[600];
    snprintf(run2, sizeof run2, "%s/drain-run", ckbt_tmpdir());
    snprintf(script, sizeof script, "%s/correct.sh", ckbt_tmpdir());
    FILE *f = fopen(script, "w");
    fprintf(f, "#!/bin/sh\ncat >/dev/null\ncat <<'EOF'\n%s\nEOF\n", ckbt_gen_correct);
    fclose(f);
    chmod(script, 0755);
    setenv("CKBENCH_MAX_DISTURBED_PCT", "-1", 1);
    snprintf(args, sizeof args,
             "generate --method best-of-n --provider command --command %s --workloads 12p "
             "--size small --budget 1 --no-expert --warmup 1 --iters 3 --out %s",
             script, run2);
    rc = keep_cli(args, &err);
    CKBT_EXPECT(rc == 0 && strstr(err, "round 3 of 3") && strstr(err, "kept a disturbed timing"),
                "generate drains in bounded rounds and says what stayed disturbed (%d): %s", rc,
                err);
    free(err);
    unsetenv("CKBENCH_MAX_DISTURBED_PCT");
    unsetenv("CKBENCH_RETIME_PAUSE_S");
    CKBT_EXPECT(keep_count_lines(run2) == 1, "no re-timed record while still disturbed");
}

static void keep_note_value(void *ctx, json_object *v, int lineno)
{
    (void)lineno;
    long a = ckb_json_long(v, "a");
    if (a >= 0 && a < 5)
        ((int *)ctx)[a] = 1;
}

CKBT_TEST(keep_jsonl_keeps_glued_records, "quick")
{
    /* A lost newline glues two records; zeros split a third from garbage. */
    static const char text[] = "{\"a\":1}{\"a\":2}\n{\"a\":3}\0\0xx{\n{\"a\":4}";
    int seen[5] = {0};
    ckb_jsonl_stats st;
    ckb_jsonl_each(text, sizeof text - 1, keep_note_value, seen, &st);
    CKBT_EXPECT(seen[1] && seen[2] && seen[3] && seen[4] && st.values == 4,
                "every whole record is read (%d values)", st.values);
    CKBT_EXPECT(st.bad == 1 && st.bad_line == 2 && st.nul_bytes == 2 && !st.last_cut,
                "the garbage is counted (bad %d at line %d, %ld NUL bytes, cut %d)", st.bad,
                st.bad_line, st.nul_bytes, st.last_cut);
}

CKBT_TEST(keep_eval_json_is_valid_utf8, "quick")
{
    /* A source with invalid bytes: gcc quotes them back in its message,
     * which the evaluator trims at a byte count. */
    char src[600], args[1400], out[700], *err;
    snprintf(src, sizeof src, "%s/binary.c", ckbt_tmpdir());
    FILE *f = fopen(src, "w");
    fprintf(f, "void workload(const ckb_bf16 *x, const ckb_bf16 *scale, ckb_bf16 *out)\n"
               "{ \xe2\x80 int \xff\xfe y = \xc3; }\n");
    fclose(f);
    snprintf(args, sizeof args, "eval 12p %s --size small", src);
    int rc = keep_cli(args, &err);
    free(err);
    snprintf(out, sizeof out, "%s/cli.out", ckbt_tmpdir());
    size_t len = 0;
    char *text = ckb_read_file(out, &len);
    CKBT_EXPECT(rc == 0 && text && strstr(text, "compile_error"), "a compile error (exit %d)",
                rc);
    CKBT_EXPECT(text && ckb_utf8_valid(text, len), "eval's JSON is valid UTF-8");
    free(text);
}

CKBT_TEST(keep_disturbed_suite_entry_is_marked_in_the_report, "quick")
{
    /* The report fixture with 8p's timing marked disturbed (as bench
     * writes it: eval.timing_disturbed). */
    char dir[600], path[800], out[700], args[1600], *err;
    snprintf(dir, sizeof dir, "%s/suite", ckbt_tmpdir());
    ckb_mkdirs(dir);
    json_object *j = json_object_from_file("tests/fixtures/report/machine_a/results.json"), *wls;
    CKBT_EXPECT(j && json_object_object_get_ex(j, "workloads", &wls), "the fixture reads");
    if (!j)
        return;
    json_object *gemm = json_object_array_get_idx(wls, 0), *ev = json_object_new_object();
    json_object_object_add(ev, "timing_disturbed", json_object_new_boolean(1));
    json_object_object_add(gemm, "eval", ev);
    snprintf(path, sizeof path, "%s/results.json", dir);
    json_object_to_file(path, j);
    json_object_put(j);
    snprintf(out, sizeof out, "%s/suite-report", ckbt_tmpdir());
    snprintf(args, sizeof args, "report %s --out %s", path, out);
    int rc = keep_cli(args, &err);
    free(err);
    snprintf(path, sizeof path, "%s/report.md", out);
    char *md = ckb_read_file(path, NULL);
    CKBT_EXPECT(rc == 0 && md && strstr(md, "| disturbed |") &&
                    strstr(md, "1 workload is marked disturbed") && !strstr(md, "2.60"),
                "8p's speedup is marked disturbed, not shown as 2.60x");
    free(md);
}
