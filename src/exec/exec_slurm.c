/*
 * The slurm executor, driver side: one `srun --exclusive -N1 -n1` per
 * evaluation (see executor.h, and the README's cluster section for why one
 * srun per evaluation and not a pool of workers or job arrays).
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/fsutil.h"
#include "core/jsonget.h"
#include "core/proc.h"
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

int exec__slurm_eval(ckb_exec *x, const ckb_exec_job *job, ckb_eval_result *r, json_object **json,
                     char *err, size_t errlen)
{
    char fp[17], jobfile[1400], harness[1400], jobname[64];
    if (ckb_mkdirs(job->dir) != 0) {
        snprintf(err, errlen, "cannot make %s: %s", job->dir, strerror(errno));
        return -1;
    }
    char *text = exec__job_text(job, fp);
    if (!text) {
        snprintf(err, errlen, "cannot read %s: %s", job->src ? job->src : "(none)",
                 strerror(errno));
        return -1;
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
    if (submitted_before) {
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
        snprintf(err, errlen, "cannot write %s: %s", jobfile, strerror(errno));
        return -1;
    }
    char last[512] = "";
    int tries = x->c.retries + 1;
    for (int attempt = 1; attempt <= tries; attempt++) {
        unlink(harness);
        char *argv[64], part[160], acct[160], name[96], *extra = strdup(x->extra), *save = NULL;
        int n = 0;
        argv[n++] = x->srun;
        argv[n++] = "--exclusive";
        argv[n++] = "-N1";
        argv[n++] = "-n1";
        argv[n++] = "--quiet";
        snprintf(name, sizeof name, "--job-name=%s", jobname);
        argv[n++] = name;
        if (x->partition[0]) {
            snprintf(part, sizeof part, "--partition=%s", x->partition);
            argv[n++] = part;
        }
        if (x->account[0]) {
            snprintf(acct, sizeof acct, "--account=%s", x->account);
            argv[n++] = acct;
        }
        for (char *t = extra ? strtok_r(extra, " ", &save) : NULL; t && n < 58;
             t = strtok_r(NULL, " ", &save))
            argv[n++] = t;
        argv[n++] = x->self;
        argv[n++] = "__exec";
        argv[n++] = jobfile;
        argv[n] = NULL;
        ckb_proc_result pr;
        slurm__acquire(x);
        int started = ckb_proc_run(argv, SLURM__TIMEOUT_S, 64 * 1024, &pr);
        slurm__release(x);
        free(extra);
        if (started != 0) {
            snprintf(err, errlen, "cannot run %s: %s", x->srun, strerror(errno));
            return -1;
        }
        slurm__append_log(job, attempt, &pr);
        if (exec__read_result(job, fp, r, json)) {
            ckb_proc_result_free(&pr);
            slurm__finish(x, *json, attempt, 0, pr.wall_s);
            return 0;
        }
        char *why = ckb_read_file(harness, NULL);
        if (why) {
            /* The node ran the evaluation and the harness failed there: not
             * Slurm's doing, and the same on any node. */
            snprintf(err, errlen, "on the node: %.400s", why);
            free(why);
            ckb_proc_result_free(&pr);
            return -1;
        }
        slurm__last_line(pr.output ? pr.output : "", last, sizeof last);
        if (!x->c.quiet || attempt == tries)
            fprintf(stderr,
                    "ckbench: [%s] the Slurm job ended without a result (srun %s %d: %s)%s\n",
                    job->name, pr.exited ? "exit" : "signal",
                    pr.exited ? pr.exit_code : pr.signal, last[0] ? last : "no message",
                    attempt < tries ? "; submitting it again" : "");
        ckb_proc_result_free(&pr);
    }
    snprintf(err, errlen, "%s: Slurm failed the evaluation %d time%s (last: %.300s)", job->name,
             tries, tries == 1 ? "" : "s", last[0] ? last : "no message");
    return -1;
}
