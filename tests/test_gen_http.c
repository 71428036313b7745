/*
 * Generation over real HTTP: `ckbench generate` with the openai provider
 * against the fake model API on 127.0.0.1 (tests/fake_llm.c), each method
 * end to end on 12p_RMSNorm at small size; a 429 retried, a malformed body
 * recorded as a sample; and `--provider replay` reproducing a run's replies.
 *
 * The fake model answers by what the prompt holds, as a model revising its
 * work would: a plan request gets a strategy, a kernel that did not compile
 * gets the fixed one, a correct kernel gets the faster one, a first request
 * the broken one.
 */
#include <json-c/json.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "core/fsutil.h"
#include "fake_llm.h"
#include "gen_replies.h"
#include "harness.h"

typedef struct {
    pthread_mutex_t mu;
    int n;           /* requests answered */
    int faults;      /* answer request 0 with a 429 and request 2 with a bad body */
} http_model;

/* The prompt's text: the request's messages' contents, concatenated. */
static char *http_prompt(const char *body)
{
    json_object *j = json_tokener_parse(body), *msgs;
    size_t cap = strlen(body) + 1, len = 0;
    char *out = calloc(1, cap);
    if (j && json_object_object_get_ex(j, "messages", &msgs))
        for (size_t i = 0; i < json_object_array_length(msgs); i++) {
            json_object *m = json_object_array_get_idx(msgs, i), *c;
            if (json_object_object_get_ex(m, "content", &c)) {
                const char *t = json_object_get_string(c);
                size_t tl = strlen(t);
                if (len + tl + 1 < cap) {
                    memcpy(out + len, t, tl);
                    len += tl;
                }
            }
        }
    json_object_put(j);
    return out;
}

static char *http_answer(void *ctx, const ckbt_fake_request *rq, int *code)
{
    http_model *m = ctx;
    pthread_mutex_lock(&m->mu);
    int k = m->n++;
    pthread_mutex_unlock(&m->mu);
    if (m->faults && k == 0) {
        *code = 429;
        return strdup("{\"error\": {\"message\": \"slow down\"}}");
    }
    if (m->faults && k == 2)
        return strdup("<html>gateway hiccup</html>");
    char *prompt = http_prompt(rq->body);
    const char *reply = ckbt_gen_broken;
    if (strstr(prompt, "## Optimization menu"))
        reply = "STRATEGY: 1\nSplit the rows across the threads; vectorise both passes.\n";
    else if (strstr(prompt, "Compiler output"))
        reply = ckbt_gen_correct;
    else if (strstr(prompt, "Status: ok"))
        reply = ckbt_gen_fast;
    else if (m->faults)
        reply = k == 1 ? ckbt_gen_broken : ckbt_gen_correct;
    free(prompt);
    return ckbt_fake_openai_body(reply, 120, (long)strlen(reply) / 4, "fake-coder-1");
}

/* `ckbench generate ARGS` with the fake model's URL; its exit status. */
static int http_generate(ckbt_fake_llm *f, const char *args, const char *dir)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             /* the methods are under test, not the machine's quiet: no timing
              * counts as disturbed (test_keep.c covers disturbed ones) */
             "env -u OPENAI_API_KEY -u ANTHROPIC_API_KEY -u GEMINI_API_KEY CKB_RETRY_BASE_MS=10 "
             "CKBENCH_MAX_DISTURBED_PCT=1e9 "
             "%s generate --provider openai --base-url %s/v1 --model fake-coder-1 "
             "--workloads 12p --size small --warmup 1 --iters 3 --no-expert --jobs 1 "
             "--concurrency 1 --out %s %s >%s.out 2>%s.err",
             ckbt_bin(), ckbt_fake_llm_url(f), dir, args, dir, dir);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The run's records by index (NULL where missing); the number of lines. */
static int http_records(const char *dir, json_object **rec, int budget)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/records.jsonl", dir);
    char *text = ckb_read_file(path, NULL);
    int lines = 0;
    memset(rec, 0, sizeof *rec * (size_t)budget);
    for (char *l = text, *nl; l && (nl = strchr(l, '\n')); l = nl + 1) {
        *nl = '\0';
        json_object *j = json_tokener_parse(l), *v;
        lines++;
        int i = j && json_object_object_get_ex(j, "index", &v) ? json_object_get_int(v) : -1;
        if (i >= 0 && i < budget && !rec[i])
            rec[i] = j;
        else
            json_object_put(j);
    }
    free(text);
    return lines;
}

static const char *http_field(json_object *rec, const char *key)
{
    json_object *v;
    if (!rec || !json_object_object_get_ex(rec, key, &v) || !v)
        return "(null)";
    return json_object_get_string(v);
}

static void http_free(json_object **rec, int n)
{
    for (int i = 0; i < n; i++)
        json_object_put(rec[i]);
}

