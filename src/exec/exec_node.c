/* The job file, the node's answer, and `ckbench __exec JOBFILE` (see executor.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/digest.h"
#include "core/error.h"
#include "core/excl.h"
#include "core/fsutil.h"
#include "core/jsonget.h"
#include "core/proc.h"
#include "core/say.h"
#include "exec/exec_priv.h"
#include "machine/profile.h"
#include "machine/roofline.h"

static const char exec__magic[8] = "CKBRES1";

void exec__path(const ckb_exec_job *job, const char *ext, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s.%s", job->dir, job->name, ext);
}

char *exec__job_text(const ckb_exec_job *job, char fp[17])
{
    const ckb_eval_opts *eo = job->eo;
    size_t srclen = 0;
    char *src = NULL;
    if (job->src && !(src = ckb_read_file(job->src, &srclen)))
        return NULL;
    json_object *j = json_object_new_object(), *defs = json_object_new_array();
    char seed[32];
    json_object_object_add(j, "format", json_object_new_int(1));
    json_object_object_add(j, "workload", json_object_new_string(job->w->id));
    json_object_object_add(j, "src", job->src ? json_object_new_string(job->src) : NULL);
    json_object_object_add(j, "size", json_object_new_string(ckb_size_name(eo->size)));
    /* the node runs the driver's host size, not one of its own */
    if (eo->size == CKB_SIZE_HOST)
        json_object_object_add(j, "host_scale",
                               json_object_new_int64(ckb_workload_host_scale(job->w)));
    json_object_object_add(j, "threads", json_object_new_int(eo->threads));
    json_object_object_add(j, "nseeds", json_object_new_int(eo->nseeds));
    json_object_object_add(j, "warmup", json_object_new_int(eo->warmup));
    json_object_object_add(j, "iters", json_object_new_int(eo->iters));
    json_object_object_add(j, "mode", json_object_new_int(eo->mode));
    for (int i = 0; i < eo->ndefines; i++)
        json_object_array_add(defs, json_object_new_string(eo->defines[i]));
    json_object_object_add(j, "defines", defs);
    json_object_object_add(j, "expert_kit", json_object_new_int(eo->expert_kit));
    json_object_object_add(j, "timeout_scale", json_object_new_double(eo->timeout_scale));
    json_object_object_add(j, "max_timing_s", json_object_new_double(eo->max_timing_s));
    json_object_object_add(j, "max_steal_pct", json_object_new_double(eo->max_steal_pct));
    snprintf(seed, sizeof seed, "%" PRIu64, eo->seed);
    json_object_object_add(j, "seed", json_object_new_string(seed));
    const char *t = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY |
                                                          JSON_C_TO_STRING_NOSLASHESCAPE);
    uint64_t h = ckb_digest(t, strlen(t), 0x636b62656e6368ull);
    if (src)
        h ^= ckb_digest(src, srclen, h);
    snprintf(fp, 17, "%016" PRIx64, h);
    json_object_object_add(j, "fingerprint", json_object_new_string(fp));
    char *text = ckb_xstrdup(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY |
                                                                   JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(j);
    free(src);
    return text;
}

int exec__read_result(const ckb_exec_job *job, const char *fp, ckb_eval_result *r,
                      json_object **json)
{
    char path[1400];
    exec__path(job, "json", path, sizeof path);
    json_object *j = json_object_from_file(path);
    const char *have = ckb_json_str(ckb_json_obj(j, "executor"), "fingerprint");
    if (!j || !have || strcmp(have, fp) != 0 || !ckb_json_str(j, "status")) {
        json_object_put(j);
        return 0;
    }
    if (r) {
        size_t n = 0;
        exec__path(job, "res", path, sizeof path);
        char *raw = ckb_read_file(path, &n);
        exec__raw_header h;
        if (!raw || n != sizeof h + sizeof *r) {
            free(raw);
            json_object_put(j);
            return 0;
        }
        memcpy(&h, raw, sizeof h);
        if (memcmp(h.magic, exec__magic, sizeof h.magic) != 0 || h.size != sizeof *r) {
            free(raw);
            json_object_put(j);
            return 0;
        }
        memcpy(r, raw + sizeof h, sizeof *r);
        free(raw);
    }
    *json = j;
    return 1;
}

