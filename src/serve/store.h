/*
 * store.h — the server's durable queue: every accepted evaluation request
 * and its result, in one SQLite database in WAL mode (docs/SERVE.md).
 *
 * An evaluation moves queued -> running -> done | failed, or to cancelled
 * from either of the first two. A request is answered 202 only after its
 * row is committed (synchronous=FULL), so a kill -9 of the server at any
 * moment loses nothing it accepted; at the next start every row left
 * running goes back to queued (ckb_store_recover) and runs again, and the
 * executor takes a result its node had already written as it is
 * (executor.h), so nothing runs twice to completion. A result is stored in
 * the same statement that ends the row: never half-written.
 *
 * Thread-safe: a connection for writes and one for reads, each behind its
 * own mutex (WAL lets the reads go on during a write's fsync).
 */
#ifndef CKB_SERVE_STORE_H
#define CKB_SERVE_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

typedef enum {
    CKB_EV_QUEUED = 0,
    CKB_EV_RUNNING,
    CKB_EV_DONE,      /* the evaluation ran, whatever its verdict */
    CKB_EV_FAILED,    /* the harness could not run it */
    CKB_EV_CANCELLED,
    CKB_EV_COUNT
} ckb_store_state;

const char *ckb_store_state_name(ckb_store_state s);

/* What a call returns. */
typedef enum {
    CKB_STORE_OK = 0,
    CKB_STORE_NOT_FOUND,
    CKB_STORE_CONFLICT,   /* a client_key reused for another request; a finished row */
    CKB_STORE_QUEUE_FULL, /* the server's queue limit */
    CKB_STORE_OWNER_FULL, /* the token's queued-evaluations limit */
    CKB_STORE_DISK_FULL,  /* the disk under the database is full: nothing was changed */
    CKB_STORE_ERROR,      /* another SQLite error: nothing was changed */
} ckb_store_rc;

typedef struct ckb_store ckb_store;

/* A request to queue, already validated (serve/request.h). */
typedef struct {
    const char *workload, *size;
    int threads, seeds, warmup, iters;
    const char *source;
    size_t source_len;
    const char *client_key; /* NULL: none */
    const char *digest;     /* of the request's fields and source: a client_key replayed
                               with another digest is a conflict */
} ckb_store_new;

/* One evaluation as stored. Strings owned by the row (ckb_store_row_free). */
typedef struct {
    int64_t seq;
    char id[24];
    char owner[64];
    char *client_key;        /* NULL: none */
    char workload[80], size[16];
    int threads, seeds, warmup, iters;
    char *source;            /* only when asked for (ckb_store_get's with_source) */
    size_t source_len;
    ckb_store_state state;
    int attempts;
    double submitted_at, started_at, finished_at; /* Unix seconds; 0: not yet */
    char *result;            /* the evaluation's JSON text (done) */
    char *error_code, *error_message; /* failed */
    int64_t queue_position;  /* queued: evaluations ahead of it; else -1 */
    int existed;             /* submit: the row was there already (same client_key) */
} ckb_store_row;

void ckb_store_row_free(ckb_store_row *r);

/* Opens (creating) the database at path. NULL with err filled. */
ckb_store *ckb_store_open(const char *path, ckb_err *err);
void ckb_store_close(ckb_store *s);

/* The last error's text, for a 503's message (thread-local copy). */
const char *ckb_store_last_error(void);

/* Every row left running by a killed server back to queued; how many. */
int ckb_store_recover(ckb_store *s);

/* Queues n requests of owner at once, all or none. max_owner and max_total
 * bound the owner's and everyone's queued + running rows (0: no bound).
 * out[i] (n rows) gets each row, existing ones for a replayed client_key.
 * On CKB_STORE_CONFLICT *bad is the index of the offending request. */
ckb_store_rc ckb_store_submit(ckb_store *s, const char *owner, const ckb_store_new *req, int n,
                              int64_t max_owner, int64_t max_total, ckb_store_row *out,
                              int *bad);

/* The row id of owner (NULL: any owner), with its source if asked. */
ckb_store_rc ckb_store_get(ckb_store *s, const char *owner, const char *id, int with_source,
                           ckb_store_row *out);

/* Claims the oldest queued row (-> running, attempts + 1, started now),
 * with its source: CKB_STORE_OK, or CKB_STORE_NOT_FOUND when none waits. */
ckb_store_rc ckb_store_claim(ckb_store *s, ckb_store_row *out);

/* Ends a running row: done with result (JSON text), its verdict (the
 * result's "status") and whether its timing was disturbed, or failed with
 * an error. CKB_STORE_NOT_FOUND when the row is no longer running
 * (cancelled meanwhile). */
ckb_store_rc ckb_store_finish(ckb_store *s, const char *id, ckb_store_state state,
                              const char *result, const char *verdict, int disturbed,
                              const char *error_code, const char *error_message);

/* A running row back to queued (its run could not start: a full disk). */
ckb_store_rc ckb_store_requeue(ckb_store *s, const char *id);

/* Cancels owner's row id when queued or running (out: the row after).
 * CKB_STORE_CONFLICT when it had already finished, with out filled. */
ckb_store_rc ckb_store_cancel(ckb_store *s, const char *owner, const char *id,
                              ckb_store_row *out);

/* Counts for /metrics and /healthz. */
typedef struct {
    int64_t by_state[CKB_EV_COUNT];
    int nverdicts;
    struct {
        char verdict[32];
        int64_t n, disturbed;
    } verdict[32];            /* done rows by the result's "status" */
} ckb_store_counts;
ckb_store_rc ckb_store_count(ckb_store *s, ckb_store_counts *out);

#endif /* CKB_SERVE_STORE_H */
