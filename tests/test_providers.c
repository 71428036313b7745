/* The model providers against a fake API on 127.0.0.1 (fake_llm.h): what
 * each sends, what it makes of good, bad and slow answers, the retries,
 * the concurrency limit; the command provider with real programs; replay
 * from a hand-made run. */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fsutil.h"
#include "fake_llm.h"
#include "harness.h"
#include "providers/provider.h"

#define TEST_KEY "sk-ckbt-secret-0123456789"

static const ckb_chat_msg two_msgs[] = {
    {"system", "You write fast C kernels."},
    {"user", "Write 8p_GEMM."},
};

static const char *const openai_ok_body =
    "{\"id\":\"x\",\"model\":\"fake-model-2024\",\"choices\":[{\"index\":0,\"message\":"
    "{\"role\":\"assistant\",\"content\":\"```c\\nvoid k(void) {}\\n```\"},"
    "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":20}}";

/* Short backoffs for every test here: retries would otherwise wait seconds. */
static void fast_retries(void)
{
    setenv("CKB_RETRY_BASE_MS", "5", 1);
    setenv("CKBT_KEY", TEST_KEY, 1);
}

static ckb_provider *open_http(const char *name, const char *base, int retries, double timeout_s,
                               const char *price_file, ckb_err *err)
{
    ckb_provider_config c;
    ckb_provider_config_default(&c);
    c.name = name;
    c.model = strcmp(name, "gemini") == 0 ? "gemini-test" : "fake-model";
    c.base_url = base;
    c.api_key_env = "CKBT_KEY";
    c.max_retries = retries;
    c.timeout_s = timeout_s;
    c.price_file = price_file;
    c.max_tokens = 1234;
    c.temperature = 0.5;
    return ckb_provider_open(&c, err);
}

static json_object *request_json(ckbt_fake_llm *f, int i)
{
    const ckbt_fake_request *rq = ckbt_fake_llm_request(f, i);
    return rq ? json_tokener_parse(rq->body) : NULL;
}

