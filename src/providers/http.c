#include "providers/http.h"

#include <curl/curl.h>
#include <json-c/json.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/proc.h"
#include "core/strbuf.h"
#include "providers/backend.h"

/* A body bigger than this is no chat reply: stop reading. */
#define HTTP_MAX_BODY ((size_t)64 << 20)
/* Neither a server's Retry-After nor our own backoff waits longer. */
#define HTTP_MAX_WAIT_S 60.0

static pthread_once_t http__once = PTHREAD_ONCE_INIT;

/* curl_global_init is not thread-safe in every libcurl we may meet: once. */
static void http__global_init(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* The backoff base: $CKB_RETRY_BASE_MS when set (tests make it short),
 * else one second. */
static double http__backoff_base_s(void)
{
    const char *e = getenv("CKB_RETRY_BASE_MS");
    if (e && *e) {
        char *end;
        double ms = strtod(e, &end);
        if (*end == '\0' && ms >= 0)
            return ms / 1000.0;
    }
    return 1.0;
}

/* Per-thread xorshift for the jitter: no shared state, no rand() lock. */
static double http__uniform01(void)
{
    static __thread uint64_t s;
    if (s == 0) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        s = ((uint64_t)t.tv_nsec << 20) ^ (uint64_t)t.tv_sec ^ (uint64_t)(uintptr_t)&s;
        if (s == 0)
            s = 0x9e3779b97f4a7c15ull;
    }
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return (double)(s >> 11) / (double)(1ull << 53);
}

static void http__sleep(double seconds)
{
    if (seconds <= 0)
        return;
    struct timespec t = {.tv_sec = (time_t)seconds,
                         .tv_nsec = (long)((seconds - floor(seconds)) * 1e9)};
    while (nanosleep(&t, &t) != 0)
        ;
}

/* Replaces every occurrence of secret in s (in place, shrinking only). */
static void http__scrub(char *s, const char *secret)
{
    if (!secret || strlen(secret) < 4)
        return;
    static const char mask[] = "[redacted]";
    size_t n = strlen(secret);
    char *hit;
    while ((hit = strstr(s, secret)) != NULL) {
        size_t m = n < sizeof mask - 1 ? n : sizeof mask - 1;
        memcpy(hit, mask, m);
        memmove(hit + m, hit + n, strlen(hit + n) + 1);
    }
}

static size_t http__on_body(char *data, size_t size, size_t nmemb, void *user)
{
    ckb_strbuf *sb = user;
    size_t n = size * nmemb;
    if (sb->len + n > HTTP_MAX_BODY)
        return 0; /* makes curl fail the transfer with CURLE_WRITE_ERROR */
    ckb_strbuf_append(sb, data, n);
    return n;
}

/* The server's Retry-After (or OpenAI's retry-after-ms) in seconds, -1 when
 * absent or unreadable. Both the delta-seconds and the HTTP-date forms. */
static double http__retry_after(CURL *curl)
{
    struct curl_header *h;
    if (curl_easy_header(curl, "retry-after-ms", 0, CURLH_HEADER, -1, &h) == CURLHE_OK) {
        char *end;
        double ms = strtod(h->value, &end);
        if (end != h->value && ms >= 0)
            return ms / 1000.0;
    }
    if (curl_easy_header(curl, "Retry-After", 0, CURLH_HEADER, -1, &h) != CURLHE_OK)
        return -1;
    char *end;
    double s = strtod(h->value, &end);
    if (end != h->value && s >= 0)
        return s;
    time_t when = curl_getdate(h->value, NULL);
    if (when < 0)
        return -1;
    double d = difftime(when, time(NULL));
    return d > 0 ? d : 0;
}

/* The message an API put in its error body: error.message (OpenAI,
 * Anthropic, Gemini), a string `error`, or `message`; else the body. */
