/* A generation run's folder (see run.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/jsonget.h"
#include "core/jsonl.h"
#include "core/say.h"
#include "core/utf8.h"
#include "gen/run.h"

typedef struct {
    char id[128];
    int budget;
    json_object **recs;  /* [budget], NULL where the sample is not done */
    double best;         /* best correct, undisturbed speedup so far, 0: none */
    int best_index;      /* the sample in best/: the fastest timed correct one, else
                            the first correct one; -1: none */
    double expert;       /* NAN: no expert */
} run__workload;

struct ckb_run {
    char dir[1024];
    int infra_loaded; /* infra_error records read on resume: asked again */
    json_object *config;
    int lock_fd, records_fd;
    int nwl;
    run__workload *wl;
    pthread_mutex_t mu;
};

static void run__path(const ckb_run *r, const char *name, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s", r->dir, name);
}

/* Takes RUN/lock with an flock and writes our pid into it. */
static int run__lock(ckb_run *r, ckb_err *err)
{
    char path[1100];
    run__path(r, "lock", path, sizeof path);
    r->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (r->lock_fd < 0) {
        return ckb_err_set(err, CKB_E_IO, "cannot open %s: %s", path, strerror(errno));
    }
    if (flock(r->lock_fd, LOCK_EX | LOCK_NB) != 0) {
        char pid[32] = "";
        ssize_t n = pread(r->lock_fd, pid, sizeof pid - 1, 0);
        pid[n > 0 ? n : 0] = 0;
        pid[strcspn(pid, "\n")] = 0;
        ckb_err_set(err, CKB_E_CONFLICT,
                    "the run %s is in use by process %s (its lock is held); wait for it to "
                    "finish or stop it first",
                    r->dir, pid[0] ? pid : "?");
        close(r->lock_fd);
        r->lock_fd = -1;
        return CKB_E_CONFLICT;
    }
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(r->lock_fd, 0) != 0 || pwrite(r->lock_fd, pid, (size_t)n, 0) != n) {
        return ckb_err_set(err, CKB_E_IO, "cannot write %s: %s", path, strerror(errno));
    }
    return 0;
}

static int run__write_best(ckb_run *r, const char *workload, json_object *rec);

/* A record's speedup when it is a figure: correct, timed and not disturbed
 * (DESIGN §5); 0 otherwise. */
static double run__timed_speedup(json_object *rec)
{
    json_object *c;
    if (!rec || !json_object_object_get_ex(rec, "correct", &c) || !json_object_get_boolean(c) ||
        ckb_json_timing_disturbed(rec))
        return 0;
    double s = ckb_json_num(rec, "speedup");
    return isfinite(s) && s > 0 ? s : 0;
}

/* The workload's best: the fastest timed correct sample (the earliest of
 * equals), else the first correct one. */
static void run__rebest(run__workload *w)
{
    w->best = 0;
    w->best_index = -1;
    for (int i = 0; i < w->budget; i++) {
        json_object *c, *rec = w->recs[i];
        if (!rec || !json_object_object_get_ex(rec, "correct", &c) || !json_object_get_boolean(c))
            continue;
        double s = run__timed_speedup(rec);
        if (w->best_index < 0 || s > w->best) {
            w->best_index = i;
            w->best = s > w->best ? s : w->best;
        }
    }
}

static int run__find(const ckb_run *r, const char *workload)
{
    for (int i = 0; i < r->nwl; i++)
        if (strcmp(r->wl[i].id, workload) == 0)
            return i;
    return -1;
}

/* The workload table from the config's "workloads" and "budget". */
static int run__setup(ckb_run *r, ckb_err *err)
{
    json_object *wls, *budget;
    if (!json_object_object_get_ex(r->config, "workloads", &wls) ||
        !json_object_is_type(wls, json_type_array) ||
        !json_object_object_get_ex(r->config, "budget", &budget)) {
        return ckb_err_set(err, CKB_E_FORMAT, "%s/config.json lacks \"workloads\" or \"budget\"",
                           r->dir);
    }
    int b = json_object_get_int(budget);
    r->nwl = (int)json_object_array_length(wls);
    if (b < 1 || r->nwl < 1) {
        return ckb_err_set(err, CKB_E_FORMAT, "%s/config.json: no workloads or a budget below 1",
                           r->dir);
    }
    r->wl = ckb_xcalloc((size_t)r->nwl, sizeof *r->wl);
    for (int i = 0; i < r->nwl; i++) {
        snprintf(r->wl[i].id, sizeof r->wl[i].id, "%s",
                 json_object_get_string(json_object_array_get_idx(wls, i)));
        r->wl[i].budget = b;
        r->wl[i].recs = ckb_xcalloc((size_t)b, sizeof *r->wl[i].recs);
        r->wl[i].expert = NAN;
    }
    return CKB_OK;
}

