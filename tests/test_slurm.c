/*
 * The slurm executor on a real one-node Slurm (scripts/slurm_onenode.sh:
 * munged, slurmctld and slurmd on localhost in the test's folder): a
 * replayed generation run with --executor slurm gives the records and score
 * of the same run with --executor local; a job cancelled while it runs is
 * submitted again; a driver killed mid-run and resumed finishes without
 * running any finished evaluation again. The daemons are stopped on every
 * path. A cluster that does not start fails the test with the daemons'
 * logs: it never skips (scripts/deps.sh installs the packages).
 *
 * Then two nodes (scripts/slurm_cluster.sh --nodes 2: each slurmd in a
 * network namespace of its own, with its own address): evaluations through
 * ckb_exec_eval run on both, and one whose node dies under it (kill-node)
 * finishes on the other. That test skips where it cannot make namespaces
 * (not root, no veth), saying why.
 */
#include <json-c/json.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/excl.h"
#include "core/fsutil.h"
#include "core/jsonget.h"
#include "exec/executor.h"
#include "gen/extract.h"
#include "gen_replies.h"
#include "harness.h"
#include "serve_util.h"

/* Runs a shell command; its output (stdout and stderr, at most n bytes)
 * into buf; returns its exit status (-1: not run). */
static int slurmt_sh(const char *cmd, char *buf, size_t n)
{
    char full[4096];
    /* Nothing here may hang CI: a command still running after 10 minutes is
     * ended (and its exit status, 124, fails the check that ran it). */
    snprintf(full, sizeof full, "timeout 600 %s 2>&1", cmd);
    FILE *p = popen(full, "r");
    if (!p)
        return -1;
    size_t used = 0, got;
    char scratch[4096];
    while ((got = fread(buf && used + 1 < n ? buf + used : scratch, 1,
                        buf && used + 1 < n ? n - used - 1 : sizeof scratch, p)) > 0)
        if (buf && used + 1 < n)
            used += got;
    if (buf && n)
        buf[used] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int slurmt_lines(const char *path)
{
    char *t = ckb_read_file(path, NULL);
    int n = 0;
    for (char *p = t; p && *p; p++)
        n += *p == '\n';
    free(t);
    return n;
}

/* The replay source: 8p_GEMM and 12p_RMSNorm, three replies each (a
 * correct kernel, a wrong or broken one, another correct one). */
static int slurmt_source(const char *dir)
{
    char path[1200], cand[1200];
    if (ckb_mkdirs(dir) != 0)
        return -1;
    static const char *const gemm[3] = {"gemm_plain.c", "gemm_off_by_5pct.c",
                                        "gemm_syntax_error.c"};
    const char *rms[3] = {ckbt_gen_correct, ckbt_gen_broken, ckbt_gen_fast};
    snprintf(path, sizeof path, "%s/records.jsonl", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    for (int w = 0; w < 2; w++)
        for (int i = 0; i < 3; i++) {
            char key[64], *reply;
            if (w == 0) {
                snprintf(cand, sizeof cand, "%s/tests/candidates/%s", ckb_home(), gemm[i]);
                char *code = ckb_read_file(cand, NULL);
                if (!code) {
                    fclose(f);
                    return -1;
                }
                reply = malloc(strlen(code) + 16);
                sprintf(reply, "```c\n%s\n```\n", code);
                free(code);
            } else {
                reply = strdup(rms[i]);
            }
            snprintf(key, sizeof key, "%s#%d", w == 0 ? "8p_GEMM" : "12p_RMSNorm", i);
            json_object *r = json_object_new_object();
            json_object_object_add(r, "key", json_object_new_string(key));
            json_object_object_add(r, "reply_status", json_object_new_string("ok"));
            json_object_object_add(r, "reply", json_object_new_string(reply));
            fprintf(f, "%s\n", json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN));
            json_object_put(r);
            free(reply);
        }
    fclose(f);
    return 0;
}

/* The generate command line of the test, into buf. */
static void slurmt_args(char *buf, size_t n, const char *src, const char *out, const char *exec)
{
    snprintf(buf, n,
             "%s generate --method best-of-n --provider replay --replay %s --model m "
             "--workloads 8p,12p --budget 3 --size small --seed 11 --warmup 1 --iters 5 "
             "--no-expert --jobs 1 --concurrency 1 --executor %s --out %s",
             ckbt_bin(), src, exec, out);
}

/* records.jsonl by key ("8p_GEMM#1"; a later line of a key, a re-timing,
 * replaces the earlier): a JSON object of the records; *lines counts the
 * keys. */
static json_object *slurmt_records(const char *run, int *lines)
{
    char path[600];
    snprintf(path, sizeof path, "%s/records.jsonl", run);
    char *t = ckb_read_file(path, NULL);
    json_object *by = json_object_new_object();
    *lines = 0;
    for (char *l = t, *nl; l && *l; l = nl + 1) {
        if (!(nl = strchr(l, '\n')))
            break;
        *nl = 0;
        json_object *r = json_tokener_parse(l);
        if (r && ckb_json_str(r, "key"))
            json_object_object_add(by, ckb_json_str(r, "key"), r);
        else
            json_object_put(r);
    }
    free(t);
    *lines = json_object_object_length(by);
    return by;
}

/* One figure of `ckbench score RUN --json`'s first row. */
static double slurmt_score(const char *run, const char *field)
{
    char cmd[1200], out[600];
    snprintf(out, sizeof out, "%s/score-test.json", run);
    snprintf(cmd, sizeof cmd, "%s score %s --json --out %s >/dev/null", ckbt_bin(), run, out);
    if (slurmt_sh(cmd, NULL, 0) != 0)
        return -1;
    json_object *j = json_object_from_file(out), *scores;
    double v = -1;
    if (j && json_object_object_get_ex(j, "scores", &scores) &&
        json_object_array_length(scores) > 0)
        v = ckb_json_num(json_object_array_get_idx(scores, 0), field);
    json_object_put(j);
    return v;
}

/* Forks the driver with stdout and stderr into errpath; its pid. */
static pid_t slurmt_spawn(const char *cmd, const char *errpath)
{
    pid_t pid = fork();
    if (pid == 0) {
        char full[4200];
        snprintf(full, sizeof full, "exec %s >%s 2>&1", cmd, errpath);
        execl("/bin/sh", "sh", "-c", full, (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* The id of a running ckbench job (name ckb-...), or 0 within ms. */
static long slurmt_running_job(long ms)
{
    char out[4096];
    for (long waited = 0; waited < ms; waited += 50) {
        if (slurmt_sh("squeue -h -t RUNNING -o '%i %j'", out, sizeof out) == 0) {
            for (char *l = out; l && *l;) {
                long id;
                char name[128];
                if (sscanf(l, "%ld %127s", &id, name) == 2 && strncmp(name, "ckb-", 4) == 0)
                    return id;
                l = strchr(l, '\n');
                l = l ? l + 1 : NULL;
            }
        }
        ckbt_sleep_ms(50);
    }
    return 0;
}

CKBT_TEST(slurm_generate_matches_local_retries_and_resumes, "full")
{
    char cluster[600], out[16384], cmd[3000], src[600], local[600], slurm[600], err1[600],
        err2[600];
    const char *tmp = ckbt_tmpdir();
    snprintf(cluster, sizeof cluster, "%s/cluster", tmp);
    snprintf(src, sizeof src, "%s/source", tmp);
    snprintf(local, sizeof local, "%s/local", tmp);
    snprintf(slurm, sizeof slurm, "%s/slurm", tmp);
    snprintf(err1, sizeof err1, "%s/slurm-first.err", tmp);
    snprintf(err2, sizeof err2, "%s/slurm-resume.err", tmp);
    char start[1400], stop[1400];
    snprintf(start, sizeof start, "%s/scripts/slurm_onenode.sh start %s", ckb_home(), cluster);
    snprintf(stop, sizeof stop, "%s/scripts/slurm_onenode.sh stop %s", ckb_home(), cluster);
    pid_t driver = -1;
    json_object *lrec = NULL, *srec = NULL;

    /* If this process dies before its stop, the cluster stops itself. */
    char owner[32];
    snprintf(owner, sizeof owner, "%d", (int)getpid());
    setenv("CKB_SLURM_OWNER_PID", owner, 1);
    int rc = slurmt_sh(start, out, sizeof out);
    unsetenv("CKB_SLURM_OWNER_PID");
    if (rc != 0) {
        CKBT_EXPECT(rc == 0, "the one-node Slurm cluster did not start (exit %d):\n%s", rc, out);
        goto done;
    }
    char conf[700];
    snprintf(conf, sizeof conf, "%s/slurm.conf", cluster);
    setenv("SLURM_CONF", conf, 1);
    setenv("CKB_SLURM_PARTITION", "ckb", 1);
    /* This test judges where evaluations run, not how quiet the machine is:
     * no timing counts as disturbed (nothing is re-timed). */
    setenv("CKBENCH_MAX_DISTURBED_PCT", "1e9", 1);
    CKBT_EXPECT(slurmt_source(src) == 0, "the replay source is written");

    /* The reference: the same run on this machine. */
    slurmt_args(cmd, sizeof cmd, src, local, "local");
    char lcmd[3200];
    snprintf(lcmd, sizeof lcmd, "%s 2>%s/local.err", cmd, tmp);
    rc = slurmt_sh(lcmd, NULL, 0);
    CKBT_EXPECT(rc == 0, "the local run finishes (exit %d)", rc);

    /* The slurm run: its first job cancelled while it runs, then the driver
     * killed after three records. */
    slurmt_args(cmd, sizeof cmd, src, slurm, "slurm");
    driver = slurmt_spawn(cmd, err1);
    /* Cancelled mid-run: once the node has started the evaluation (its
     * ledger line; an 8p evaluation then takes seconds), not merely once
     * Slurm calls the job running. */
    char ledger[700];
    snprintf(ledger, sizeof ledger, "%s/evals/exec.ledger", slurm);
    for (int waited = 0; waited < 60000 && slurmt_lines(ledger) < 1; waited += 10)
        ckbt_sleep_ms(10);
    long job = slurmt_running_job(10000);
    CKBT_EXPECT(job > 0, "a ckbench job runs on the node");
    if (job > 0) {
        char scancel[64];
        snprintf(scancel, sizeof scancel, "scancel %ld", job);
        CKBT_EXPECT(slurmt_sh(scancel, out, sizeof out) == 0, "scancel: %s", out);
    }
    char recpath[700];
    snprintf(recpath, sizeof recpath, "%s/records.jsonl", slurm);
    int st = 0, exited = 0;
    for (int waited = 0; waited < 120000 && slurmt_lines(recpath) < 3; waited += 20) {
        if (waitpid(driver, &st, WNOHANG) == driver) {
            exited = 1;
            break;
        }
        ckbt_sleep_ms(20);
    }
    CKBT_EXPECT(!exited, "the driver was still running at 3 records (exit %d)",
                WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    if (!exited) {
        kill(driver, SIGKILL);
        waitpid(driver, &st, 0);
    }
    driver = -1;
    int before = slurmt_lines(recpath);
    char *e1 = ckb_read_file(err1, NULL);
    CKBT_EXPECT(e1 && strstr(e1, "ended without a result") && strstr(e1, "submitting it again"),
                "the cancelled job is submitted again: %s", e1 ? e1 : "(no output)");
    free(e1);

    snprintf(cmd, sizeof cmd, "%s generate --resume %s --executor slurm >%s 2>&1", ckbt_bin(),
             slurm, err2);
    rc = slurmt_sh(cmd, NULL, 0);
    char *e2 = ckb_read_file(err2, NULL);
    CKBT_EXPECT(rc == 0, "the resumed run finishes (exit %d): %s", rc, e2 ? e2 : "");
    free(e2);

    /* Same samples, same statuses and verdicts. */
    int nl = 0, ns = 0;
    lrec = slurmt_records(local, &nl);
    srec = slurmt_records(slurm, &ns);
    CKBT_EXPECT(nl == 6 && ns == 6, "6 records each: local %d, slurm %d (%d before the kill)", nl,
                ns, before);
    char host[128] = "";
    gethostname(host, sizeof host - 1);
    host[strcspn(host, ".")] = 0;
    json_object_object_foreach(lrec, key, lr)
    {
        json_object *sr = json_object_object_get(srec, key);
        CKBT_EXPECT(sr && strcmp(ckb_json_str(lr, "status"), ckb_json_str(sr, "status")) == 0 &&
                        json_object_get_boolean(json_object_object_get(lr, "correct")) ==
                            json_object_get_boolean(json_object_object_get(sr, "correct")),
                    "%s: local %s, slurm %s", key, ckb_json_str(lr, "status"),
                    sr ? ckb_json_str(sr, "status") : "(missing)");
        json_object *ex = ckb_json_obj(ckb_json_obj(sr, "eval"), "executor");
        if (ckb_json_obj(sr, "eval"))
            CKBT_EXPECT(ex && strcmp(ckb_json_str(ex, "name") ? ckb_json_str(ex, "name") : "",
                                     "slurm") == 0 &&
                            strcmp(ckb_json_str(ex, "node") ? ckb_json_str(ex, "node") : "",
                                   host) == 0 &&
                            ckb_json_obj(ex, "machine"),
                        "%s: the result records its node (%s) and the node's profile", key, host);
    }
    static const char *const fields[] = {"correct_samples", "compiled_samples", "solved"};
    for (int i = 0; i < 3; i++) {
        double a = slurmt_score(local, fields[i]), b = slurmt_score(slurm, fields[i]);
        CKBT_EXPECT(a >= 0 && a == b, "score %s: local %g, slurm %g", fields[i], a, b);
    }

    /* What the nodes ran: every evaluation once, the cancelled one twice. */
    char *led = ckb_read_file(ledger, NULL);
    int twice = 0, once = 0, evals = 0;
    json_object_object_foreach(srec, skey, sr2)
    {
        if (!ckb_json_obj(sr2, "eval"))
            continue;
        evals++;
        char name[128], *h;
        snprintf(name, sizeof name, "%s ", skey);
        if ((h = strchr(name, '#')))
            *h = '-';
        int n = 0;
        for (const char *p = led; p && (p = strstr(p, name)); p++)
            n += p == led || p[-1] == '\n';
        once += n == 1;
        twice += n == 2;
        if (n == 2)
            CKBT_EXPECT(ckb_json_long(ckb_json_obj(ckb_json_obj(sr2, "eval"), "executor"),
                                      "attempts") == 2,
                        "%s ran twice and records 2 attempts", skey);
    }
    CKBT_EXPECT(twice == 1 && once == evals - 1,
                "evaluations run once: %d, twice: %d (want %d and 1):\n%s", once, twice,
                evals - 1, led ? led : "(no ledger)");
    free(led);
    char nodes[700];
    snprintf(nodes, sizeof nodes, "%s/nodes.json", slurm);
    json_object *nj = json_object_from_file(nodes), *mixed;
    CKBT_EXPECT(nj && json_object_object_get_ex(nj, "mixed_cpus", &mixed) &&
                    !json_object_get_boolean(mixed),
                "nodes.json: one CPU");
    json_object_put(nj);

    /* bench: the suite's evaluations go to the node too. */
    char bench[700], bres[800];
    snprintf(bench, sizeof bench, "%s/bench", tmp);
    snprintf(cmd, sizeof cmd,
             "%s bench --executor slurm --workloads 12p --size small --warmup 1 --iters 5 "
             "--out %s",
             ckbt_bin(), bench);
    rc = slurmt_sh(cmd, out, sizeof out);
    snprintf(bres, sizeof bres, "%s/results.json", bench);
    json_object *bj = json_object_from_file(bres), *bl;
    json_object *b0 = bj && json_object_object_get_ex(bj, "workloads", &bl)
                          ? json_object_array_get_idx(bl, 0)
                          : NULL;
    CKBT_EXPECT(rc == 0 && b0 &&
                    strcmp(ckb_json_str(ckb_json_obj(b0, "baseline"), "status")
                               ? ckb_json_str(ckb_json_obj(b0, "baseline"), "status")
                               : "",
                           "ok") == 0 &&
                    strcmp(ckb_json_str(ckb_json_obj(ckb_json_obj(b0, "eval"), "executor"),
                                        "name")
                               ? ckb_json_str(ckb_json_obj(ckb_json_obj(b0, "eval"), "executor"),
                                              "name")
                               : "",
                           "slurm") == 0,
                "bench --executor slurm: exit %d, the baseline timed on the node:\n%s", rc, out);
    json_object_put(bj);

done:
    if (driver > 0) {
        kill(driver, SIGKILL);
        waitpid(driver, NULL, 0);
    }
    json_object_put(lrec);
    json_object_put(srec);
    rc = slurmt_sh(stop, out, sizeof out);
    CKBT_EXPECT(rc == 0, "the cluster stops: %s", out);
    unsetenv("SLURM_CONF");
    unsetenv("CKB_SLURM_PARTITION");
    unsetenv("CKBENCH_MAX_DISTURBED_PCT");
}

/* ---- two nodes: each slurmd in a network namespace of its own ----------- */

/* One evaluation through the slurm executor, in a thread of its own. */
typedef struct {
    ckb_exec *x;
    ckb_exec_job job;
    ckb_eval_opts eo;
    char name[64];
    int rc;
    json_object *j;
    ckb_err err;
    int *done; /* counts the finished threads */
} slurmt_eval;

static void *slurmt_eval_thread(void *arg)
{
    slurmt_eval *e = arg;
    e->rc = ckb_exec_eval(e->x, &e->job, NULL, &e->j, &e->err);
    __atomic_add_fetch(e->done, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

static void slurmt_eval_init(slurmt_eval *e, ckb_exec *x, const char *workload, const char *src,
                             const char *dir, const char *name, unsigned seed, int *done)
{
    memset(e, 0, sizeof *e);
    e->x = x;
    ckb_eval_opts_default(&e->eo);
    e->eo.size = CKB_SIZE_SMALL;
    e->eo.threads = 2;
    e->eo.warmup = 1;
    e->eo.iters = 3;
    e->eo.seed = seed;
    snprintf(e->name, sizeof e->name, "%s", name);
    e->job = (ckb_exec_job){.w = ckb_workload_find(workload), .src = src, .eo = &e->eo,
                            .dir = dir, .name = e->name};
    e->rc = -1;
    e->done = done;
}

/* The executor block's field of an evaluation's result ("" when absent). */
static const char *slurmt_ex(const slurmt_eval *e, const char *field)
{
    const char *s = ckb_json_str(ckb_json_obj(e->j, "executor"), field);
    return s ? s : "";
}

/* The ledger's lines (NAME JOBID NODE) for name, or all of them for NULL:
 * how many, with the first max job ids and nodes in order. */
static int slurmt_ledger(const char *path, const char *name, char jobs[][32], char nodes[][64],
                         int max)
{
    char *t = ckb_read_file(path, NULL);
    int n = 0;
    for (char *l = t, *nl; l && *l; l = nl + 1) {
        if (!(nl = strchr(l, '\n')))
            break;
        *nl = 0;
        char who[128], job[32], node[64];
        if (sscanf(l, "%127s %31s %63s", who, job, node) != 3 || (name && strcmp(who, name)))
            continue;
        if (n < max) {
            snprintf(jobs[n], sizeof jobs[n], "%s", job);
            snprintf(nodes[n], sizeof nodes[n], "%s", node);
        }
        n++;
    }
    free(t);
    return n;
}

/* Until the ledger holds want lines for name (NULL: any), at most ms. */
static int slurmt_wait_ledger(const char *path, const char *name, int want, long ms)
{
    char jobs[1][32], nodes[1][64];
    for (long waited = 0; waited < ms; waited += 10) {
        if (slurmt_ledger(path, name, jobs, nodes, 1) >= want)
            return 1;
        ckbt_sleep_ms(10);
    }
    return 0;
}

/* The evaluations of threads[0..n) are over: joined. Where the cluster
 * broke, their jobs are cancelled until Slurm's failures end them (each
 * cancel counts as one of the executor's retries). */
static void slurmt_join(pthread_t *threads, int n, const int *done)
{
    for (int waited = 0; waited < 600 && __atomic_load_n(done, __ATOMIC_SEQ_CST) < n; waited++) {
        if (waited >= 300)
            slurmt_sh("scancel --partition=ckb", NULL, 0);
        ckbt_sleep_ms(1000);
    }
    for (int i = 0; i < n; i++)
        pthread_join(threads[i], NULL);
}

/* Starts the two-node cluster in folder cluster (stopped with the test
 * process at the latest); its exit status: 3 (said "skipped") when this host
 * cannot make namespaces, another non-zero one fails the test. */
static int slurmt_two_nodes(const char *cluster, char *out, size_t n)
{
    char owner[32], cmd[1600];
    snprintf(owner, sizeof owner, "%d", (int)getpid());
    setenv("CKB_SLURM_OWNER_PID", owner, 1);
    snprintf(cmd, sizeof cmd, "%s/scripts/slurm_cluster.sh start %s --nodes 2", ckb_home(),
             cluster);
    int rc = slurmt_sh(cmd, out, n);
    unsetenv("CKB_SLURM_OWNER_PID");
    if (rc == 3) {
        out[strcspn(out, "\n")] = 0;
        ckbt_skip("%s", out);
    } else {
        CKBT_EXPECT(rc == 0, "the two-node Slurm cluster did not start (exit %d):\n%s", rc, out);
    }
    return rc;
}

CKBT_TEST(slurm_two_nodes_share_work_and_survive_a_lost_node, "full")
{
    if (geteuid() != 0) {
        ckbt_skip("not root: the two-node cluster makes network namespaces");
        return;
    }
    ckb_err err;
    char cluster[600], out[16384], cmd[1600], dir[600], evals[700], ledger[800], k12[700], k8[700];
    const char *tmp = ckbt_tmpdir();
    snprintf(cluster, sizeof cluster, "%s/cluster", tmp);
    snprintf(dir, sizeof dir, "%s/run", tmp);
    snprintf(evals, sizeof evals, "%s/evals", dir);
    snprintf(ledger, sizeof ledger, "%s/exec.ledger", evals);
    snprintf(k12, sizeof k12, "%s/rmsnorm.c", dir);
    snprintf(k8, sizeof k8, "%s/tests/candidates/gemm_plain.c", ckb_home());
    char *code = ckb_gen_extract(ckbt_gen_correct, "workload");
    CKBT_EXPECT(code && ckb_mkdirs(dir) == 0 && ckb_write_file_atomic(k12, code, strlen(code)) == 0,
                "the kernel is written");
    free(code);

    int rc = slurmt_two_nodes(cluster, out, sizeof out);
    if (rc == 3)
        return;
    /* The links the cluster made: none may be left after its stop. */
    char linksf[700];
    snprintf(linksf, sizeof linksf, "%s/links", cluster);
    char *links = ckb_read_file(linksf, NULL);
    ckb_exec *x = NULL;
    enum { N1 = 4 };
    slurmt_eval e1[N1], lost;
    pthread_t threads[N1];
    int done = 0, started = 0, locked = 0;
    memset(e1, 0, sizeof e1);
    memset(&lost, 0, sizeof lost);
    if (rc != 0)
        goto done;
    char conf[700];
    snprintf(conf, sizeof conf, "%s/slurm.conf", cluster);
    setenv("SLURM_CONF", conf, 1);
    setenv("CKB_SLURM_PARTITION", "ckb", 1);

    ckb_exec_config c;
    ckb_exec_config_default(&c);
    c.kind = CKB_EXEC_SLURM;
    c.ckbench = ckbt_bin();
    c.max_jobs = 0; /* the partition's nodes: 2 */
    c.submit_gap_s = 0;
    c.quiet = 1;
    x = ckb_exec_open(&c, &err);
    CKBT_EXPECT(x, "the executor opens: %s", err.msg);
    if (!x)
        goto done;

    /* Several evaluations, two in flight. While this process holds the
     * machine's timing lock (core/excl.h) no node can finish one: the first
     * two have started (the ledger) on two different nodes at once. */
    ckb_excl_lock();
    locked = 1;
    for (int i = 0; i < N1; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s-%d", i % 2 ? "8p_GEMM" : "12p_RMSNorm", i);
        slurmt_eval_init(&e1[i], x, i % 2 ? "8p" : "12p", i % 2 ? k8 : k12, evals, name,
                         (unsigned)(21 + i), &done);
    }
    for (; started < N1; started++)
        if (pthread_create(&threads[started], NULL, slurmt_eval_thread, &e1[started]) != 0)
            break;
    CKBT_EXPECT(started == N1, "%d of %d threads started", started, N1);
    int both = slurmt_wait_ledger(ledger, NULL, 2, 120000);
    char jobs[8][32], nodes[8][64];
    int nl = slurmt_ledger(ledger, NULL, jobs, nodes, 8);
    CKBT_EXPECT(both && nl == 2 && strcmp(nodes[0], nodes[1]) != 0,
                "two evaluations start at once, on two nodes: %d ledger lines (%s, %s)", nl,
                nl > 0 ? nodes[0] : "-", nl > 1 ? nodes[1] : "-");
    ckb_excl_unlock();
    locked = 0;
    slurmt_join(threads, started, &done);
    started = 0;
    int on1 = 0, on2 = 0;
    for (int i = 0; i < N1; i++) {
        CKBT_EXPECT(
            e1[i].rc == 0 &&
                strcmp(ckb_json_str(e1[i].j, "status") ? ckb_json_str(e1[i].j, "status") : "",
                       "ok") == 0 &&
                strcmp(slurmt_ex(&e1[i], "name"), "slurm") == 0,
            "%s ran on the cluster: rc %d, status %s (%s)", e1[i].name, e1[i].rc,
            ckb_json_str(e1[i].j, "status") ? ckb_json_str(e1[i].j, "status") : "-",
            e1[i].rc ? e1[i].err.msg : "");
        on1 += strcmp(slurmt_ex(&e1[i], "node"), "ckbnode1") == 0;
        on2 += strcmp(slurmt_ex(&e1[i], "node"), "ckbnode2") == 0;
    }
    CKBT_EXPECT(on1 > 0 && on2 > 0 && on1 + on2 == N1,
                "both nodes ran evaluations, and only they: ckbnode1 %d, ckbnode2 %d of %d", on1,
                on2, N1);
    json_object *seen = ckb_exec_nodes_json(x), *mixed;
    CKBT_EXPECT(ckb_json_obj(ckb_json_obj(seen, "nodes"), "ckbnode1") &&
                    ckb_json_obj(ckb_json_obj(seen, "nodes"), "ckbnode2") &&
                    json_object_object_get_ex(seen, "mixed_cpus", &mixed) &&
                    !json_object_get_boolean(mixed),
                "the executor saw both nodes, of one CPU: %s", json_object_to_json_string(seen));
    json_object_put(seen);

    /* A node lost mid-evaluation: its host dies (kill-node: slurmd, the job
     * step and the node's address at once) after the evaluation started
     * there and before it could finish (the lock again). Slurm fails the job
     * once it misses the node (SlurmdTimeout); the executor submits it
     * again, and the other node runs it. */
    ckb_excl_lock();
    locked = 1;
    slurmt_eval_init(&lost, x, "8p", k8, evals, "8p_GEMM-lost", 31, &done);
    done = 0;
    if (pthread_create(&threads[0], NULL, slurmt_eval_thread, &lost) == 0)
        started = 1;
    char ljobs[8][32], lnodes[8][64];
    int first = slurmt_wait_ledger(ledger, lost.name, 1, 120000);
    int nlost = slurmt_ledger(ledger, lost.name, ljobs, lnodes, 8);
    CKBT_EXPECT(started && first && nlost == 1, "the evaluation starts on a node: %d lines",
                nlost);
    char victim[64] = "";
    if (nlost == 1) {
        snprintf(victim, sizeof victim, "%s", lnodes[0]);
        snprintf(cmd, sizeof cmd, "%s/scripts/slurm_cluster.sh kill-node %s %s", ckb_home(),
                 cluster, victim);
        rc = slurmt_sh(cmd, out, sizeof out);
        CKBT_EXPECT(rc == 0, "kill-node %s (exit %d): %s", victim, rc, out);
    }
    ckb_excl_unlock();
    locked = 0;
    slurmt_join(threads, started, &done);
    started = 0;
    nlost = slurmt_ledger(ledger, lost.name, ljobs, lnodes, 8);
    long attempts = ckb_json_long(ckb_json_obj(lost.j, "executor"), "attempts");
    const char *node = slurmt_ex(&lost, "node");
    CKBT_EXPECT(
        lost.rc == 0 &&
            strcmp(ckb_json_str(lost.j, "status") ? ckb_json_str(lost.j, "status") : "", "ok") == 0,
        "the evaluation of the lost node finishes: rc %d, status %s (%s)", lost.rc,
        ckb_json_str(lost.j, "status") ? ckb_json_str(lost.j, "status") : "-",
        lost.rc ? lost.err.msg : "");
    CKBT_EXPECT(attempts >= 2 && node[0] && strcmp(node, victim) != 0 &&
                    (strcmp(node, "ckbnode1") == 0 || strcmp(node, "ckbnode2") == 0),
                "it was submitted again and ran on the other node: %ld attempts, on %s (%s "
                "was killed)",
                attempts, node[0] ? node : "-", victim);
    /* The ledger: one start per attempt, the first on the killed node; the
     * result is the last attempt's (its job id), the only one that finished. */
    int last = nlost < 8 ? nlost - 1 : 7;
    CKBT_EXPECT(nlost == attempts && nlost >= 2 && nlost <= 8 &&
                    strcmp(lnodes[0], victim) == 0 && strcmp(lnodes[last], node) == 0 &&
                    strcmp(ljobs[last], slurmt_ex(&lost, "job_id")) == 0,
                "ledger: %d starts for %ld attempts, first on %s, last on %s as job %s; the "
                "result is job %s's",
                nlost, attempts, last >= 0 ? lnodes[0] : "-", last >= 0 ? lnodes[last] : "-",
                last >= 0 ? ljobs[last] : "-", slurmt_ex(&lost, "job_id"));
    char logf[800];
    snprintf(logf, sizeof logf, "%s/%s.log", evals, lost.name);
    char *log = ckb_read_file(logf, NULL);
    int tries = 0;
    for (const char *p = log; p && (p = strstr(p, "== attempt ")); p++)
        tries++;
    CKBT_EXPECT(tries == attempts, "the job's log holds %d sruns for %ld attempts:\n%s", tries,
                attempts, log ? log : "(none)");
    free(log);

done:
    if (locked)
        ckb_excl_unlock();
    if (started)
        slurmt_join(threads, started, &done);
    for (int i = 0; i < N1; i++)
        json_object_put(e1[i].j);
    json_object_put(lost.j);
    ckb_exec_close(x);
    snprintf(cmd, sizeof cmd, "%s/scripts/slurm_cluster.sh stop %s", ckb_home(), cluster);
    rc = slurmt_sh(cmd, out, sizeof out);
    CKBT_EXPECT(rc == 0, "the cluster stops: %s", out);
    /* Nothing left: no process of the cluster, none of its links. */
    for (char *p = links; p && *p; p++)
        if (*p == '\n')
            *p = ' ';
    snprintf(cmd, sizeof cmd,
             "grep -lzxF 'CKB_SLURM_CLUSTER=%s' /proc/[0-9]*/environ 2>/dev/null; "
             "for l in %s; do ip link show \"$l\" >/dev/null 2>&1 && echo \"link $l\"; done; true",
             cluster, links ? links : "");
    slurmt_sh(cmd, out, sizeof out);
    CKBT_EXPECT(!out[0], "the cluster left nothing behind:\n%s", out);
    free(links);
    unsetenv("SLURM_CONF");
    unsetenv("CKB_SLURM_PARTITION");
}

/* The first line of an evaluation's exec.ledger under the server's folder:
 * "eval JOBID NODE"; the node into node (empty when none yet). */
static void slurmt_server_node(const char *evals, const char *id, char *node, size_t n)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s/exec.ledger", evals, id);
    char *t = ckb_read_file(path, NULL);
    char name[64] = "", job[64] = "", nd[128] = "";
    node[0] = 0;
    if (t && sscanf(t, "%63s %63s %127s", name, job, nd) == 3)
        snprintf(node, n, "%s", nd);
    free(t);
}

/* `ckbench serve --executor slurm` feeding a two-node cluster: both nodes
 * take evaluations at once; a node killed under a running evaluation costs
 * nothing (Slurm's failure is submitted again, on the other node), and every
 * evaluation the server accepted is answered. */
CKBT_TEST(slurm_server_feeds_two_nodes_and_survives_a_lost_node, "full")
{
    if (geteuid() != 0) {
        ckbt_skip("not root: the two-node cluster makes network namespaces");
        return;
    }
    char cluster[600], out[16384], cmd[1600], sdir[600], evals[700], conf[700];
    const char *tmp = ckbt_tmpdir();
    snprintf(cluster, sizeof cluster, "%s/scluster", tmp);
    snprintf(sdir, sizeof sdir, "%s/server", tmp);
    snprintf(evals, sizeof evals, "%s/db.sqlite.d/evals", sdir);
    int rc = slurmt_two_nodes(cluster, out, sizeof out);
    if (rc == 3)
        return;
    snprintf(conf, sizeof conf, "%s/slurm.conf", cluster);
    setenv("SLURM_CONF", conf, 1);
    setenv("CKB_SLURM_PARTITION", "ckb", 1);
    ckbt_server s = {.pid = -1};
    enum { N = 4 };
    char ids[N][32];
    int locked = 0;
    const char *extra[] = {"--executor", "slurm", NULL};
    if (rc != 0 || ckbt_serve_start(&s, sdir, extra) != 0)
        goto done;
    /* No node finishes while this process holds the timing lock: two start. */
    ckb_excl_lock();
    locked = 1;
    for (int i = 0; i < N; i++) {
        /* distinct evaluations: another number of timed calls each */
        char more[64];
        snprintf(more, sizeof more, ",\"iters\":%d", 3 + i);
        char *body = ckbt_serve_request("8p", "gemm_plain.c", more);
        ckbt_http h;
        ckbt_http_call(&s, "POST", "/v1/evaluations", body, strlen(body), NULL, &h);
        snprintf(ids[i], sizeof ids[i], "%s", ckb_json_str(h.json, "id") ? ckb_json_str(h.json, "id") : "");
        CKBT_EXPECT(h.status == 202, "submit %d: %ld %s", i, h.status, h.body);
        ckbt_http_free(&h);
        free(body);
    }
    char node0[128] = "", node1[128] = "";
    for (int t = 0; t < 1200 && (!node0[0] || !node1[0]); t++) {
        slurmt_server_node(evals, ids[0], node0, sizeof node0);
        slurmt_server_node(evals, ids[1], node1, sizeof node1);
        ckbt_sleep_ms(100);
    }
    CKBT_EXPECT(node0[0] && node1[0] && strcmp(node0, node1) != 0,
                "two evaluations run at once, on two nodes: '%s' and '%s'", node0, node1);
    /* the node under the first evaluation dies */
    snprintf(cmd, sizeof cmd, "%s/scripts/slurm_cluster.sh kill-node %s %s", ckb_home(), cluster,
             node0[0] ? node0 : "ckbnode1");
    rc = slurmt_sh(cmd, out, sizeof out);
    CKBT_EXPECT(rc == 0, "kill-node %s (exit %d): %s", node0, rc, out);
    ckb_excl_unlock();
    locked = 0;
    for (int i = 0; i < N; i++) {
        json_object *ev = ckbt_serve_wait(&s, ids[i], NULL, 300);
        json_object *res = ckb_json_obj(ev, "result"), *ex = ckb_json_obj(res, "executor");
        const char *st = ckb_json_str(res, "status"), *nd = ckb_json_str(ex, "node");
        CKBT_EXPECT(ev && !strcmp(ckb_json_str(ev, "state"), "done") && st && !strcmp(st, "ok") &&
                        nd && !strcmp(ckb_json_str(ex, "name"), "slurm"),
                    "evaluation %d ends ok on a node: %s", i,
                    ev ? json_object_to_json_string(ev) : "(no answer)");
        if (i == 0)
            CKBT_EXPECT(ckb_json_long(ex, "attempts") >= 2 && nd && strcmp(nd, node0) != 0,
                        "the lost node's evaluation ran again on the other node: %ld attempts, "
                        "on %s (%s was killed)",
                        ckb_json_long(ex, "attempts"), nd ? nd : "-", node0);
        json_object_put(ev);
    }
    /* The server killed with -9 while its Slurm job runs: restarted, it
     * finds the evaluation again (its job by name, or its result) and
     * answers it; nothing accepted is lost. */
    ckb_excl_lock();
    locked = 1;
    char *body = ckbt_serve_request("8p", "gemm_plain.c", ",\"iters\":9");
    ckbt_http h;
    ckbt_http_call(&s, "POST", "/v1/evaluations", body, strlen(body), NULL, &h);
    char late[32];
    snprintf(late, sizeof late, "%s", ckb_json_str(h.json, "id") ? ckb_json_str(h.json, "id") : "");
    ckbt_http_free(&h);
    free(body);
    char lnode[128] = "";
    for (int t = 0; t < 1200 && !lnode[0]; t++) {
        slurmt_server_node(evals, late, lnode, sizeof lnode);
        ckbt_sleep_ms(100);
    }
    CKBT_EXPECT(lnode[0], "the last evaluation started on a node");
    ckbt_serve_stop(&s, SIGKILL);
    ckb_excl_unlock();
    locked = 0;
    if (ckbt_serve_start(&s, sdir, extra) == 0) {
        json_object *ev = ckbt_serve_wait(&s, late, NULL, 300);
        json_object *res = ckb_json_obj(ev, "result");
        CKBT_EXPECT(ev && !strcmp(ckb_json_str(ev, "state"), "done") &&
                        ckb_json_str(res, "status") && !strcmp(ckb_json_str(res, "status"), "ok"),
                    "after a kill -9 and a restart the evaluation is answered: %s",
                    ev ? json_object_to_json_string(ev) : "(no answer)");
        char *log = ckbt_serve_log(&s);
        CKBT_EXPECT(strstr(log, "1 evaluation left running by the last server queued again"),
                    "the restart found it running: %.800s", log);
        free(log);
        json_object_put(ev);
    }
done:
    if (locked)
        ckb_excl_unlock();
    if (s.pid > 0) {
        int st = ckbt_serve_stop(&s, SIGTERM);
        CKBT_EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the server stops cleanly (%d)", st);
    }
    snprintf(cmd, sizeof cmd, "%s/scripts/slurm_cluster.sh stop %s", ckb_home(), cluster);
    rc = slurmt_sh(cmd, out, sizeof out);
    CKBT_EXPECT(rc == 0, "the cluster stops: %s", out);
    unsetenv("SLURM_CONF");
    unsetenv("CKB_SLURM_PARTITION");
}
