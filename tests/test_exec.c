/*
 * The executor without a cluster: the slurm executor driven through a
 * stand-in srun (tests/fixtures/fake_srun.sh) that fails like a lost node
 * on demand — a Slurm failure is retried and bounded, a finished evaluation
 * is reused and not run again, the node is recorded, a resumed run does not
 * ask the model again for a sample whose evaluation was under way; the
 * local executor; and `ckbench plan`'s counts. The real cluster is test_slurm.c's.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/expert.h"
#include "core/fsutil.h"
#include "core/jsonget.h"
#include "exec/executor.h"
#include "gen/plan.h"
#include "gen/extract.h"
#include "gen/gen.h"
#include "gen/run.h"
#include "gen_replies.h"
#include "harness.h"

static int exect_lines(const char *path)
{
    char *t = ckb_read_file(path, NULL);
    int n = 0;
    for (char *p = t; p && *p; p++)
        n += *p == '\n';
    free(t);
    return n;
}

static const char *exect_str(json_object *j, const char *a, const char *b)
{
    const char *s = ckb_json_str(ckb_json_obj(j, a), b);
    return s ? s : "";
}

CKBT_TEST(exec_slurm_retries_reuses_and_flags_mixed_cpus, "quick")
{
    ckb_err err;
    char dir[600], src[700], state[700], srun[1200], ledger[700];
    snprintf(dir, sizeof dir, "%s/exec", ckbt_tmpdir());
    snprintf(src, sizeof src, "%s/kernel.c", dir);
    snprintf(state, sizeof state, "%s/srun-calls", dir);
    snprintf(srun, sizeof srun, "%s/tests/fixtures/fake_srun.sh", ckb_home());
    snprintf(ledger, sizeof ledger, "%s/evals/exec.ledger", dir);
    char *code = ckb_gen_extract(ckbt_gen_correct, "workload");
    CKBT_EXPECT(code && ckb_mkdirs(dir) == 0 &&
                    ckb_write_file_atomic(src, code, strlen(code)) == 0,
                "the kernel is written");
    free(code);
    setenv("CKB_FAKE_SRUN_STATE", state, 1);
    setenv("CKB_FAKE_SRUN_FAIL", "1", 1);

    ckb_exec_config c;
    ckb_exec_config_default(&c);
    c.kind = CKB_EXEC_SLURM;
    c.srun = srun;
    c.ckbench = ckbt_bin();
    c.retries = 2;
    c.max_jobs = 1;
    c.submit_gap_s = 0;
    c.quiet = 1;
    ckb_exec *x = ckb_exec_open(&c, &err);
    CKBT_EXPECT(x, "the executor opens: %s", err.msg);
    if (!x)
        return;
    ckb_eval_opts eo;
    ckb_eval_opts_default(&eo);
    eo.size = CKB_SIZE_SMALL;
    eo.threads = 2;
    eo.warmup = 1;
    eo.iters = 3;
    eo.seed = 5;
    char evals[700];
    snprintf(evals, sizeof evals, "%s/evals", dir);
    ckb_exec_job job = {.w = ckb_workload_find("12p"), .src = src, .eo = &eo, .dir = evals,
                        .name = "12p_RMSNorm-0"};
    ckb_eval_result r;
    json_object *j = NULL;
    int rc = ckb_exec_eval(x, &job, &r, &j, &err);
    CKBT_EXPECT(rc == 0 && r.status == CKB_ST_OK && r.correct,
                "the evaluation ran after one lost node: rc %d, status %d (%s)", rc, r.status,
                rc ? err.msg : "");
    CKBT_EXPECT(strcmp(exect_str(j, "executor", "node"), "fake-node") == 0 &&
                    ckb_json_long(ckb_json_obj(j, "executor"), "attempts") == 2 &&
                    ckb_json_obj(ckb_json_obj(j, "executor"), "machine") &&
                    strcmp(ckb_json_str(j, "status") ? ckb_json_str(j, "status") : "", "ok") == 0,
                "the result records node, attempts and the node's profile: %s",
                j ? json_object_to_json_string(ckb_json_obj(j, "executor")) : "(none)");
    json_object_put(j);
    CKBT_EXPECT(exect_lines(ledger) == 1 && exect_lines(state) == 1,
                "the node ran it once (ledger %d lines)", exect_lines(ledger));

    /* The same evaluation again (a resumed run): read back, not run. */
    j = NULL;
    rc = ckb_exec_eval(x, &job, &r, &j, &err);
    json_object *e = ckb_json_obj(j, "executor"), *reused;
    CKBT_EXPECT(rc == 0 && r.status == CKB_ST_OK && e &&
                    json_object_object_get_ex(e, "reused", &reused) &&
                    json_object_get_boolean(reused),
                "a finished evaluation is reused: rc %d", rc);
    CKBT_EXPECT(exect_lines(ledger) == 1, "and not run again (ledger %d lines)",
                exect_lines(ledger));
    json_object_put(j);

    /* A result from a node of another CPU (the same evaluation, read back
     * under another name): recorded as mixed, not pooled silently. */
    char a[800], b[800];
    snprintf(a, sizeof a, "%s/12p_RMSNorm-0.json", evals);
    snprintf(b, sizeof b, "%s/other-node.json", evals);
    json_object *other = json_object_from_file(a), *oe = ckb_json_obj(other, "executor");
    if (oe) {
        json_object_object_add(oe, "node", json_object_new_string("node-b"));
        json_object_object_add(oe, "cpu", json_object_new_string("Another CPU"));
        json_object_to_file(b, other);
        snprintf(a, sizeof a, "%s/12p_RMSNorm-0.res", evals);
        snprintf(b, sizeof b, "%s/other-node.res", evals);
        size_t n = 0;
        char *raw = ckb_read_file(a, &n);
        CKBT_EXPECT(raw && ckb_write_file_atomic(b, raw, n) == 0, "the raw result is copied");
        free(raw);
    }
    json_object_put(other);
    job.name = "other-node";
    j = NULL;
    rc = ckb_exec_eval(x, &job, &r, &j, &err);
    json_object_put(j);
    json_object *nodes = ckb_exec_nodes_json(x), *mixed;
    CKBT_EXPECT(rc == 0 && json_object_object_get_ex(nodes, "mixed_cpus", &mixed) &&
                    json_object_get_boolean(mixed) &&
                    ckb_json_obj(ckb_json_obj(nodes, "nodes"), "fake-node") &&
                    ckb_json_obj(ckb_json_obj(nodes, "nodes"), "node-b"),
                "nodes of two CPUs are flagged: %s", json_object_to_json_string(nodes));
    json_object_put(nodes);

    /* A node that keeps failing: retries are bounded. */
    setenv("CKB_FAKE_SRUN_FAIL", "1000", 1);
    job.name = "12p_RMSNorm-1";
    eo.seed = 6;
    j = NULL;
    rc = ckb_exec_eval(x, &job, &r, &j, &err);
    CKBT_EXPECT(rc == CKB_E_HARNESS && !j && strstr(err.msg, "3 times") &&
                    strstr(err.msg, "simulated"),
                "three failures end it: rc %d (%s)", rc, err.msg);
    ckb_exec_close(x);
    unsetenv("CKB_FAKE_SRUN_STATE");
    unsetenv("CKB_FAKE_SRUN_FAIL");

    /* Without srun, slurm says what is missing. */
    c.srun = "/nonexistent/srun";
    x = ckb_exec_open(&c, &err);
    CKBT_EXPECT(!x && strstr(err.msg, "srun"), "no srun: %s", err.msg);
    ckb_exec_close(x);
}

