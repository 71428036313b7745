/*
 * The routes of the API (docs/openapi.yaml): a request in, a status and a
 * body out. Nothing here knows of sockets; http.c carries the bytes.
 */
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/expert.h"
#include "core/alloc.h"
#include "core/proc.h"
#include "core/strbuf.h"
#include "core/utf8.h"
#include "gen/gen.h"
#include "serve/request.h"
#include "serve/serve_priv.h"

#define API__MAX_BATCH 1000
/* a long-poll's longest wait: past a minute, proxies and clients time out idle
 * connections; a client polls again */
#define API__MAX_WAIT_S 60.0

static void api__json(ckb_api_response *r, int status, json_object *j)
{
    const char *t = ckb_json_text(j, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    r->status = status;
    r->body = ckb_xstrdup(t);
    r->len = strlen(t);
    r->content_type = "application/json";
    json_object_put(j);
}

static void api__text(ckb_api_response *r, char *text)
{
    r->status = 200;
    r->body = text;
    r->len = strlen(text);
    r->content_type = "text/plain; charset=utf-8";
}

void ckb_api_error_response(ckb_api_response *r, int status, const char *code,
                            const char *message)
{
    json_object *j = json_object_new_object(), *e = json_object_new_object();
    json_object_object_add(e, "code", json_object_new_string(code));
    json_object_object_add(e, "message", json_object_new_string(message));
    json_object_object_add(j, "error", e);
    api__json(r, status, j);
}

static void api__error(ckb_api_response *r, const ckb_api_error *e)
{
    ckb_api_error_response(r, e->status, e->code, e->message);
}

/* A store failure as the client sees it: a full disk or a broken store is
 * the server's trouble (503, try later), never a corrupt answer. */
static void api__store_error(ckb_api_response *r, ckb_store_rc rc)
{
    char msg[700];
    snprintf(msg, sizeof msg, "%s: %s",
             rc == CKB_STORE_DISK_FULL ? "the server's disk is full; nothing was stored"
                                       : "the server's store failed; nothing was changed",
             ckb_store_last_error());
    ckb_api_error_response(r, 503, rc == CKB_STORE_DISK_FULL ? "disk_full" : "store_error", msg);
    r->retry_after = 30;
}

static json_object *api__time(double unix_s)
{
    if (unix_s <= 0)
        return NULL;
    time_t t = (time_t)unix_s;
    struct tm tm;
    gmtime_r(&t, &tm);
    char buf[40];
    size_t n = strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, sizeof buf - n, ".%03dZ", (int)((unix_s - (double)t) * 1000) % 1000);
    return json_object_new_string(buf);
}

static double api__unix_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static json_object *api__secs(double s) { return s >= 0 ? json_object_new_double(s) : NULL; }

/* The evaluation object of the API. */
static json_object *api__evaluation(const ckb_store_row *row)
{
    json_object *j = json_object_new_object();
    double now = api__unix_now();
    json_object_object_add(j, "id", json_object_new_string(row->id));
    json_object_object_add(j, "state", json_object_new_string(ckb_store_state_name(row->state)));
    json_object_object_add(j, "workload", json_object_new_string(row->workload));
    json_object_object_add(j, "size", json_object_new_string(row->size));
    json_object_object_add(j, "threads", json_object_new_int(row->threads));
    json_object_object_add(j, "seeds", json_object_new_int(row->seeds));
    json_object_object_add(j, "warmup", json_object_new_int(row->warmup));
    json_object_object_add(j, "iters", json_object_new_int(row->iters));
    json_object_object_add(j, "client_key",
                           row->client_key ? json_object_new_string(row->client_key) : NULL);
    if (row->state == CKB_EV_QUEUED)
        json_object_object_add(j, "queue_position", json_object_new_int64(row->queue_position));
    json_object_object_add(j, "submitted_at", api__time(row->submitted_at));
    json_object_object_add(j, "started_at", api__time(row->started_at));
    json_object_object_add(j, "finished_at", api__time(row->finished_at));
    double left_queue = row->started_at > 0 ? row->started_at
                        : row->finished_at > 0 ? row->finished_at
                                               : now;
    json_object_object_add(j, "queue_s", api__secs(left_queue - row->submitted_at));
    json_object_object_add(j, "run_s",
                           api__secs(row->started_at > 0
                                         ? (row->finished_at > 0 ? row->finished_at : now) -
                                               row->started_at
                                         : -1));
    json_object_object_add(j, "attempts", json_object_new_int(row->attempts));
    if (row->state == CKB_EV_DONE && row->result)
        json_object_object_add(j, "result", json_tokener_parse(row->result));
    if (row->state == CKB_EV_FAILED) {
        json_object *e = json_object_new_object();
        json_object_object_add(e, "code", json_object_new_string(row->error_code
                                                                      ? row->error_code
                                                                      : "harness_error"));
        json_object_object_add(e, "message", json_object_new_string(row->error_message
                                                                         ? row->error_message
                                                                         : ""));
        json_object_object_add(j, "error", e);
    }
    return j;
}