static int http_count(json_object **rec, int n, const char *status)
{
    int c = 0;
    for (int i = 0; i < n; i++)
        c += strcmp(http_field(rec[i], "status"), status) == 0;
    return c;
}

CKBT_TEST(gen_http_best_of_n_then_replay, "full")
{
    http_model m = {.mu = PTHREAD_MUTEX_INITIALIZER, .faults = 1};
    ckbt_fake_llm *f = ckbt_fake_llm_start_fn(http_answer, &m);
    CKBT_EXPECT(f != NULL, "the fake model starts");
    if (!f)
        return;
    char dir[512], again[600];
    snprintf(dir, sizeof dir, "%s/http-bon", ckbt_tmpdir());
    int rc = http_generate(f, "--method best-of-n --budget 4", dir);
    CKBT_EXPECT(rc == 0, "generate exits 0, got %d", rc);
    /* 4 samples: the first retried after its 429 */
    CKBT_EXPECT(ckbt_fake_llm_nrequests(f) == 5, "5 requests, got %d",
                ckbt_fake_llm_nrequests(f));
    const ckbt_fake_request *rq = ckbt_fake_llm_request(f, 1);
    CKBT_EXPECT(rq && strcmp(rq->path, "/v1/chat/completions") == 0 &&
                    strstr(rq->body, "\"fake-coder-1\"") && strstr(rq->body, "workload"),
                "a chat-completions request with the model and the task");
    json_object *rec[4], *rep[4];
    int lines = http_records(dir, rec, 4);
    CKBT_EXPECT(lines == 4, "4 records, got %d", lines);
    CKBT_EXPECT(http_count(rec, 4, "compile_error") == 1 &&
                    http_count(rec, 4, "provider_error") == 1 && http_count(rec, 4, "ok") == 2,
                "one compile error, one malformed reply, two correct kernels");
    for (int i = 0; i < 4; i++)
        if (strcmp(http_field(rec[i], "reply_status"), "malformed") == 0)
            CKBT_EXPECT(strcmp(http_field(rec[i], "status"), "provider_error") == 0,
                        "a malformed body is a provider_error sample");
    int retried = 0;
    for (int i = 0; i < 4; i++)
        retried += strcmp(http_field(rec[i], "attempts"), "2") == 0;
    CKBT_EXPECT(retried == 1, "one sample took two attempts (the 429), got %d", retried);
    CKBT_EXPECT(strcmp(http_field(rec[0], "tokens_in"), "120") == 0 &&
                    strcmp(http_field(rec[0], "model_reported"), "fake-coder-1") == 0,
                "tokens and the reported model are recorded");

    /* Replay: the same run from its records, with no model at all. */
    snprintf(again, sizeof again, "%s-replay", dir);
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "CKBENCH_MAX_DISTURBED_PCT=1e9 %s generate --provider replay --replay %s --model fake-coder-1 --method best-of-n "
             "--budget 4 --workloads 12p --size small --warmup 1 --iters 3 --no-expert "
             "--jobs 1 --concurrency 1 --out %s >%s.out 2>%s.err",
             ckbt_bin(), dir, again, again, again);
    int st = system(cmd);
    CKBT_EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the replay exits 0");
    lines = http_records(again, rep, 4);
    CKBT_EXPECT(lines == 4, "the replay has 4 records, got %d", lines);
    static const char *const same[] = {"key",       "prompt_sha256", "reply_status", "reply",
                                       "code",      "tokens_in",     "tokens_out",   "cost_usd",
                                       "attempts",  "status",        "correct",      "model_reported"};
    for (int i = 0; i < 4; i++)
        for (size_t k = 0; k < sizeof same / sizeof *same; k++)
            CKBT_EXPECT(strcmp(http_field(rec[i], same[k]), http_field(rep[i], same[k])) == 0,
                        "sample %d: %s differs in the replay", i, same[k]);
    http_free(rec, 4);
    http_free(rep, 4);
    ckbt_fake_llm_stop(f);
}

