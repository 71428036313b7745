/*
 * request.h — one evaluation request of the API, from its JSON to what the
 * store queues, every field checked: a wrong one is named in the error,
 * never guessed at (docs/openapi.yaml, EvaluationRequest).
 */
#ifndef CKB_SERVE_REQUEST_H
#define CKB_SERVE_REQUEST_H

#include <stddef.h>

#include "serve/store.h"

struct json_object;

/* What the server allows besides each token's own limits. */
typedef struct {
    int max_threads;       /* an evaluation's thread budget, at most */
    int default_threads;
    int host_size;         /* 1: size "host" is accepted */
    long max_source_bytes; /* the token's */
} ckb_request_limits;

/* A parsed request; strings point into the JSON object it came from
 * (which must outlive it), except the workload id (the registry's). */
typedef struct {
    ckb_store_new q;
    char digest[17];
} ckb_request;

/* An API error: HTTP status, a snake_case code and a message. */
typedef struct {
    int status;
    char code[32];
    char message[512];
} ckb_api_error;

/* Reads o into r. 0, or -1 with e filled; where prefixes the field names
 * in messages ("" or "evaluations[3]."). */
int ckb_request_parse(struct json_object *o, const ckb_request_limits *lim, const char *where,
                      ckb_request *r, ckb_api_error *e);

void ckb_api_error_set(ckb_api_error *e, int status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif /* CKB_SERVE_REQUEST_H */
