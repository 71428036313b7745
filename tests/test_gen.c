/*
 * Generation: reply extraction, and every method end to end on 12p_RMSNorm
 * at small size with a scripted in-process provider that answers by what
 * the prompt holds (a broken kernel, then a fixed one, then a faster one),
 * the run folder, resume after a SIGKILL, and the run lock.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/jsonget.h"
#include "core/fsutil.h"
#include "core/proc.h"
#include "eval/compile.h"
#include "eval/check.h"
#include "eval/child.h"
#include "core/excl.h"
#include "gen/extract.h"
#include "gen/gen.h"
#include "gen/prompt.h"
#include "gen/refsrc.h"
#include "gen/sample.h"
#include "gen_replies.h"
#include "harness.h"

/* The evaluator's sandbox re-executes /proc/self/exe as `__sandbox ...`:
 * in-process evaluations from this test binary land here (glibc passes
 * argc/argv to constructors), before the test runner's main. */
__attribute__((constructor)) static void gen_sandbox_entry(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "__sandbox") == 0)
        exit(ckb_child_main(argc, argv));
}

/* ---- extraction --------------------------------------------------------- */

static const char gen_kernel_body[] =
    "void workload(const ckb_bf16 *x, const ckb_bf16 *scale, ckb_bf16 *out)\n{\n    out[0] = "
    "x[0];\n}\n";

static void expect_extract(const char *reply, const char *want, int line)
{
    char *got = ckb_gen_extract(reply, "workload");
    if (!want) {
        if (got)
            ckbt_fail(__FILE__, line, "expected no code, got:\n%s", got);
    } else if (!got || strcmp(got, want) != 0) {
        ckbt_fail(__FILE__, line, "expected:\n%s\ngot:\n%s", want, got ? got : "(null)");
    }
    free(got);
}

CKBT_TEST(gen_extract_shapes, "quick")
{
    char buf[4096], want[2048];
    /* ```c with prose around */
    snprintf(buf, sizeof buf, "Here is the kernel:\n\n```c\n#include <omp.h>\n%s```\nIt is fast.\n",
             gen_kernel_body);
    snprintf(want, sizeof want, "#include <omp.h>\n%s", gen_kernel_body);
    expect_extract(buf, want, __LINE__);
    /* ```cpp and a bare ``` */
    snprintf(buf, sizeof buf, "```cpp\n%s```", gen_kernel_body);
    expect_extract(buf, gen_kernel_body, __LINE__);
    snprintf(buf, sizeof buf, "Text\n```\n%s```\n", gen_kernel_body);
    expect_extract(buf, gen_kernel_body, __LINE__);
    /* several blocks: a helper, the definition, a usage example calling it */
    snprintf(buf, sizeof buf,
             "First a helper:\n```c\nstatic float sq(float v) { return v * v; }\n```\n"
             "The kernel:\n```c\n%s```\nCall it as:\n```c\nworkload(x, scale, out);\n```\n",
             gen_kernel_body);
    expect_extract(buf, gen_kernel_body, __LINE__);
    /* two definitions: the last one is the answer; a prototype is not one */
    snprintf(buf, sizeof buf,
             "Draft:\n```c\nvoid workload(const ckb_bf16 *x, const ckb_bf16 *scale, ckb_bf16 "
             "*out) { }\n```\nFinal:\n```c\n%s```\nPrototype:\n```c\nvoid workload(const "
             "ckb_bf16 *x, const ckb_bf16 *scale, ckb_bf16 *out);\n```\n",
             gen_kernel_body);
    expect_extract(buf, gen_kernel_body, __LINE__);
    /* an unterminated fence (the reply was cut) */
    snprintf(buf, sizeof buf, "Sure.\n```c\n%s", gen_kernel_body);
    expect_extract(buf, gen_kernel_body, __LINE__);
    /* bare code, no fence, prose before and after */
    snprintf(buf, sizeof buf, "The kernel follows.\n#include <math.h>\n%s\nThat is all.\n",
             gen_kernel_body);
    snprintf(want, sizeof want, "#include <math.h>\n%s", gen_kernel_body);
    expect_extract(buf, want, __LINE__);
    /* CRLF line ends */
    expect_extract("```c\r\nvoid workload(const ckb_bf16 *x)\r\n{\r\n}\r\n```\r\n",
                   "void workload(const ckb_bf16 *x)\n{\n}\n", __LINE__);
    /* no code: prose, empty, NULL, only a shell block */
    expect_extract("I cannot write this kernel, sorry.", NULL, __LINE__);
    expect_extract("", NULL, __LINE__);
    expect_extract(NULL, NULL, __LINE__);
    expect_extract("Run:\n```bash\nmake\n```\n", NULL, __LINE__);
    CKBT_EXPECT(ckb_gen_defines("void workload(int a)\n{ }", "workload"), "a definition");
    CKBT_EXPECT(!ckb_gen_defines("void workload(int a);", "workload"), "a prototype");
    CKBT_EXPECT(!ckb_gen_defines("my_workload(1) { }", "workload"), "another name");
}

/* ---- a scripted provider ------------------------------------------------ */

#define GEN_MAX_CALLS 256

typedef struct {
    pthread_mutex_t mu;
    int ncalls;
    char *keys[GEN_MAX_CALLS], *prompts[GEN_MAX_CALLS];
    int bon_script;      /* best-of-n: the reply by the sample's index mod 6 */
    useconds_t delay_us; /* a slow model, for the kill test */
} gen_script;

static int gen_key_index(const char *key)
{
    const char *h = strchr(key, '#');
    return h ? atoi(h + 1) : -1;
}

/* Answers by the prompt: a plan request gets strategy 1; a kernel whose
 * compile failed gets the fixed one; a correct kernel gets the faster one;
 * a first request gets the broken one. */
static void gen_script_complete(void *state, const ckb_chat_msg *msgs, int n, const char *key,
                                ckb_reply *out)
{
    gen_script *s = state;
    if (s->delay_us)
        usleep(s->delay_us);
    ckb_strbuf sb = {0};
    for (int i = 0; i < n; i++)
        ckb_strbuf_printf(&sb, "%s\n%s\n", msgs[i].role, msgs[i].content);
    char *prompt = ckb_strbuf_take(&sb);
    const char *reply = ckbt_gen_broken;
    int index = gen_key_index(key);
    if (strstr(prompt, "## Optimization menu"))
        reply = "STRATEGY: 1\nSplit the rows across the threads; vectorise both passes.\n";
    else if (strstr(prompt, "Compiler output"))
        reply = ckbt_gen_correct;
    else if (strstr(prompt, "Status: ok"))
        reply = ckbt_gen_fast;
    else if (s->bon_script) {
        static const char *const by_index[] = {ckbt_gen_broken, ckbt_gen_correct, ckbt_gen_fast,
                                               "I would rather not write code today.", "MALF",
                                               ""};
        reply = by_index[index % 6];
    }
    pthread_mutex_lock(&s->mu);
    if (s->ncalls < GEN_MAX_CALLS) {
        s->keys[s->ncalls] = strdup(key);
        s->prompts[s->ncalls] = prompt;
        prompt = NULL;
    }
    s->ncalls++;
    pthread_mutex_unlock(&s->mu);
    free(prompt);
    if (strcmp(reply, "MALF") == 0) {
        out->status = CKB_REPLY_MALFORMED;
        snprintf(out->error, sizeof out->error, "scripted: a body that is not JSON");
        return;
    }
    out->status = CKB_REPLY_OK;
    out->text = strdup(reply);
    out->tokens_in = 100;
    out->tokens_out = (long)strlen(reply) / 4;
    snprintf(out->model, sizeof out->model, "scripted-1");
}

static void gen_script_free(gen_script *s)
{
    for (int i = 0; i < s->ncalls && i < GEN_MAX_CALLS; i++) {
        free(s->keys[i]);
        free(s->prompts[i]);
    }
    pthread_mutex_destroy(&s->mu);
}