CKBT_TEST(exec_local_records_its_host, "quick")
{
    ckb_err err;
    char dir[600], src[700];
    snprintf(dir, sizeof dir, "%s/local", ckbt_tmpdir());
    snprintf(src, sizeof src, "%s/kernel.c", dir);
    char *code = ckb_gen_extract(ckbt_gen_broken, "workload");
    CKBT_EXPECT(code && ckb_mkdirs(dir) == 0 &&
                    ckb_write_file_atomic(src, code, strlen(code)) == 0,
                "the kernel is written");
    free(code);
    ckb_exec_config c;
    ckb_exec_config_default(&c);
    ckb_exec_kind k;
    CKBT_EXPECT(ckb_exec_kind_parse("slurm", &k) == 0 && k == CKB_EXEC_SLURM &&
                    ckb_exec_kind_parse("ssh", &k) != 0,
                "executor names");
    ckb_exec *x = ckb_exec_open(&c, &err);
    ckb_eval_opts eo;
    ckb_eval_opts_default(&eo);
    eo.size = CKB_SIZE_SMALL;
    eo.threads = 2;
    ckb_exec_job job = {.w = ckb_workload_find("12p"), .src = src, .eo = &eo, .dir = dir,
                        .name = "x"};
    json_object *j = NULL;
    int rc = x ? ckb_exec_eval(x, &job, NULL, &j, &err) : -1;
    CKBT_EXPECT(rc == 0 &&
                    strcmp(ckb_json_str(j, "status") ? ckb_json_str(j, "status") : "",
                           "compile_error") == 0 &&
                    strcmp(exect_str(j, "executor", "name"), "local") == 0,
                "a local evaluation: rc %d (%s)", rc, rc ? err.msg : "");
    json_object_put(j);
    ckb_exec_close(x);
}

