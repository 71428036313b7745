/* The server's durable queue in SQLite (see store.h). */
#include "serve/store.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "core/alloc.h"
#include "core/error.h"

struct ckb_store {
    sqlite3 *w, *r;          /* writes; reads */
    pthread_mutex_t wmu, rmu;
};

static __thread char store__err[512];

const char *ckb_store_last_error(void) { return store__err; }

static const char *const store__states[CKB_EV_COUNT] = {"queued", "running", "done", "failed",
                                                         "cancelled"};

const char *ckb_store_state_name(ckb_store_state s)
{
    return (unsigned)s < CKB_EV_COUNT ? store__states[s] : "unknown";
}

static ckb_store_state store__state_parse(const char *s)
{
    for (int i = 0; s && i < CKB_EV_COUNT; i++)
        if (strcmp(s, store__states[i]) == 0)
            return (ckb_store_state)i;
    return CKB_EV_FAILED;
}

static double store__now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* An SQLite failure as a return code: a full disk (SQLITE_FULL, or an I/O
 * error whose errno says so) is the one a client can wait out. */
static ckb_store_rc store__fail(sqlite3 *db, const char *what)
{
    int code = sqlite3_errcode(db), sys = sqlite3_system_errno(db);
    int full = code == SQLITE_FULL || sys == ENOSPC || sys == EDQUOT;
    snprintf(store__err, sizeof store__err, "%s: %s%s%s", what, sqlite3_errmsg(db),
             sys ? " (" : "", sys ? strerror(sys) : "");
    if (sys)
        strncat(store__err, ")", sizeof store__err - strlen(store__err) - 1);
    return full ? CKB_STORE_DISK_FULL : CKB_STORE_ERROR;
}

