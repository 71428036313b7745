/*
 * The driver side of an evaluation in a `ckbench __exec JOBFILE` process:
 * for slurm one `srun --exclusive -N1 -n1` per evaluation (see executor.h,
 * and docs/MANUAL.md's cluster section for why one srun per evaluation and not
 * a pool of workers or job arrays); for an isolated local evaluation the
 * same job file and result, the child started here without srun.
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/jsonget.h"
#include "core/proc.h"
#include "core/say.h"
#include "exec/exec_priv.h"

/* srun's own limit: a job may wait in the queue for days. */
#define SLURM__TIMEOUT_S (7 * 86400.0)

static void slurm__sleep(double s)
{
    if (s <= 0)
        return;
    struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Takes one of max_jobs submission slots, at least submit_gap_s after the
 * previous submission (Slurm's submission-rate limits). */
static void slurm__acquire(ckb_exec *x)
{
    pthread_mutex_lock(&x->mu);
    while (x->in_flight >= x->c.max_jobs)
        pthread_cond_wait(&x->cv, &x->mu);
    x->in_flight++;
    double wait = x->last_submit + x->c.submit_gap_s - ckb_now();
    x->last_submit = ckb_now() + (wait > 0 ? wait : 0);
    pthread_mutex_unlock(&x->mu);
    slurm__sleep(wait);
}

static void slurm__release(ckb_exec *x)
{
    pthread_mutex_lock(&x->mu);
    x->in_flight--;
    pthread_cond_signal(&x->cv);
    pthread_mutex_unlock(&x->mu);
}

/* Waits while a job of this name (a killed driver's) is queued or running,
 * so that a resumed run does not submit an evaluation twice. */
static void slurm__wait_named(const char *jobname)
{
    for (;;) {
        char *argv[] = {"squeue", "-h", "-o", "%i", "-n", (char *)jobname, NULL};
        ckb_proc_result pr;
        if (ckb_proc_run(argv, 60, 4096, &pr) != 0)
            return;
        int running = pr.exited && pr.exit_code == 0 && pr.output[strspn(pr.output, " \n")];
        ckb_proc_result_free(&pr);
        if (!running)
            return;
        slurm__sleep(2.0);
    }
}

/* The last non-empty line of s, trimmed to n. */
static void slurm__last_line(const char *s, char *buf, size_t n)
{
    const char *end = s + strlen(s);
    while (end > s && (end[-1] == '\n' || end[-1] == ' '))
        end--;
    const char *start = end;
    while (start > s && start[-1] != '\n')
        start--;
    snprintf(buf, n, "%.*s", (int)(end - start), start);
}

static void slurm__append_log(const ckb_exec_job *job, int attempt, const ckb_proc_result *pr)
{
    char path[1400];
    exec__path(job, "log", path, sizeof path);
    FILE *f = fopen(path, "a");
    if (!f)
        return;
    fprintf(f, "== attempt %d: srun %s %d after %.2f s\n%s\n", attempt,
            pr->exited ? "exited" : "killed by signal", pr->exited ? pr->exit_code : pr->signal,
            pr->wall_s, pr->output ? pr->output : "");
    fclose(f);
}

/* The result read back, with what the driver knows added. */
static void slurm__finish(ckb_exec *x, json_object *json, int attempts, int reused, double srun_s)
{
    json_object *e = ckb_json_obj(json, "executor");
    if (e) {
        json_object_object_add(e, "attempts", json_object_new_int(attempts));
        if (srun_s > 0)
            json_object_object_add(e, "srun_s", json_object_new_double(srun_s));
        if (reused)
            json_object_object_add(e, "reused", json_object_new_boolean(1));
    }
    exec__note_node(x, json);
}

static int slurm__cancelled(const ckb_exec_job *job)
{
    return job->cancel && __atomic_load_n(job->cancel, __ATOMIC_ACQUIRE);
}

/* The command of one attempt: srun's options, then `ckbench __exec JOBFILE`
 * (alone for an isolated local evaluation). strs holds the built options
 * and extra the split extra arguments, both owned by the caller. */
static void slurm__argv(ckb_exec *x, const char *jobname, const char *jobfile, char *argv[64],
                        char strs[3][160], char *extra)
{
    int n = 0;
    char *save = NULL;
    if (x->c.kind == CKB_EXEC_SLURM) {
        argv[n++] = x->srun;
        argv[n++] = "--exclusive";
        argv[n++] = "-N1";
        argv[n++] = "-n1";
        argv[n++] = "--quiet";
        snprintf(strs[0], 160, "--job-name=%s", jobname);
        argv[n++] = strs[0];
        if (x->partition[0]) {
            snprintf(strs[1], 160, "--partition=%s", x->partition);
            argv[n++] = strs[1];
        }
        if (x->account[0]) {
            snprintf(strs[2], 160, "--account=%s", x->account);
            argv[n++] = strs[2];
        }
        for (char *t = extra ? strtok_r(extra, " ", &save) : NULL; t && n < 58;
             t = strtok_r(NULL, " ", &save))
            argv[n++] = t;
    }
    argv[n++] = x->self;
    argv[n++] = "__exec";
    argv[n++] = (char *)jobfile;
    argv[n] = NULL;
}

/* A cancelled Slurm job: srun killed is not enough, since the job's step
 * may outlive its srun for a while. */
static void slurm__scancel(const char *jobname)
{
    char name[96];
    snprintf(name, sizeof name, "--name=%s", jobname);
    char *argv[] = {"scancel", name, NULL};
    ckb_proc_result pr;
    if (ckb_proc_run(argv, 60, 4096, &pr) == 0)
        ckb_proc_result_free(&pr);
}

int exec__job_eval(ckb_exec *x, const ckb_exec_job *job, ckb_eval_result *r, json_object **json,
                   ckb_err *err)
{
    int slurm = x->c.kind == CKB_EXEC_SLURM;
    char fp[17], jobfile[1400], harness[1400], jobname[64];
    if (ckb_mkdirs(job->dir) != 0) {
        return ckb_err_set(err, CKB_E_HARNESS, "cannot make %s: %s", job->dir, strerror(errno));
    }
    char *text = exec__job_text(job, fp);
    if (!text) {
        return ckb_err_set(err, CKB_E_HARNESS, "cannot read %s: %s", job->src ? job->src : "(none)",
                           strerror(errno));
    }
    /* Finished before (a resumed run): taken as it is. */
    if (exec__read_result(job, fp, r, json)) {
        free(text);
        slurm__finish(x, *json, 0, 1, 0);
        return 0;
    }
    exec__path(job, "job.json", jobfile, sizeof jobfile);
    exec__path(job, "harness", harness, sizeof harness);
    snprintf(jobname, sizeof jobname, "ckb-%s", fp);
    /* A job file of the same evaluation: a killed driver submitted it, and
     * its job may still be queued or running. */
    char *old = ckb_read_file(jobfile, NULL);
    int submitted_before = old && strcmp(old, text) == 0;
    free(old);
    if (slurm && submitted_before) {
        slurm__wait_named(jobname);
        if (exec__read_result(job, fp, r, json)) {
            free(text);
            slurm__finish(x, *json, 1, 1, 0);
            return 0;
        }
    }
    int rc = ckb_write_file_atomic(jobfile, text, strlen(text));
    free(text);
    if (rc != 0) {
        return ckb_err_set(err, CKB_E_HARNESS, "cannot write %s: %s", jobfile, strerror(errno));
    }
    char last[512] = "";
    /* A local child that ends without an answer is no node lost: not retried. */
    int tries = slurm ? x->c.retries + 1 : 1;
    for (int attempt = 1; attempt <= tries; attempt++) {
        if (slurm__cancelled(job)) {
            return ckb_err_set(err, CKB_E_HARNESS, "cancelled");
        }
        unlink(harness);
        char *argv[64], strs[3][160], *extra = ckb_xstrdup(x->extra);
        slurm__argv(x, jobname, jobfile, argv, strs, extra);
        ckb_proc_result pr;
        if (slurm)
            slurm__acquire(x);
        int started = ckb_proc_run_cancellable(argv, SLURM__TIMEOUT_S, 64 * 1024, job->cancel,
                                               &pr);
        if (slurm)
            slurm__release(x);
        free(extra);
        if (started != 0) {
            return ckb_err_set(err, CKB_E_HARNESS, "cannot run %s: %s", argv[0], strerror(errno));
        }
        slurm__append_log(job, attempt, &pr);
        if (pr.cancelled) {
            if (slurm)
                slurm__scancel(jobname);
            ckb_proc_result_free(&pr);
            return ckb_err_set(err, CKB_E_HARNESS, "cancelled");
        }
        if (exec__read_result(job, fp, r, json)) {
            ckb_proc_result_free(&pr);
            slurm__finish(x, *json, attempt, 0, slurm ? pr.wall_s : 0);
            return 0;
        }
        char *why = ckb_read_file(harness, NULL);
        if (why) {
            /* The node ran the evaluation and the harness failed there: not
             * Slurm's doing, and the same on any node. */
            ckb_err_set(err, CKB_E_HARNESS, "%s%.400s", slurm ? "on the node: " : "", why);
            free(why);
            ckb_proc_result_free(&pr);
            return CKB_E_HARNESS;
        }
        slurm__last_line(pr.output ? pr.output : "", last, sizeof last);
        if (slurm && (!x->c.quiet || attempt == tries))
            ckb_say("ckbench: [%s] the Slurm job ended without a result (srun %s %d: %s)%s\n",
                    job->name, pr.exited ? "exit" : "signal", pr.exited ? pr.exit_code : pr.signal,
                    last[0] ? last : "no message", attempt < tries ? "; submitting it again" : "");
        if (!slurm)
            ckb_err_set(err, CKB_E_HARNESS,
                        "the evaluation's process ended without a result (%s %d: %s)",
                        pr.exited ? "exit" : "signal", pr.exited ? pr.exit_code : pr.signal,
                        last[0] ? last : "no message");
        ckb_proc_result_free(&pr);
    }
    if (slurm)
        ckb_err_set(err, CKB_E_HARNESS, "%s: Slurm failed the evaluation %d time%s (last: %.300s)",
                    job->name, tries, tries == 1 ? "" : "s", last[0] ? last : "no message");
    return CKB_E_HARNESS;
}