/* The body as JSON: strict, valid UTF-8, a bounded depth. NULL with e. */
static json_object *api__body(const ckb_api_request *q, ckb_api_error *e)
{
    if (q->body_len == 0) {
        ckb_api_error_set(e, 400, "invalid_body", "the request needs a JSON body");
        return NULL;
    }
    json_tokener *tok = json_tokener_new_ex(16);
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *j = json_tokener_parse_ex(tok, q->body, (int)q->body_len);
    enum json_tokener_error err = json_tokener_get_error(tok);
    size_t used = tok->char_offset;
    json_tokener_free(tok);
    if (!j || err != json_tokener_success || used != q->body_len) {
        if (j && err == json_tokener_success)
            ckb_api_error_set(e, 400, "invalid_json", "the body holds more than one JSON value "
                                                      "(trailing bytes at offset %zu)", used);
        else
            ckb_api_error_set(e, 400, "invalid_json", "the body is not valid JSON: %s%s",
                              json_tokener_error_desc(err == json_tokener_success
                                                          ? json_tokener_continue
                                                          : err),
                              err == json_tokener_success ? " (it ends too early)" : "");
        json_object_put(j);
        return NULL;
    }
    return j;
}

static void api__limits(ckb_server *s, const ckb_api_request *q, ckb_request_limits *lim)
{
    lim->max_threads = s->max_threads;
    lim->default_threads = s->c.threads;
    lim->host_size = s->c.host_size;
    lim->max_source_bytes = q->token ? q->token->max_source_bytes : CKB_TOKEN_DEFAULT_SOURCE_BYTES;
}

/* Without a token file the caller is the host's own user: the server's
 * queue limit is the only one (0: no bound of its own). */
static int64_t api__owner_limit(const ckb_api_request *q)
{
    return q->token ? q->token->max_queued : 0;
}

/* Queues n parsed requests and answers with their evaluation objects. */
static void api__submit(ckb_server *s, const ckb_api_request *q, const ckb_request *reqs, int n,
                        int batch, ckb_api_response *r)
{
    ckb_store_new *qs = ckb_xcalloc((size_t)n, sizeof *qs);
    ckb_store_row *rows = ckb_xcalloc((size_t)n, sizeof *rows);
    for (int i = 0; i < n; i++)
        qs[i] = reqs[i].q;
    int bad = -1;
    ckb_store_rc rc = ckb_store_submit(s->store, q->owner, qs, n, api__owner_limit(q),
                                       s->c.max_queue, rows, &bad);
    char msg[700];
    switch (rc) {
    case CKB_STORE_OK: {
        int fresh = 0;
        for (int i = 0; i < n; i++)
            fresh |= !rows[i].existed;
        if (batch) {
            json_object *j = json_object_new_object(), *a = json_object_new_array();
            for (int i = 0; i < n; i++)
                json_object_array_add(a, api__evaluation(&rows[i]));
            json_object_object_add(j, "evaluations", a);
            api__json(r, fresh ? 202 : 200, j);
        } else {
            api__json(r, fresh ? 202 : 200, api__evaluation(&rows[0]));
        }
        for (int i = 0; i < n; i++)
            ckb_store_row_free(&rows[i]);
        if (fresh)
            ckb_runner_kick(s->runner);
        break;
    }
    case CKB_STORE_CONFLICT:
        if (batch)
            snprintf(msg, sizeof msg, "evaluations[%d]: %s", bad, ckb_store_last_error());
        else
            snprintf(msg, sizeof msg, "%s", ckb_store_last_error());
        ckb_api_error_response(r, 409, "client_key_conflict", msg);
        break;
    case CKB_STORE_OWNER_FULL:
    case CKB_STORE_QUEUE_FULL:
        ckb_api_error_response(r, 429, rc == CKB_STORE_OWNER_FULL ? "token_queue_full"
                                                                   : "queue_full",
                               ckb_store_last_error());
        /* about one evaluation's time: a slot may be free by then */
        r->retry_after = 30;
        break;
    default:
        api__store_error(r, rc);
    }
    free(qs);
    free(rows);
}