/* A refine chain over HTTP; with docs, the documentation is in every prompt. */
static void http_refine(int docs)
{
    http_model m = {.mu = PTHREAD_MUTEX_INITIALIZER};
    ckbt_fake_llm *f = ckbt_fake_llm_start_fn(http_answer, &m);
    CKBT_EXPECT(f != NULL, "the fake model starts");
    if (!f)
        return;
    char dir[512];
    snprintf(dir, sizeof dir, "%s/http-refine%s", ckbt_tmpdir(), docs ? "-docs" : "");
    int rc = http_generate(f, docs ? "--method refine-docs --chains 1 --turns 3"
                                   : "--method refine --chains 1 --turns 3",
                           dir);
    CKBT_EXPECT(rc == 0, "generate exits 0, got %d", rc);
    json_object *rec[3];
    int lines = http_records(dir, rec, 3);
    CKBT_EXPECT(lines == 3, "3 records, got %d", lines);
    static const char *const want[] = {"compile_error", "ok", "ok"};
    for (int i = 0; i < 3; i++)
        CKBT_EXPECT(strcmp(http_field(rec[i], "status"), want[i]) == 0, "turn %d: %s, want %s",
                    i, http_field(rec[i], "status"), want[i]);
    CKBT_EXPECT(ckbt_fake_llm_nrequests(f) == 3, "3 requests, got %d",
                ckbt_fake_llm_nrequests(f));
    const ckbt_fake_request *second = ckbt_fake_llm_request(f, 1);
    CKBT_EXPECT(second && strstr(second->body, "this is not C"),
                "turn 1 gets turn 0's code and its compiler error");
    for (int i = 0; i < 3; i++) {
        const ckbt_fake_request *r = ckbt_fake_llm_request(f, i);
        int has_docs = r && strstr(r->body, "Functions you may call") != NULL;
        CKBT_EXPECT(has_docs == docs, "request %d: documentation %s", i,
                    docs ? "missing" : "present without refine-docs");
    }
    http_free(rec, 3);
    ckbt_fake_llm_stop(f);
}

CKBT_TEST(gen_http_refine, "full") { http_refine(0); }
CKBT_TEST(gen_http_refine_docs, "full") { http_refine(1); }

CKBT_TEST(gen_http_beam, "full")
{
    http_model m = {.mu = PTHREAD_MUTEX_INITIALIZER};
    ckbt_fake_llm *f = ckbt_fake_llm_start_fn(http_answer, &m);
    CKBT_EXPECT(f != NULL, "the fake model starts");
    if (!f)
        return;
    char dir[512];
    snprintf(dir, sizeof dir, "%s/http-beam", ckbt_tmpdir());
    int rc = http_generate(f, "--method beam --beam-width 1 --beam-candidates 2 --budget 6", dir);
    CKBT_EXPECT(rc == 0, "generate exits 0, got %d", rc);
    json_object *rec[6];
    int lines = http_records(dir, rec, 6);
    CKBT_EXPECT(lines == 6, "6 records, got %d", lines);
    int plans = 0, optimize = 0;
    for (int i = 0; i < ckbt_fake_llm_nrequests(f); i++) {
        const ckbt_fake_request *r = ckbt_fake_llm_request(f, i);
        plans += r && strstr(r->body, "Optimization menu") != NULL;
    }
    for (int i = 0; i < 6; i++)
        optimize += strcmp(http_field(rec[i], "phase"), "optimize") == 0;
    /* every sample is a plan call then an implementation */
    CKBT_EXPECT(plans == 6 && ckbt_fake_llm_nrequests(f) == 12, "6 plans in 12 requests, got %d/%d",
                plans, ckbt_fake_llm_nrequests(f));
    CKBT_EXPECT(http_count(rec, 6, "ok") >= 1 && optimize >= 1,
                "a correct kernel, then the optimization phase (ok %d, optimize %d)",
                http_count(rec, 6, "ok"), optimize);

    /* Replay answers the plan calls too (their keys are "<w>#<i>/plan"). */
    char again[600], cmd[4096];
    snprintf(again, sizeof again, "%s-replay", dir);
    snprintf(cmd, sizeof cmd,
             "CKBENCH_MAX_DISTURBED_PCT=1e9 %s generate --provider replay --replay %s --model fake-coder-1 --method beam "
             "--beam-width 1 --beam-candidates 2 --budget 6 --workloads 12p --size small "
             "--warmup 1 --iters 3 --no-expert --jobs 1 --concurrency 1 --out %s >%s.out 2>%s.err",
             ckbt_bin(), dir, again, again, again);
    int st = system(cmd);
    CKBT_EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the replay exits 0");
    json_object *rep[6];
    lines = http_records(again, rep, 6);
    CKBT_EXPECT(lines == 6, "the replay has 6 records, got %d", lines);
    for (int i = 0; i < 6; i++) {
        CKBT_EXPECT(strcmp(http_field(rec[i], "plan"), http_field(rep[i], "plan")) == 0 &&
                        strcmp(http_field(rec[i], "reply"), http_field(rep[i], "reply")) == 0 &&
                        strcmp(http_field(rec[i], "status"), http_field(rep[i], "status")) == 0,
                    "sample %d: plan, reply or status differs in the replay", i);
        CKBT_EXPECT(strcmp(http_field(rep[i], "reply_status"), "ok") == 0,
                    "sample %d replayed: %s", i, http_field(rep[i], "reply_status"));
    }
    http_free(rep, 6);
    http_free(rec, 6);
    ckbt_fake_llm_stop(f);
}
