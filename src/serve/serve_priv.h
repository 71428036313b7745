/*
 * serve_priv.h — inside the server: its state, shared by serve.c (start
 * and stop), http.c (the connections) and api.c (the routes).
 */
#ifndef CKB_SERVE_PRIV_H
#define CKB_SERVE_PRIV_H

#include <pthread.h>
#include <stddef.h>

#include "serve/metrics.h"
#include "serve/runner.h"
#include "serve/serve.h"
#include "serve/store.h"
#include "serve/tokens.h"

struct MHD_Daemon;

typedef struct {
    ckb_serve_config c;
    ckb_store *store;
    ckb_exec *exec;
    ckb_runner *runner;
    ckb_metrics *metrics;
    ckb_tokens tokens;      /* n = 0: no token file, loopback callers only */
    int max_threads;        /* an evaluation's thread budget, at most */
    char work_dir[1100];    /* <db>.d/evals */
    struct MHD_Daemon *daemon;
    /* long-polls: woken when an evaluation ends, and once a second */
    pthread_mutex_t wait_mu;
    pthread_cond_t wait_cv;
    int stopping;           /* set (atomically) when the server stops */
} ckb_server;

/* One request as the routes see it. */
typedef struct {
    const char *method, *path;
    const char *(*arg)(void *ctx, const char *name); /* a query argument, or NULL */
    void *arg_ctx;
    const char *body;
    size_t body_len;
    const ckb_token *token; /* NULL: no token file */
    const char *owner;      /* whose evaluations: the token's name, or "local" */
    double deadline;        /* a long-poll's end (ckb_now()), 0 until it is known */
} ckb_api_request;

/* The answer. A long-poll that must wait says wait = 1 instead: the
 * connection is suspended and the request handled again once the
 * evaluation ends or the deadline passes. */
typedef struct {
    int status;
    char *body;             /* owned (free) */
    size_t len;
    const char *content_type;
    int retry_after;        /* seconds, 0: no Retry-After */
    const char *allow;      /* for 405 */
    int wait;
} ckb_api_response;

void ckb_api_handle(ckb_server *s, ckb_api_request *q, ckb_api_response *r);

/* A JSON error body into r. */
void ckb_api_error_response(ckb_api_response *r, int status, const char *code,
                            const char *message);

/* The HTTP side (http.c): starts the daemon on s->c.listen; 0, or -1 after
 * saying why on stderr. */
int ckb_http_start(ckb_server *s);
void ckb_http_stop(ckb_server *s);
/* Wakes every suspended long-poll to look again. */
void ckb_http_wake(ckb_server *s);

#endif /* CKB_SERVE_PRIV_H */