static void api__post_evaluation(ckb_server *s, const ckb_api_request *q, ckb_api_response *r)
{
    ckb_api_error e;
    json_object *j = api__body(q, &e);
    ckb_request req;
    ckb_request_limits lim;
    api__limits(s, q, &lim);
    if (!j || ckb_request_parse(j, &lim, "", &req, &e) != 0)
        api__error(r, &e);
    else
        api__submit(s, q, &req, 1, 0, r);
    json_object_put(j);
}

static void api__post_batch(ckb_server *s, const ckb_api_request *q, ckb_api_response *r)
{
    ckb_api_error e;
    json_object *j = api__body(q, &e), *list = NULL;
    if (!j) {
        api__error(r, &e);
        return;
    }
    if (!json_object_is_type(j, json_type_object) ||
        !json_object_object_get_ex(j, "evaluations", &list) ||
        !json_object_is_type(list, json_type_array) || json_object_object_length(j) != 1) {
        ckb_api_error_response(r, 400, "invalid_body",
                               "the body must be {\"evaluations\": [request, ...]} and nothing "
                               "else");
        json_object_put(j);
        return;
    }
    int n = (int)json_object_array_length(list);
    if (n < 1 || n > API__MAX_BATCH) {
        char msg[128];
        snprintf(msg, sizeof msg, "a batch holds 1 to %d evaluations (this one %d)",
                 API__MAX_BATCH, n);
        ckb_api_error_response(r, 400, n < 1 ? "invalid_body" : "batch_too_large", msg);
        json_object_put(j);
        return;
    }
    ckb_request *reqs = ckb_xcalloc((size_t)n, sizeof *reqs); /* n is bounded just above */
    ckb_request_limits lim;
    api__limits(s, q, &lim);
    int ok = 1;
    for (int i = 0; ok && i < n; i++) {
        char where[32];
        snprintf(where, sizeof where, "evaluations[%d].", i);
        if (ckb_request_parse(json_object_array_get_idx(list, i), &lim, where, &reqs[i], &e) != 0) {
            api__error(r, &e);
            ok = 0;
        }
    }
    if (ok)
        api__submit(s, q, reqs, n, 1, r);
    free(reqs);
    json_object_put(j);
}

/* "ev_" and 16 lower-case hex digits; anything else names no evaluation. */
static int api__id_ok(const char *id)
{
    if (strncmp(id, "ev_", 3) != 0 || strlen(id) != 19)
        return 0;
    for (int i = 3; i < 19; i++)
        if (!strchr("0123456789abcdef", id[i]))
            return 0;
    return 1;
}

static void api__not_found(ckb_api_response *r, const char *id)
{
    char msg[160];
    snprintf(msg, sizeof msg, "no evaluation '%.40s' for this token", id);
    ckb_api_error_response(r, 404, "not_found", msg);
}

static void api__get_evaluation(ckb_server *s, ckb_api_request *q, const char *id,
                                ckb_api_response *r)
{
    double wait = 0;
    const char *w = q->arg(q->arg_ctx, "wait");
    if (w) {
        char *end;
        wait = strtod(w, &end);
        if (end == w || *end || !isfinite(wait) || wait < 0 || wait > API__MAX_WAIT_S) {
            ckb_api_error_response(r, 400, "invalid_parameter",
                                   "wait is a number of seconds, 0 to 60");
            return;
        }
    }
    if (!api__id_ok(id)) {
        api__not_found(r, id);
        return;
    }
    ckb_store_row row;
    ckb_store_rc rc = ckb_store_get(s->store, q->owner, id, 0, &row);
    if (rc == CKB_STORE_NOT_FOUND) {
        api__not_found(r, id);
        return;
    }
    if (rc != CKB_STORE_OK) {
        api__store_error(r, rc);
        return;
    }
    if (q->deadline == 0)
        q->deadline = ckb_now() + wait;
    if ((row.state == CKB_EV_QUEUED || row.state == CKB_EV_RUNNING) && ckb_now() < q->deadline) {
        r->wait = 1;
    } else {
        api__json(r, 200, api__evaluation(&row));
    }
    ckb_store_row_free(&row);
}