static int run__open_records(ckb_run *r, ckb_err *err)
{
    char path[1100];
    run__path(r, "records.jsonl", path, sizeof path);
    r->records_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (r->records_fd < 0) {
        return ckb_err_set(err, CKB_E_IO, "cannot open %s: %s", path, strerror(errno));
    }
    return 0;
}

static ckb_run *run__new(const char *dir)
{
    ckb_run *r = ckb_xcalloc(1, sizeof *r);
    snprintf(r->dir, sizeof r->dir, "%s", dir);
    r->lock_fd = r->records_fd = -1;
    pthread_mutex_init(&r->mu, NULL);
    return r;
}

int ckb_run_create(const char *dir, json_object *config, ckb_run **out, ckb_err *err)
{
    *out = NULL;
    ckb_run *r = run__new(dir);
    int rc = CKB_E_IO;
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        int entries = 0;
        while ((e = readdir(d)))
            entries += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
        closedir(d);
        if (entries) {
            rc = ckb_err_set(err, CKB_E_CONFLICT,
                             "%s exists and is not empty: resume it with --resume %s, or choose "
                             "another --out",
                             dir, dir);
            goto cleanup;
        }
    }
    char best[1100];
    run__path(r, "best", best, sizeof best);
    if (ckb_mkdirs(best) != 0) {
        ckb_err_set(err, CKB_E_IO, "cannot create %s: %s", best, strerror(errno));
        goto cleanup;
    }
    r->config = json_object_get(config);
    if ((rc = run__lock(r, err)) != CKB_OK || (rc = run__setup(r, err)) != CKB_OK)
        goto cleanup;
    rc = CKB_E_IO;
    char path[1100];
    run__path(r, "config.json", path, sizeof path);
    const char *text =
        ckb_json_text(config, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
    if (ckb_write_file_atomic(path, text, strlen(text)) != 0) {
        ckb_err_set(err, CKB_E_IO, "cannot write %s: %s", path, strerror(errno));
        goto cleanup;
    }
    if (run__open_records(r, err) != 0)
        goto cleanup;
    rc = CKB_OK;
cleanup:
    if (rc == CKB_OK)
        *out = r;
    else
        ckb_run_close(r);
    return rc;
}

static const char *run__status(json_object *rec)
{
    json_object *v;
    return json_object_object_get_ex(rec, "status", &v) && v ? json_object_get_string(v) : "";
}

typedef struct {
    ckb_run *r;
    int not_records;
} run__loader;

/* Loads one record (borrowed) into the table. */
static void run__load_value(void *ctx, json_object *v, int lineno)
{
    run__loader *ld = ctx;
    ckb_run *r = ld->r;
    json_object *j = v, *wv;
    if (!json_object_is_type(j, json_type_object) ||
        !json_object_object_get_ex(j, "workload", &wv) ||
        !json_object_is_type(wv, json_type_string)) {
        ld->not_records++;
        return;
    }
    json_object_get(j);
    if (strcmp(run__status(j), "infra_error") == 0) {
        /* The provider failed, not the model: the sample is still to do. */
        r->infra_loaded++;
        json_object_put(j);
        return;
    }
    int w = run__find(r, json_object_get_string(wv));
    json_object *idx;
    int i = json_object_object_get_ex(j, "index", &idx) ? json_object_get_int(idx) : -1;
    if (w >= 0 && i >= 0 && i < r->wl[w].budget && r->wl[w].recs[i] &&
        ckb_json_obj(j, "retimed")) {
        /* A re-timed record replaces the one it re-times: the latest wins. */
        json_object_put(r->wl[w].recs[i]);
        r->wl[w].recs[i] = j;
        return;
    }
    if (w < 0 || i < 0 || i >= r->wl[w].budget || r->wl[w].recs[i]) {
        /* Not this run's (or a duplicate): kept on disk, ignored here. */
        ckb_say("ckbench: %s/records.jsonl line %d: ignored (%s)\n", r->dir, lineno,
                w < 0                           ? "unknown workload"
                : i < 0 || i >= r->wl[w].budget ? "index out of budget"
                                                : "duplicate");
        json_object_put(j);
        return;
    }
    r->wl[w].recs[i] = j;
}