static const char *jstr(json_object *o, const char *path0, const char *path1)
{
    json_object *v = o;
    if (path0 && !json_object_object_get_ex(v, path0, &v))
        return NULL;
    if (path1 && !json_object_object_get_ex(v, path1, &v))
        return NULL;
    return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

CKBT_TEST(provider_status_names_are_the_record_format, "quick")
{
    const char *want[] = {"ok",      "empty",     "malformed",   "http_error",
                          "timeout", "transport", "not_recorded"};
    for (int s = 0; s < CKB_REPLY_COUNT; s++)
        CKBT_EXPECT(strcmp(ckb_reply_status_name((ckb_reply_status)s), want[s]) == 0,
                    "status %d named %s", s, ckb_reply_status_name((ckb_reply_status)s));
}

CKBT_TEST(provider_openai_happy_path, "quick")
{
    fast_retries();
    char prices[512];
    snprintf(prices, sizeof prices, "%s/prices.json", ckbt_tmpdir());
    const char *table = "{\"fake-model-2024\": {\"input_per_mtok\": 2.5, \"output_per_mtok\": 10}}";
    CKBT_EXPECT(ckb_write_file_atomic(prices, table, strlen(table)) == 0, "price file");

    ckbt_fake_reply script[] = {{200, openai_ok_body, 0, NULL}};
    ckbt_fake_llm *f = ckbt_fake_llm_start(script, 1);
    CKBT_EXPECT(f != NULL, "fake server");
    if (!f)
        return;
    ckb_err err = {0};
    char base[128];
    snprintf(base, sizeof base, "%s/v1/", ckbt_fake_llm_url(f)); /* a trailing slash is fine */
    ckb_provider *p = open_http("openai", base, 2, 10, prices, &err);
    CKBT_EXPECT(p != NULL, "open: %s", err.msg);
    if (p) {
        ckb_reply r;
        int rc = ckb_provider_complete(p, two_msgs, 2, "8p_GEMM#0", &r);
        CKBT_EXPECT(rc == 0 && r.status == CKB_REPLY_OK, "status %s: %s",
                    ckb_reply_status_name(r.status), r.error);
        CKBT_EXPECT(r.text && strcmp(r.text, "```c\nvoid k(void) {}\n```") == 0, "text '%s'",
                    r.text ? r.text : "(null)");
        CKBT_EXPECT(r.tokens_in == 100 && r.tokens_out == 20, "tokens %ld %ld", r.tokens_in,
                    r.tokens_out);
        CKBT_EXPECT(strcmp(r.model, "fake-model-2024") == 0, "model %s", r.model);
        double want_cost = (100 * 2.5 + 20 * 10.0) / 1e6;
        CKBT_EXPECT(fabs(r.cost_usd - want_cost) < 1e-12, "cost %g, want %g", r.cost_usd,
                    want_cost);
        CKBT_EXPECT(r.attempts == 1 && r.http_code == 200, "attempts %d code %d", r.attempts,
                    r.http_code);
        CKBT_EXPECT(r.latency_s > 0, "latency %g", r.latency_s);
        CKBT_EXPECT(strcmp(ckb_provider_name(p), "openai") == 0, "name");
        ckb_reply_free(&r);
        ckb_provider_close(p);
    }
    const ckbt_fake_request *rq = ckbt_fake_llm_request(f, 0);
    CKBT_EXPECT(rq && strcmp(rq->method, "POST") == 0 &&
                    strcmp(rq->path, "/v1/chat/completions") == 0,
                "request %s %s", rq ? rq->method : "-", rq ? rq->path : "-");
    const char *auth = ckbt_fake_llm_header(rq, "Authorization");
    CKBT_EXPECT(auth && strcmp(auth, "Bearer " TEST_KEY) == 0, "Authorization: %s",
                auth ? auth : "(none)");
    json_object *body = request_json(f, 0), *msgs, *v;
    CKBT_EXPECT(body && strcmp(jstr(body, "model", NULL), "fake-model") == 0, "model in body");
    CKBT_EXPECT(body && json_object_object_get_ex(body, "messages", &msgs) &&
                    json_object_array_length(msgs) == 2,
                "two messages");
    if (body && json_object_object_get_ex(body, "messages", &msgs) &&
        json_object_array_length(msgs) == 2) {
        json_object *m0 = json_object_array_get_idx(msgs, 0),
                    *m1 = json_object_array_get_idx(msgs, 1);
        CKBT_EXPECT(strcmp(jstr(m0, "role", NULL), "system") == 0 &&
                        strcmp(jstr(m0, "content", NULL), "You write fast C kernels.") == 0 &&
                        strcmp(jstr(m1, "role", NULL), "user") == 0 &&
                        strcmp(jstr(m1, "content", NULL), "Write 8p_GEMM.") == 0,
                    "messages in order, role and content");
    }
    CKBT_EXPECT(body && json_object_object_get_ex(body, "max_tokens", &v) &&
                    json_object_get_int(v) == 1234,
                "max_tokens");
    CKBT_EXPECT(body && json_object_object_get_ex(body, "temperature", &v) &&
                    json_object_get_double(v) == 0.5,
                "temperature");
    json_object_put(body);
    ckbt_fake_llm_stop(f);
}

CKBT_TEST(provider_openai_retries_429_then_succeeds, "quick")
{
    fast_retries();
    ckbt_fake_reply script[] = {
        {429, "{\"error\":{\"message\":\"slow down\"}}", 0, NULL},
        {200, openai_ok_body, 0, NULL},
    };
    ckbt_fake_llm *f = ckbt_fake_llm_start(script, 2);
    if (!f) {
        CKBT_EXPECT(0, "fake server");
        return;
    }
    ckb_err err = {0};
    ckb_provider *p = open_http("openai", ckbt_fake_llm_url(f), 3, 10, NULL, &err);
    CKBT_EXPECT(p != NULL, "open: %s", err.msg);
    if (p) {
        ckb_reply r;
        ckb_provider_complete(p, two_msgs, 2, "k#0", &r);
        CKBT_EXPECT(r.status == CKB_REPLY_OK && r.attempts == 2, "status %s attempts %d: %s",
                    ckb_reply_status_name(r.status), r.attempts, r.error);
        CKBT_EXPECT(r.cost_usd == -1, "no price table: cost unknown, got %g", r.cost_usd);
        ckb_reply_free(&r);
        ckb_provider_close(p);
    }
    CKBT_EXPECT(ckbt_fake_llm_nrequests(f) == 2, "server saw %d requests",
                ckbt_fake_llm_nrequests(f));
    ckbt_fake_llm_stop(f);
}

/* Retry-After says one second; our own backoff here is 5 ms: waiting at
 * least the second shows the header was honoured. */
CKBT_TEST(provider_http_honours_retry_after, "quick")
{
    fast_retries();
    ckbt_fake_reply script[] = {
        {503, "{\"error\":{\"message\":\"overloaded\"}}", 0, "Retry-After: 1\r\n"},
        {200, openai_ok_body, 0, NULL},
    };
    ckbt_fake_llm *f = ckbt_fake_llm_start(script, 2);
    if (!f) {
        CKBT_EXPECT(0, "fake server");
        return;
    }
    ckb_err err = {0};
    ckb_provider *p = open_http("openai", ckbt_fake_llm_url(f), 3, 10, NULL, &err);
    CKBT_EXPECT(p != NULL, "open: %s", err.msg);
    if (p) {
        ckb_reply r;
        ckb_provider_complete(p, two_msgs, 2, "k#0", &r);
        CKBT_EXPECT(r.status == CKB_REPLY_OK && r.attempts == 2, "status %s attempts %d",
                    ckb_reply_status_name(r.status), r.attempts);
        CKBT_EXPECT(r.latency_s >= 0.95, "waited %g s, Retry-After said 1 s", r.latency_s);
        ckb_reply_free(&r);
        ckb_provider_close(p);
    }
    ckbt_fake_llm_stop(f);
}

CKBT_TEST(provider_openai_5xx_exhausts_retries, "quick")
{
    fast_retries();
    const char *e500 = "{\"error\":{\"message\":\"the model\\nis on fire\"}}";
    ckbt_fake_reply script[] = {{500, e500, 0, NULL},
                                {500, e500, 0, NULL},
                                {500, e500, 0, NULL},
                                {200, openai_ok_body, 0, NULL}};
    ckbt_fake_llm *f = ckbt_fake_llm_start(script, 4);
    if (!f) {
        CKBT_EXPECT(0, "fake server");
        return;
    }
    ckb_err err = {0};
    ckb_provider *p = open_http("openai", ckbt_fake_llm_url(f), 2, 10, NULL, &err);
    if (p) {
        ckb_reply r;
        int rc = ckb_provider_complete(p, two_msgs, 2, "k#0", &r);
        CKBT_EXPECT(rc == -1 && r.status == CKB_REPLY_HTTP_ERROR, "status %s",
                    ckb_reply_status_name(r.status));
        CKBT_EXPECT(r.attempts == 3 && r.http_code == 500, "attempts %d code %d", r.attempts,
                    r.http_code);
        CKBT_EXPECT(strstr(r.error, "HTTP 500") && strstr(r.error, "the model is on fire"),
                    "error names the code and the API's message, one line: %s", r.error);
        CKBT_EXPECT(r.text == NULL, "no text");
        ckb_reply_free(&r);
        ckb_provider_close(p);
    }
    CKBT_EXPECT(ckbt_fake_llm_nrequests(f) == 3, "1 + 2 retries, server saw %d",
                ckbt_fake_llm_nrequests(f));
    ckbt_fake_llm_stop(f);
}

/* A 401 is final (no retry) and its error text never shows the key, even
 * when the server echoes it. */
CKBT_TEST(provider_http_4xx_is_final_and_hides_the_key, "quick")
{
    fast_retries();
    ckbt_fake_reply script[] = {
        {401, "{\"error\":{\"message\":\"Incorrect API key provided: " TEST_KEY "\"}}", 0, NULL},
        {200, openai_ok_body, 0, NULL}};
    ckbt_fake_llm *f = ckbt_fake_llm_start(script, 2);
    if (!f) {
        CKBT_EXPECT(0, "fake server");
        return;
    }
    ckb_err err = {0};
    ckb_provider *p = open_http("openai", ckbt_fake_llm_url(f), 3, 10, NULL, &err);
    if (p) {
        ckb_reply r;
        ckb_provider_complete(p, two_msgs, 2, "k#0", &r);
        CKBT_EXPECT(r.status == CKB_REPLY_HTTP_ERROR && r.attempts == 1 && r.http_code == 401,
                    "status %s attempts %d code %d", ckb_reply_status_name(r.status), r.attempts,
                    r.http_code);
        CKBT_EXPECT(strstr(r.error, "Incorrect API key") && !strstr(r.error, TEST_KEY),
                    "error keeps the message, not the key: %s", r.error);
        ckb_reply_free(&r);
        ckb_provider_close(p);
    }
    ckbt_fake_llm_stop(f);
}

CKBT_TEST(provider_openai_malformed_and_empty_bodies, "quick")
{
    fast_retries();
    ckbt_fake_reply script[] = {
        {200, "<html>502 bad gateway</html>", 0, NULL},
        {200, "{\"id\":\"x\",\"object\":\"chat.completion\"}", 0, NULL},
        {200, "", 0, NULL},
        {200,
         "{\"model\":\"m\",\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"\"},"
         "\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":0}}",
         0, NULL},
        {200, "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":null}}]}", 0, NULL},
    };
    ckb_reply_status want[] = {CKB_REPLY_MALFORMED, CKB_REPLY_MALFORMED, CKB_REPLY_MALFORMED,
                               CKB_REPLY_EMPTY, CKB_REPLY_EMPTY};
    ckbt_fake_llm *f = ckbt_fake_llm_start(script, 5);
    if (!f) {
        CKBT_EXPECT(0, "fake server");
        return;
    }
    ckb_err err = {0};
    ckb_provider *p = open_http("openai", ckbt_fake_llm_url(f), 0, 10, NULL, &err);
    for (int i = 0; p && i < 5; i++) {
        ckb_reply r;
        int rc = ckb_provider_complete(p, two_msgs, 2, "k#0", &r);
        CKBT_EXPECT(rc == -1 && r.status == want[i] && r.text == NULL && r.error[0],
                    "body %d: status %s (want %s), error '%s'", i, ckb_reply_status_name(r.status),
                    ckb_reply_status_name(want[i]), r.error);
        if (i == 3)
            CKBT_EXPECT(r.tokens_in == 5 && strstr(r.error, "length"),
                        "an empty reply still says its tokens and why: %ld, %s", r.tokens_in,
                        r.error);
        ckb_reply_free(&r);
    }
    ckb_provider_close(p);
    ckbt_fake_llm_stop(f);
}