static int store__exec(sqlite3 *db, const char *sql)
{
    return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

static const char store__schema[] =
    "CREATE TABLE IF NOT EXISTS evaluations("
    " seq INTEGER PRIMARY KEY AUTOINCREMENT,"
    " id TEXT NOT NULL UNIQUE,"
    " owner TEXT NOT NULL,"
    " client_key TEXT,"
    " digest TEXT NOT NULL,"
    " workload TEXT NOT NULL, size TEXT NOT NULL,"
    " threads INTEGER NOT NULL, seeds INTEGER NOT NULL,"
    " warmup INTEGER NOT NULL, iters INTEGER NOT NULL,"
    " source BLOB NOT NULL,"
    " state TEXT NOT NULL,"
    " attempts INTEGER NOT NULL DEFAULT 0,"
    " submitted_at REAL NOT NULL, started_at REAL, finished_at REAL,"
    " result TEXT, verdict TEXT, disturbed INTEGER,"
    " error_code TEXT, error_message TEXT,"
    " UNIQUE(owner, client_key));"
    "CREATE INDEX IF NOT EXISTS evaluations_state ON evaluations(state, seq);";

static sqlite3 *store__connect(const char *path, ckb_err *err)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(path, &db,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                             NULL);
    if (rc != SQLITE_OK) {
        ckb_err_set(err, CKB_E_IO, "cannot open the database %s: %s", path,
                    db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_busy_timeout(db, 30000);
    /* WAL: reads go on beside a write; FULL: a commit is on disk before
     * the 202 that says it was accepted. */
    if (store__exec(db, "PRAGMA journal_mode=WAL") != SQLITE_OK ||
        store__exec(db, "PRAGMA synchronous=FULL") != SQLITE_OK) {
        ckb_err_set(err, CKB_E_IO, "cannot set up the database %s: %s", path, sqlite3_errmsg(db));
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

ckb_store *ckb_store_open(const char *path, ckb_err *err)
{
    ckb_store *s = ckb_xcalloc(1, sizeof *s);
    pthread_mutex_init(&s->wmu, NULL);
    pthread_mutex_init(&s->rmu, NULL);
    if (!(s->w = store__connect(path, err)))
        goto fail;
    if (store__exec(s->w, store__schema) != SQLITE_OK) {
        ckb_err_set(err, CKB_E_IO, "cannot create the tables of %s: %s", path,
                    sqlite3_errmsg(s->w));
        goto fail;
    }
    if (!(s->r = store__connect(path, err)))
        goto fail;
    return s;
fail:
    ckb_store_close(s);
    return NULL;
}

void ckb_store_close(ckb_store *s)
{
    if (!s)
        return;
    sqlite3_close(s->w);
    sqlite3_close(s->r);
    pthread_mutex_destroy(&s->wmu);
    pthread_mutex_destroy(&s->rmu);
    free(s);
}

void ckb_store_row_free(ckb_store_row *r)
{
    free(r->client_key);
    free(r->source);
    free(r->result);
    free(r->error_code);
    free(r->error_message);
    memset(r, 0, sizeof *r);
}

static char *store__dup_col(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? ckb_xstrdup((const char *)t) : NULL;
}

#define STORE__COLS                                                                            \
    "seq, id, owner, client_key, workload, size, threads, seeds, warmup, iters, state, "      \
    "attempts, submitted_at, started_at, finished_at, result, error_code, error_message"
#define STORE__NCOLS 18

/* A row from a SELECT of STORE__COLS (then source, when with_source). */
static void store__read_row(sqlite3_stmt *st, int with_source, ckb_store_row *r)
{
    memset(r, 0, sizeof *r);
    r->seq = sqlite3_column_int64(st, 0);
    snprintf(r->id, sizeof r->id, "%s", (const char *)sqlite3_column_text(st, 1));
    snprintf(r->owner, sizeof r->owner, "%s", (const char *)sqlite3_column_text(st, 2));
    r->client_key = store__dup_col(st, 3);
    snprintf(r->workload, sizeof r->workload, "%s", (const char *)sqlite3_column_text(st, 4));
    snprintf(r->size, sizeof r->size, "%s", (const char *)sqlite3_column_text(st, 5));
    r->threads = sqlite3_column_int(st, 6);
    r->seeds = sqlite3_column_int(st, 7);
    r->warmup = sqlite3_column_int(st, 8);
    r->iters = sqlite3_column_int(st, 9);
    r->state = store__state_parse((const char *)sqlite3_column_text(st, 10));
    r->attempts = sqlite3_column_int(st, 11);
    r->submitted_at = sqlite3_column_double(st, 12);
    r->started_at = sqlite3_column_double(st, 13);
    r->finished_at = sqlite3_column_double(st, 14);
    r->result = store__dup_col(st, 15);
    r->error_code = store__dup_col(st, 16);
    r->error_message = store__dup_col(st, 17);
    r->queue_position = -1;
    if (with_source) {
        int n = sqlite3_column_bytes(st, STORE__NCOLS);
        const void *b = sqlite3_column_blob(st, STORE__NCOLS);
        r->source = ckb_xmalloc((size_t)n + 1);
        if (n)
            memcpy(r->source, b, (size_t)n);
        r->source[n] = 0;
        r->source_len = (size_t)n;
    }
}

/* How many queued rows are ahead of seq (db's mutex held). */
static int64_t store__position(sqlite3 *db, int64_t seq)
{
    sqlite3_stmt *st = NULL;
    int64_t n = -1;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM evaluations WHERE state='queued' AND seq<?",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, seq);
        if (sqlite3_step(st) == SQLITE_ROW)
            n = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    return n;
}

/* One row by id (and owner unless NULL) on db (its mutex held); with
 * position, a queued row's queue position too (else -1). */
static ckb_store_rc store__get(sqlite3 *db, const char *owner, const char *id, int with_source,
                               int position, ckb_store_row *out)
{
    const char *sql = with_source
                          ? "SELECT " STORE__COLS ", source FROM evaluations WHERE id=?1 AND "
                            "(?2 IS NULL OR owner=?2)"
                          : "SELECT " STORE__COLS " FROM evaluations WHERE id=?1 AND "
                            "(?2 IS NULL OR owner=?2)";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return store__fail(db, "get");
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    if (owner)
        sqlite3_bind_text(st, 2, owner, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 2);
    int rc = sqlite3_step(st);
    ckb_store_rc ret = CKB_STORE_NOT_FOUND;
    if (rc == SQLITE_ROW) {
        store__read_row(st, with_source, out);
        if (position && out->state == CKB_EV_QUEUED)
            out->queue_position = store__position(db, out->seq);
        ret = CKB_STORE_OK;
    } else if (rc != SQLITE_DONE) {
        ret = store__fail(db, "get");
    }
    sqlite3_finalize(st);
    return ret;
}

ckb_store_rc ckb_store_get(ckb_store *s, const char *owner, const char *id, int with_source,
                           ckb_store_row *out)
{
    pthread_mutex_lock(&s->rmu);
    ckb_store_rc rc = store__get(s->r, owner, id, with_source, 1, out);
    pthread_mutex_unlock(&s->rmu);
    return rc;
}

int ckb_store_recover(ckb_store *s)
{
    pthread_mutex_lock(&s->wmu);
    int n = 0;
    if (store__exec(s->w, "UPDATE evaluations SET state='queued' WHERE state='running'") ==
        SQLITE_OK)
        n = sqlite3_changes(s->w);
    pthread_mutex_unlock(&s->wmu);
    return n;
}

/* "ev_" and 16 hex digits from the OS's random source: unguessable, so an
 * id says nothing of another client's evaluations. */
static void store__new_id(char id[24])
{
    uint64_t v = 0;
    while (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v) {
    }
    snprintf(id, 24, "ev_%016" PRIx64, v);
}

static int64_t store__count_pending(sqlite3 *db, const char *owner)
{
    sqlite3_stmt *st = NULL;
    int64_t n = -1;
    if (sqlite3_prepare_v2(db,
                           "SELECT count(*) FROM evaluations WHERE state IN ('queued','running') "
                           "AND (?1 IS NULL OR owner=?1)",
                           -1, &st, NULL) == SQLITE_OK) {
        if (owner)
            sqlite3_bind_text(st, 1, owner, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW)
            n = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    return n;
}

/* The row of owner's client_key, if any: CKB_STORE_OK with *found. */
static ckb_store_rc store__by_key(sqlite3 *db, const char *owner, const char *key,
                                  char digest[64], char id[24], int *found)
{
    sqlite3_stmt *st = NULL;
    *found = 0;
    if (sqlite3_prepare_v2(db, "SELECT id, digest FROM evaluations WHERE owner=? AND client_key=?",
                           -1, &st, NULL) != SQLITE_OK)
        return store__fail(db, "submit");
    sqlite3_bind_text(st, 1, owner, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        snprintf(id, 24, "%s", (const char *)sqlite3_column_text(st, 0));
        snprintf(digest, 64, "%s", (const char *)sqlite3_column_text(st, 1));
        *found = 1;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? CKB_STORE_OK : store__fail(db, "submit");
}

static ckb_store_rc store__insert(sqlite3 *db, sqlite3_stmt *ins, const char *owner,
                                  const ckb_store_new *q, double now, char id[24])
{
    store__new_id(id);
    sqlite3_reset(ins);
    sqlite3_clear_bindings(ins);
    sqlite3_bind_text(ins, 1, id, -1, SQLITE_STATIC);
    sqlite3_bind_text(ins, 2, owner, -1, SQLITE_STATIC);
    if (q->client_key)
        sqlite3_bind_text(ins, 3, q->client_key, -1, SQLITE_STATIC);
    sqlite3_bind_text(ins, 4, q->digest, -1, SQLITE_STATIC);
    sqlite3_bind_text(ins, 5, q->workload, -1, SQLITE_STATIC);
    sqlite3_bind_text(ins, 6, q->size, -1, SQLITE_STATIC);
    sqlite3_bind_int(ins, 7, q->threads);
    sqlite3_bind_int(ins, 8, q->seeds);
    sqlite3_bind_int(ins, 9, q->warmup);
    sqlite3_bind_int(ins, 10, q->iters);
    sqlite3_bind_blob(ins, 11, q->source, (int)q->source_len, SQLITE_STATIC);
    sqlite3_bind_double(ins, 12, now);
    int rc = sqlite3_step(ins);
    return rc == SQLITE_DONE ? CKB_STORE_OK : store__fail(db, "submit");
}

ckb_store_rc ckb_store_submit(ckb_store *s, const char *owner, const ckb_store_new *req, int n,
                              int64_t max_owner, int64_t max_total, ckb_store_row *out, int *bad)
{
    char(*ids)[24] = ckb_xcalloc((size_t)(n > 0 ? n : 1), sizeof *ids);
    char *existed = ckb_xcalloc((size_t)(n > 0 ? n : 1), 1);
    sqlite3_stmt *ins = NULL;
    ckb_store_rc ret = CKB_STORE_OK;
    int began = 0;
    *bad = -1;
    pthread_mutex_lock(&s->wmu);
    if (store__exec(s->w, "BEGIN IMMEDIATE") != SQLITE_OK) {
        ret = store__fail(s->w, "submit");
        goto done;
    }
    began = 1;
    if (sqlite3_prepare_v2(s->w,
                           "INSERT INTO evaluations(id, owner, client_key, digest, workload, size, "
                           "threads, seeds, warmup, iters, source, state, submitted_at) "
                           "VALUES(?,?,?,?,?,?,?,?,?,?,?,'queued',?)",
                           -1, &ins, NULL) != SQLITE_OK) {
        ret = store__fail(s->w, "submit");
        goto done;
    }
    int64_t fresh = 0;
    double now = store__now();
    for (int i = 0; i < n && ret == CKB_STORE_OK; i++) {
        int found = 0;
        char digest[64];
        if (req[i].client_key) {
            ret = store__by_key(s->w, owner, req[i].client_key, digest, ids[i], &found);
            if (ret == CKB_STORE_OK && found && strcmp(digest, req[i].digest) != 0) {
                snprintf(store__err, sizeof store__err,
                         "client_key '%s' was used before for another request",
                         req[i].client_key);
                *bad = i;
                ret = CKB_STORE_CONFLICT;
            }
            /* the same key twice in one batch: the second is the first's replay */
            for (int k = 0; k < i && ret == CKB_STORE_OK && !found; k++)
                if (req[k].client_key && strcmp(req[k].client_key, req[i].client_key) == 0) {
                    if (strcmp(req[k].digest, req[i].digest) != 0) {
                        snprintf(store__err, sizeof store__err,
                                 "client_key '%s' is given twice for different requests",
                                 req[i].client_key);
                        *bad = i;
                        ret = CKB_STORE_CONFLICT;
                    } else {
                        memcpy(ids[i], ids[k], sizeof ids[i]);
                        found = 1;
                    }
                }
        }
        existed[i] = (char)found;
        if (ret == CKB_STORE_OK && !found) {
            ret = store__insert(s->w, ins, owner, &req[i], now, ids[i]);
            fresh++;
        }
    }
    if (ret == CKB_STORE_OK && fresh > 0) {
        int64_t mine = store__count_pending(s->w, owner), all = store__count_pending(s->w, NULL);
        if (max_owner > 0 && mine > max_owner) {
            snprintf(store__err, sizeof store__err,
                     "this token may have at most %" PRId64 " evaluations queued or running "
                     "(it would have %" PRId64 ")",
                     max_owner, mine);
            ret = CKB_STORE_OWNER_FULL;
        } else if (max_total > 0 && all > max_total) {
            snprintf(store__err, sizeof store__err,
                     "the server's queue holds at most %" PRId64 " evaluations (it would hold %"
                     PRId64 ")",
                     max_total, all);
            ret = CKB_STORE_QUEUE_FULL;
        }
    }
    if (ret == CKB_STORE_OK) {
        if (store__exec(s->w, "COMMIT") != SQLITE_OK)
            ret = store__fail(s->w, "submit");
        else
            began = 0;
    }
done:
    sqlite3_finalize(ins);
    if (began)
        store__exec(s->w, "ROLLBACK");
    pthread_mutex_unlock(&s->wmu);
    /* The rows as a reader sees them now, queue positions included. The new
     * ones hold consecutive places at the queue's end (inserted in order
     * under the write lock; a claim takes the oldest first), so one count
     * places them all: a count per row made a batch of 1000 behind 9000
     * queued take 0.46 s. */
    pthread_mutex_lock(&s->rmu);
    int64_t first = -1, later = 0;
    for (int i = 0; i < n && ret == CKB_STORE_OK; i++) {
        ckb_store_rc g = store__get(s->r, owner, ids[i], 0, existed[i], &out[i]);
        if (g != CKB_STORE_OK) {
            for (int k = 0; k < i; k++)
                ckb_store_row_free(&out[k]);
            ret = g == CKB_STORE_NOT_FOUND ? CKB_STORE_ERROR : g;
        } else if (!existed[i] && out[i].state == CKB_EV_QUEUED) {
            if (first < 0)
                first = store__position(s->r, out[i].seq);
            out[i].queue_position = first + later++;
        }
    }
    pthread_mutex_unlock(&s->rmu);
    for (int i = 0; i < n && ret == CKB_STORE_OK; i++)
        out[i].existed = existed[i];
    free(ids);
    free(existed);
    return ret;
}

ckb_store_rc ckb_store_claim(ckb_store *s, ckb_store_row *out)
{
    pthread_mutex_lock(&s->wmu);
    ckb_store_rc ret = CKB_STORE_NOT_FOUND;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->w,
                           "UPDATE evaluations SET state='running', attempts=attempts+1, "
                           "started_at=?1 WHERE seq=(SELECT seq FROM evaluations WHERE "
                           "state='queued' ORDER BY seq LIMIT 1) RETURNING id",
                           -1, &st, NULL) != SQLITE_OK) {
        ret = store__fail(s->w, "claim");
        goto done;
    }
    sqlite3_bind_double(st, 1, store__now());
    int rc = sqlite3_step(st);
    char id[24] = "";
    if (rc == SQLITE_ROW)
        snprintf(id, sizeof id, "%s", (const char *)sqlite3_column_text(st, 0));
    else if (rc != SQLITE_DONE)
        ret = store__fail(s->w, "claim");
    sqlite3_finalize(st);
    st = NULL;
    if (id[0])
        ret = store__get(s->w, NULL, id, 1, 1, out);
done:
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->wmu);
    return ret;
}

/* UPDATE ... WHERE id=? AND state=<from>: OK when a row changed. */
static ckb_store_rc store__move(ckb_store *s, sqlite3_stmt *st, const char *what)
{
    int rc = sqlite3_step(st);
    ckb_store_rc ret = rc == SQLITE_DONE ? (sqlite3_changes(s->w) ? CKB_STORE_OK
                                                                   : CKB_STORE_NOT_FOUND)
                                         : store__fail(s->w, what);
    sqlite3_finalize(st);
    return ret;
}

ckb_store_rc ckb_store_finish(ckb_store *s, const char *id, ckb_store_state state,
                              const char *result, const char *verdict, int disturbed,
                              const char *error_code, const char *error_message)
{
    pthread_mutex_lock(&s->wmu);
    sqlite3_stmt *st = NULL;
    ckb_store_rc ret;
    if (sqlite3_prepare_v2(s->w,
                           "UPDATE evaluations SET state=?2, finished_at=?3, result=?4, "
                           "verdict=?5, disturbed=?6, error_code=?7, error_message=?8 "
                           "WHERE id=?1 AND state='running'",
                           -1, &st, NULL) != SQLITE_OK) {
        ret = store__fail(s->w, "finish");
    } else {
        sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, ckb_store_state_name(state), -1, SQLITE_STATIC);
        sqlite3_bind_double(st, 3, store__now());
        sqlite3_bind_text(st, 4, result, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 5, verdict, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 6, disturbed);
        sqlite3_bind_text(st, 7, error_code, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 8, error_message, -1, SQLITE_STATIC);
        ret = store__move(s, st, "finish");
        st = NULL;
    }
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->wmu);
    return ret;
}

ckb_store_rc ckb_store_requeue(ckb_store *s, const char *id)
{
    pthread_mutex_lock(&s->wmu);
    sqlite3_stmt *st = NULL;
    ckb_store_rc ret;
    if (sqlite3_prepare_v2(s->w,
                           "UPDATE evaluations SET state='queued', started_at=NULL WHERE id=? "
                           "AND state='running'",
                           -1, &st, NULL) != SQLITE_OK) {
        ret = store__fail(s->w, "requeue");
        sqlite3_finalize(st);
    } else {
        sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
        ret = store__move(s, st, "requeue");
    }
    pthread_mutex_unlock(&s->wmu);
    return ret;
}

ckb_store_rc ckb_store_cancel(ckb_store *s, const char *owner, const char *id,
                              ckb_store_row *out)
{
    pthread_mutex_lock(&s->wmu);
    ckb_store_rc ret = store__get(s->w, owner, id, 0, 1, out);
    if (ret == CKB_STORE_OK && (out->state == CKB_EV_QUEUED || out->state == CKB_EV_RUNNING)) {
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(s->w,
                               "UPDATE evaluations SET state='cancelled', finished_at=?2 "
                               "WHERE id=?1 AND state IN ('queued','running')",
                               -1, &st, NULL) != SQLITE_OK) {
            ret = store__fail(s->w, "cancel");
            sqlite3_finalize(st);
        } else {
            sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
            sqlite3_bind_double(st, 2, store__now());
            ret = store__move(s, st, "cancel");
        }
        ckb_store_row_free(out);
        if (ret == CKB_STORE_OK)
            ret = store__get(s->w, owner, id, 0, 1, out);
    } else if (ret == CKB_STORE_OK) {
        ret = CKB_STORE_CONFLICT;
    }
    pthread_mutex_unlock(&s->wmu);
    return ret;
}