static void api__delete_evaluation(ckb_server *s, const ckb_api_request *q, const char *id,
                                   ckb_api_response *r)
{
    if (!api__id_ok(id)) {
        api__not_found(r, id);
        return;
    }
    ckb_store_row row;
    ckb_store_rc rc = ckb_runner_cancel(s->runner, q->owner, id, &row);
    if (rc == CKB_STORE_OK) {
        api__json(r, 200, api__evaluation(&row));
        ckb_store_row_free(&row);
        ckb_http_wake(s);
    } else if (rc == CKB_STORE_CONFLICT) {
        char msg[160];
        snprintf(msg, sizeof msg, "evaluation %s has already ended (%s)", id,
                 ckb_store_state_name(row.state));
        ckb_store_row_free(&row);
        ckb_api_error_response(r, 409, "already_finished", msg);
    } else if (rc == CKB_STORE_NOT_FOUND) {
        api__not_found(r, id);
    } else {
        api__store_error(r, rc);
    }
}

/* ---- workloads ---------------------------------------------------------- */

static json_object *api__workload_brief(const ckb_workload *w)
{
    json_object *j = json_object_new_object(), *dims = json_object_new_object(),
                *gf = json_object_new_object();
    char path[512];
    json_object_object_add(j, "id", json_object_new_string(w->id));
    json_object_object_add(j, "summary", json_object_new_string(w->summary));
    json_object_object_add(j, "model", json_object_new_string(w->model));
    json_object_object_add(j, "operator", json_object_new_string(w->op));
    json_object_object_add(j, "tags", json_object_new_string(w->tags));
    json_object_object_add(j, "expert",
                           json_object_new_boolean(ckb_expert_path(w, path, sizeof path) != 0));
    for (int s = 0; s < CKB_SIZE_HOST; s++) {
        int64_t d[CKB_MAX_DIMS];
        ckb_workload_dims(w, (ckb_size)s, d);
        json_object_object_add(dims, ckb_size_name((ckb_size)s), ckb_workload_dims_json(w, (ckb_size)s));
        json_object_object_add(gf, ckb_size_name((ckb_size)s),
                               json_object_new_double(w->flops(d) / 1e9));
    }
    json_object_object_add(j, "dims", dims);
    json_object_object_add(j, "gflop", gf);
    return j;
}

static int api__size_arg(ckb_server *s, const ckb_api_request *q, ckb_size *out,
                         ckb_api_response *r)
{
    const char *v = q->arg(q->arg_ctx, "size");
    *out = CKB_SIZE_DEFAULT;
    if (v && (ckb_size_parse(v, out) != 0 || (*out == CKB_SIZE_HOST && !s->c.host_size))) {
        ckb_api_error_response(r, 400, "invalid_parameter",
                               *out == CKB_SIZE_HOST
                                   ? "size host is not served here (started without --host-size)"
                                   : "size is small, default, paper or host");
        return -1;
    }
    return 0;
}

static void api__get_workload(ckb_server *s, const ckb_api_request *q, const ckb_workload *w,
                              ckb_api_response *r)
{
    ckb_size size;
    if (api__size_arg(s, q, &size, r) != 0)
        return;
    json_object *j = api__workload_brief(w), *tol = json_object_new_object(),
                *consts = json_object_new_object(), *params = json_object_new_array();
    json_object_object_add(tol, "atol", json_object_new_double(ckb_workload_atol(w)));
    json_object_object_add(tol, "rtol", json_object_new_double(ckb_workload_rtol(w)));
    json_object_object_add(tol, "reason", w->tolerance_reason
                                              ? json_object_new_string(w->tolerance_reason)
                                              : NULL);
    json_object_object_add(j, "tolerance", tol);
    for (int i = 0; i < w->nconsts; i++)
        json_object_object_add(consts, w->consts[i].name,
                               json_object_new_double(w->consts[i].value));
    json_object_object_add(j, "consts", consts);
    char *sig = ckb_workload_signature(w), *hdr = ckb_workload_candidate_header(w, size);
    json_object_object_add(j, "signature", json_object_new_string(sig));
    json_object_object_add(j, "header_size", json_object_new_string(ckb_size_name(size)));
    json_object_object_add(j, "header", json_object_new_string(hdr));
    free(sig);
    free(hdr);
    /* the defaults as this host runs them untuned: its unit, its model's blocks */
    int64_t def[CKB_MAX_PARAMS];
    ckb_expert_defaults(w, s->c.machine, def);
    for (int i = 0; i < w->nparams; i++) {
        json_object *p = json_object_new_object(), *grid = json_object_new_array();
        json_object_object_add(p, "name", json_object_new_string(w->params[i].name));
        json_object_object_add(p, "default", json_object_new_int64(def[i]));
        json_object_object_add(p, "host_default",
                               json_object_new_boolean(w->params[i].fallback < 0));
        for (int k = 0; k < w->params[i].nvalues; k++)
            json_object_array_add(grid, json_object_new_int64(w->params[i].values[k]));
        json_object_object_add(p, "grid", grid);
        json_object_array_add(params, p);
    }
    json_object_object_add(j, "expert_parameters", params);
    api__json(r, 200, j);
}

