/* The executor: its configuration, the local executor, the nodes seen (see
 * executor.h; nodes.c tallies them). */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/excl.h"
#include "core/jsonget.h"
#include "core/proc.h"
#include "core/say.h"
#include "exec/exec_priv.h"
#include "machine/profile.h"

void ckb_exec_config_default(ckb_exec_config *c)
{
    memset(c, 0, sizeof *c);
    c->kind = CKB_EXEC_LOCAL;
    c->max_jobs = 0; /* slurm: the partition's node count */
    c->retries = 3;
    c->submit_gap_s = 0.05;
}

static const char *const exec__kinds[] = {"local", "slurm"};

int ckb_exec_kind_parse(const char *s, ckb_exec_kind *out)
{
    for (int i = 0; s && i < 2; i++)
        if (strcmp(s, exec__kinds[i]) == 0) {
            *out = (ckb_exec_kind)i;
            return 0;
        }
    return -1;
}

const char *ckb_exec_kind_name(ckb_exec_kind k)
{
    return (unsigned)k < 2 ? exec__kinds[k] : "unknown";
}

/* The option, else the environment variable, else "" (copied into dst). */
static void exec__setting(const char *opt, const char *env, char *dst, size_t n)
{
    const char *v = opt && *opt ? opt : getenv(env);
    snprintf(dst, n, "%s", v ? v : "");
}

/* Whether prog runs: a path that is executable, or a name found on PATH. */
static int exec__on_path(const char *prog)
{
    if (strchr(prog, '/'))
        return access(prog, X_OK) == 0;
    const char *path = getenv("PATH");
    char *copy = ckb_xstrdup(path ? path : "/usr/bin:/bin"), *save = NULL, buf[1024];
    int found = 0;
    for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
        snprintf(buf, sizeof buf, "%s/%s", d, prog);
        found = access(buf, X_OK) == 0;
    }
    free(copy);
    return found;
}

/* The partition's nodes (sinfo), 0 when sinfo cannot tell. More sruns in
 * flight than nodes only queue: each queued job then waits for one of
 * Slurm's scheduling passes, which left the test cluster's node idle for
 * most of the time (docs/MANUAL.md, "Running on a cluster"). */
static int exec__partition_nodes(const char *partition)
{
    char part[160];
    snprintf(part, sizeof part, "--partition=%s", partition);
    char *argv[] = {"sinfo", "-h", "-N", "-o", "%N", partition[0] ? part : NULL, NULL};
    ckb_proc_result pr;
    if (ckb_proc_run(argv, 60, 1 << 20, &pr) != 0)
        return 0;
    int n = 0;
    if (pr.exited && pr.exit_code == 0)
        for (char *l = pr.output, *nl; l && *l; l = nl ? nl + 1 : NULL) {
            nl = strchr(l, '\n');
            size_t len = nl ? (size_t)(nl - l) : strlen(l);
            /* -N lists a node once per partition: count each name once. */
            int seen = 0;
            for (char *p = pr.output; p < l && !seen; p = strchr(p, '\n') + 1)
                seen = strncmp(p, l, len) == 0 && p[len] == '\n';
            n += len > 0 && !seen;
        }
    ckb_proc_result_free(&pr);
    return n;
}

