/* Re-timing the samples whose timing was disturbed (see gen.h). */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/cleanup.h"
#include "core/excl.h"
#include "core/fsutil.h"
#include "core/jsonget.h"
#include "core/proc.h"
#include "core/say.h"
#include "gen/gen.h"
#include "gen/sample.h"

/* Seconds to wait before round k (1-based) of a drain. */
static double retime__pause(int round)
{
    const char *v = getenv("CKBENCH_RETIME_PAUSE_S");
    double base = v && *v ? atof(v) : 5.0;
    return base > 0 ? base * round : 0;
}

static void retime__sleep(double s)
{
    if (s <= 0)
        return;
    struct timespec t = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {
    }
}

/* Evaluates a record's code again. The new evaluation (owned), or NULL when
 * the harness could not run it. */
static json_object *retime__eval(ckb_run *run, const ckb_workload *w, int index,
                                 const char *code, const ckb_eval_opts *base, ckb_exec *x,
                                 int round)
{
    char dir[1200], path[1400];
    snprintf(dir, sizeof dir, "%s/tmp/retime-%s-%d", ckb_run_dir(run), w->id, index);
    snprintf(path, sizeof path, "%s/kernel.c", dir);
    ckb_cleanup_add_dir(dir);
    json_object *j = NULL;
    if (ckb_mkdirs(dir) == 0 && ckb_write_file_atomic(path, code, strlen(code)) == 0) {
        ckb_eval_opts eo = *base;
        eo.seed = 0; /* fresh seeds: a new evaluation, not a replay of the old one */
        if (x) {
            /* Through the run's executor (a Slurm node, for slurm); one name
             * per round, so a round never takes an earlier round's result. */
            ckb_err err;
            char evals[1200], name[200];
            snprintf(evals, sizeof evals, "%s/evals", ckb_run_dir(run));
            snprintf(name, sizeof name, "retime-%s-%d-r%d", w->id, index, round);
            ckb_exec_job job = {.w = w, .src = path, .eo = &eo, .dir = evals, .name = name};
            if (ckb_exec_eval(x, &job, NULL, &j, &err) != 0)
                ckb_say("ckbench: re-timing %s #%d: %s\n", w->id, index, err.msg);
        } else {
            ckb_eval_result r;
            ckb_excl_lock();
            int rc = ckb_eval_run(w, path, &eo, &r);
            ckb_excl_unlock();
            if (rc == 0)
                j = ckb_eval_result_json(w, &eo, &r);
            else
                ckb_say("ckbench: re-timing %s #%d: %s\n", w->id, index, r.message);
        }
    }
    unlink(path);
    rmdir(dir);
    ckb_cleanup_forget_dir(dir);
    return j;
}

/* The record that replaces rec: a copy with the new evaluation. */
static json_object *retime__record(json_object *rec, json_object *eval, int round)
{
    /* The fields are shared, not copied: a record in memory may carry
     * userdata (the feedback view of sample.c), which json-c cannot copy;
     * the fields that change are replaced below. */
    json_object *n = json_object_new_object();
    json_object_object_foreach(rec, key, val)
    {
        json_object_object_add(n, key, json_object_get(val));
    }
    json_object *old = json_object_new_object();
    json_object_object_add(old, "status", json_object_new_string(ckb_rec_str(rec, "status")));
    double was = ckb_json_num(rec, "speedup_disturbed");
    if (!isfinite(was))
        was = ckb_json_num(ckb_json_obj(rec, "eval"), "speedup");
    json_object_object_add(old, "speedup_disturbed", isfinite(was) ? json_object_new_double(was)
                                                                    : NULL);
    json_object_object_add(old, "finished", json_object_new_string(ckb_rec_str(rec, "finished")));
    char when[40];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    json_object *rt = json_object_new_object();
    json_object_object_add(rt, "at", json_object_new_string(when));
    json_object_object_add(rt, "round", json_object_new_int(round));
    json_object_object_add(rt, "previous", old);
    json_object_object_add(n, "retimed", rt);
    json_object_object_add(n, "status", json_object_new_string(ckb_rec_str(eval, "status")));
    json_object_object_add(n, "correct", json_object_new_boolean(ckb_rec_correct(eval)));
    json_object_object_del(n, "speedup_disturbed");
    json_object_object_del(n, "timing_disturbed");
    ckb_gen_record_speedup(n, eval);
    json_object_object_add(n, "eval", json_object_get(eval));
    return n;
}