CKBT_TEST(provider_openai_per_attempt_timeout, "quick")
{
    fast_retries();
    ckbt_fake_reply script[] = {{200, openai_ok_body, 5000, NULL},
                                {200, openai_ok_body, 5000, NULL},
                                {200, openai_ok_body, 0, NULL}};
    ckbt_fake_llm *f = ckbt_fake_llm_start(script, 3);
    if (!f) {
        CKBT_EXPECT(0, "fake server");
        return;
    }
    ckb_err err = {0};
    ckb_provider *p = open_http("openai", ckbt_fake_llm_url(f), 1, 0.3, NULL, &err);
    if (p) {
        ckb_reply r;
        ckb_provider_complete(p, two_msgs, 2, "k#0", &r);
        CKBT_EXPECT(r.status == CKB_REPLY_TIMEOUT && r.attempts == 2 && r.http_code == 0,
                    "status %s attempts %d: %s", ckb_reply_status_name(r.status), r.attempts,
                    r.error);
        CKBT_EXPECT(r.latency_s < 4.0, "gave up after the timeouts, not the server's 5 s: %g",
                    r.latency_s);
        ckb_reply_free(&r);
        ckb_provider_close(p);
    }
    CKBT_EXPECT(ckbt_fake_llm_nrequests(f) == 2, "server saw %d", ckbt_fake_llm_nrequests(f));
    ckbt_fake_llm_stop(f);
}

