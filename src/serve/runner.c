/* The server's workers (see runner.h). */
#include "serve/runner.h"

#include <errno.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/fsutil.h"
#include "core/jsonget.h"
#include "core/utf8.h"
#include "eval/eval.h"

/* A worker and the evaluation it runs. */
typedef struct {
    ckb_runner *r;
    pthread_t th;
    int started;
    char id[24];
    int active;   /* an evaluation is claimed and running */
    int cancel;   /* read by the executor (atomically): stop it now */
} runner__slot;

struct ckb_runner {
    ckb_runner_config c;
    pthread_mutex_t mu;
    pthread_cond_t work, idle; /* something queued; a slot became free */
    int stop;
    int nslots;
    runner__slot *slot;
};

static void runner__wait(ckb_runner *r, pthread_cond_t *cv, double s)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long ns = ts.tv_nsec + (long)((s - (long)s) * 1e9);
    ts.tv_sec += (time_t)s + ns / 1000000000L;
    ts.tv_nsec = ns % 1000000000L;
    pthread_cond_timedwait(cv, &r->mu, &ts);
}

/* Stores an ending until the store takes it (a full disk is waited out:
 * the result stays in the folder meanwhile, and a restart reuses it). */
static void runner__finish(ckb_runner *r, const char *id, ckb_store_state st, const char *result,
                           const char *verdict, int disturbed, const char *code,
                           const char *msg)
{
    for (;;) {
        ckb_store_rc rc = ckb_store_finish(r->c.store, id, st, result, verdict, disturbed, code,
                                           msg);
        if (rc != CKB_STORE_DISK_FULL && rc != CKB_STORE_ERROR)
            return;
        fprintf(stderr, "ckbench serve: cannot store the end of %s (%s); trying again in 5 s\n",
                id, ckb_store_last_error());
        pthread_mutex_lock(&r->mu);
        int stop = r->stop;
        if (!stop)
            runner__wait(r, &r->work, 5.0);
        pthread_mutex_unlock(&r->mu);
        if (stop)
            return;
    }
}

/* Runs the claimed row in dir; 0, or -1 when it could not start for want
 * of disk (the row then goes back to the queue). */
static int runner__run(runner__slot *sl, const ckb_store_row *row)
{
    ckb_runner *r = sl->r;
    ckb_err err = {0};
    char dir[1200], src[1300];
    snprintf(dir, sizeof dir, "%s/%s", r->c.work_dir, row->id);
    snprintf(src, sizeof src, "%s/kernel.c", dir);
    if (ckb_mkdirs(dir) != 0 || ckb_write_file_atomic(src, row->source, row->source_len) != 0) {
        fprintf(stderr, "ckbench serve: cannot write %s: %s; %s waits in the queue\n", src,
                strerror(errno), row->id);
        return -1;
    }
    const ckb_workload *w = ckb_workload_find(row->workload);
    ckb_eval_opts eo;
    ckb_eval_opts_default(&eo);
    ckb_size_parse(row->size, &eo.size);
    eo.threads = row->threads;
    eo.nseeds = row->seeds;
    eo.warmup = row->warmup;
    eo.iters = row->iters;
    eo.timeout_scale = r->c.timeout_scale;
    ckb_exec_job job = {.w = w, .src = src, .eo = &eo, .dir = dir, .name = "eval",
                        .cancel = &sl->cancel};
    json_object *json = NULL;
    int rc = w ? ckb_exec_eval(r->c.exec, &job, NULL, &json, &err) : -1;
    if (!w)
        snprintf(err.msg, sizeof err.msg, "workload %s is not in this build of ckbench",
                 row->workload);
    pthread_mutex_lock(&r->mu);
    int cancelled = sl->cancel, stopping = r->stop;
    pthread_mutex_unlock(&r->mu);
    if (rc == 0) {
        const char *text =
            ckb_json_text(json, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        runner__finish(r, row->id, CKB_EV_DONE, text, ckb_json_str(json, "status"),
                       ckb_json_timing_disturbed(json), NULL, NULL);
    } else if (cancelled && stopping) {
        /* the server stops: the evaluation runs again at the next start */
        ckb_store_requeue(r->c.store, row->id);
    } else if (!cancelled) {
        runner__finish(r, row->id, CKB_EV_FAILED, NULL, NULL, 0, "harness_error", err.msg);
    }
    if (!(cancelled && stopping)) {
        ckb_store_row after;
        if (ckb_store_get(r->c.store, NULL, row->id, 0, &after) == CKB_STORE_OK) {
            if (r->c.on_end)
                r->c.on_end(r->c.ctx, &after, rc == 0 ? json : NULL);
            /* the result is in the store: the folder has served */
            if (after.state != CKB_EV_RUNNING)
                ckb_remove_tree(dir);
            ckb_store_row_free(&after);
        }
    }
    json_object_put(json);
    return 0;
}

static void *runner__worker(void *arg)
{
    runner__slot *sl = arg;
    ckb_runner *r = sl->r;
    for (;;) {
        ckb_store_row row;
        int have = 0;
        pthread_mutex_lock(&r->mu);
        while (!r->stop && !have) {
            /* claimed and marked active under the lock: a cancel sees either
             * a queued row or a running one it can stop, never a gap */
            ckb_store_rc rc = ckb_store_claim(r->c.store, &row);
            if (rc == CKB_STORE_OK) {
                snprintf(sl->id, sizeof sl->id, "%s", row.id);
                sl->cancel = 0;
                sl->active = 1;
                have = 1;
            } else {
                if (rc != CKB_STORE_NOT_FOUND)
                    fprintf(stderr, "ckbench serve: cannot take work from the queue: %s\n",
                            ckb_store_last_error());
                runner__wait(r, &r->work, rc == CKB_STORE_NOT_FOUND ? 1.0 : 5.0);
            }
        }
        pthread_mutex_unlock(&r->mu);
        if (!have)
            break;
        if (runner__run(sl, &row) != 0) {
            ckb_store_requeue(r->c.store, row.id);
            pthread_mutex_lock(&r->mu);
            if (!r->stop)
                runner__wait(r, &r->work, 5.0);
            pthread_mutex_unlock(&r->mu);
        }
        ckb_store_row_free(&row);
        pthread_mutex_lock(&r->mu);
        sl->active = 0;
        sl->id[0] = 0;
        pthread_cond_broadcast(&r->idle);
        pthread_mutex_unlock(&r->mu);
    }
    return NULL;
}

ckb_runner *ckb_runner_start(const ckb_runner_config *c)
{
    ckb_runner *r = ckb_xcalloc(1, sizeof *r);
    int n = c->workers > 0 ? c->workers : 1;
    r->slot = ckb_xcalloc((size_t)n, sizeof *r->slot);
    r->c = *c;
    r->nslots = n;
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->work, NULL);
    pthread_cond_init(&r->idle, NULL);
    for (int i = 0; i < n; i++) {
        r->slot[i].r = r;
        if (pthread_create(&r->slot[i].th, NULL, runner__worker, &r->slot[i]) != 0) {
            ckb_runner_stop(r);
            return NULL;
        }
        r->slot[i].started = 1;
    }
    return r;
}