/* The prompt sent with this key, or NULL. */
static const char *gen_script_prompt(gen_script *s, const char *key)
{
    for (int i = 0; i < s->ncalls && i < GEN_MAX_CALLS; i++)
        if (strcmp(s->keys[i], key) == 0)
            return s->prompts[i];
    return NULL;
}

static void gen_test_opts(ckb_gen_opts *o, ckb_gen_method m, int budget)
{
    ckb_gen_opts_default(o);
    o->method = m;
    o->budget = budget;
    o->provider = "scripted";
    o->model = "scripted-1";
    o->use_expert = 0;
    o->quiet = 1;
    o->concurrency = 2;
    o->docs_target = "../tests/fixtures/gen-docs";
    o->eval.size = CKB_SIZE_SMALL;
    o->eval.threads = 2;
    o->eval.warmup = 1;
    o->eval.iters = 3;
    /* The methods' logic is under test, not the machine's quiet: no timing
     * counts as disturbed here (test_keep.c covers disturbed ones). */
    o->eval.max_steal_pct = 1e9;
}

static json_object *gen_config(const ckb_gen_opts *o)
{
    json_object *c = json_object_new_object(), *w = json_object_new_array();
    json_object_array_add(w, json_object_new_string("12p_RMSNorm"));
    json_object_object_add(c, "method", json_object_new_string(ckb_gen_method_name(o->method)));
    json_object_object_add(c, "budget", json_object_new_int(o->budget));
    json_object_object_add(c, "workloads", w);
    return c;
}

/* Runs a method into dir with the script; 0 when the run finished. */
static int gen_run(const char *dir, const ckb_gen_opts *o, gen_script *s, int resume)
{
    ckb_provider_ops ops = {gen_script_complete, NULL};
    ckb_provider *p = ckb_provider_custom("scripted", &ops, s);
    const ckb_workload *w = ckb_workload_find("12p_RMSNorm");
    ckb_run *run = NULL;
    ckb_err err;
    json_object *c = gen_config(o);
    int rc = resume ? ckb_run_resume(dir, &run, &err) : ckb_run_create(dir, c, &run, &err);
    json_object_put(c);
    if (rc != 0) {
        fprintf(stderr, "gen_run: %s\n", err.msg);
        ckb_provider_close(p);
        return -1;
    }
    rc = ckb_gen_run(p, run, &w, 1, o);
    ckb_run_close(run);
    ckb_provider_close(p);
    return rc;
}

/* records.jsonl of a run, by index (NULL where missing); counts lines. */
static int gen_records(const char *dir, json_object **by_index, int budget, int *lines)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/records.jsonl", dir);
    char *text = ckb_read_file(path, NULL);
    int dup = 0;
    *lines = 0;
    memset(by_index, 0, sizeof *by_index * (size_t)budget);
    for (char *l = text, *nl; l && *l; l = nl + 1) {
        nl = strchr(l, '\n');
        if (!nl)
            break;
        *nl = 0;
        json_object *j = json_tokener_parse(l), *v;
        (*lines)++;
        int i = j && json_object_object_get_ex(j, "index", &v) ? json_object_get_int(v) : -1;
        if (i < 0 || i >= budget || by_index[i]) {
            dup++;
            json_object_put(j);
            continue;
        }
        by_index[i] = j;
    }
    free(text);
    return dup;
}

static void gen_records_free(json_object **r, int n)
{
    for (int i = 0; i < n; i++)
        json_object_put(r[i]);
}

/* Equal numbers, or both null (NAN). */
static int gen_same(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

static const char *gen_status(json_object *rec) { return ckb_rec_str(rec, "status"); }

/* ---- the methods ------------------------------------------------------- */

CKBT_TEST(gen_best_of_n_end_to_end, "full")
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/bon", ckbt_tmpdir());
    gen_script s = {.mu = PTHREAD_MUTEX_INITIALIZER, .bon_script = 1};
    ckb_gen_opts o;
    gen_test_opts(&o, CKB_GEN_BEST_OF_N, 6);
    CKBT_EXPECT(gen_run(dir, &o, &s, 0) == 0, "the run finishes");
    json_object *r[6];
    int lines;
    CKBT_EXPECT(gen_records(dir, r, 6, &lines) == 0 && lines == 6, "6 records, got %d", lines);
    static const char *const want[] = {"compile_error", "ok", "ok", "no_code", "provider_error",
                                       "provider_error"};
    for (int i = 0; i < 6; i++)
        CKBT_EXPECT(r[i] && strcmp(gen_status(r[i]), want[i]) == 0, "sample %d: %s, want %s", i,
                    r[i] ? gen_status(r[i]) : "(missing)", want[i]);
    CKBT_EXPECT(r[0] && strstr(ckb_rec_str(json_object_object_get(r[0], "eval"), "message"),
                               "error"),
                "the compile error is kept");
    CKBT_EXPECT(r[4] && strcmp(ckb_rec_str(r[4], "reply_status"), "malformed") == 0 &&
                    !json_object_object_get(r[4], "code"),
                "a malformed reply: provider_error, no code");
    CKBT_EXPECT(r[5] && strcmp(ckb_rec_str(r[5], "reply_status"), "empty") == 0,
                "an empty reply");
    CKBT_EXPECT(r[1] && ckb_rec_correct(r[1]) && ckb_json_num(r[1], "speedup") > 0 &&
                    strlen(ckb_rec_str(r[1], "prompt_sha256")) == 64 &&
                    strcmp(ckb_rec_str(r[1], "key"), "12p_RMSNorm#1") == 0 &&
                    strcmp(ckb_rec_str(r[1], "model_reported"), "scripted-1") == 0,
                "a correct sample with its fields");
    /* best/ holds the faster of the two correct kernels, and its record. */
    char path[1024];
    snprintf(path, sizeof path, "%s/best/12p_RMSNorm.json", dir);
    json_object *best = json_object_from_file(path);
    int bi = best ? json_object_get_int(json_object_object_get(best, "index")) : -1;
    CKBT_EXPECT(bi == 1 || bi == 2, "best is a correct sample (got %d)", bi);
    if (bi == 1 || bi == 2) {
        int other = 3 - bi;
        CKBT_EXPECT(ckb_json_num(r[bi], "speedup") >= ckb_json_num(r[other], "speedup"),
                    "best is the faster one");
        snprintf(path, sizeof path, "%s/best/12p_RMSNorm.c", dir);
        char *code = ckb_read_file(path, NULL);
        CKBT_EXPECT(code && strcmp(code, ckb_rec_str(r[bi], "code")) == 0, "best/.c = its code");
        free(code);
    }
    json_object_put(best);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    json_object *sum = json_object_from_file(path), *t;
    CKBT_EXPECT(sum && json_object_object_get_ex(sum, "totals", &t) &&
                    json_object_get_int(json_object_object_get(t, "samples")) == 6 &&
                    json_object_get_int(json_object_object_get(t, "correct")) == 2,
                "summary: 6 samples, 2 correct");
    json_object_put(sum);
    const char *p0 = gen_script_prompt(&s, "12p_RMSNorm#0");
    CKBT_EXPECT(p0 && strstr(p0, "rmsnorm_reference") && !strstr(p0, "GEN-DOCS-MARKER"),
                "a one-shot prompt holds the reference source and no docs");
    gen_records_free(r, 6);
    gen_script_free(&s);
}