int ckb_run_resume(const char *dir, ckb_run **out, ckb_err *err)
{
    *out = NULL;
    ckb_run *r = run__new(dir);
    char path[1100], *text = NULL;
    int rc = CKB_E_NOT_FOUND;
    run__path(r, "config.json", path, sizeof path);
    struct stat st;
    if (stat(dir, &st) != 0 || (r->config = json_object_from_file(path)) == NULL) {
        ckb_err_set(err, CKB_E_IO, "%s is not a generation run (no readable config.json)", dir);
        goto cleanup;
    }
    if ((rc = run__lock(r, err)) != CKB_OK || (rc = run__setup(r, err)) != CKB_OK)
        goto cleanup;
    rc = CKB_E_IO;
    run__path(r, "records.jsonl", path, sizeof path);
    size_t len = 0;
    text = ckb_read_file(path, &len);
    int add_newline = 0;
    if (text) {
        /* Damage (NUL bytes, garbage) is skipped with a message and the
         * whole records around it are kept (core/jsonl.h); the samples it
         * held are simply missing, so they are asked again. */
        ckb_jsonl_stats st;
        run__loader ld = {r, 0};
        ckb_jsonl_each(text, len, run__load_value, &ld, &st);
        ckb_jsonl_warn(path, &st);
        if (ld.not_records)
            ckb_say("ckbench: %s: skipped %d JSON value%s that %s not a record\n", path,
                    ld.not_records, ld.not_records == 1 ? "" : "s",
                    ld.not_records == 1 ? "is" : "are");
        if (st.last_cut) {
            /* A line without its newline was cut by a kill mid-write: drop
             * it, on disk too, so the next append starts a clean line. */
            ckb_say("ckbench: %s: dropping a half-written last record (%zu bytes)\n", path,
                    len - st.cut_at);
            if (truncate(path, (off_t)st.cut_at) != 0) {
                ckb_err_set(err, CKB_E_IO, "cannot truncate %s: %s", path, strerror(errno));
                goto cleanup;
            }
        } else if (len && text[len - 1] != '\n') {
            add_newline = 1; /* a whole last line without its newline */
        }
    }
    if (r->infra_loaded)
        ckb_say("ckbench: %s: %d model call%s had failed on the provider's side (infra_error, "
                "not counted): asking %s again\n",
                dir, r->infra_loaded, r->infra_loaded == 1 ? "" : "s",
                r->infra_loaded == 1 ? "it" : "them");
    char best[1100];
    run__path(r, "best", best, sizeof best);
    if (ckb_mkdirs(best) != 0) {
        ckb_err_set(err, CKB_E_IO, "cannot create %s: %s", best, strerror(errno));
        goto cleanup;
    }
    if (run__open_records(r, err) != 0)
        goto cleanup;
    if (add_newline && write(r->records_fd, "\n", 1) != 1) {
        ckb_err_set(err, CKB_E_IO, "cannot append to %s: %s", path, strerror(errno));
        goto cleanup;
    }
    /* A kill between a record's fsync and its best/ files leaves best/
     * behind the records: rewrite it from them. */
    for (int w = 0; w < r->nwl; w++) {
        run__rebest(&r->wl[w]);
        int b = r->wl[w].best_index;
        if (b >= 0 && run__write_best(r, r->wl[w].id, r->wl[w].recs[b]) != 0) {
            ckb_err_set(err, CKB_E_IO, "cannot write %s/best: %s", dir, strerror(errno));
            goto cleanup;
        }
    }
    rc = CKB_OK;
cleanup:
    free(text);
    if (rc == CKB_OK)
        *out = r;
    else
        ckb_run_close(r);
    return rc;
}

json_object *ckb_run_config(ckb_run *r) { return r->config; }
const char *ckb_run_dir(const ckb_run *r) { return r->dir; }

json_object *ckb_run_record(ckb_run *r, const char *workload, int index)
{
    pthread_mutex_lock(&r->mu);
    int w = run__find(r, workload);
    json_object *j = w >= 0 && index >= 0 && index < r->wl[w].budget ? r->wl[w].recs[index] : NULL;
    pthread_mutex_unlock(&r->mu);
    return j;
}