static void http__error_message(const char *body, char *dst, size_t dstlen)
{
    json_object *root = body ? json_tokener_parse(body) : NULL;
    const char *msg = NULL;
    json_object *e, *m;
    if (root && json_object_is_type(root, json_type_object)) {
        if (json_object_object_get_ex(root, "error", &e)) {
            if (json_object_is_type(e, json_type_string))
                msg = json_object_get_string(e);
            else if (json_object_object_get_ex(e, "message", &m) &&
                     json_object_is_type(m, json_type_string))
                msg = json_object_get_string(m);
        } else if (json_object_object_get_ex(root, "message", &m) &&
                   json_object_is_type(m, json_type_string)) {
            msg = json_object_get_string(m);
        }
    }
    if (!msg)
        msg = body && *body ? body : "(empty body)";
    snprintf(dst, dstlen, "%s", msg);
    json_object_put(root);
}

static int http__retryable_curl(CURLcode rc)
{
    return rc == CURLE_OPERATION_TIMEDOUT || rc == CURLE_RECV_ERROR || rc == CURLE_SEND_ERROR ||
           rc == CURLE_GOT_NOTHING || rc == CURLE_PARTIAL_FILE;
}

typedef struct {
    const char *url;
    const char *const *headers; /* "Name: value" lines, NULL-terminated */
    const char *body;           /* JSON */
    double timeout_s;           /* per attempt */
    int max_retries;
    double backoff_base_s; /* first retry waits about this long, then doubles */
    const char *secret;    /* scrubbed from every error text; may be NULL */
} http__request;

typedef struct {
    ckb_reply_status status; /* OK (a 2xx), HTTP_ERROR, TIMEOUT or TRANSPORT */
    long code;               /* the last HTTP status, 0 when none came */
    char *body;              /* the last body, NUL-terminated; caller frees */
    size_t body_len;
    int attempts;
    char error[400]; /* why, when status != OK */
} http__response;

/* Posts rq->body to rq->url; always fills *rs. Returns 0 when rs->status is
 * OK. Thread-safe. */
static int http__post(const http__request *rq, http__response *rs)
{
    memset(rs, 0, sizeof *rs);
    rs->status = CKB_REPLY_TRANSPORT;
    pthread_once(&http__once, http__global_init);

    char curl_err[CURL_ERROR_SIZE];
    ckb_strbuf body = {0};
    struct curl_slist *hdrs = NULL;
    CURL *curl = curl_easy_init();
    if (!curl) {
        snprintf(rs->error, sizeof rs->error, "could not start libcurl");
        goto cleanup;
    }
    hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
    /* no "Expect: 100-continue" round trip before large prompts */
    hdrs = curl_slist_append(hdrs, "Expect:");
    for (const char *const *h = rq->headers; h && *h; h++)
        hdrs = curl_slist_append(hdrs, *h);

    long timeout_ms = (long)(rq->timeout_s * 1000.0);
    if (timeout_ms < 1)
        timeout_ms = 1;
    curl_easy_setopt(curl, CURLOPT_URL, rq->url);
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, rq->body);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(rq->body));
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms < 30000 ? timeout_ms : 30000L);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L); /* threads: no SIGALRM for DNS timeouts */
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, http__on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_err);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "ckbench");
    curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");

    int max_attempts = 1 + (rq->max_retries > 0 ? rq->max_retries : 0);
    for (int attempt = 1; attempt <= max_attempts; attempt++) {
        ckb_strbuf_free(&body);
        curl_err[0] = '\0';
        rs->attempts = attempt;
        CURLcode rc = curl_easy_perform(curl);
        int retry = 0;
        double server_wait = -1;
        if (rc == CURLE_OK) {
            curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &rs->code);
            if (rs->code >= 200 && rs->code < 300) {
                rs->status = CKB_REPLY_OK;
                rs->error[0] = '\0';
                break;
            }
            rs->status = CKB_REPLY_HTTP_ERROR;
            char msg[300];
            http__error_message(body.data, msg, sizeof msg);
            snprintf(rs->error, sizeof rs->error, "HTTP %ld: %s", rs->code, msg);
            retry = rs->code == 429 || rs->code >= 500;
            if (retry)
                server_wait = http__retry_after(curl);
        } else {
            rs->code = 0;
            /* A time-out before any connection is the endpoint being away
             * (infrastructure), not a model that is slow to answer. */
            curl_off_t connected_us = 0;
            curl_easy_getinfo(curl, CURLINFO_CONNECT_TIME_T, &connected_us);
            int slow_model = rc == CURLE_OPERATION_TIMEDOUT && connected_us > 0;
            rs->status = slow_model ? CKB_REPLY_TIMEOUT : CKB_REPLY_TRANSPORT;
            if (slow_model)
                snprintf(rs->error, sizeof rs->error, "no answer within %.3g s (per attempt)",
                         rq->timeout_s);
            else if (rc == CURLE_OPERATION_TIMEDOUT)
                snprintf(rs->error, sizeof rs->error, "no connection within %.3g s (per attempt)",
                         rq->timeout_s);
            else
                snprintf(rs->error, sizeof rs->error, "%s%s%s", curl_easy_strerror(rc),
                         curl_err[0] ? ": " : "", curl_err);
            retry = http__retryable_curl(rc);
        }
        if (!retry || attempt == max_attempts)
            break;
        double wait = server_wait >= 0 ? server_wait
                                       : rq->backoff_base_s * pow(2.0, attempt - 1) *
                                             (0.5 + 0.5 * http__uniform01());
        http__sleep(wait < HTTP_MAX_WAIT_S ? wait : HTTP_MAX_WAIT_S);
    }
    rs->body_len = body.len;
    rs->body = ckb_strbuf_take(&body);