static int api__flag(const char *v) { return v && (!strcmp(v, "1") || !strcmp(v, "true")); }

static void api__get_prompt(ckb_server *s, const ckb_api_request *q, const ckb_workload *w,
                            ckb_api_response *r)
{
    const char *method = q->arg(q->arg_ctx, "method"), *docs = q->arg(q->arg_ctx, "docs");
    ckb_gen_method m = CKB_GEN_BEST_OF_N;
    ckb_size size;
    if (method && ckb_gen_method_parse(method, &m) != 0) {
        ckb_api_error_response(r, 400, "invalid_parameter",
                               "method is best-of-n, refine, refine-docs or beam");
        return;
    }
    if (docs && !api__flag(docs) && strcmp(docs, "0") && strcmp(docs, "false")) {
        ckb_api_error_response(r, 400, "invalid_parameter", "docs is 0, 1, true or false");
        return;
    }
    if (api__size_arg(s, q, &size, r) != 0)
        return;
    ckb_err err;
    char *text = ckb_gen_prompt_text(w, m, api__flag(docs), size, s->c.threads, NULL, NULL, &err);
    if (!text)
        ckb_api_error_response(r, 500, "prompt_failed", err.msg);
    else
        api__text(r, text);
}

static void api__post_feedback(ckb_server *s, const ckb_api_request *q, ckb_api_response *r)
{
    ckb_api_error e;
    json_object *j = api__body(q, &e), *eval = NULL, *v;
    if (!j) {
        api__error(r, &e);
        return;
    }
    ckb_store_row row = {0};
    int have_row = 0;
    const char *id = json_object_object_get_ex(j, "id", &v) &&
                             json_object_is_type(v, json_type_string)
                         ? json_object_get_string(v)
                         : NULL;
    if (!json_object_is_type(j, json_type_object) || json_object_object_length(j) != 1 ||
        (!id && !(json_object_object_get_ex(j, "evaluation", &eval) &&
                  json_object_is_type(eval, json_type_object)))) {
        ckb_api_error_response(r, 400, "invalid_body",
                               "the body is {\"id\": \"ev_...\"} or {\"evaluation\": <the "
                               "result of an evaluation>}");
        goto done;
    }
    if (id) {
        ckb_store_rc rc = api__id_ok(id) ? ckb_store_get(s->store, q->owner, id, 0, &row)
                                         : CKB_STORE_NOT_FOUND;
        if (rc == CKB_STORE_NOT_FOUND) {
            api__not_found(r, id);
            goto done;
        }
        if (rc != CKB_STORE_OK) {
            api__store_error(r, rc);
            goto done;
        }
        have_row = 1;
        if (row.state != CKB_EV_DONE) {
            char msg[160];
            snprintf(msg, sizeof msg, "evaluation %s is %s: feedback needs a finished result",
                     id, ckb_store_state_name(row.state));
            ckb_api_error_response(r, 409, "not_done", msg);
            goto done;
        }
        eval = json_tokener_parse(row.result);
    } else {
        eval = json_object_get(eval);
    }
    const char *status = json_object_object_get_ex(eval, "status", &v) &&
                                 json_object_is_type(v, json_type_string)
                             ? json_object_get_string(v)
                             : NULL;
    if (!status) {
        ckb_api_error_response(r, 400, "invalid_body",
                               "the evaluation holds no \"status\": not an evaluation's result");
    } else {
        ckb_machine m;
        int measured;
        ckb_gen_machine(s->c.threads, &m, &measured);
        ckb_strbuf sb = {0};
        ckb_gen_feedback(&sb, status, eval, measured ? &m : NULL);
        api__text(r, ckb_strbuf_take(&sb));
    }
    json_object_put(eval);
done:
    if (have_row)
        ckb_store_row_free(&row);
    json_object_put(j);
}