CKBT_TEST(provider_open_errors_name_the_fix, "quick")
{
    char *saved = ckbt_env_save("OPENAI_API_KEY");
    unsetenv("OPENAI_API_KEY");
    ckb_err err = {0};
    ckb_provider_config c;
    ckb_provider_config_default(&c);
    c.name = "openai";
    c.model = "gpt-4o";
    c.base_url = "https://api.openai.com/v1";
    ckb_provider *p = ckb_provider_open(&c, &err);
    CKBT_EXPECT(!p && strstr(err.msg, "OPENAI_API_KEY"), "missing key: %s", err.msg);
    ckb_provider_close(p);

    /* a local server needs no key: it opens, and sends no Authorization */
    ckbt_fake_reply script[] = {{200, openai_ok_body, 0, NULL}};
    ckbt_fake_llm *f = ckbt_fake_llm_start(script, 1);
    if (f) {
        c.base_url = ckbt_fake_llm_url(f);
        p = ckb_provider_open(&c, &err);
        CKBT_EXPECT(p != NULL, "local server without a key: %s", err.msg);
        ckb_reply r;
        if (p && ckb_provider_complete(p, two_msgs, 2, "k", &r) == 0)
            ckb_reply_free(&r);
        CKBT_EXPECT(ckbt_fake_llm_nrequests(f) == 1 &&
                        !ckbt_fake_llm_header(ckbt_fake_llm_request(f, 0), "Authorization"),
                    "one request, no Authorization header");
        ckb_provider_close(p);
        ckbt_fake_llm_stop(f);
    }

    c.base_url = NULL;
    c.model = NULL;
    setenv("OPENAI_API_KEY", "sk-x", 1);
    p = ckb_provider_open(&c, &err);
    CKBT_EXPECT(!p && strstr(err.msg, "model"), "missing model: %s", err.msg);

    c.name = "anthropic";
    c.model = "claude-x";
    char *saved_a = ckbt_env_save("ANTHROPIC_API_KEY");
    unsetenv("ANTHROPIC_API_KEY");
    p = ckb_provider_open(&c, &err);
    CKBT_EXPECT(!p && strstr(err.msg, "ANTHROPIC_API_KEY"), "anthropic key: %s", err.msg);
    ckbt_env_restore("ANTHROPIC_API_KEY", saved_a);

    c.name = "gpt";
    p = ckb_provider_open(&c, &err);
    CKBT_EXPECT(!p && strstr(err.msg, "unknown provider 'gpt'"), "unknown name: %s", err.msg);

    c.name = "command";
    p = ckb_provider_open(&c, &err);
    CKBT_EXPECT(!p && strstr(err.msg, "command"), "command without a command line: %s", err.msg);

    char prices[512];
    snprintf(prices, sizeof prices, "%s/bad-prices.json", ckbt_tmpdir());
    const char *bad = "{\"m\": {\"input_per_mtok\": \"three\"}}";
    ckb_write_file_atomic(prices, bad, strlen(bad));
    c.command = "cat";
    c.price_file = prices;
    p = ckb_provider_open(&c, &err);
    CKBT_EXPECT(!p && strstr(err.msg, "input_per_mtok"), "bad price table: %s", err.msg);

    ckbt_env_restore("OPENAI_API_KEY", saved);
}

CKBT_TEST(provider_anthropic_request_and_reply, "quick")
{
    fast_retries();
    const char *ok =
        "{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\","
        "\"model\":\"claude-fake-1\",\"content\":[{\"type\":\"text\",\"text\":\"first \"},"
        "{\"type\":\"thinking\",\"thinking\":\"hmm\"},{\"type\":\"text\",\"text\":\"second\"}],"
        "\"stop_reason\":\"end_turn\",\"usage\":{\"input_tokens\":11,\"output_tokens\":7}}";
    ckbt_fake_reply script[] = {{529,
                                 "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
                                 "\"message\":\"Overloaded\"}}",
                                 0, NULL},
                                {200, ok, 0, NULL}};
    ckbt_fake_llm *f = ckbt_fake_llm_start(script, 2);
    if (!f) {
        CKBT_EXPECT(0, "fake server");
        return;
    }
    ckb_err err = {0};
    ckb_provider *p = open_http("anthropic", ckbt_fake_llm_url(f), 2, 10, NULL, &err);
    CKBT_EXPECT(p != NULL, "open: %s", err.msg);
    if (p) {
        ckb_reply r;
        ckb_provider_complete(p, two_msgs, 2, "k#0", &r);
        CKBT_EXPECT(r.status == CKB_REPLY_OK && r.text && strcmp(r.text, "first second") == 0,
                    "status %s text '%s': %s", ckb_reply_status_name(r.status),
                    r.text ? r.text : "(null)", r.error);
        CKBT_EXPECT(r.tokens_in == 11 && r.tokens_out == 7 && strcmp(r.model, "claude-fake-1") == 0,
                    "tokens %ld %ld model %s", r.tokens_in, r.tokens_out, r.model);
        CKBT_EXPECT(r.attempts == 2, "529 overloaded is retried: %d", r.attempts);
        ckb_reply_free(&r);
        ckb_provider_close(p);
    }
    const ckbt_fake_request *rq = ckbt_fake_llm_request(f, 1);
    CKBT_EXPECT(rq && strcmp(rq->path, "/v1/messages") == 0, "path %s", rq ? rq->path : "-");
    const char *key = ckbt_fake_llm_header(rq, "x-api-key");
    const char *ver = ckbt_fake_llm_header(rq, "anthropic-version");
    CKBT_EXPECT(key && strcmp(key, TEST_KEY) == 0, "x-api-key %s", key ? key : "(none)");
    CKBT_EXPECT(ver && strcmp(ver, "2023-06-01") == 0, "anthropic-version %s",
                ver ? ver : "(none)");
    CKBT_EXPECT(!ckbt_fake_llm_header(rq, "Authorization"), "no bearer header");
    json_object *body = request_json(f, 1), *msgs, *v;
    CKBT_EXPECT(body && jstr(body, "system", NULL) &&
                    strcmp(jstr(body, "system", NULL), "You write fast C kernels.") == 0,
                "system is a top-level field");
    CKBT_EXPECT(body && json_object_object_get_ex(body, "messages", &msgs) &&
                    json_object_array_length(msgs) == 1 &&
                    strcmp(jstr(json_object_array_get_idx(msgs, 0), "role", NULL), "user") == 0,
                "messages hold the user turn only");
    CKBT_EXPECT(body && json_object_object_get_ex(body, "max_tokens", &v) &&
                    json_object_get_int(v) == 1234,
                "max_tokens is sent (the API requires it)");
    json_object_put(body);
    ckbt_fake_llm_stop(f);
}