/* best/<workload>.c and .json, each replaced atomically. */
static int run__write_best(ckb_run *r, const char *workload, json_object *rec)
{
    char path[1400];
    json_object *code;
    if (!json_object_object_get_ex(rec, "code", &code) || !code)
        return -1;
    snprintf(path, sizeof path, "%s/best/%s.c", r->dir, workload);
    const char *c = json_object_get_string(code);
    if (ckb_write_file_atomic(path, c, strlen(c)) != 0)
        return -1;
    snprintf(path, sizeof path, "%s/best/%s.json", r->dir, workload);
    const char *t = ckb_json_text(rec, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
    return ckb_write_file_atomic(path, t, strlen(t));
}

/* Appends a record; replace: it re-times the sample's record, which must
 * be there (else the sample must not be). */
static int run__append(ckb_run *r, json_object *rec, int replace, ckb_err *err)
{
    json_object *v, *idx;
    int rc = CKB_E_IO;
    pthread_mutex_lock(&r->mu);
    int w = json_object_object_get_ex(rec, "workload", &v) ? run__find(r, json_object_get_string(v))
                                                            : -1;
    int i = json_object_object_get_ex(rec, "index", &idx) ? json_object_get_int(idx) : -1;
    if (w < 0 || i < 0 || i >= r->wl[w].budget || !r->wl[w].recs[i] != !replace) {
        rc = ckb_err_set(err, CKB_E_HARNESS,
                         "internal: record (%s, %d) is outside the run or done already",
                         w >= 0 ? r->wl[w].id : "?", i);
        json_object_put(rec);
        goto cleanup;
    }
    const char *line =
        ckb_json_text(rec, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    size_t len = strlen(line);
    char *buf = ckb_xmalloc(len + 1);
    memcpy(buf, line, len);
    buf[len] = '\n';
    /* One write of the whole line: a kill leaves it whole or cut, never mixed. */
    size_t off = 0;
    while (off < len + 1) {
        ssize_t n = write(r->records_fd, buf + off, len + 1 - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    free(buf);
    if (off != len + 1 || fsync(r->records_fd) != 0) {
        ckb_err_set(err, CKB_E_IO, "cannot append to %s/records.jsonl: %s", r->dir,
                    strerror(errno));
        json_object_put(rec);
        goto cleanup;
    }
    if (strcmp(run__status(rec), "infra_error") == 0) {
        /* on disk for the record; the sample stays undone */
        json_object_put(rec);
        rc = CKB_OK;
        goto cleanup;
    }
    if (replace) {
        json_object_put(r->wl[w].recs[i]);
    }
    r->wl[w].recs[i] = rec;
    int before = r->wl[w].best_index;
    run__rebest(&r->wl[w]);
    int b = r->wl[w].best_index;
    if (b >= 0 && (b != before || b == i) &&
        run__write_best(r, r->wl[w].id, r->wl[w].recs[b]) != 0) {
        ckb_err_set(err, CKB_E_IO, "cannot write %s/best/%s.*: %s", r->dir, r->wl[w].id,
                    strerror(errno));
        goto cleanup;
    }
    rc = CKB_OK;
cleanup:
    pthread_mutex_unlock(&r->mu);
    return rc;
}

int ckb_run_append(ckb_run *r, json_object *rec, ckb_err *err)
{
    return run__append(r, rec, 0, err);
}

int ckb_run_retimed(ckb_run *r, json_object *rec, ckb_err *err)
{
    return run__append(r, rec, 1, err);
}

void ckb_run_set_expert(ckb_run *r, const char *workload, double speedup)
{
    pthread_mutex_lock(&r->mu);
    int w = run__find(r, workload);
    if (w >= 0)
        r->wl[w].expert = speedup;
    pthread_mutex_unlock(&r->mu);
}

double ckb_run_expert(ckb_run *r, const char *workload)
{
    pthread_mutex_lock(&r->mu);
    int w = run__find(r, workload);
    double e = w >= 0 ? r->wl[w].expert : NAN;
    pthread_mutex_unlock(&r->mu);
    return e;
}

static int run__correct(json_object *rec)
{
    json_object *c;
    return rec && json_object_object_get_ex(rec, "correct", &c) && json_object_get_boolean(c);
}

static json_object *run__num(double v) { return isfinite(v) ? json_object_new_double(v) : NULL; }

static void run__totals_locked(const run__workload *w, int *samples, int *correct, double *best)
{
    *samples = *correct = 0;
    for (int i = 0; i < w->budget; i++) {
        if (!w->recs[i])
            continue;
        (*samples)++;
        json_object *c;
        *correct += json_object_object_get_ex(w->recs[i], "correct", &c) &&
                    json_object_get_boolean(c);
    }
    *best = w->best;
}

void ckb_run_workload_totals(ckb_run *r, const char *workload, int *samples, int *correct,
                             double *best)
{
    pthread_mutex_lock(&r->mu);
    int w = run__find(r, workload);
    *samples = *correct = 0;
    *best = 0;
    if (w >= 0)
        run__totals_locked(&r->wl[w], samples, correct, best);
    pthread_mutex_unlock(&r->mu);
}

int ckb_run_write_summary(ckb_run *r)
{
    pthread_mutex_lock(&r->mu);
    json_object *s = json_object_new_object(), *arr = json_object_new_array();
    long tin = 0, tout = 0;
    double cost = 0;
    int all_samples = 0, all_correct = 0, solved = 0, costed = 0;
    for (int w = 0; w < r->nwl; w++) {
        const run__workload *x = &r->wl[w];
        int samples, correct, compiled = 0;
        double best;
        int best_index = x->best > 0 ? x->best_index : -1, disturbed = 0;
        run__totals_locked(x, &samples, &correct, &best);
        for (int i = 0; i < x->budget; i++) {
            json_object *rec = x->recs[i], *st;
            if (!rec)
                continue;
            double a = ckb_json_num(rec, "tokens_in"), b = ckb_json_num(rec, "tokens_out"),
                   c = ckb_json_num(rec, "cost_usd");
            tin += isfinite(a) ? (long)a : 0;
            tout += isfinite(b) ? (long)b : 0;
            if (isfinite(c))
                cost += c, costed++;
            const char *status = json_object_object_get_ex(rec, "status", &st)
                                     ? json_object_get_string(st)
                                     : "";
            compiled += strcmp(status, "compile_error") && strcmp(status, "no_code") &&
                        strcmp(status, "provider_error");
            disturbed += run__correct(rec) && ckb_json_timing_disturbed(rec);
        }
        json_object *o = json_object_new_object();
        json_object_object_add(o, "workload", json_object_new_string(x->id));
        json_object_object_add(o, "budget", json_object_new_int(x->budget));
        json_object_object_add(o, "samples", json_object_new_int(samples));
        json_object_object_add(o, "compiled", json_object_new_int(compiled));
        json_object_object_add(o, "correct", json_object_new_int(correct));
        json_object_object_add(o, "best_speedup", best > 0 ? json_object_new_double(best) : NULL);
        json_object_object_add(o, "best_index",
                               best_index >= 0 ? json_object_new_int(best_index) : NULL);
        json_object_object_add(o, "disturbed", json_object_new_int(disturbed));
        json_object_object_add(o, "expert_speedup", run__num(x->expert));
        json_object_array_add(arr, o);
        all_samples += samples;
        all_correct += correct;
        solved += correct > 0;
    }
    json_object_object_add(s, "workloads", arr);
    json_object *t = json_object_new_object();
    json_object_object_add(t, "samples", json_object_new_int(all_samples));
    json_object_object_add(t, "correct", json_object_new_int(all_correct));
    json_object_object_add(t, "solved", json_object_new_int(solved));
    json_object_object_add(t, "tokens_in", json_object_new_int64(tin));
    json_object_object_add(t, "tokens_out", json_object_new_int64(tout));
    json_object_object_add(t, "cost_usd", costed ? json_object_new_double(cost) : NULL);
    json_object_object_add(s, "totals", t);
    pthread_mutex_unlock(&r->mu);
    char path[1100];
    run__path(r, "summary.json", path, sizeof path);
    const char *text =
        ckb_json_text(s, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
    int rc = ckb_write_file_atomic(path, text, strlen(text));
    json_object_put(s);
    return rc;
}

void ckb_run_close(ckb_run *r)
{
    if (!r)
        return;
    for (int w = 0; w < r->nwl; w++) {
        for (int i = 0; i < r->wl[w].budget && r->wl[w].recs; i++)
            json_object_put(r->wl[w].recs[i]);
        free(r->wl[w].recs);
    }
    free(r->wl);
    if (r->records_fd >= 0)
        close(r->records_fd);
    if (r->lock_fd >= 0) {
        /* The file stays, emptied: removing it would let a waiting process
         * lock the old inode while a newcomer locks a new one. The flock is
         * what counts; the pid is for the message. */
        if (ftruncate(r->lock_fd, 0) != 0) {
            /* a stale pid is only cosmetic */
        }
        flock(r->lock_fd, LOCK_UN);
        close(r->lock_fd);
    }
    json_object_put(r->config);
    pthread_mutex_destroy(&r->mu);
    free(r);
}