/* The run's correct records whose timing was disturbed, as (workload, index). */
typedef struct {
    const ckb_workload *w;
    int index;
} retime__item;

static int retime__queue(ckb_run *run, retime__item **out)
{
    json_object *cfg = ckb_run_config(run), *wls;
    int budget = (int)ckb_json_long(cfg, "budget"), n = 0, cap = 0;
    *out = NULL;
    if (!json_object_object_get_ex(cfg, "workloads", &wls))
        return 0;
    for (size_t k = 0; k < json_object_array_length(wls); k++) {
        const char *id = json_object_get_string(json_object_array_get_idx(wls, k));
        const ckb_workload *w = ckb_workload_find(id);
        for (int i = 0; w && i < budget; i++) {
            json_object *rec = ckb_run_record(run, id, i);
            if (!ckb_rec_correct(rec) || !ckb_json_timing_disturbed(rec) ||
                !ckb_json_str(rec, "code"))
                continue;
            if (n == cap) {
                cap = cap ? 2 * cap : 16;
                *out = ckb_xrealloc(*out, (size_t)cap * sizeof **out);
            }
            (*out)[n++] = (retime__item){w, i};
        }
    }
    return n;
}

int ckb_gen_retime(ckb_run *run, const ckb_eval_opts *eo, int tries, int quiet,
                   ckb_retime_stats *st)
{
    return ckb_gen_retime_on(run, eo, NULL, tries, quiet, st);
}

int ckb_gen_retime_on(ckb_run *run, const ckb_eval_opts *eo, ckb_exec *x, int tries, int quiet,
                      ckb_retime_stats *st)
{
    memset(st, 0, sizeof *st);
    retime__item *q = NULL;
    int n = retime__queue(run, &q), rc = 0;
    st->queued = n;
    for (int round = 1; round <= tries && n > 0; round++) {
        /* Give the machine time to quiet down: the same work right away
         * would likely be disturbed the same way. */
        double pause = retime__pause(round);
        if (!quiet)
            ckb_say("ckbench: %d disturbed timing%s to measure again (round %d of %d%s)\n", n,
                    n == 1 ? "" : "s", round, tries, pause > 0 ? ", after a pause" : "");
        retime__sleep(pause);
        int left = 0;
        for (int k = 0; k < n; k++) {
            json_object *rec = ckb_run_record(run, q[k].w->id, q[k].index);
            json_object *eval =
                retime__eval(run, q[k].w, q[k].index, ckb_json_str(rec, "code"), eo, x, round);
            st->evaluations++;
            if (!eval) {
                rc = -1;
                q[left++] = q[k];
                continue;
            }
            if (ckb_json_timing_disturbed(eval)) {
                json_object_put(eval);
                q[left++] = q[k];
                continue;
            }
            /* Measured (whatever the verdict): it replaces the record. */
            json_object *n2 = retime__record(rec, eval, round);
            json_object_put(eval);
            ckb_err err;
            if (!n2 || ckb_run_retimed(run, n2, &err) != 0) {
                ckb_say("ckbench: %s\n", n2 ? err.msg : "out of memory");
                rc = -1;
                continue;
            }
            st->measured++;
            if (!quiet) {
                json_object *now = ckb_run_record(run, q[k].w->id, q[k].index);
                double sp = ckb_json_num(now, "speedup");
                ckb_say("[%s #%d] re-timed: %s", q[k].w->id, q[k].index,
                        ckb_rec_str(now, "status"));
                if (isfinite(sp))
                    ckb_say(" %.3gx", sp);
                ckb_say("\n");
            }
        }
        n = left;
    }
    st->still_disturbed = n;
    free(q);
    ckb_run_write_summary(run);
    return rc;
}