void ckb_runner_kick(ckb_runner *r)
{
    pthread_mutex_lock(&r->mu);
    pthread_cond_broadcast(&r->work);
    pthread_mutex_unlock(&r->mu);
}

static runner__slot *runner__find(ckb_runner *r, const char *id)
{
    for (int i = 0; i < r->nslots; i++)
        if (r->slot[i].active && strcmp(r->slot[i].id, id) == 0)
            return &r->slot[i];
    return NULL;
}

ckb_store_rc ckb_runner_cancel(ckb_runner *r, const char *owner, const char *id,
                               ckb_store_row *out)
{
    pthread_mutex_lock(&r->mu);
    ckb_store_rc rc = ckb_store_cancel(r->c.store, owner, id, out);
    runner__slot *sl = rc == CKB_STORE_OK ? runner__find(r, id) : NULL;
    if (sl) {
        __atomic_store_n(&sl->cancel, 1, __ATOMIC_RELEASE);
        /* answer once its processes are gone (the executor kills and reaps them) */
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        while (runner__find(r, id) == sl) {
            struct timespec t;
            clock_gettime(CLOCK_MONOTONIC, &t);
            if (t.tv_sec - t0.tv_sec > 10)
                break;
            runner__wait(r, &r->idle, 0.5);
        }
    }
    pthread_mutex_unlock(&r->mu);
    return rc;
}

int ckb_runner_running(ckb_runner *r)
{
    int n = 0;
    pthread_mutex_lock(&r->mu);
    for (int i = 0; i < r->nslots; i++)
        n += r->slot[i].active;
    pthread_mutex_unlock(&r->mu);
    return n;
}

void ckb_runner_stop(ckb_runner *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&r->mu);
    r->stop = 1;
    for (int i = 0; i < r->nslots; i++)
        if (r->slot[i].active)
            __atomic_store_n(&r->slot[i].cancel, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&r->work);
    pthread_mutex_unlock(&r->mu);
    for (int i = 0; i < r->nslots; i++)
        if (r->slot[i].started)
            pthread_join(r->slot[i].th, NULL);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->work);
    pthread_cond_destroy(&r->idle);
    free(r->slot);
    free(r);
}