static void api__health(ckb_server *s, ckb_api_response *r)
{
    ckb_store_counts c;
    ckb_store_rc rc = ckb_store_count(s->store, &c);
    json_object *j = json_object_new_object();
    json_object_object_add(j, "status", json_object_new_string(rc == CKB_STORE_OK ? "ok"
                                                                                  : "degraded"));
    json_object_object_add(j, "version", json_object_new_string(s->c.version));
    json_object_object_add(j, "commit", json_object_new_string(s->c.commit));
    json_object_object_add(j, "executor",
                           json_object_new_string(ckb_exec_kind_name(s->c.exec.kind)));
    json_object_object_add(j, "queue_depth", json_object_new_int64(c.by_state[CKB_EV_QUEUED]));
    json_object_object_add(j, "running", json_object_new_int(ckb_runner_running(s->runner)));
    api__json(r, rc == CKB_STORE_OK ? 200 : 503, j);
}

static void api__metrics(ckb_server *s, ckb_api_response *r)
{
    ckb_store_counts c;
    ckb_store_rc rc = ckb_store_count(s->store, &c);
    if (rc != CKB_STORE_OK) {
        api__store_error(r, rc);
        return;
    }
    api__text(r, ckb_metrics_render(s->metrics, &c, ckb_runner_running(s->runner)));
    r->content_type = "text/plain; version=0.0.4; charset=utf-8";
}

/* ---- routing ------------------------------------------------------------ */

static int api__method(const ckb_api_request *q, const char *allowed, ckb_api_response *r)
{
    /* allowed: "GET", "POST", "GET, DELETE" */
    size_t n = strlen(q->method);
    for (const char *p = allowed; (p = strstr(p, q->method)); p += n)
        if ((p == allowed || p[-2] == ',') && (p[n] == 0 || p[n] == ','))
            return 1;
    char msg[128];
    snprintf(msg, sizeof msg, "%.16s is not allowed here (allowed: %s)", q->method, allowed);
    ckb_api_error_response(r, 405, "method_not_allowed", msg);
    r->allow = allowed;
    return 0;
}

void ckb_api_handle(ckb_server *s, ckb_api_request *q, ckb_api_response *r)
{
    memset(r, 0, sizeof *r);
    const char *p = q->path;
    if (!strcmp(p, "/healthz")) {
        if (api__method(q, "GET", r))
            api__health(s, r);
    } else if (!strcmp(p, "/metrics")) {
        if (api__method(q, "GET", r))
            api__metrics(s, r);
    } else if (!strcmp(p, "/v1/evaluations")) {
        if (api__method(q, "POST", r))
            api__post_evaluation(s, q, r);
    } else if (!strcmp(p, "/v1/evaluations/batch")) {
        if (api__method(q, "POST", r))
            api__post_batch(s, q, r);
    } else if (!strncmp(p, "/v1/evaluations/", 16) && !strchr(p + 16, '/')) {
        if (!api__method(q, "GET, DELETE", r))
            return;
        if (!strcmp(q->method, "GET"))
            api__get_evaluation(s, q, p + 16, r);
        else
            api__delete_evaluation(s, q, p + 16, r);
    } else if (!strcmp(p, "/v1/workloads")) {
        if (!api__method(q, "GET", r))
            return;
        json_object *j = json_object_new_object(), *a = json_object_new_array();
        for (int i = 0; i < ckb_workload_count(); i++)
            json_object_array_add(a, api__workload_brief(ckb_workload_at(i)));
        json_object_object_add(j, "workloads", a);
        api__json(r, 200, j);
    } else if (!strncmp(p, "/v1/workloads/", 14)) {
        char name[96];
        const char *rest = p + 14, *slash = strchr(rest, '/');
        size_t n = slash ? (size_t)(slash - rest) : strlen(rest);
        snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), rest);
        const ckb_workload *w = n < sizeof name ? ckb_workload_find(name) : NULL;
        if (slash && strcmp(slash, "/prompt") != 0) {
            ckb_api_error_response(r, 404, "not_found", "no such route");
        } else if (!w) {
            char msg[160];
            snprintf(msg, sizeof msg, "unknown workload '%.64s' (GET /v1/workloads lists them)",
                     name);
            ckb_api_error_response(r, 404, "unknown_workload", msg);
        } else if (api__method(q, "GET", r)) {
            if (slash)
                api__get_prompt(s, q, w, r);
            else
                api__get_workload(s, q, w, r);
        }
    } else if (!strcmp(p, "/v1/feedback")) {
        if (api__method(q, "POST", r))
            api__post_feedback(s, q, r);
    } else {
        ckb_api_error_response(r, 404, "not_found", "no such route (see docs/openapi.yaml)");
    }
}