CKBT_TEST(exec_plan_counts, "quick")
{
    ckb_gen_opts o;
    ckb_gen_opts_default(&o);
    ckb_plan_counts c;
    int experts = 0;
    char path[1024];
    for (int i = 0; i < ckb_workload_count(); i++)
        experts += ckb_expert_path(ckb_workload_at(i), path, sizeof path);
    /* The paper's experiment: 144 samples x 50 workloads per method. */
    o.method = CKB_GEN_REFINE;
    ckb_plan_count(&o, 50, experts, &c);
    CKBT_EXPECT(c.model_calls == 7200 && c.evaluations == 7200 + experts,
                "refine: %ld calls, %ld evaluations", c.model_calls, c.evaluations);
    o.method = CKB_GEN_BEAM;
    o.use_expert = 0;
    ckb_plan_count(&o, 50, experts, &c);
    CKBT_EXPECT(c.model_calls == 14400 && c.evaluations == 7200,
                "beam: a plan and an implementation call per sample: %ld, %ld", c.model_calls,
                c.evaluations);
    char cmd[1200], want[64];
    snprintf(cmd, sizeof cmd, "%s plan --eval-seconds 30 --overhead 0 --no-expert", ckbt_bin());
    FILE *p = popen(cmd, "r");
    char out[4096] = "";
    size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
    out[n] = 0;
    int st = p ? pclose(p) : -1;
    /* 28,800 evaluations x 30 s = 240 node-hours. */
    snprintf(want, sizeof want, "%12ld %12ld %11.2f", 36000L, 28800L, 240.0);
    CKBT_EXPECT(st == 0 && strstr(out, want), "ckbench plan: want '%s' in:\n%s", want, out);
}

/* ---- a killed driver's replies ------------------------------------------ */

typedef struct {
    int calls;
} exect_model;

static void exect_complete(void *state, const ckb_chat_msg *msgs, int n, const char *key,
                           ckb_reply *out)
{
    (void)msgs, (void)n, (void)key;
    __atomic_add_fetch(&((exect_model *)state)->calls, 1, __ATOMIC_RELAXED);
    out->status = CKB_REPLY_OK;
    out->text = strdup(ckbt_gen_correct);
    out->tokens_in = 10;
    out->tokens_out = 10;
}