/* refine (docs 0) or refine-docs (docs 1): 2 chains x 3 turns. */
static void gen_refine_case(int docs)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/refine%d", ckbt_tmpdir(), docs);
    gen_script s = {.mu = PTHREAD_MUTEX_INITIALIZER};
    ckb_gen_opts o;
    gen_test_opts(&o, docs ? CKB_GEN_REFINE_DOCS : CKB_GEN_REFINE, 6);
    o.chains = 2;
    o.turns = 3;
    CKBT_EXPECT(gen_run(dir, &o, &s, 0) == 0, "the run finishes");
    json_object *r[6];
    int lines;
    CKBT_EXPECT(gen_records(dir, r, 6, &lines) == 0 && lines == 6, "6 records, got %d", lines);
    for (int c = 0; c < 2; c++) {
        json_object *t0 = r[c * 3], *t1 = r[c * 3 + 1], *t2 = r[c * 3 + 2];
        CKBT_EXPECT(t0 && t1 && t2, "chain %d complete", c);
        if (!t0 || !t1 || !t2)
            continue;
        CKBT_EXPECT(!strcmp(gen_status(t0), "compile_error") && !strcmp(gen_status(t1), "ok") &&
                        !strcmp(gen_status(t2), "ok"),
                    "chain %d: broken, fixed, faster (got %s %s %s)", c, gen_status(t0),
                    gen_status(t1), gen_status(t2));
        CKBT_EXPECT(ckb_json_num(t1, "chain") == c && ckb_json_num(t1, "turn") == 1 &&
                        ckb_json_num(t1, "parent") == c * 3 && ckb_json_num(t2, "parent") == c * 3 + 1,
                    "chain %d: chain, turn, parent", c);
        /* The second turn's prompt holds the first turn's compiler message. */
        char key[64], line[200];
        snprintf(key, sizeof key, "12p_RMSNorm#%d", c * 3 + 1);
        const char *p1 = gen_script_prompt(&s, key);
        const char *msg = ckb_rec_str(json_object_object_get(t0, "eval"), "message");
        const char *e = strstr(msg, "error");
        snprintf(line, sizeof line, "%.*s", e ? (int)strcspn(e, "\n") : 0, e ? e : "");
        CKBT_EXPECT(p1 && line[0] && strstr(p1, line) && strstr(p1, "this is not C"),
                    "turn 1 of chain %d gets the code and its compile error '%s'", c, line);
        CKBT_EXPECT(p1 && strstr(p1, "\nkernel.c:") && !strstr(p1, ckbt_tmpdir()),
                    "the compiler's messages name kernel.c, not the run's folder");
        snprintf(key, sizeof key, "12p_RMSNorm#%d", c * 3 + 2);
        const char *p2 = gen_script_prompt(&s, key);
        CKBT_EXPECT(p2 && ((strstr(p2, "Timing: your kernel") && strstr(p2, "speedup")) ||
                           strstr(p2, "Timing: DISTURBED")),
                    "turn 2 of chain %d gets the timing (or is told it was disturbed)", c);
    }
    for (int i = 0; i < s.ncalls; i++)
        CKBT_EXPECT(!strstr(s.prompts[i], "GEN-DOCS-MARKER") == !docs,
                    "call %d: docs %s the prompt", i, docs ? "in" : "not in");
    gen_records_free(r, 6);
    gen_script_free(&s);
}

CKBT_TEST(gen_refine_end_to_end, "full") { gen_refine_case(0); }
CKBT_TEST(gen_refine_docs_end_to_end, "full") { gen_refine_case(1); }

CKBT_TEST(gen_beam_end_to_end, "full")
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/beam", ckbt_tmpdir());
    gen_script s = {.mu = PTHREAD_MUTEX_INITIALIZER};
    ckb_gen_opts o;
    gen_test_opts(&o, CKB_GEN_BEAM, 6);
    o.beam_width = 1;
    o.beam_candidates = 2; /* 2 per iteration: 3 iterations */
    CKBT_EXPECT(gen_run(dir, &o, &s, 0) == 0, "the run finishes");
    json_object *r[6];
    int lines;
    CKBT_EXPECT(gen_records(dir, r, 6, &lines) == 0 && lines == 6, "6 records, got %d", lines);
    static const char *const want_status[] = {"compile_error", "compile_error", "ok", "ok", "ok",
                                              "ok"};
    static const char *const want_phase[] = {"translate", "translate", "translate",
                                             "translate", "optimize",  "optimize"};
    for (int i = 0; i < 6; i++) {
        if (!r[i])
            continue;
        CKBT_EXPECT(!strcmp(gen_status(r[i]), want_status[i]) &&
                        !strcmp(ckb_rec_str(r[i], "phase"), want_phase[i]),
                    "sample %d: %s/%s, want %s/%s", i, gen_status(r[i]),
                    ckb_rec_str(r[i], "phase"), want_status[i], want_phase[i]);
        CKBT_EXPECT(strstr(ckb_rec_str(r[i], "plan"), "OpenMP") &&
                        json_object_object_get(r[i], "plan_call"),
                    "sample %d records its plan (menu entry 1) and the plan call", i);
    }
    /* The beam of one: the first compile error, then the better of the two
     * correct kernels (by measured speedup) is the parent of the optimize step. */
    if (r[2] && r[3] && r[4] && r[5]) {
        CKBT_EXPECT(!json_object_object_get(r[0], "parent"), "the root has no parent");
        CKBT_EXPECT(ckb_json_num(r[2], "parent") == 0 && ckb_json_num(r[3], "parent") == 0,
                    "the fix revises the first compile error");
        int kept = ckb_json_num(r[2], "speedup") >= ckb_json_num(r[3], "speedup") ? 2 : 3;
        CKBT_EXPECT(ckb_json_num(r[4], "parent") == kept && ckb_json_num(r[5], "parent") == kept,
                    "the optimize step builds on sample %d (got %g)", kept,
                    ckb_json_num(r[4], "parent"));
    }
    const char *plan = gen_script_prompt(&s, "12p_RMSNorm#0/plan");
    const char *impl = gen_script_prompt(&s, "12p_RMSNorm#0");
    CKBT_EXPECT(plan && strstr(plan, "Choose exactly ONE strategy") &&
                    strstr(plan, "GEN-DOCS-MARKER") && strstr(plan, "iteration 1 of 4"),
                "the plan request: menu, docs, phase");
    CKBT_EXPECT(impl && strstr(impl, "Split the rows across the threads") &&
                    strstr(impl, "GEN-DOCS-MARKER"),
                "the implementation request carries the plan and the docs");
    gen_records_free(r, 6);
    gen_script_free(&s);
}

/* ---- resume after a kill, the lock --------------------------------------- */

/* The child side of the kill test: this test binary re-executed with
 * CKBT_GEN_CHILD=<run dir>, before main, with a slow scripted model. */
__attribute__((constructor)) static void gen_child_main(void)
{
    const char *dir = getenv("CKBT_GEN_CHILD");
    if (!dir)
        return;
    gen_script s = {.mu = PTHREAD_MUTEX_INITIALIZER, .delay_us = 250000};
    ckb_gen_opts o;
    gen_test_opts(&o, CKB_GEN_REFINE, 6);
    o.chains = 2;
    o.turns = 3;
    _exit(gen_run(dir, &o, &s, 0) == 0 ? 0 : 1);
}