/* This node's machine profile, kept per host (a cluster's home folder is
 * shared, and nodes of different CPUs must not overwrite one profile): the
 * host's own file, else the default profile when it is this CPU's, else
 * measured now (the node's first evaluation; the node is ours alone). */
static int exec__node_machine(int threads, const char *host, ckb_machine *m)
{
    char def[1024], path[1400];
    ckb_machine_default_path(threads, def, sizeof def);
    const char *base = strrchr(def, '/'); /* machine-<threads>t-<ISA level>.json */
    snprintf(path, sizeof path, "%s/nodes/%s-%s", ckb_cache_dir(), host, base ? base + 1 : def);
    ckb_machine probe;
    ckb_machine_probe(threads, &probe);
    const char *try[2] = {path, def};
    for (int i = 0; i < 2; i++)
        if (ckb_machine_load(try[i], m) == 0 && ckb_machine_same_host(m, &probe)) {
            if (i == 1)
                ckb_machine_save(m, path);
            return 0;
        }
    return ckb_machine_get(threads, path, m);
}

static int exec__write(const char *path, const void *data, size_t n)
{
    if (ckb_write_file_atomic(path, data, n) == 0)
        return 0;
    ckb_say("ckbench __exec: cannot write %s: %s\n", path, strerror(errno));
    return -1;
}