cleanup:
    http__scrub(rs->error, rq->secret);
    ckb_strbuf_free(&body);
    curl_slist_free_all(hdrs);
    if (curl)
        curl_easy_cleanup(curl);
    return rs->status == CKB_REPLY_OK ? 0 : -1;
}

static void http__response_free(http__response *rs)
{
    free(rs->body);
    rs->body = NULL;
    rs->body_len = 0;
}

int ckb_http_url_host_is(const char *url, const char *host)
{
    pthread_once(&http__once, http__global_init);
    CURLU *u = curl_url();
    char *h = NULL;
    int same = 0;
    if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &h, 0) == CURLUE_OK)
        same = strcasecmp(h, host) == 0;
    curl_free(h);
    curl_url_cleanup(u);
    return same;
}

static int http__url_ok(const char *url)
{
    CURLU *u = curl_url();
    char *scheme = NULL;
    int ok = u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
             curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
             (strcmp(scheme, "http") == 0 || strcmp(scheme, "https") == 0);
    curl_free(scheme);
    curl_url_cleanup(u);
    return ok;
}

int ckb_http_endpoint_init(ckb_http_endpoint *ep, const ckb_provider_config *c,
                           const char *provider, const char *base_env, const char *default_base,
                           const char *default_key_env, int key_optional, ckb_err *err)
{
    memset(ep, 0, sizeof *ep);
    pthread_once(&http__once, http__global_init);
    const char *base = c->base_url && *c->base_url ? c->base_url : getenv(base_env);
    if (!base || !*base)
        base = default_base;
    const char *key_env = c->api_key_env && *c->api_key_env ? c->api_key_env : default_key_env;
    const char *key = getenv(key_env);

    if (!c->model || !*c->model) {
        ckb_err_set(err, CKB_E_USAGE, "%s: no model given: name the model to call (--model NAME)",
                    provider);
        goto fail;
    }
    if (!http__url_ok(base)) {
        ckb_err_set(err, CKB_E_USAGE,
                    "%s: base URL '%s' is not an http(s) URL (set by --base-url or $%s)", provider,
                    base, base_env);
        goto fail;
    }
    if ((!key || !*key) && !key_optional) {
        ckb_err_set(err, CKB_E_USAGE, "%s: no API key: set the environment variable %s", provider,
                    key_env);
        goto fail;
    }
    ep->base_url = ckb_xstrdup(base);
    size_t n = strlen(ep->base_url);
    while (n > 0 && ep->base_url[n - 1] == '/')
        ep->base_url[--n] = '\0';
    ep->api_key = key && *key ? ckb_xstrdup(key) : NULL;
    ep->model = ckb_xstrdup(c->model);
    ep->timeout_s = c->timeout_s > 0 ? c->timeout_s : 300.0;
    ep->max_retries = c->max_retries > 0 ? c->max_retries : 0;
    ep->backoff_base_s = http__backoff_base_s();
    ep->max_tokens = c->max_tokens > 0 ? c->max_tokens : 8192;
    ep->temperature = c->temperature;
    return CKB_OK;
fail:
    return CKB_E_USAGE;
}