CKBT_TEST(provider_gemini_request_and_reply, "quick")
{
    fast_retries();
    const char *ok =
        "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":["
        "{\"text\":\"plan...\",\"thought\":true},{\"text\":\"int \"},{\"text\":\"x;\"}]},"
        "\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":30,"
        "\"candidatesTokenCount\":4,\"thoughtsTokenCount\":6},\"modelVersion\":\"gemini-test-"
        "001\"}";
    ckbt_fake_reply script[] = {
        {200, ok, 0, NULL}, {200, "{\"promptFeedback\":{\"blockReason\":\"SAFETY\"}}", 0, NULL}};
    ckbt_fake_llm *f = ckbt_fake_llm_start(script, 2);
    if (!f) {
        CKBT_EXPECT(0, "fake server");
        return;
    }
    ckb_err err = {0};
    ckb_provider *p = open_http("gemini", ckbt_fake_llm_url(f), 0, 10, NULL, &err);
    CKBT_EXPECT(p != NULL, "open: %s", err.msg);
    ckb_chat_msg three[] = {two_msgs[0], two_msgs[1], {"assistant", "draft"}};
    if (p) {
        ckb_reply r;
        ckb_provider_complete(p, three, 3, "k#0", &r);
        CKBT_EXPECT(r.status == CKB_REPLY_OK && r.text && strcmp(r.text, "int x;") == 0,
                    "status %s text '%s': %s", ckb_reply_status_name(r.status),
                    r.text ? r.text : "(null)", r.error);
        CKBT_EXPECT(r.tokens_in == 30 && r.tokens_out == 10 &&
                        strcmp(r.model, "gemini-test-001") == 0,
                    "tokens %ld %ld (thoughts count as output) model %s", r.tokens_in, r.tokens_out,
                    r.model);
        ckb_reply_free(&r);
        ckb_provider_complete(p, three, 3, "k#1", &r);
        CKBT_EXPECT(r.status == CKB_REPLY_EMPTY && strstr(r.error, "SAFETY"), "blocked: %s %s",
                    ckb_reply_status_name(r.status), r.error);
        ckb_reply_free(&r);
        ckb_provider_close(p);
    }
    const ckbt_fake_request *rq = ckbt_fake_llm_request(f, 0);
    CKBT_EXPECT(rq && strcmp(rq->path, "/v1beta/models/gemini-test:generateContent") == 0,
                "path %s", rq ? rq->path : "-");
    const char *key = ckbt_fake_llm_header(rq, "x-goog-api-key");
    CKBT_EXPECT(key && strcmp(key, TEST_KEY) == 0, "x-goog-api-key %s", key ? key : "(none)");
    CKBT_EXPECT(rq && !strstr(rq->path, "key="), "the key is not in the URL");
    json_object *body = request_json(f, 0), *si, *parts, *contents;
    CKBT_EXPECT(body && json_object_object_get_ex(body, "systemInstruction", &si) &&
                    json_object_object_get_ex(si, "parts", &parts) &&
                    strcmp(jstr(json_object_array_get_idx(parts, 0), "text", NULL),
                           "You write fast C kernels.") == 0,
                "systemInstruction holds the system message");
    CKBT_EXPECT(
        body && json_object_object_get_ex(body, "contents", &contents) &&
            json_object_array_length(contents) == 2 &&
            strcmp(jstr(json_object_array_get_idx(contents, 0), "role", NULL), "user") == 0 &&
            strcmp(jstr(json_object_array_get_idx(contents, 1), "role", NULL), "model") == 0,
        "contents: user then model (the assistant turn)");
    json_object_put(body);
    ckbt_fake_llm_stop(f);
}

static ckb_provider *open_command(const char *cmd, double timeout_s)
{
    ckb_provider_config c;
    ckb_provider_config_default(&c);
    c.name = "command";
    c.command = cmd;
    c.model = "local-script";
    c.timeout_s = timeout_s;
    ckb_err err = {0};
    ckb_provider *p = ckb_provider_open(&c, &err);
    CKBT_EXPECT(p != NULL, "open command '%s': %s", cmd, err.msg);
    return p;
}

/* Dead or a zombie nobody reaped yet (a container's init may never reap). */
static int process_gone(pid_t pid)
{
    if (kill(pid, 0) != 0)
        return errno == ESRCH;
    char path[64], buf[256] = "";
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return 1;
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    const char *rp = strrchr(buf, ')');
    return rp && rp[1] == ' ' && rp[2] == 'Z';
}

CKBT_TEST(provider_command_runs_a_program, "quick")
{
    ckb_provider *p = open_command("cat", 20);
    if (!p)
        return;
    ckb_reply r;
    int rc = ckb_provider_complete(p, two_msgs, 2, "8p_GEMM#3", &r);
    CKBT_EXPECT(
        rc == 0 && r.text &&
            strcmp(r.text, "[system]\nYou write fast C kernels.\n\n[user]\nWrite 8p_GEMM.\n\n") ==
                0,
        "cat echoes the prompt: '%s' (%s)", r.text ? r.text : "(null)", r.error);
    CKBT_EXPECT(r.http_code == 0 && r.tokens_in == -1 && r.cost_usd == -1 &&
                    strcmp(r.model, "local-script") == 0,
                "no HTTP, no tokens, no cost; model as configured: %s", r.model);
    ckb_reply_free(&r);

    /* a prompt far bigger than a pipe: writing and reading must interleave */
    size_t big = 4u << 20;
    char *huge = malloc(big + 1);
    for (size_t i = 0; i < big; i++)
        huge[i] = (char)('a' + i % 26);
    huge[big] = '\0';
    ckb_chat_msg one = {"user", huge};
    ckb_provider_complete(p, &one, 1, "k", &r);
    CKBT_EXPECT(r.status == CKB_REPLY_OK && r.text && strlen(r.text) == big + 9 &&
                    memcmp(r.text + 7, huge, big) == 0,
                "4 MiB round trip: %s, %zu bytes", ckb_reply_status_name(r.status),
                r.text ? strlen(r.text) : 0);
    ckb_reply_free(&r);
    free(huge);
    ckb_provider_close(p);

    p = open_command("printf '%s' \"$CKB_REQUEST_KEY\"", 20);
    if (p) {
        ckb_provider_complete(p, two_msgs, 2, "8p_GEMM#3", &r);
        CKBT_EXPECT(r.text && strcmp(r.text, "8p_GEMM#3") == 0, "the key reaches the program: %s",
                    r.text ? r.text : r.error);
        ckb_reply_free(&r);
        ckb_provider_close(p);
    }
}

CKBT_TEST(provider_command_failures, "quick")
{
    ckb_reply r;
    ckb_provider *p = open_command("cat >/dev/null; echo 'model not loaded' >&2; exit 3", 20);
    if (p) {
        int rc = ckb_provider_complete(p, two_msgs, 2, "k", &r);
        CKBT_EXPECT(rc == -1 && r.status == CKB_REPLY_TRANSPORT && strstr(r.error, "status 3") &&
                        strstr(r.error, "model not loaded"),
                    "failing command: %s: %s", ckb_reply_status_name(r.status), r.error);
        ckb_reply_free(&r);
        ckb_provider_close(p);
    }
    p = open_command("true", 20); /* reads nothing, says nothing */
    if (p) {
        ckb_provider_complete(p, two_msgs, 2, "k", &r);
        CKBT_EXPECT(r.status == CKB_REPLY_EMPTY && !r.text, "silent command: %s",
                    ckb_reply_status_name(r.status));
        ckb_reply_free(&r);
        ckb_provider_close(p);
    }

    char pidfile[512], cmd[1024];
    snprintf(pidfile, sizeof pidfile, "%s/sleeper.pid", ckbt_tmpdir());
    snprintf(cmd, sizeof cmd, "sleep 30 & echo $! > '%s'; wait", pidfile);
    p = open_command(cmd, 0.5);
    if (p) {
        ckb_provider_complete(p, two_msgs, 2, "k", &r);
        CKBT_EXPECT(r.status == CKB_REPLY_TIMEOUT && r.latency_s < 10, "sleeper: %s after %g s",
                    ckb_reply_status_name(r.status), r.latency_s);
        ckb_reply_free(&r);
        ckb_provider_close(p);
        char *pid_text = ckb_read_file(pidfile, NULL);
        pid_t pid = pid_text ? (pid_t)atoi(pid_text) : 0;
        free(pid_text);
        int gone = 0;
        for (int i = 0; pid > 0 && i < 200 && !(gone = process_gone(pid)); i++)
            usleep(10000);
        CKBT_EXPECT(pid > 0 && gone, "the command's child %d was killed with it", (int)pid);
    }
}

static void write_text(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    if (fp) {
        fputs(text, fp);
        fclose(fp);
    }
}

CKBT_TEST(provider_replay_answers_by_key, "quick")
{
    ckb_err err = {0};
    char run[512], path[600];
    snprintf(run, sizeof run, "%s/run1", ckbt_tmpdir());
    ckb_mkdirs(run);
    snprintf(path, sizeof path, "%s/records.jsonl", run);
    write_text(
        path, "{\"workload\":\"8p_GEMM\",\"index\":0,\"key\":\"8p_GEMM#0\",\"provider\":\"openai\","
              "\"model\":\"gpt-x\",\"model_reported\":\"gpt-x-0613\",\"reply_status\":\"ok\","
              "\"reply\":\"```c\\nint k;\\n```\",\"tokens_in\":120,\"tokens_out\":45,"
              "\"cost_usd\":0.00123,\"attempts\":2}\n"
              "{\"workload\":\"8p_GEMM\",\"index\":1,\"key\":\"8p_GEMM#1\",\"model\":\"gpt-x\","
              "\"reply_status\":\"http_error\",\"reply\":null,\"tokens_in\":null,"
              "\"tokens_out\":null,\"cost_usd\":null,\"attempts\":6}\n"
              "{\"workload\":\"8p_GEMM\",\"index\":2,\"key\":\"8p_GEMM#2\",\"reply_st");
    ckb_provider_config c;
    ckb_provider_config_default(&c);
    c.name = "replay";
    c.replay_run = run;
    ckb_provider *p = ckb_provider_open(&c, &err);
    CKBT_EXPECT(p != NULL, "open: %s", err.msg);
    if (p) {
        ckb_reply r;
        int rc = ckb_provider_complete(p, two_msgs, 2, "8p_GEMM#0", &r);
        CKBT_EXPECT(rc == 0 && r.text && strcmp(r.text, "```c\nint k;\n```") == 0,
                    "recorded text: %s", r.text ? r.text : r.error);
        CKBT_EXPECT(r.tokens_in == 120 && r.tokens_out == 45 && r.cost_usd == 0.00123 &&
                        r.attempts == 2 && strcmp(r.model, "gpt-x-0613") == 0,
                    "recorded tokens %ld/%ld, cost %g, attempts %d, model %s", r.tokens_in,
                    r.tokens_out, r.cost_usd, r.attempts, r.model);
        ckb_reply_free(&r);
        rc = ckb_provider_complete(p, two_msgs, 2, "8p_GEMM#1", &r);
        CKBT_EXPECT(rc == -1 && r.status == CKB_REPLY_HTTP_ERROR && r.tokens_in == -1 &&
                        r.cost_usd == -1 && r.attempts == 6,
                    "a recorded failure replays as one: %s", ckb_reply_status_name(r.status));
        ckb_reply_free(&r);
        const char *unknown[] = {"8p_GEMM#2" /* the half-written line */, "8p_GEMM#9", "nope"};
        for (int i = 0; i < 3; i++) {
            ckb_provider_complete(p, two_msgs, 2, unknown[i], &r);
            CKBT_EXPECT(r.status == CKB_REPLY_NOT_RECORDED && strstr(r.error, unknown[i]),
                        "%s: %s (%s)", unknown[i], ckb_reply_status_name(r.status), r.error);
            ckb_reply_free(&r);
        }
        ckb_provider_close(p);
    }

    char missing[600];
    snprintf(missing, sizeof missing, "%s/no-such-run", ckbt_tmpdir());
    c.replay_run = missing;
    p = ckb_provider_open(&c, &err);
    CKBT_EXPECT(!p && strstr(err.msg, "no-such-run"), "missing run: %s", err.msg);
    snprintf(missing, sizeof missing, "%s/empty-run", ckbt_tmpdir());
    ckb_mkdirs(missing);
    p = ckb_provider_open(&c, &err);
    CKBT_EXPECT(!p && strstr(err.msg, "records.jsonl"), "run without records: %s", err.msg);
}

typedef struct {
    ckb_provider *p;
    int ok;
} concurrency_job;

static void *concurrency_call(void *arg)
{
    concurrency_job *j = arg;
    ckb_reply r;
    j->ok = ckb_provider_complete(j->p, two_msgs, 2, "k", &r) == 0;
    ckb_reply_free(&r);
    return NULL;
}

static int max_in_flight_with(int concurrency, int *all_ok)
{
    ckbt_fake_reply script[8];
    for (int i = 0; i < 8; i++)
        script[i] = (ckbt_fake_reply){200, openai_ok_body, 200, NULL};
    ckbt_fake_llm *f = ckbt_fake_llm_start(script, 8);
    if (!f)
        return -1;
    ckb_provider_config c;
    ckb_provider_config_default(&c);
    c.name = "openai";
    c.model = "fake-model";
    c.base_url = ckbt_fake_llm_url(f);
    c.concurrency = concurrency;
    c.max_retries = 0;
    ckb_err err;
    ckb_provider *p = ckb_provider_open(&c, &err);
    pthread_t t[8];
    concurrency_job jobs[8];
    *all_ok = p != NULL;
    for (int i = 0; p && i < 8; i++) {
        jobs[i] = (concurrency_job){p, 0};
        pthread_create(&t[i], NULL, concurrency_call, &jobs[i]);
    }
    for (int i = 0; p && i < 8; i++) {
        pthread_join(t[i], NULL);
        *all_ok &= jobs[i].ok;
    }
    ckb_provider_close(p);
    int m = ckbt_fake_llm_max_in_flight(f);
    ckbt_fake_llm_stop(f);
    return m;
}

CKBT_TEST(provider_concurrency_limit, "quick")
{
    fast_retries();
    int ok = 0;
    int m2 = max_in_flight_with(2, &ok);
    CKBT_EXPECT(ok, "8 calls with concurrency 2 all succeed");
    CKBT_EXPECT(m2 >= 1 && m2 <= 2, "server held %d at once, limit 2", m2);
    int m8 = max_in_flight_with(8, &ok);
    CKBT_EXPECT(ok && m8 > 2, "without the limit the server sees more at once: %d", m8);
}

typedef struct {
    int calls;
} custom_state;

static void custom_complete(void *state, const ckb_chat_msg *msgs, int nmsgs, const char *key,
                            ckb_reply *out)
{
    custom_state *s = state;
    s->calls++;
    out->status = CKB_REPLY_OK;
    if (strcmp(key, "say-nothing") != 0)
        out->text = strdup(msgs[nmsgs - 1].content);
    else
        out->text = strdup("");
}

static void custom_close(void *state)
{
    ((custom_state *)state)->calls = -1;
}

CKBT_TEST(provider_custom_ops_and_reply_invariants, "quick")
{
    custom_state s = {0};
    ckb_provider_ops ops = {custom_complete, custom_close};
    ckb_provider *p = ckb_provider_custom("echo", &ops, &s);
    ckb_reply r;
    int rc = ckb_provider_complete(p, two_msgs, 2, "k", &r);
    CKBT_EXPECT(rc == 0 && r.text && strcmp(r.text, "Write 8p_GEMM.") == 0 && r.attempts == 1 &&
                    r.tokens_in == -1 && r.cost_usd == -1,
                "custom echo: %s", r.text ? r.text : r.error);
    ckb_reply_free(&r);
    CKBT_EXPECT(r.text == NULL, "free clears the text");
    rc = ckb_provider_complete(p, two_msgs, 2, "say-nothing", &r);
    CKBT_EXPECT(rc == -1 && r.status == CKB_REPLY_EMPTY && !r.text && r.error[0],
                "OK with empty text is EMPTY: %s", ckb_reply_status_name(r.status));
    CKBT_EXPECT(strcmp(ckb_provider_name(p), "echo") == 0, "name");
    ckb_provider_close(p);
    CKBT_EXPECT(s.calls == -1, "close reached the state");
}

/* A connection dropped without an answer is retried; a refused one is
 * final (nothing listens: retrying would only wait). */
CKBT_TEST(provider_http_dropped_and_refused_connections, "quick")
{
    fast_retries();
    ckbt_fake_reply script[] = {{-1, NULL, 0, NULL}, {200, openai_ok_body, 0, NULL}};
    ckbt_fake_llm *f = ckbt_fake_llm_start(script, 2);
    if (!f) {
        CKBT_EXPECT(0, "fake server");
        return;
    }
    ckb_err err = {0};
    char url[128];
    snprintf(url, sizeof url, "%s", ckbt_fake_llm_url(f));
    ckb_provider *p = open_http("openai", url, 2, 10, NULL, &err);
    ckb_reply r;
    if (p) {
        ckb_provider_complete(p, two_msgs, 2, "k", &r);
        CKBT_EXPECT(r.status == CKB_REPLY_OK && r.attempts == 2, "after a hang-up: %s, %d: %s",
                    ckb_reply_status_name(r.status), r.attempts, r.error);
        ckb_reply_free(&r);
        ckb_provider_close(p);
    }
    ckbt_fake_llm_stop(f); /* the port is closed now */
    p = open_http("openai", url, 2, 10, NULL, &err);
    if (p) {
        ckb_provider_complete(p, two_msgs, 2, "k", &r);
        CKBT_EXPECT(r.status == CKB_REPLY_TRANSPORT && r.attempts == 1 && r.error[0],
                    "refused: %s, %d attempts: %s", ckb_reply_status_name(r.status), r.attempts,
                    r.error);
        ckb_reply_free(&r);
        ckb_provider_close(p);
    }
}

/* The callback mode other tests use to answer what the prompt asks. */
static char *answer_by_prompt(void *ctx, const ckbt_fake_request *rq, int *code)
{
    (void)ctx;
    json_object *body = json_tokener_parse(rq->body), *msgs;
    const char *last = NULL;
    if (body && json_object_object_get_ex(body, "messages", &msgs) &&
        json_object_array_length(msgs) > 0)
        last = jstr(json_object_array_get_idx(msgs, json_object_array_length(msgs) - 1), "content",
                    NULL);
    char text[256];
    snprintf(text, sizeof text, "you asked: %s", last ? last : "?");
    if (last && strstr(last, "fail"))
        *code = 503;
    char *out = ckbt_fake_openai_body(text, 10, 3, "fake-cb");
    json_object_put(body);
    return out;
}

CKBT_TEST(provider_fake_llm_callback_mode, "quick")
{
    fast_retries();
    ckbt_fake_llm *f = ckbt_fake_llm_start_fn(answer_by_prompt, NULL);
    if (!f) {
        CKBT_EXPECT(0, "fake server");
        return;
    }
    ckb_err err = {0};
    ckb_provider *p = open_http("openai", ckbt_fake_llm_url(f), 1, 10, NULL, &err);
    if (p) {
        ckb_chat_msg a = {"user", "kernel A"}, b = {"user", "kernel B"}, c = {"user", "fail"};
        ckb_reply r;
        ckb_provider_complete(p, &a, 1, "a", &r);
        CKBT_EXPECT(r.text && strcmp(r.text, "you asked: kernel A") == 0, "A: %s",
                    r.text ? r.text : r.error);
        ckb_reply_free(&r);
        ckb_provider_complete(p, &b, 1, "b", &r);
        CKBT_EXPECT(r.text && strcmp(r.text, "you asked: kernel B") == 0 &&
                        strcmp(r.model, "fake-cb") == 0 && r.tokens_out == 3,
                    "B: %s", r.text ? r.text : r.error);
        ckb_reply_free(&r);
        ckb_provider_complete(p, &c, 1, "c", &r);
        CKBT_EXPECT(r.status == CKB_REPLY_HTTP_ERROR && r.http_code == 503 && r.attempts == 2,
                    "the callback's code: %s %d", ckb_reply_status_name(r.status), r.http_code);
        ckb_reply_free(&r);
        ckb_provider_close(p);
    }
    CKBT_EXPECT(ckbt_fake_llm_nrequests(f) == 4, "requests %d", ckbt_fake_llm_nrequests(f));
    ckbt_fake_llm_stop(f);
}