int ckb_exec_node_main(int argc, char **argv, ckb_err *err)
{
    ckb_err_clear(err);
    if (argc < 3) {
        ckb_err_set(err, CKB_E_USAGE, "usage: ckbench __exec JOBFILE (run by the slurm executor)");
        return 2;
    }
    double t0 = ckb_now();
    const char *jobfile = argv[2];
    size_t baselen = strlen(jobfile);
    if (baselen < 9 || strcmp(jobfile + baselen - 9, ".job.json") != 0) {
        ckb_err_set(err, CKB_E_USAGE, "ckbench __exec: %s is not a .job.json file", jobfile);
        return 2;
    }
    baselen -= 9;
    char out[1400], raw[1400], harness[1400], host[128] = "";
    snprintf(out, sizeof out, "%.*s.json", (int)baselen, jobfile);
    snprintf(raw, sizeof raw, "%.*s.res", (int)baselen, jobfile);
    snprintf(harness, sizeof harness, "%.*s.harness", (int)baselen, jobfile);
    json_object *j = json_object_from_file(jobfile), *defs;
    const ckb_workload *w = ckb_workload_find(ckb_json_str(j, "workload"));
    ckb_eval_opts eo;
    ckb_eval_opts_default(&eo);
    const char *defines[16];
    if (!w || ckb_size_parse(ckb_json_str(j, "size") ? ckb_json_str(j, "size") : "", &eo.size)) {
        ckb_err_set(err, CKB_E_FORMAT, "ckbench __exec: %s: not a job file of this ckbench",
                    jobfile);
        json_object_put(j);
        return 2;
    }
    if (eo.size == CKB_SIZE_HOST && ckb_workload_scale_dim(w) >= 0 &&
        ckb_workload_set_host_scale(w, ckb_json_long(j, "host_scale")) != 0) {
        ckb_err_set(err, CKB_E_FORMAT, "ckbench __exec: %s: no valid host_scale for %s", jobfile,
                    w->id);
        json_object_put(j);
        return 2;
    }
    eo.threads = (int)ckb_json_long(j, "threads");
    eo.nseeds = (int)ckb_json_long(j, "nseeds");
    eo.warmup = (int)ckb_json_long(j, "warmup");
    eo.iters = (int)ckb_json_long(j, "iters");
    eo.mode = (int)ckb_json_long(j, "mode");
    eo.timeout_scale = ckb_json_num(j, "timeout_scale");
    eo.max_timing_s = ckb_json_num(j, "max_timing_s");
    eo.max_steal_pct = ckb_json_num(j, "max_steal_pct");
    eo.seed = strtoull(ckb_json_str(j, "seed") ? ckb_json_str(j, "seed") : "0", NULL, 10);
    if (json_object_object_get_ex(j, "defines", &defs))
        for (size_t i = 0; i < json_object_array_length(defs) && eo.ndefines < 16; i++)
            defines[eo.ndefines++] = json_object_get_string(json_object_array_get_idx(defs, i));
    eo.defines = defines;
    eo.expert_kit = (int)ckb_json_long(j, "expert_kit");
    const char *node = getenv("SLURMD_NODENAME");
    gethostname(host, sizeof host - 1);
    if (!node || !*node)
        node = host;

    /* The folder's ledger: one line per evaluation a node started, so a
     * user (and the test) can see that nothing ran twice. */
    char ledger[1400], line[1600];
    const char *slash = strrchr(jobfile, '/');
    snprintf(ledger, sizeof ledger, "%.*sexec.ledger", slash ? (int)(slash - jobfile + 1) : 0,
             jobfile);
    int lfd = open(ledger, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (lfd >= 0) {
        const char *jobid = getenv("SLURM_JOB_ID"), *base = slash ? slash + 1 : jobfile;
        int len = snprintf(line, sizeof line, "%.*s %s %s\n",
                           (int)(baselen - (size_t)(base - jobfile)), base, jobid ? jobid : "-",
                           node);
        if (write(lfd, line, (size_t)len) != len)
            ckb_say("ckbench __exec: cannot append to %s\n", ledger);
        close(lfd);
    }
    int rc = 1;
    ckb_eval_result *r = ckb_xcalloc(1, sizeof *r);
    ckb_machine m;
    if (exec__node_machine(eo.threads, host, &m) != 0) {
        const char *msg = "cannot measure or load this node's machine profile";
        exec__write(harness, msg, strlen(msg));
        goto done;
    }
    /* This node's roofs for the workload (machine/roofline.h), as eval's. */
    ckb_roof roof;
    ckb_roof_for_workload(&m, w, eo.size, &roof);
    eo.peak_gflops = roof.compute_gflops;
    eo.bw_gbs = roof.mem_gbs;
    /* The node is ours (srun --exclusive); the lock also keeps a node that
     * is someone's workstation from timing two ckbench runs at once. */
    ckb_excl_lock();
    int erc = ckb_eval_run(w, ckb_json_str(j, "src"), &eo, r);
    ckb_excl_unlock();
    if (erc != 0) {
        exec__write(harness, r->message, strlen(r->message));
        goto done;
    }
    json_object *res = ckb_eval_result_json(w, &eo, r), *e = json_object_new_object();
    /* as `ckbench eval` prints it: the roofs its figures divide by */
    json_object_object_add(res, "roof", ckb_roof_to_json(&roof));
    /* the same program serves an isolated local evaluation (no Slurm job) */
    json_object_object_add(e, "name", json_object_new_string(getenv("SLURM_JOB_ID") ? "slurm"
                                                                                    : "local"));
    json_object_object_add(e, "node", json_object_new_string(node));
    json_object_object_add(e, "cpu", json_object_new_string(m.cpu));
    const char *jobid = getenv("SLURM_JOB_ID");
    json_object_object_add(e, "job_id", jobid ? json_object_new_string(jobid) : NULL);
    json_object_object_add(e, "fingerprint",
                           json_object_new_string(ckb_json_str(j, "fingerprint")
                                                      ? ckb_json_str(j, "fingerprint")
                                                      : ""));
    json_object_object_add(e, "machine", ckb_machine_to_json(&m));
    /* The node's own seconds: srun's wall time less this is Slurm's cost. */
    json_object_object_add(e, "node_s", json_object_new_double(ckb_now() - t0));
    json_object_object_add(res, "executor", e);
    size_t rawlen = sizeof(exec__raw_header) + sizeof *r;
    char *buf = malloc(rawlen);
    if (buf) {
        exec__raw_header h;
        memset(&h, 0, sizeof h);
        memcpy(h.magic, exec__magic, sizeof h.magic);
        h.size = sizeof *r;
        memcpy(buf, &h, sizeof h);
        memcpy(buf + sizeof h, r, sizeof *r);
    }
    /* The raw form first, the JSON last: the JSON is the commit point. */
    const char *text = json_object_to_json_string_ext(res, JSON_C_TO_STRING_PRETTY |
                                                               JSON_C_TO_STRING_NOSLASHESCAPE);
    if (buf && exec__write(raw, buf, rawlen) == 0 && exec__write(out, text, strlen(text)) == 0)
        rc = 0;
    free(buf);
    json_object_put(res);
done:
    free(r);
    json_object_put(j);
    return rc;
}
