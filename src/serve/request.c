/* An evaluation request, validated (see request.h). */
#include "serve/request.h"

#include <json-c/json.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "workloads/workload.h"

void ckb_api_error_set(ckb_api_error *e, int status, const char *code, const char *fmt, ...)
{
    e->status = status;
    snprintf(e->code, sizeof e->code, "%s", code);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    va_end(ap);
}

static const char *const request__fields[] = {"workload", "source", "size",  "threads",
                                              "seeds",    "warmup", "iters", "client_key"};

/* An integer field in lo..hi, or its default when absent. */
static int request__int(json_object *o, const char *where, const char *key, int lo, int hi,
                        int dflt, int *out, ckb_api_error *e)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v)) {
        *out = dflt;
        return 0;
    }
    /* 46.0 is the integer 46 in JSON Schema's reading too */
    double d = json_object_get_double(v);
    int integral = json_object_is_type(v, json_type_int) ||
                   (json_object_is_type(v, json_type_double) && d == (double)(int64_t)d &&
                    fabs(d) < 1e15);
    if (!integral) {
        ckb_api_error_set(e, 400, "invalid_field", "%s%s must be an integer", where, key);
        return -1;
    }
    int64_t x = json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : (int64_t)d;
    if (x < lo || x > hi) {
        ckb_api_error_set(e, 400, "invalid_field", "%s%s must be in %d..%d (got %lld)", where,
                          key, lo, hi, (long long)x);
        return -1;
    }
    *out = (int)x;
    return 0;
}

static const char *request__string(json_object *o, const char *key, size_t *len)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
        return NULL;
    *len = (size_t)json_object_get_string_len(v);
    return json_object_get_string(v);
}

static int request__key_ok(const char *k, size_t n)
{
    if (n < 1 || n > 128)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = k[i];
        if (!(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9') &&
            !strchr("._:-", c))
            return 0;
    }
    return 1;
}

/* The request's identity: a client_key replayed with other fields or
 * another source is another request. */
static void request__digest(ckb_request *r)
{
    unsigned char h[EVP_MAX_MD_SIZE];
    unsigned hlen = 0;
    char head[256];
    int n = snprintf(head, sizeof head, "%s%c%s%c%d%c%d%c%d%c%d%c", r->q.workload, 0, r->q.size,
                     0, r->q.threads, 0, r->q.seeds, 0, r->q.warmup, 0, r->q.iters, 0);
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    if (!c || !EVP_DigestInit_ex(c, EVP_sha256(), NULL) ||
        !EVP_DigestUpdate(c, head, (size_t)n) ||
        !EVP_DigestUpdate(c, r->q.source, r->q.source_len) || !EVP_DigestFinal_ex(c, h, &hlen))
        ckb__oom(__FILE__, __LINE__); /* only out of memory can fail it (core/alloc.h) */
    EVP_MD_CTX_free(c);
    for (int i = 0; i < 8; i++)
        snprintf(r->digest + 2 * i, 3, "%02x", h[i]);
    r->q.digest = r->digest;
}

int ckb_request_parse(json_object *o, const ckb_request_limits *lim, const char *where,
                      ckb_request *r, ckb_api_error *e)
{
    memset(r, 0, sizeof *r);
    if (!json_object_is_type(o, json_type_object)) {
        ckb_api_error_set(e, 400, "invalid_body", "%s must be a JSON object",
                          where[0] ? where : "the body");
        return -1;
    }
    json_object_object_foreach(o, key, val) {
        (void)val;
        int known = 0;
        for (size_t i = 0; i < sizeof request__fields / sizeof *request__fields; i++)
            known |= strcmp(key, request__fields[i]) == 0;
        if (!known) {
            ckb_api_error_set(e, 400, "unknown_field",
                              "%sunknown field '%.64s' (fields: workload, source, size, threads, "
                              "seeds, warmup, iters, client_key)",
                              where, key);
            return -1;
        }
    }
    size_t len = 0;
    const char *name = request__string(o, "workload", &len);
    if (!name) {
        ckb_api_error_set(e, 400, "invalid_field", "%sworkload is required, a string such as "
                                                   "\"8p\" (GET /v1/workloads lists them)", where);
        return -1;
    }
    const ckb_workload *w = ckb_workload_find(name);
    if (!w || strlen(name) != len) {
        ckb_api_error_set(e, 404, "unknown_workload",
                          "%sunknown workload '%.64s' (GET /v1/workloads lists them)", where,
                          name);
        return -1;
    }
    r->q.workload = w->id;
    r->q.source = request__string(o, "source", &r->q.source_len);
    if (!r->q.source || r->q.source_len == 0) {
        ckb_api_error_set(e, 400, "invalid_field",
                          "%ssource is required: the candidate's C text, a non-empty string",
                          where);
        return -1;
    }
    if (strlen(r->q.source) != r->q.source_len) {
        ckb_api_error_set(e, 400, "invalid_field", "%ssource holds a NUL character", where);
        return -1;
    }
    if ((long)r->q.source_len > lim->max_source_bytes) {
        ckb_api_error_set(e, 413, "source_too_large",
                          "%ssource is %zu bytes; this token's limit is %ld", where,
                          r->q.source_len, lim->max_source_bytes);
        return -1;
    }
    json_object *v;
    r->q.size = "default";
    if (json_object_object_get_ex(o, "size", &v)) {
        ckb_size s;
        if (!json_object_is_type(v, json_type_string) ||
            ckb_size_parse(json_object_get_string(v), &s) != 0) {
            ckb_api_error_set(e, 400, "invalid_field",
                              "%ssize must be \"small\", \"default\", \"paper\" or \"host\"", where);
            return -1;
        }
        if (s == CKB_SIZE_HOST && !lim->host_size) {
            ckb_api_error_set(e, 400, "invalid_field",
                              "%ssize \"host\" is not served here (the server was started "
                              "without --host-size)", where);
            return -1;
        }
        r->q.size = ckb_size_name(s);
    }
    if (request__int(o, where, "threads", 1, lim->max_threads, lim->default_threads,
                     &r->q.threads, e) ||
        request__int(o, where, "seeds", 1, 7, 3, &r->q.seeds, e) ||
        request__int(o, where, "warmup", 0, 100, 5, &r->q.warmup, e) ||
        request__int(o, where, "iters", 1, 400, 50, &r->q.iters, e))
        return -1;
    if (json_object_object_get_ex(o, "client_key", &v)) {
        size_t klen = 0;
        r->q.client_key = request__string(o, "client_key", &klen);
        if (!r->q.client_key || !request__key_ok(r->q.client_key, klen)) {
            ckb_api_error_set(e, 400, "invalid_field",
                              "%sclient_key must be 1 to 128 characters of A-Z a-z 0-9 . _ : -",
                              where);
            return -1;
        }
    }
    request__digest(r);
    return 0;
}