ckb_exec *ckb_exec_open(const ckb_exec_config *c, ckb_err *err)
{
    ckb_exec *x = ckb_xcalloc(1, sizeof *x);
    x->c = *c;
    if (x->c.retries < 0)
        x->c.retries = 0;
    if (x->c.max_jobs < 1 && c->kind != CKB_EXEC_SLURM)
        x->c.max_jobs = 1;
    pthread_mutex_init(&x->mu, NULL);
    pthread_cond_init(&x->cv, NULL);
    if (c->ckbench) {
        snprintf(x->self, sizeof x->self, "%s", c->ckbench);
    } else {
        ssize_t n = readlink("/proc/self/exe", x->self, sizeof x->self - 1);
        x->self[n > 0 ? n : 0] = 0;
    }
    if ((c->kind == CKB_EXEC_SLURM || c->isolate) && !x->self[0]) {
        ckb_err_set(err, CKB_E_HARNESS,
                    "cannot tell where this ckbench binary is (/proc/self/exe)");
        ckb_exec_close(x);
        return NULL;
    }
    if (c->kind == CKB_EXEC_SLURM) {
        exec__setting(c->partition, "CKB_SLURM_PARTITION", x->partition, sizeof x->partition);
        exec__setting(c->account, "CKB_SLURM_ACCOUNT", x->account, sizeof x->account);
        exec__setting(c->srun, "CKB_SRUN", x->srun, sizeof x->srun);
        exec__setting(c->extra_args, "CKB_SLURM_ARGS", x->extra, sizeof x->extra);
        if (!x->srun[0])
            snprintf(x->srun, sizeof x->srun, "srun");
        if (!exec__on_path(x->srun)) {
            ckb_err_set(err, CKB_E_NOT_FOUND,
                        "--executor slurm needs Slurm's srun ('%s' is not on PATH): run on a "
                        "cluster's login node, or set CKB_SRUN",
                        x->srun);
            ckb_exec_close(x);
            return NULL;
        }
        if (x->c.max_jobs < 1) {
            x->c.max_jobs = exec__partition_nodes(x->partition);
            if (x->c.max_jobs < 1)
                x->c.max_jobs = 1;
            if (!c->quiet)
                ckb_say("ckbench: slurm executor: at most %d evaluations in flight (the "
                        "partition's nodes; --slurm-max-jobs to change)\n",
                        x->c.max_jobs);
        }
    }
    return x;
}

void ckb_exec_close(ckb_exec *x)
{
    if (!x)
        return;
    pthread_mutex_destroy(&x->mu);
    pthread_cond_destroy(&x->cv);
    free(x);
}

ckb_exec_kind ckb_exec_kind_of(const ckb_exec *x) { return x ? x->c.kind : CKB_EXEC_LOCAL; }

int ckb_exec_slots(const ckb_exec *x) { return x->c.max_jobs > 0 ? x->c.max_jobs : 1; }

json_object *ckb_exec_nodes_json(ckb_exec *x)
{
    json_object *o = json_object_new_object(), *nodes = json_object_new_object();
    pthread_mutex_lock(&x->mu);
    for (int i = 0; i < x->nnodes; i++) {
        json_object *n = json_object_new_object();
        json_object_object_add(n, "cpu", json_object_new_string(x->nodes[i].cpu));
        json_object_object_add(n, "evaluations", json_object_new_int(x->nodes[i].n));
        json_object_object_add(nodes, x->nodes[i].node, n);
    }
    json_object_object_add(o, "executor", json_object_new_string(ckb_exec_kind_name(x->c.kind)));
    json_object_object_add(o, "nodes", nodes);
    json_object_object_add(o, "mixed_cpus", json_object_new_boolean(x->mixed));
    pthread_mutex_unlock(&x->mu);
    return o;
}

/* local: this process, under the machine-wide timing lock. */
static int exec__local_eval(ckb_exec *x, const ckb_exec_job *job, ckb_eval_result *r,
                            json_object **json, ckb_err *err)
{
    ckb_eval_result *res = r ? r : ckb_xmalloc(sizeof *res);
    ckb_excl_lock();
    int rc = ckb_eval_run(job->w, job->src, job->eo, res);
    ckb_excl_unlock();
    if (rc != 0) {
        rc = ckb_err_set(err, CKB_E_HARNESS, "%s", res->message);
    } else {
        *json = ckb_eval_result_json(job->w, job->eo, res);
        ckb_machine m;
        char host[128] = "";
        gethostname(host, sizeof host - 1);
        ckb_machine_probe(job->eo->threads, &m);
        json_object *e = json_object_new_object();
        json_object_object_add(e, "name", json_object_new_string("local"));
        json_object_object_add(e, "node", json_object_new_string(host));
        json_object_object_add(e, "cpu", json_object_new_string(m.cpu));
        json_object_object_add(*json, "executor", e);
        exec__note_node(x, *json);
    }
    if (res != r)
        free(res);
    return rc;
}

int ckb_exec_eval(ckb_exec *x, const ckb_exec_job *job, ckb_eval_result *r, json_object **json,
                  ckb_err *err)
{
    *json = NULL;
    if (x->c.kind == CKB_EXEC_SLURM || x->c.isolate)
        return exec__job_eval(x, job, r, json, err);
    return exec__local_eval(x, job, r, json, err);
}