/* One generate run (created, or resumed) with the slurm executor through the
 * stand-in srun failing `fail` times; the run's exit. */
static int exect_generate(const char *dir, int resume, const char *fail, exect_model *m)
{
    ckb_err err;
    char srun[1200], state[700];
    snprintf(srun, sizeof srun, "%s/tests/fixtures/fake_srun.sh", ckb_home());
    snprintf(state, sizeof state, "%s.srun-calls", dir);
    unlink(state);
    setenv("CKB_FAKE_SRUN_STATE", state, 1);
    setenv("CKB_FAKE_SRUN_FAIL", fail, 1);
    ckb_exec_config c;
    ckb_exec_config_default(&c);
    c.kind = CKB_EXEC_SLURM;
    c.srun = srun;
    c.ckbench = ckbt_bin();
    c.retries = 0;
    c.max_jobs = 1;
    c.submit_gap_s = 0;
    c.quiet = 1;
    ckb_exec *x = ckb_exec_open(&c, &err);
    ckb_provider_ops ops = {exect_complete, NULL};
    ckb_provider *p = ckb_provider_custom("counting", &ops, m);
    ckb_gen_opts o;
    ckb_gen_opts_default(&o);
    o.budget = 2;
    o.provider = "counting";
    o.model = "m";
    o.use_expert = 0;
    o.quiet = 1;
    o.concurrency = 1;
    o.seed = 3;
    o.eval.size = CKB_SIZE_SMALL;
    o.eval.threads = 2;
    o.eval.warmup = 1;
    o.eval.iters = 3;
    o.exec = x;
    json_object *cfg = json_object_new_object(), *wl = json_object_new_array();
    json_object_array_add(wl, json_object_new_string("12p_RMSNorm"));
    json_object_object_add(cfg, "method", json_object_new_string("best-of-n"));
    json_object_object_add(cfg, "budget", json_object_new_int(2));
    json_object_object_add(cfg, "workloads", wl);
    ckb_run *run = NULL;
    int rc = resume ? ckb_run_resume(dir, &run, &err) : ckb_run_create(dir, cfg, &run, &err);
    json_object_put(cfg);
    const ckb_workload *w = ckb_workload_find("12p_RMSNorm");
    if (rc == 0 && x)
        rc = ckb_gen_run(p, run, &w, 1, &o);
    else
        rc = -2;
    ckb_run_close(run);
    ckb_provider_close(p);
    ckb_exec_close(x);
    unsetenv("CKB_FAKE_SRUN_STATE");
    unsetenv("CKB_FAKE_SRUN_FAIL");
    return rc;
}

CKBT_TEST(exec_slurm_resume_does_not_ask_the_model_again, "quick")
{
    char dir[600], recs[700];
    snprintf(dir, sizeof dir, "%s/gen-run", ckbt_tmpdir());
    snprintf(recs, sizeof recs, "%s/records.jsonl", dir);
    exect_model m = {0};
    setenv("CKBENCH_MAX_DISTURBED_PCT", "1e9", 1); /* nothing re-timed: one record a sample */
    /* Slurm loses every job: the run stops after its first reply. */
    int rc = exect_generate(dir, 0, "1000", &m);
    CKBT_EXPECT(rc == -1 && m.calls == 1 && exect_lines(recs) == 0,
                "the first run stops without a record: rc %d, %d model calls", rc, m.calls);
    rc = exect_generate(dir, 1, "0", &m);
    CKBT_EXPECT(rc == 0 && exect_lines(recs) == 2, "the resumed run finishes: rc %d, %d records",
                rc, exect_lines(recs));
    CKBT_EXPECT(m.calls == 2, "sample 0's reply was kept: the model was asked %d times, want 2",
                m.calls);
    unsetenv("CKBENCH_MAX_DISTURBED_PCT");
}