CKBT_TEST(gen_resume_after_kill, "full")
{
    char dir[512], ref[512], path[1024];
    snprintf(dir, sizeof dir, "%s/killed", ckbt_tmpdir());
    snprintf(ref, sizeof ref, "%s/whole", ckbt_tmpdir());
    snprintf(path, sizeof path, "%s/records.jsonl", dir);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("CKBT_GEN_CHILD", dir, 1);
        execl("/proc/self/exe", "ckbench-tests", "--tier", "none", (char *)NULL);
        _exit(127);
    }
    CKBT_EXPECT(pid > 0, "fork");
    /* Wait for two records, then check the lock refuses and kill. */
    int lines = 0;
    for (int t = 0; t < 600 && lines < 2; t++) {
        usleep(50000);
        char *text = ckb_read_file(path, NULL);
        lines = 0;
        for (char *c = text; c && *c; c++)
            lines += *c == '\n';
        free(text);
    }
    CKBT_EXPECT(lines >= 2 && lines < 6, "the child wrote some records, not all (%d)", lines);
    ckb_run *run = NULL;
    ckb_err err = {0};
    CKBT_EXPECT(ckb_run_resume(dir, &run, &err) != 0 && strstr(err.msg, "in use"),
                "a live run's lock refuses (%s)", err.msg);
    ckb_run_close(run);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "%s generate --resume %s 2>%s/lock.err", ckbt_bin(), dir,
             ckbt_tmpdir());
    int st = system(cmd);
    CKBT_EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 1, "the CLI refuses with exit 1 (%d)", st);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);

    /* A kill in the middle of a write leaves half a line: add one. */
    FILE *f = fopen(path, "a");
    fputs("{\"workload\":\"12p_RMSNorm\",\"index\":5,\"sta", f);
    fclose(f);
    json_object *before[6], *after[6], *whole[6];
    int nbefore, nafter, nwhole;
    gen_records(dir, before, 6, &nbefore);

    gen_script s = {.mu = PTHREAD_MUTEX_INITIALIZER};
    ckb_gen_opts o;
    gen_test_opts(&o, CKB_GEN_REFINE, 6);
    o.chains = 2;
    o.turns = 3;
    CKBT_EXPECT(gen_run(dir, &o, &s, 1) == 0, "the resumed run finishes");
    CKBT_EXPECT(s.ncalls == 6 - nbefore, "only the missing samples are asked (%d calls, %d "
                                         "records before)", s.ncalls, nbefore);
    int dup = gen_records(dir, after, 6, &nafter);
    CKBT_EXPECT(dup == 0 && nafter == 6, "each (workload, index) once: %d lines, %d extra",
                nafter, dup);
    for (int i = 0; i < 6; i++)
        if (before[i] && after[i])
            CKBT_EXPECT(!strcmp(ckb_rec_str(before[i], "finished"),
                                ckb_rec_str(after[i], "finished")),
                        "sample %d was kept, not redone", i);

    /* The same run without a kill: the same totals, sample by sample. */
    gen_script s2 = {.mu = PTHREAD_MUTEX_INITIALIZER};
    CKBT_EXPECT(gen_run(ref, &o, &s2, 0) == 0, "the uninterrupted run finishes");
    gen_records(ref, whole, 6, &nwhole);
    int correct_a = 0, correct_w = 0;
    for (int i = 0; i < 6; i++) {
        CKBT_EXPECT(after[i] && whole[i] && !strcmp(gen_status(after[i]), gen_status(whole[i])) &&
                        gen_same(ckb_json_num(after[i], "parent"), ckb_json_num(whole[i], "parent")),
                    "sample %d: %s vs %s", i, after[i] ? gen_status(after[i]) : "-",
                    whole[i] ? gen_status(whole[i]) : "-");
        correct_a += ckb_rec_correct(after[i]);
        correct_w += ckb_rec_correct(whole[i]);
    }
    CKBT_EXPECT(nwhole == 6 && correct_a == correct_w && correct_a == 4,
                "totals: %d correct after resume, %d uninterrupted", correct_a, correct_w);
    gen_records_free(before, 6);
    gen_records_free(after, 6);
    gen_records_free(whole, 6);
    gen_script_free(&s);
    gen_script_free(&s2);
}

CKBT_TEST(gen_run_refuses_a_used_folder, "quick")
{
    ckb_err err = {0};
    char dir[512];
    snprintf(dir, sizeof dir, "%s/used", ckbt_tmpdir());
    ckb_gen_opts o;
    gen_test_opts(&o, CKB_GEN_BEST_OF_N, 2);
    json_object *c = gen_config(&o);
    ckb_run *a = NULL, *b = NULL;
    CKBT_EXPECT(ckb_run_create(dir, c, &a, &err) == 0, "create: %s", err.msg);
    CKBT_EXPECT(ckb_run_create(dir, c, &b, &err) != 0 && strstr(err.msg, "not empty"),
                "a second create refuses (%s)", err.msg);
    ckb_run_close(a);
    /* A closed run's lock is free: resume takes it. */
    CKBT_EXPECT(ckb_run_resume(dir, &b, &err) == 0, "resume: %s", err.msg);
    ckb_run_close(b);
    json_object_put(c);
}

/* ---- the commands ------------------------------------------------------ */

/* Runs `ckbench ARGS` with stdout and stderr into files of the test's
 * folder; returns the exit status and the two texts (caller frees). */