ckb_store_rc ckb_store_count(ckb_store *s, ckb_store_counts *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&s->rmu);
    sqlite3_stmt *st = NULL;
    ckb_store_rc ret = CKB_STORE_OK;
    if (sqlite3_prepare_v2(s->r, "SELECT state, count(*) FROM evaluations GROUP BY state", -1,
                           &st, NULL) != SQLITE_OK) {
        ret = store__fail(s->r, "count");
        goto done;
    }
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        ckb_store_state k = store__state_parse((const char *)sqlite3_column_text(st, 0));
        out->by_state[k] += sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    st = NULL;
    if (rc != SQLITE_DONE || sqlite3_prepare_v2(s->r,
                                                "SELECT verdict, count(*), sum(disturbed) FROM "
                                                "evaluations WHERE state='done' GROUP BY verdict",
                                                -1, &st, NULL) != SQLITE_OK) {
        ret = store__fail(s->r, "count");
        goto done;
    }
    while (sqlite3_step(st) == SQLITE_ROW && out->nverdicts < 32) {
        const char *v = (const char *)sqlite3_column_text(st, 0);
        int i = out->nverdicts++;
        snprintf(out->verdict[i].verdict, sizeof out->verdict[i].verdict, "%s", v ? v : "");
        out->verdict[i].n = sqlite3_column_int64(st, 1);
        out->verdict[i].disturbed = sqlite3_column_int64(st, 2);
    }
done:
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->rmu);
    return ret;
}