void ckb_http_endpoint_free(ckb_http_endpoint *ep)
{
    free(ep->base_url);
    if (ep->api_key) /* do not leave the key lying in freed memory */
        memset(ep->api_key, 0, strlen(ep->api_key));
    free(ep->api_key);
    free(ep->model);
    free(ep->url);
    memset(ep, 0, sizeof *ep);
}

void ckb_http_endpoint_set_url(ckb_http_endpoint *ep, const char *path_fmt, ...)
{
    va_list ap;
    va_start(ap, path_fmt);
    int n = vsnprintf(NULL, 0, path_fmt, ap);
    va_end(ap);
    size_t base = strlen(ep->base_url);
    free(ep->url);
    ep->url = ckb_xmalloc(base + (size_t)n + 1);
    memcpy(ep->url, ep->base_url, base);
    va_start(ap, path_fmt);
    vsnprintf(ep->url + base, (size_t)n + 1, path_fmt, ap);
    va_end(ap);
}

void ckb_http_state_close(void *state)
{
    if (!state)
        return;
    ckb_http_endpoint_free(state);
    free(state);
}

/* Turns a finished response into the reply's transport fields (attempts,
 * http_code) and, when it is not a 2xx, its status and error. Returns 1 when
 * the body is a 2xx the caller should parse, 0 otherwise. */
static int http__reply_from(const http__response *rs, const char *provider, ckb_reply *out)
{
    out->attempts = rs->attempts;
    out->http_code = (int)rs->code;
    if (rs->status == CKB_REPLY_OK)
        return 1;
    out->status = rs->status;
    ckb_provider_set_error(out->error, sizeof out->error, provider, rs->error);
    return 0;
}

/* root parsed from body, or NULL with out->status MALFORMED and an error
 * that quotes the start of the body. */
static json_object *http__parse_body(const char *body, const char *provider, ckb_reply *out)
{
    json_object *root = body && *body ? json_tokener_parse(body) : NULL;
    if (root && json_object_is_type(root, json_type_object))
        return root;
    json_object_put(root);
    char msg[300];
    snprintf(msg, sizeof msg, "reply is not the API's JSON: %.200s",
             body && *body ? body : "(empty body)");
    out->status = CKB_REPLY_MALFORMED;
    ckb_provider_set_error(out->error, sizeof out->error, provider, msg);
    return NULL;
}

void ckb_http_chat(const ckb_http_endpoint *ep, const char *provider, const char *auth_prefix,
                   const char *extra_header, const char *body, ckb_http_parse_fn parse,
                   ckb_reply *out)
{
    char *auth = NULL;
    const char *headers[3] = {NULL, NULL, NULL};
    int nh = 0;
    if (ep->api_key) {
        size_t n = strlen(auth_prefix) + strlen(ep->api_key) + 1;
        auth = ckb_xmalloc(n);
        snprintf(auth, n, "%s%s", auth_prefix, ep->api_key);
        headers[nh++] = auth;
    }
    if (extra_header)
        headers[nh++] = extra_header;
    http__request rq = {.url = ep->url,
                           .headers = headers,
                           .body = body,
                           .timeout_s = ep->timeout_s,
                           .max_retries = ep->max_retries,
                           .backoff_base_s = ep->backoff_base_s,
                           .secret = ep->api_key};
    http__response rs;
    http__post(&rq, &rs);
    if (http__reply_from(&rs, provider, out)) {
        json_object *root = http__parse_body(rs.body, provider, out);
        if (root)
            parse(root, out);
        json_object_put(root);
    }
    http__response_free(&rs);
    if (auth) /* do not leave the key lying in freed memory */
        memset(auth, 0, strlen(auth));
    free(auth);
}
