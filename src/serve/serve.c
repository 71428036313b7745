/* `ckbench serve`: start, serve until a signal, stop (see serve.h). */
#include <errno.h>
#include <json-c/json.h>
#include <omp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/host_speed.h"
#include "core/excl.h"
#include "core/fsutil.h"
#include "core/jsonget.h"
#include "serve/serve_priv.h"

void ckb_serve_config_default(ckb_serve_config *c)
{
    memset(c, 0, sizeof *c);
    c->listen = "127.0.0.1:8714";
    c->db = "ckbench-serve.db";
    ckb_exec_config_default(&c->exec);
    c->threads = omp_get_num_procs();
    c->max_queue = 10000;
    c->max_body = 64L << 20;
    c->http_threads = 4;
    c->idle_timeout_s = 30;
    c->timeout_scale = 1.0;
    c->version = c->commit = "unknown";
}

/* An evaluation ended: its long-polls answer, its figures count. */
static void serve__on_end(void *ctx, const ckb_store_row *row, json_object *result)
{
    ckb_server *s = ctx;
    if (row->started_at > 0 && row->finished_at > 0) {
        json_object *v;
        double compile_s = -1;
        if (json_object_object_get_ex(ckb_json_obj(result, "stage_seconds"), "compile", &v))
            compile_s = json_object_get_double(v);
        ckb_metrics_observe_eval(s->metrics, row->finished_at - row->started_at, compile_s);
    }
    ckb_http_wake(s);
}

/* The host speed check at the start, under the timing lock (no timed call
 * of anyone's runs meanwhile), before any evaluation of ours. */
static void serve__host_speed(ckb_server *s, const ckb_machine *m)
{
    ckb_excl_lock();
    ckb_host_speed now = ckb_host_speed_probe(m, s->c.threads);
    ckb_excl_unlock();
    json_object *j = ckb_host_speed_json(m, now, now), *v;
    double fma = json_object_object_get_ex(j, "ratio", &v) && v ? json_object_get_double(v) : -1;
    double l3 = json_object_object_get_ex(j, "l3_ratio", &v) && v ? json_object_get_double(v) : -1;
    ckb_metrics_set_host_speed(s->metrics, fma, l3);
    fprintf(stderr,
            "ckbench serve: host speed at the start: f32 FMA %.2f and L3 read %.2f of the "
            "machine profile's%s\n",
            fma, l3,
            (fma > 0 && fma < CKB_HOST_SPEED_SLOW) || (l3 > 0 && l3 < CKB_HOST_SPEED_SLOW)
                ? ": slower than when profiled, so % of peak reads low (speedups hold)"
                : "");
    json_object_put(j);
}

int ckb_serve_run(const ckb_serve_config *c)
{
    ckb_server s;
    memset(&s, 0, sizeof s);
    s.c = *c;
    s.c.exec.isolate = 1;
    s.c.exec.quiet = 1;
    /* as `ckbench eval --threads`: a budget past the cores is the caller's to ask */
    s.max_threads = 1024;
    pthread_mutex_init(&s.wait_mu, NULL);
    pthread_cond_init(&s.wait_cv, NULL);
    int rc = 1;
    ckb_err err;
    /* Signals are taken by sigwait below, in this thread alone: every
     * thread made from here on inherits the mask. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (c->tokens && ckb_tokens_load(c->tokens, &s.tokens, &err) != 0) {
        fprintf(stderr, "ckbench serve: %s\n", err.msg);
        goto done;
    }
    snprintf(s.work_dir, sizeof s.work_dir, "%s.d/evals", c->db);
    if (ckb_mkdirs(s.work_dir) != 0) {
        fprintf(stderr, "ckbench serve: cannot make %s: %s\n", s.work_dir, strerror(errno));
        goto done;
    }
    if (!(s.store = ckb_store_open(c->db, &err))) {
        fprintf(stderr, "ckbench serve: %s\n", err.msg);
        goto done;
    }
    int requeued = ckb_store_recover(s.store);
    if (requeued)
        fprintf(stderr, "ckbench serve: %d evaluation%s left running by the last server queued "
                        "again\n", requeued, requeued == 1 ? "" : "s");
    if (!(s.exec = ckb_exec_open(&s.c.exec, &err))) {
        fprintf(stderr, "ckbench serve: %s\n", err.msg);
        goto done;
    }
    if (!(s.metrics = ckb_metrics_new()))
        goto done;
    if (c->machine && c->exec.kind == CKB_EXEC_LOCAL)
        serve__host_speed(&s, c->machine);
    ckb_runner_config rc_ = {.store = s.store, .exec = s.exec, .work_dir = s.work_dir,
                             .workers = ckb_exec_slots(s.exec),
                             .timeout_scale = c->timeout_scale, .on_end = serve__on_end,
                             .ctx = &s};
    if (!(s.runner = ckb_runner_start(&rc_))) {
        fprintf(stderr, "ckbench serve: cannot start the workers\n");
        goto done;
    }
    if (ckb_http_start(&s) != 0)
        goto done;
    int sig = 0;
    while (sigwait(&sigs, &sig) != 0) {
    }
    fprintf(stderr, "ckbench serve: %s: stopping (running evaluations go back to the queue)\n",
            strsignal(sig));
    rc = 0;
done:
    __atomic_store_n(&s.stopping, 1, __ATOMIC_RELEASE);
    ckb_http_stop(&s);
    ckb_runner_stop(s.runner);
    ckb_exec_close(s.exec);
    ckb_store_close(s.store);
    ckb_metrics_free(s.metrics);
    ckb_tokens_free(&s.tokens);
    pthread_mutex_destroy(&s.wait_mu);
    pthread_cond_destroy(&s.wait_cv);
    return rc;
}