static int gen_cli(const char *args, char **out, char **err)
{
    char cmd[2048], o[600], e[600];
    snprintf(o, sizeof o, "%s/cli.out", ckbt_tmpdir());
    snprintf(e, sizeof e, "%s/cli.err", ckbt_tmpdir());
    /* No key reaches a real provider from a test. */
    snprintf(cmd, sizeof cmd,
             "env -u OPENAI_API_KEY -u ANTHROPIC_API_KEY -u GEMINI_API_KEY %s %s >%s 2>%s",
             ckbt_bin(), args, o, e);
    int st = system(cmd);
    *out = ckb_read_file(o, NULL);
    *err = ckb_read_file(e, NULL);
    if (!*out)
        *out = strdup("");
    if (!*err)
        *err = strdup("");
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

CKBT_TEST(gen_prompt_command, "quick")
{
    char *out, *err;
    int rc = gen_cli("prompt 12p --size small", &out, &err);
    CKBT_EXPECT(rc == 0, "exit %d: %s", rc, err);
    CKBT_EXPECT(strstr(out, "=== system ===\n") && strstr(out, "=== user ===\n") &&
                    strstr(out, "void workload(const ckb_bf16 *x, const ckb_bf16 *scale, "
                                "ckb_bf16 *out)") &&
                    strstr(out, "static void rmsnorm_reference") &&
                    strstr(out, "Dims (size small): B=2 S=64 D=1024") &&
                    !strstr(out, "GEN-DOCS-MARKER"),
                "the one-shot prompt: roles, signature, reference, dims");
    CKBT_EXPECT(strstr(err, "chars, ~") != NULL, "its size on stderr: %s", err);
    /* The size printed is the prompt's: chars of the messages' contents. */
    long chars = strtol(err, NULL, 10);
    CKBT_EXPECT(chars > 1000 && chars < (long)strlen(out), "size %ld of %zu printed", chars,
                strlen(out));
    free(out);
    free(err);
    rc = gen_cli("prompt 12p --size small --method beam --docs-target ../tests/fixtures/gen-docs",
                 &out, &err);
    CKBT_EXPECT(rc == 0 && strstr(out, "##### plan request") &&
                    strstr(out, "## Optimization menu") && strstr(out, "GEN-DOCS-MARKER") &&
                    strstr(out, "##### implementation request") &&
                    strstr(out, "<the plan the model replied>"),
                "beam: the plan request and the implementation request, with the docs");
    free(out);
    free(err);
    rc = gen_cli("prompt 12p --size small --method refine --docs --docs-target "
                 "../tests/fixtures/gen-docs",
                 &out, &err);
    CKBT_EXPECT(rc == 0 && strstr(out, "GEN-DOCS-MARKER"), "--docs adds the documentation");
    free(out);
    free(err);
    rc = gen_cli("prompt nosuch", &out, &err);
    CKBT_EXPECT(rc == 2 && strstr(err, "unknown workload"), "an unknown workload: exit %d", rc);
    free(out);
    free(err);
}

CKBT_TEST(gen_generate_command_errors, "quick")
{
    char *out, *err, args[1024];
    int rc = gen_cli("generate --method nope --provider openai --workloads 12p", &out, &err);
    CKBT_EXPECT(rc == 2 && strstr(err, "--method"), "a bad method: exit %d (%s)", rc, err);
    free(out);
    free(err);
    rc = gen_cli("generate --method best-of-n --provider openai --model m", &out, &err);
    CKBT_EXPECT(rc == 2 && strstr(err, "--workloads"), "no workloads: exit %d (%s)", rc, err);
    free(out);
    free(err);
    rc = gen_cli("generate --method refine --provider openai --model m --workloads 12p,nosuch",
                 &out, &err);
    CKBT_EXPECT(rc == 2 && strstr(err, "unknown workload"), "an unknown workload: exit %d", rc);
    free(out);
    free(err);
    /* A provider that cannot work (no key; or not built) fails before any run is made. */
    snprintf(args, sizeof args,
             "generate --method best-of-n --provider openai --model m --workloads 12p --out "
             "%s/never",
             ckbt_tmpdir());
    rc = gen_cli(args, &out, &err);
    char never[600];
    snprintf(never, sizeof never, "%s/never", ckbt_tmpdir());
    CKBT_EXPECT(rc == 2 && access(never, F_OK) != 0, "no provider: exit %d, no run (%s)", rc,
                err);
    free(out);
    free(err);
    snprintf(args, sizeof args, "generate --resume %s/nothing-here", ckbt_tmpdir());
    rc = gen_cli(args, &out, &err);
    CKBT_EXPECT(rc == 1 && strstr(err, "not a generation run"), "resume of nothing: exit %d (%s)",
                rc, err);
    free(out);
    free(err);
}

/* Another process's attempt at the timing lock: 0 when it got it, 1 when
 * it was refused because someone holds it. */
static int gen_other_process_try_lock(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(ckb_excl_path(), O_RDWR); /* its own open: another ckbench */
        if (fd < 0)
            _exit(2);
        _exit(flock(fd, LOCK_EX | LOCK_NB) == 0 ? 0 : errno == EWOULDBLOCK ? 1 : 3);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

CKBT_TEST(gen_timing_lock_is_machine_wide, "quick")
{
    ckb_excl_lock();
    int held = gen_other_process_try_lock();
    ckb_excl_unlock();
    /* Another ckbench on this machine (a developer's, not CI's) may take it
     * in between: wait for it, as generate would. */
    int freed = gen_other_process_try_lock();
    for (int i = 0; i < 600 && freed == 1; i++) {
        usleep(100000);
        freed = gen_other_process_try_lock();
    }
    CKBT_EXPECT(held == 1, "another process is refused while we time (got %d)", held);
    CKBT_EXPECT(freed == 0, "and gets it once we are done (got %d)", freed);
}

CKBT_TEST(gen_reference_source_of_every_workload, "quick")
{
    /* Every workload's shown text carries its reference and the helpers it
     * calls: the reference matmul is shown where it is called. */
    for (int i = 0; i < ckb_workload_count(); i++) {
        const ckb_workload *w = ckb_workload_at(i);
        ckb_err err = {0};
        char *src = ckb_gen_reference_source(w, &err);
        CKBT_EXPECT(src && strstr(src, "_reference(const int64_t *d, void *const *t)"), "%s: %s",
                    w->id, src ? "no reference function in the text" : err.msg);
        if (src && strstr(src, "ckb_ref_matmul("))
            CKBT_EXPECT(strstr(src, "float *ckb_ref_matmul(const ckb_bf16 *A"),
                        "%s: the reference matmul it calls is shown", w->id);
        free(src);
    }
}

CKBT_TEST(gen_shown_file_is_what_the_prompt_shows, "quick")
{
    /* workloads/<id>/shown.md is embedded at build time and the prompt
     * carries it byte for byte. */
    for (int i = 0; i < ckb_workload_count(); i++) {
        const ckb_workload *w = ckb_workload_at(i);
        char path[1024];
        snprintf(path, sizeof path, "%s/workloads/%s/shown.md", ckb_home(), w->id);
        char *disk = ckb_read_file(path, NULL);
        const char *built = ckb_gen_shown(w);
        CKBT_EXPECT(disk && built && strcmp(disk, built) == 0,
                    "%s: the embedded text is %s", w->id,
                    !disk ? "there but not the file (missing)" : !built ? "missing" :
                            "not the file's bytes (rebuild?)");
        ckb_gen_task t = {.w = w, .size = CKB_SIZE_SMALL, .threads = 2, .reference = built};
        ckb_gen_prompt p;
        ckb_gen_prompt_oneshot(&t, &p);
        CKBT_EXPECT(disk && strstr(p.msgs[1].content, disk),
                    "%s: the prompt holds shown.md verbatim", w->id);
        ckb_gen_prompt_free(&p);
        free(disk);
    }
}

/* 1 when name is a dim of w or a tensor index (T_...): the prompt's
 * convention paragraph explains those. */
static int gen_convention_name(const ckb_workload *w, const char *name)
{
    for (int i = 0; i < w->ndims; i++)
        if (strcmp(w->dims[i].name, name) == 0)
            return 1;
    return strncmp(name, "T_", 2) == 0;
}

/* Checks that `name`, a constant of the code, is explained in prose. */
static void gen_expect_explained(const ckb_workload *w, const char *prose, const char *name)
{
    if (gen_convention_name(w, name))
        return;
    if (strncmp(name, "OP_", 3) == 0) {
        CKBT_EXPECT(strstr(prose, "`OP_*`"), "%s: %s: the OP_* names are explained", w->id,
                    name);
        return;
    }
    const char *p = prose;
    size_t n = strlen(name);
    int found = 0;
    for (; (p = strstr(p, name)) && !found; p++)
        found = (p == prose || !(isalnum((unsigned char)p[-1]) || p[-1] == '_')) &&
                !(isalnum((unsigned char)p[n]) || p[n] == '_');
    CKBT_EXPECT(found, "%s: the constant %s of its reference is not explained before the code",
                w->id, name);
}

CKBT_TEST(gen_shown_constants_are_explained, "quick")
{
    /* Every named constant of a shown reference (#define, enum members that
     * are neither a dim nor a tensor index) is named in the text above the
     * code, which holds an Inputs paragraph; no generator leftover remains. */
    for (int i = 0; i < ckb_workload_count(); i++) {
        const ckb_workload *w = ckb_workload_at(i);
        const char *text = ckb_gen_shown(w);
        const char *code = text ? strstr(text, "```c\n") : NULL;
        CKBT_EXPECT(code, "%s: no C block in shown.md", w->id);
        if (!code)
            continue;
        char *prose = strndup(text, (size_t)(code - text));
        CKBT_EXPECT(strstr(prose, "\nInputs ("), "%s: an Inputs paragraph", w->id);
        CKBT_EXPECT(!strstr(code, "STREAM_") && !strstr(code, "_SPREAD") &&
                        !strstr(code, "MIN_GAP") && !strstr(code, "MAX_LABEL_LOGIT") &&
                        !strstr(code, "_create_inputs") && !strstr(code, "_reference_without"),
                    "%s: input-generator names in the shown code", w->id);
        for (const char *p = code; (p = strstr(p, "#define ")); p++) {
            char name[96];
            if (sscanf(p + 8, "%95[A-Za-z0-9_]", name) == 1)
                gen_expect_explained(w, prose, name);
        }
        for (const char *p = code; (p = strstr(p, "enum {")); p++) {
            const char *end = strchr(p, '}');
            for (const char *q = p + 6; end && q < end;) {
                char name[96];
                while (q < end && !(isalpha((unsigned char)*q) || *q == '_'))
                    q++;
                if (q >= end || sscanf(q, "%95[A-Za-z0-9_]", name) != 1)
                    break;
                gen_expect_explained(w, prose, name);
                q = strchr(q, ',');
                if (!q)
                    break;
            }
        }
        free(prose);
    }
}

CKBT_TEST(gen_prompt_states_judge_sizes_threads_roofs, "quick")
{
    /* Next to the signature: the judge (the baseline), this workload's
     * atol/rtol, the dims it is compiled at, the thread budget and the
     * host's compute roof (the fastest unit) and bandwidth. */
    const ckb_workload *w = ckb_workload_find("12p");
    ckb_gen_task t = {.w = w, .size = CKB_SIZE_SMALL, .threads = 3,
                      .reference = ckb_gen_shown(w)};
    ckb_machine_probe(3, &t.machine);
    t.machine.f32_gflops = 347;
    t.machine.bf16_gflops = 171;
    t.machine.bw_gbs = 25;
    t.measured = 1;
    ckb_gen_prompt p;
    ckb_gen_prompt_oneshot(&t, &p);
    const char *sys = p.msgs[0].content;
    const char *sig = strstr(sys, "void workload(");
    char tol[128];
    snprintf(tol, sizeof tol, "atol = %g, rtol = %g", ckb_workload_atol(w), ckb_workload_rtol(w));
    CKBT_EXPECT(sig && strstr(sig, "The judge: the BASELINE's output"), "the judge after the "
                                                                       "signature:\n%s", sys);
    CKBT_EXPECT(strstr(sys, tol) && strstr(tol, "rtol = 0.02"), "12p's own tolerance (%s)", tol);
    CKBT_EXPECT(strstr(sys, "at size `small` only: B=2 S=64 D=1024"), "the dims compiled at");
    CKBT_EXPECT(strstr(sys, "Threads: 3"), "the thread budget");
    CKBT_EXPECT(strstr(sys, "compute roof: 347 GFLOP/s from the f32 FMA (vfmadd), measured by "
                            "a register-only loop") &&
                    strstr(sys, "a ceiling no real kernel reaches") &&
                    strstr(sys, "memory roof: 25 GB/s from DRAM"),
                "the roof is the faster unit (f32 FMA here), how it was measured, and the "
                "memory roof of the working set's level:\n%s", sys);
    ckb_gen_prompt_free(&p);
    /* The roof is the profile's fastest unit for the suite's bf16 work, named
     * as the result names it. */
    t.machine.bf16_amx_gflops = 5910, t.machine.bf16_gflops = 5910;
    ckb_gen_prompt_oneshot(&t, &p);
    CKBT_EXPECT(strstr(p.msgs[0].content, "compute roof: 5910 GFLOP/s from the AMX (tdpbf16ps)") &&
                    strstr(p.msgs[0].content, "Below it: f32 FMA (vfmadd) 347 GFLOP/s"),
                "AMX:\n%s", p.msgs[0].content);
    ckb_gen_prompt_free(&p);
    t.machine.bf16_amx_gflops = 0, t.machine.bf16_gflops = 700, t.machine.bf16_dot_gflops = 700;
    ckb_gen_prompt_oneshot(&t, &p);
    CKBT_EXPECT(strstr(p.msgs[0].content, "compute roof: 700 GFLOP/s from the bf16 dot (vdpbf16ps)"),
                "dot:\n%s", p.msgs[0].content);
    CKBT_EXPECT(!strstr(p.msgs[0].content, "bf16 unit") && !strstr(p.msgs[0].content, "bf16 peak"),
                "one vocabulary:\n%s", p.msgs[0].content);
    ckb_gen_prompt_free(&p);
    t.machine.bf16_gflops = 171, t.machine.bf16_dot_gflops = 171;
    /* Unmeasured: no figure is made up. */
    t.measured = 0;
    ckb_gen_prompt_oneshot(&t, &p);
    CKBT_EXPECT(strstr(p.msgs[0].content, "not measured yet"), "an unmeasured host says so");
    ckb_gen_prompt_free(&p);
}

CKBT_TEST(gen_shown_hash_is_ckbench_h, "quick")
{
    /* 38k's dropout mask: ckb_hash64 and ckb_uniform are shown exactly as
     * include/ckbench.h defines them (constants included). */
    char path[1024];
    snprintf(path, sizeof path, "%s/include/ckbench.h", ckb_home());
    char *h = ckb_read_file(path, NULL);
    const char *a = h ? strstr(h, "static inline uint64_t ckb_hash64") : NULL;
    const char *b = a ? strstr(a, "static inline float ckb_uniform") : NULL;
    const char *e = b ? strstr(b, "\n}\n") : NULL;
    CKBT_EXPECT(e, "ckbench.h defines ckb_hash64 then ckb_uniform");
    if (e) {
        char *defs = strndup(a, (size_t)(e + 3 - a));
        for (int i = 0; i < ckb_workload_count(); i++) {
            const ckb_workload *w = ckb_workload_at(i);
            const char *s = ckb_gen_shown(w);
            const char *code = strstr(s, "```c\n");
            if (code && (strstr(code, "ckb_uniform(") || strstr(code, "ckb_hash64(")))
                CKBT_EXPECT(strstr(s, defs), "%s uses ckb_hash64: its definition is shown",
                            w->id);
        }
        CKBT_EXPECT(strstr(ckb_gen_shown(ckb_workload_find("38k")), "0x94d049bb133111ebull"),
                    "38k shows the constants");
        free(defs);
    }
    free(h);
}

/* An eval result as `ckbench eval` writes it, with the fields feedback reads. */
static json_object *gen_eval_json(const char *status, const char *detail, const char *message,
                                  int disturbed)
{
    char text[4096];
    snprintf(text, sizeof text,
             "{\"workload\": \"12p_RMSNorm\", \"status\": \"%s\", %s%s%s \"message\": \"%s\", "
             "\"candidate\": {\"median_ms\": 2.0, \"mean_ms\": 2.1, \"std_ms\": 0.15, "
             "\"min_ms\": 1.9, \"max_ms\": 2.6, \"n\": 50}, "
             "\"baseline\": {\"median_ms\": 3.0, \"mean_ms\": 3.1, \"std_ms\": 0.2, "
             "\"min_ms\": 2.8, \"max_ms\": 3.7, \"n\": 50}, "
             "\"flops\": 3.4e10, \"bytes\": 1e6, \"arithmetic_intensity\": 34000, "
             "\"gflops\": 17000, \"peak_gflops\": 171, \"pct_of_peak\": 9941, "
             "\"timing_disturbed\": %s, \"steal_pct\": 2, \"other_processes_pct\": 40, "
             "\"timing_runs\": 3}",
             status, detail ? "\"detail\": \"" : "", detail ? detail : "", detail ? "\"," : "",
             message, disturbed ? "true" : "false");
    return json_tokener_parse(text);
}

CKBT_TEST(gen_feedback_timing_noise_and_roof, "quick")
{
    /* The roof quoted is the profile's fastest unit (f32 FMA 347 over a
     * 171 bf16 dot), the spread of both medians is given, and a disturbed
     * timing is said to be one, with no figure to improve on. */
    ckb_machine m = {0};
    m.f32_gflops = 347, m.bf16_gflops = 171, m.bw_gbs = 25;
    json_object *e = gen_eval_json("ok", NULL, "", 0);
    ckb_strbuf sb = {0};
    ckb_gen_feedback(&sb, "ok", e, &m);
    CKBT_EXPECT(strstr(sb.data, "speedup 1.5x") && strstr(sb.data, "min 1.9, max 2.6, std 0.15") &&
                    strstr(sb.data, "min 2.8, max 3.7, std 0.2") && strstr(sb.data, "noise"),
                "both medians with their spread:\n%s", sb.data);
    CKBT_EXPECT(strstr(sb.data, "of the compute roof (347 GFLOP/s, f32 FMA (vfmadd))") &&
                    strstr(sb.data, "of the memory roof (25 GB/s, DRAM)") &&
                    !strstr(sb.data, "171"),
                "the roof is the fastest unit, not the bf16 dot:\n%s", sb.data);
    ckb_strbuf_free(&sb);
    json_object_put(e);
    e = gen_eval_json("ok", NULL, "", 1);
    ckb_gen_feedback(&sb, "ok", e, &m);
    CKBT_EXPECT(strstr(sb.data, "DISTURBED") && strstr(sb.data, "no speedup figure") &&
                    !strstr(sb.data, "speedup 1.5x") && !strstr(sb.data, "roofline allows"),
                "a disturbed timing is said to be so, with no figure:\n%s", sb.data);
    ckb_strbuf_free(&sb);
    json_object_put(e);
    /* No profile: no roof is made up. */
    e = gen_eval_json("ok", NULL, "", 0);
    ckb_gen_feedback(&sb, "ok", e, NULL);
    CKBT_EXPECT(!strstr(sb.data, "roof"), "no profile, no roof:\n%s", sb.data);
    ckb_strbuf_free(&sb);
    json_object_put(e);
}

CKBT_TEST(gen_feedback_timed_output_names_call_and_element, "quick")
{
    /* The evaluator's message for a lazy timed call, as src/eval/eval_timing.c
     * words it: the feedback names the call and the worst element. */
    json_object *e = gen_eval_json(
        "cheat_detected", "timed_output",
        "correct when checked, but timed call 7 of 50 gave a wrong out: 12 elements outside "
        "tolerance; worst at index 4321: got 0.5, expected -1.25",
        0);
    ckb_strbuf sb = {0};
    ckb_gen_feedback(&sb, "cheat_detected", e, NULL);
    CKBT_EXPECT(strstr(sb.data, "timed call 7 of 50") && strstr(sb.data, "wrong out:") &&
                    strstr(sb.data, "flat index 4321") &&
                    strstr(sb.data, "got 0.5, expected -1.25") &&
                    strstr(sb.data, "12 elements"),
                "the call and the worst element:\n%s", sb.data);
    ckb_strbuf_free(&sb);
    json_object_put(e);
}

CKBT_TEST(gen_prompt_feedback_command, "quick")
{
    /* `ckbench prompt W --feedback EVAL.json` prints the feedback text of a
     * recorded evaluation, from an eval result or a run record. */
    char path[512], *out, *err, args[700];
    json_object *e = gen_eval_json("wrong_result", NULL, "3 of 131072 elements wrong", 0);
    json_object_object_add(e, "max_abs_err", json_object_new_double(0.75));
    snprintf(path, sizeof path, "%s/eval.json", ckbt_tmpdir());
    json_object_to_file(path, e);
    snprintf(args, sizeof args, "prompt 12p --feedback %s", path);
    int rc = gen_cli(args, &out, &err);
    ckb_strbuf sb = {0};
    ckb_gen_feedback(&sb, "wrong_result", e, NULL);
    CKBT_EXPECT(rc == 0 && strstr(out, "Status: wrong_result") &&
                    strstr(out, "Max abs error: 0.75") &&
                    strstr(out, "3 of 131072 elements wrong"),
                "exit %d, out:\n%s\nerr: %s", rc, out, err);
    free(out);
    free(err);
    /* A run record: the evaluation under "eval", the status beside it. */
    json_object *rec = json_object_new_object();
    json_object_object_add(rec, "status", json_object_new_string("wrong_result"));
    json_object_object_add(rec, "eval", e);
    json_object_to_file(path, rec);
    rc = gen_cli(args, &out, &err);
    CKBT_EXPECT(rc == 0 && strstr(out, "Status: wrong_result"), "a record: exit %d\n%s", rc, out);
    free(out);
    free(err);
    json_object_put(rec);
    ckb_strbuf_free(&sb);
    snprintf(args, sizeof args, "prompt 12p --feedback %s/none.json", ckbt_tmpdir());
    rc = gen_cli(args, &out, &err);
    CKBT_EXPECT(rc == 1 && strstr(err, "cannot read"), "a missing file: exit %d (%s)", rc, err);
    free(out);
    free(err);
}

/* The name of the function in code defined as NAME(const int64_t *d, void
 * *const *t) last: the reference the shown text ends with. */
static int gen_shown_entry_name(const char *code, char *name, size_t n)
{
    const char *sig = "_reference(const int64_t *d, void *const *t)\n{", *hit = NULL;
    for (const char *p = code; (p = strstr(p, sig)); p++)
        hit = p;
    if (!hit) {
        sig = "_reference(const int64_t *d, void *const *t) {";
        for (const char *p = code; (p = strstr(p, sig)); p++)
            hit = p;
    }
    if (!hit)
        return -1;
    const char *b = hit;
    while (b > code && (isalnum((unsigned char)b[-1]) || b[-1] == '_'))
        b--;
    snprintf(name, n, "%.*s_reference", (int)(hit - b), b);
    return 0;
}

CKBT_TEST(gen_shown_reference_is_the_reference, "full")
{
    /* The C shown to a model is the workload's reference: compiled on its
     * own (with ckbench.h and the C headers only) and run on the same
     * inputs at small size, it gives the registered reference's outputs
     * (bit for bit but for FMA contraction). Guards the shown copy against
     * drifting from workload.c. */
    for (int wi = 0; wi < ckb_workload_count(); wi++) {
        const ckb_workload *w = ckb_workload_at(wi);
        const char *text = ckb_gen_shown(w);
        const char *open = text ? strstr(text, "```c\n") : NULL;
        const char *close = open ? strstr(open + 5, "\n```") : NULL;
        char name[128];
        if (!close || gen_shown_entry_name(open, name, sizeof name) != 0) {
            CKBT_EXPECT(0, "%s: no reference function in the shown code", w->id);
            continue;
        }
        ckb_strbuf src = {0};
        ckb_strbuf_printf(&src, "#include <float.h>\n#include <math.h>\n#include <omp.h>\n"
                                "#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
                                "#include <string.h>\n#include \"ckbench.h\"\n"
                                "%.*s\nvoid ckb_shown_entry(const int64_t *d, void *const *t) "
                                "{ %s(d, t); }\n",
                          (int)(close + 1 - (open + 5)), open + 5, name);
        char c[512], so[512], inc[1100];
        snprintf(c, sizeof c, "%s/shown-%s.c", ckbt_tmpdir(), w->id);
        snprintf(so, sizeof so, "%s/shown-%s.so", ckbt_tmpdir(), w->id);
        snprintf(inc, sizeof inc, "-I%s/include", ckb_home());
        ckb_write_file_atomic(c, src.data, src.len);
        ckb_strbuf_free(&src);
        char *argv[] = {(char *)ckb_compiler(), "-std=gnu11", "-O2", "-march=native", "-fopenmp",
                        "-shared", "-fPIC", inc, c, "-o", so, "-lm", NULL};
        ckb_proc_result r;
        int ok = ckb_proc_run(argv, 120, 1 << 20, &r) == 0 && r.exited && r.exit_code == 0;
        CKBT_EXPECT(ok, "%s: the shown code does not compile on its own:\n%.1500s", w->id,
                    r.output);
        ckb_proc_result_free(&r);
        if (!ok)
            continue;
        void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
        void (*entry)(const int64_t *, void *const *) =
            h ? (void (*)(const int64_t *, void *const *))dlsym(h, "ckb_shown_entry") : NULL;
        CKBT_EXPECT(entry, "%s: cannot load %s: %s", w->id, so, dlerror());
        if (!entry)
            continue;
        for (int cf = 0; cf < ckb_workload_config_count(w); cf++) {
            int64_t dims[CKB_MAX_DIMS];
            void *a[CKB_MAX_TENSORS], *b[CKB_MAX_TENSORS];
            ckb_workload_config_dims(w, CKB_SIZE_SMALL, cf, dims);
            if (ckb_tensors_alloc(w, dims, a) != 0 || ckb_tensors_alloc(w, dims, b) != 0)
                abort();
            w->create_inputs(dims, 7, a);
            w->create_inputs(dims, 7, b);
            w->reference(dims, a);
            entry(dims, b);
            for (int i = 0; i < w->ntensors; i++) {
                const ckb_tensor *x = &w->tensors[i];
                if (x->role != CKB_OUT || memcmp(a[i], b[i], ckb_tensor_bytes(x, dims)) == 0)
                    continue;
                /* Not bit-exact: the same C can still round differently where
                 * the compiler contracts a*b+c into an FMA across what was a
                 * branch in workload.c (-ffp-contract=fast). Allowed only as a
                 * few elements inside the tolerance. */
                ckb_check k;
                int64_t n = ckb_tensor_numel(x, dims);
                ckb_check_allclose(x->dtype, b[i], a[i], n, ckb_workload_config_atol(w, cf),
                                   ckb_workload_config_rtol(w, cf), &k);
                int64_t diff = 0;
                size_t es = ckb_tensor_bytes(x, dims) / (size_t)n;
                for (int64_t e = 0; e < n; e++)
                    diff += memcmp((char *)a[i] + e * es, (char *)b[i] + e * es, es) != 0;
                CKBT_EXPECT(k.ok && diff * 100 <= n,
                            "%s%s%s: the shown reference's %s differs from the reference's "
                            "in %lld of %lld elements (%s the tolerance)",
                            w->id, cf ? "/" : "", cf ? ckb_workload_config_name(w, cf) : "",
                            x->name, (long long)diff, (long long)n, k.ok ? "inside" : "outside");
            }
            ckb_tensors_free(w, a);
            ckb_tensors_free(w, b);
        }
        dlclose(h);
    }
}

/* The index of w's tensor or dim called name; -1 when none. */
static int gen_tensor(const ckb_workload *w, const char *name)
{
    for (int i = 0; i < w->ntensors; i++)
        if (strcmp(w->tensors[i].name, name) == 0)
            return i;
    return -1;
}

static int64_t gen_dim(const ckb_workload *w, const int64_t *dims, const char *name)
{
    for (int i = 0; i < w->ndims; i++)
        if (strcmp(w->dims[i].name, name) == 0)
            return dims[i];
    return -1;
}

/* 1 when v[0..n) is a permutation of 0..n-1. */
static int gen_is_permutation(const int32_t *v, int64_t n)
{
    char *seen = calloc((size_t)n, 1);
    int ok = seen != NULL;
    for (int64_t i = 0; ok && i < n; i++) {
        ok = v[i] >= 0 && v[i] < n && !seen[v[i]];
        if (ok)
            seen[v[i]] = 1;
    }
    free(seen);
    return ok;
}

CKBT_TEST(gen_shown_inputs_invariants_hold, "quick")
{
    /* The invariants the Inputs paragraphs state, on the inputs
     * create_inputs makes (small size, two seeds, every configuration):
     * 10p's routing gap, the
     * page tables of 6p/7p, 7p's num_seqs, the group sizes of 11p/14p. */
    static const char *const ids[] = {"10p", "6p", "7p", "11p", "14p"};
    for (size_t k = 0; k < sizeof ids / sizeof *ids; k++) {
        const ckb_workload *w = ckb_workload_find(ids[k]);
        CKBT_EXPECT(ckb_gen_shown(w) && strstr(ckb_gen_shown(w), "\nInputs ("), "%s: Inputs",
                    ids[k]);
        for (int cfs = 0; cfs < 2 * ckb_workload_config_count(w); cfs++) {
            const int cf = cfs / 2;
            const uint64_t seed = 1 + (uint64_t)(cfs % 2);
            int64_t d[CKB_MAX_DIMS];
            void *t[CKB_MAX_TENSORS];
            ckb_workload_config_dims(w, CKB_SIZE_SMALL, cf, d);
            if (ckb_tensors_alloc(w, d, t) != 0)
                abort();
            w->create_inputs(d, seed, t);
            if (k == 0) { /* 10p: K-th and (K+1)-th exact router logits >= 0.1 apart */
                const int64_t tokens = gen_dim(w, d, "B") * gen_dim(w, d, "S");
                const int64_t e = gen_dim(w, d, "E"), n = gen_dim(w, d, "N"),
                              kk = gen_dim(w, d, "K");
                const ckb_bf16 *x = t[gen_tensor(w, "x")], *r = t[gen_tensor(w, "router")];
                int64_t close = 0;
                for (int64_t i = 0; i < tokens; i++) {
                    double l[64];
                    for (int64_t j = 0; j < n; j++) {
                        l[j] = 0;
                        for (int64_t c = 0; c < e; c++)
                            l[j] += (double)ckb_bf16_to_f32(x[i * e + c]) *
                                    ckb_bf16_to_f32(r[c * n + j]);
                    }
                    for (int64_t a = 0; a < n; a++) /* sort descending */
                        for (int64_t b = a + 1; b < n; b++)
                            if (l[b] > l[a]) {
                                double tmp = l[a];
                                l[a] = l[b], l[b] = tmp;
                            }
                    close += l[kk - 1] - l[kk] < 0.1;
                }
                CKBT_EXPECT(close == 0, "10p seed %llu: %lld tokens with a routing gap < 0.1",
                            (unsigned long long)seed, (long long)close);
            } else if (k <= 2) { /* 6p, 7p: the page table is a permutation of the pages */
                int ti = gen_tensor(w, "page_indices");
                const int64_t np = gen_dim(w, d, "NS") * gen_dim(w, d, "PPS");
                CKBT_EXPECT(np == gen_dim(w, d, "NP") && gen_is_permutation(t[ti], np),
                            "%s seed %llu: page_indices is not a permutation of the %lld pages",
                            ids[k], (unsigned long long)seed, (long long)np);
                const int32_t *kv = t[gen_tensor(w, "kv_lens")];
                const int64_t ns = gen_dim(w, d, "NS");
                const int64_t len = gen_dim(w, d, "PPS") * gen_dim(w, d, "PS");
                if (k == 1)
                    for (int64_t s = 0; s < ns; s++)
                        CKBT_EXPECT(kv[s] >= 1 && kv[s] <= len, "6p: kv_lens[%lld] = %d",
                                    (long long)s, kv[s]);
                if (k == 2) { /* the serving step: NDEC decodes, then chunks, packed */
                    const int32_t nseq = *(const int32_t *)t[gen_tensor(w, "num_seqs")];
                    const int32_t *cu = t[gen_tensor(w, "cu_q_lens")];
                    const int64_t ndec = gen_dim(w, d, "NDEC"), chunk = gen_dim(w, d, "CHUNK");
                    const int64_t nt = gen_dim(w, d, "NT");
                    int64_t bad = 0;
                    for (int64_t s = 0; s < ns; s++) {
                        const int64_t ql = cu[s + 1] - cu[s];
                        bad += s < ndec ? ql != 1 : s < nseq ? ql < 1 || ql > chunk : ql != 0;
                        bad += s < nseq ? kv[s] < ql || kv[s] > len : kv[s] != 0;
                    }
                    CKBT_EXPECT(nseq == ndec + (nt - ndec + chunk - 1) / chunk && nseq <= ns &&
                                    cu[0] == 0 && cu[ns] == nt && bad == 0,
                                "7p/%s: num_seqs %d for NS %lld, %lld slots off the scenario",
                                ckb_workload_config_name(w, cf), nseq, (long long)ns,
                                (long long)bad);
                }
            } else { /* 11p: one empty group; 14p: none; all <= CAP, summing to M */
                const int32_t *g = t[gen_tensor(w, "group_sizes")];
                const int64_t ng = gen_dim(w, d, "G"), cap = gen_dim(w, d, "CAP");
                int64_t sum = 0, empty = 0, over = 0;
                for (int64_t i = 0; i < ng; i++)
                    sum += g[i], empty += g[i] == 0, over += g[i] < 0 || g[i] > cap;
                CKBT_EXPECT(sum == gen_dim(w, d, "M") && over == 0 && empty == (k == 3),
                            "%s seed %llu: group sizes sum %lld (M %lld), %lld empty, %lld "
                            "outside [0, CAP]",
                            ids[k], (unsigned long long)seed, (long long)sum,
                            (long long)gen_dim(w, d, "M"), (long long)empty, (long long)over);
            }
            ckb_tensors_free(w, t);
        }
    }
}
