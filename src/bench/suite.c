#include "bench/suite.h"

#include <dirent.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <json-c/json.h>
#include <math.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench/expert.h"
#include "bench/host_speed.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/jsonget.h"
#include "core/parallel.h"
#include "core/proc.h"
#include "core/say.h"
#include "core/strbuf.h"
#include "core/utf8.h"
#include "eval/compile.h"
#include "eval/eval.h"
#include "machine/isa.h"
#include "machine/roofline.h"
#include "workloads/dnnl_ops.h"

/* A figure, or null when it was not measured (JSON has no NaN). */
static json_object *suite__num(double v) { return isfinite(v) ? json_object_new_double(v) : NULL; }

/* One variant's timing: every field is present, null when not timed. */
static json_object *suite__variant(const char *status, const ckb_stats *s, double flops,
                                   const ckb_roof *roof)
{
    json_object *v = json_object_new_object();
    int timed = s && s->n > 0;
    double g = timed && s->median > 0 ? flops / (s->median * 1e-3) / 1e9 : NAN;
    json_object_object_add(v, "status", json_object_new_string(status));
    json_object_object_add(v, "median_ms", suite__num(timed ? s->median : NAN));
    json_object_object_add(v, "mean_ms", suite__num(timed ? s->mean : NAN));
    json_object_object_add(v, "std_ms", suite__num(timed ? s->std : NAN));
    json_object_object_add(v, "min_ms", suite__num(timed ? s->min : NAN));
    json_object_object_add(v, "gflops", suite__num(g));
    json_object_object_add(v, "pct_of_peak",
                           suite__num(roof->compute_gflops > 0 ? ckb_roof_pct(roof, g) : NAN));
    return v;
}

static void suite__shape(const ckb_workload *w, ckb_size s, char *buf, size_t n)
{
    const ckb_tensor *t = NULL;
    int64_t dims[CKB_MAX_DIMS];
    ckb_workload_dims(w, s, dims);
    for (int i = 0; i < w->ntensors && !t; i++)
        if (w->tensors[i].role == CKB_OUT)
            t = &w->tensors[i];
    size_t used = (size_t)snprintf(buf, n, "[");
    for (int k = 0; t && k < t->rank && used < n; k++)
        used += (size_t)snprintf(buf + used, n - used, "%s%lld", k ? " " : "",
                                 (long long)dims[t->shape[k]]);
    if (used < n)
        snprintf(buf + used, n - used, "]");
}

uint64_t ckb_suite_source_hash(const char *text, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)text[i]) * 0x100000001b3ull;
    return h;
}

/* Where the expert's source is (relative to the ckbench root) and a hash of
 * its text, so a report shows the source only if it is still the one run. */
static void suite__source(json_object *x, const char *path)
{
    size_t n, home = strlen(ckb_home());
    char *text = ckb_read_file(path, &n), hex[32];
    if (!text)
        return;
    const char *rel = strncmp(path, ckb_home(), home) == 0 && path[home] == '/' ? path + home + 1
                                                                                 : path;
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)ckb_suite_source_hash(text, n));
    json_object_object_add(x, "source", json_object_new_string(rel));
    json_object_object_add(x, "source_hash", json_object_new_string(hex));
    free(text);
}

/* One evaluation through the executor (local when none was given): 0 with
 * *r and *json (the caller's), or -1 with r->message saying why. The job's
 * files, for slurm, go to OUT/evals/NAME.*. */
static int suite__eval(const ckb_suite_opts *o, const ckb_workload *w, const char *src,
                       const ckb_eval_opts *eo, const char *name, ckb_eval_result *r,
                       json_object **json)
{
    ckb_err err;
    char dir[1100];
    ckb_exec *x = o->exec, *local = NULL;
    memset(r, 0, sizeof *r);
    *json = NULL;
    if (!x) {
        ckb_exec_config c;
        ckb_exec_config_default(&c);
        if (!(x = local = ckb_exec_open(&c, &err))) {
            snprintf(r->message, sizeof r->message, "%s", err.msg);
            return -1;
        }
    }
    snprintf(dir, sizeof dir, "%s/evals", o->out_dir);
    ckb_exec_job job = {.w = w, .src = src, .eo = eo, .dir = dir, .name = name};
    int rc = ckb_exec_eval(x, &job, r, json, &err);
    if (rc != 0) {
        r->status = CKB_ST_HARNESS_ERROR;
        snprintf(r->message, sizeof r->message, "%s", err.msg);
    }
    ckb_exec_close(local);
    return rc;
}

/* Runs one workload: the expert against the baseline, or the baseline alone. */
static json_object *suite__run_one(const ckb_suite_opts *o, const ckb_workload *w)
{
    ckb_eval_opts eo;
    ckb_eval_opts_default(&eo);
    eo.size = o->size;
    eo.threads = o->threads;
    eo.warmup = o->warmup;
    eo.iters = o->iters;
    /* the workload's roofs: % of peak, bound and the beyond_roofline note */
    ckb_roof roof;
    ckb_roof_for_workload(o->machine, w, o->size, &roof);
    eo.peak_gflops = roof.compute_gflops;
    eo.bw_gbs = roof.mem_gbs;
    char expert[512];
    ckb_expert_config cfg;
    int has_expert = o->use_expert && ckb_expert_path(w, expert, sizeof expert);
    if (has_expert) {
        ckb_expert_config_load(w, o->size, o->threads, o->machine, &cfg);
        /* tuned values are per host: say so when this one has none */
        if (!cfg.tuned && w->nparams > 0)
            ckb_say("%sckbench: %s: the expert runs %s; `ckbench tune %s` tunes it here\n",
                    isatty(2) ? "\r\033[K" : "", w->id, cfg.note, w->id);
        eo.defines = cfg.defines;
        eo.ndefines = cfg.n;
        eo.expert_kit = 1;
    } else {
        eo.mode = CKB_MODE_BASELINE;
    }
    ckb_eval_result r;
    json_object *ej;
    int rc = suite__eval(o, w, has_expert ? expert : NULL, &eo, w->id, &r, &ej);

    int64_t dims[CKB_MAX_DIMS];
    ckb_workload_dims(w, o->size, dims);
    json_object *e = json_object_new_object();
    json_object_object_add(e, "workload", json_object_new_string(w->id));
    json_object_object_add(e, "model", json_object_new_string(w->model));
    json_object_object_add(e, "operator", json_object_new_string(w->op));
    json_object_object_add(e, "tags", json_object_new_string(w->tags));
    json_object_object_add(e, "dims", ckb_workload_dims_json(w, o->size));
    json_object_object_add(e, "flops", json_object_new_double(r.flops));
    json_object_object_add(e, "bytes", json_object_new_double(r.bytes));
    char shape[128];
    suite__shape(w, o->size, shape, sizeof shape);
    json_object_object_add(e, "output_shape", json_object_new_string(shape));

    json_object_object_add(e, "roof", ckb_roof_to_json(&roof));
    double rms = ckb_roof_ms(&roof, r.flops, r.bytes);
    const char *bound = ckb_roof_bound(&roof, r.flops, r.bytes);
    if (isfinite(rms))
        json_object_object_add(e, "roofline_ms", json_object_new_double(rms));
    if (bound)
        json_object_object_add(e, "bound", json_object_new_string(bound));
    int base_ok = rc == 0 && r.base.n > 0;
    json_object_object_add(e, "baseline",
                           suite__variant(base_ok ? "ok" : "error", base_ok ? &r.base : NULL,
                                          r.flops, &roof));
    if (has_expert) {
        json_object *x = suite__variant(ckb_status_name(r.status),
                                        r.status == CKB_ST_OK ? &r.cand : NULL, r.flops, &roof);
        json_object *params = json_object_new_object();
        for (int i = 0; i < cfg.n; i++)
            json_object_object_add(params, w->params[i].name,
                                   json_object_new_int64(cfg.values[i]));
        json_object_object_add(x, "params", params);
        json_object_object_add(x, "tuned", json_object_new_boolean(cfg.tuned));
        char host[200];
        ckb_expert_host(host, sizeof host);
        json_object_object_add(x, "tuned_for_host", json_object_new_string(host));
        if (!cfg.tuned)
            json_object_object_add(x, "untuned_reason", json_object_new_string(cfg.note));
        suite__source(x, expert);
        if (r.status != CKB_ST_OK)
            json_object_object_add(x, "error", json_object_new_string(r.message));
        json_object_object_add(e, "expert", x);
    }
    json_object_object_add(e, "speedup",
                           suite__num(has_expert && r.status == CKB_ST_OK ? r.speedup : NAN));
    json_object_object_add(e, "error", base_ok ? NULL : json_object_new_string(r.message));
    json_object *ev = ej ? ej : ckb_eval_result_json(w, &eo, &r), *d;
    /* Still disturbed by other work after every retry: not a figure. */
    json_object_object_add(e, "timing_disturbed",
                           json_object_object_get_ex(ev, "timing_disturbed", &d)
                               ? json_object_get(d)
                               : NULL);
    json_object_object_add(e, "eval", ev);
    return e;
}

/* The same baseline timed against itself in one interleaved run: the
 * ratio of the two medians is what a speedup of 1.00x looks like here. */
static json_object *suite__noise(const ckb_suite_opts *o, const ckb_workload *w)
{
    ckb_eval_opts eo;
    ckb_eval_opts_default(&eo);
    eo.size = o->size;
    eo.threads = o->threads;
    eo.warmup = o->warmup;
    eo.iters = o->iters;
    eo.mode = CKB_MODE_SELF;
    ckb_eval_result r;
    json_object *n = json_object_new_object(), *ej = NULL;
    char name[160];
    snprintf(name, sizeof name, "noise-%s", w->id);
    int ok = suite__eval(o, w, NULL, &eo, name, &r, &ej) == 0 && r.status == CKB_ST_OK;
    json_object_object_add(n, "workload", json_object_new_string(w->id));
    json_object_object_add(n, "first_median_ms", suite__num(ok ? r.base.median : NAN));
    json_object_object_add(n, "second_median_ms", suite__num(ok ? r.cand.median : NAN));
    json_object_object_add(n, "ratio", suite__num(ok ? r.speedup : NAN));
    json_object *ev = ej ? ej : ckb_eval_result_json(w, &eo, &r), *d;
    json_object_object_add(n, "timing_disturbed",
                           ok && json_object_object_get_ex(ev, "timing_disturbed", &d)
                               ? json_object_get(d)
                               : NULL);
    if (ej) /* where it ran */
        json_object_object_add(n, "executor", json_object_get(ckb_json_obj(ej, "executor")));
    json_object_put(ev);
    json_object_object_add(n, "error", ok ? NULL : json_object_new_string(r.message));
    return n;
}

static char *suite__git_commit(void)
{
    char *argv[] = {"git", "-C", (char *)ckb_home(), "rev-parse", "--short", "HEAD", NULL};
    ckb_proc_result pr;
    if (ckb_proc_run(argv, 10, 256, &pr) != 0)
        return ckb_xstrdup("unknown");
    char *nl = strchr(pr.output, '\n');
    if (nl)
        *nl = '\0';
    char *s = ckb_xstrdup(pr.exited && pr.exit_code == 0 ? pr.output : "unknown");
    ckb_proc_result_free(&pr);
    return s;
}

static json_object *suite__metadata(const ckb_suite_opts *o)
{
    json_object *m = json_object_new_object();
    char when[32], *commit = suite__git_commit();
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    json_object_object_add(m, "started_at", json_object_new_string(when));
    json_object_object_add(m, "ckbench_commit", json_object_new_string(commit));
    free(commit);
    json_object_object_add(m, "size", json_object_new_string(ckb_size_name(o->size)));
    json_object_object_add(m, "threads", json_object_new_int(o->threads));
    json_object_object_add(m, "warmup", json_object_new_int(o->warmup));
    json_object_object_add(m, "iters", json_object_new_int(o->iters));
    json_object_object_add(m, "timing", json_object_new_string(
        "median of per-call times taken by ckbench from outside the sandboxes (kernel send "
        "stamps); baseline and candidate alternating, each in a sandbox of its own"));
    json_object_object_add(m, "compiler", json_object_new_string(ckb_compiler_version()));
    /* the flags compile.c uses: -march follows the ISA level in force */
    const char *march[CKB_ISA_MAX_FLAGS];
    int nmarch = ckb_isa_march(ckb_isa_level(), march);
    char flags[512] = "-O3";
    for (int i = 0; i < nmarch; i++)
        snprintf(flags + strlen(flags), sizeof flags - strlen(flags), " %s", march[i]);
    snprintf(flags + strlen(flags), sizeof flags - strlen(flags),
             " -fopenmp -shared -fPIC -std=gnu11");
    json_object_object_add(m, "compile_flags", json_object_new_string(flags));
    json_object_object_add(m, "isa_level", json_object_new_string(ckb_isa_name(ckb_isa_level())));
    json_object_object_add(m, "onednn_version", json_object_new_string(ckb_dnnl_version()));
    json_object_object_add(m, "onednn_isa", json_object_new_string(ckb_dnnl_isa()));
    json_object_object_add(m, "onednn_bf16",
                           json_object_new_string(ckb_dnnl_bf16_native() ? "native" : "f32"));
    json_object_object_add(m, "machine", ckb_machine_to_json(o->machine));
    /* The rest of what makes two runs comparable: libraries and host. */
    json_object *lib = json_object_new_object();
    const struct scmp_version *sv = seccomp_version();
    char buf[64];
    if (sv) {
        snprintf(buf, sizeof buf, "%u.%u.%u", sv->major, sv->minor, sv->micro);
        json_object_object_add(lib, "libseccomp", json_object_new_string(buf));
    }
    json_object_object_add(lib, "json-c", json_object_new_string(json_c_version()));
    json_object_object_add(lib, "glibc", json_object_new_string(gnu_get_libc_version()));
    snprintf(buf, sizeof buf, "%d", _OPENMP);
    json_object_object_add(lib, "openmp", json_object_new_string(buf));
    json_object_object_add(m, "libraries", lib);
    struct utsname u;
    if (uname(&u) == 0) {
        json_object_object_add(m, "hostname", json_object_new_string(u.nodename));
        char kernel[3 * sizeof u.release];
        snprintf(kernel, sizeof kernel, "%s %s %s", u.sysname, u.release, u.machine);
        json_object_object_add(m, "kernel", json_object_new_string(kernel));
    }
    return m;
}

static int suite__write(const ckb_suite_opts *o, json_object *root, ckb_err *err)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/results.json", o->out_dir);
    /* valid UTF-8 whatever a compiler or kernel message held (core/utf8.h) */
    const char *text = ckb_json_text(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
    if (ckb_write_file_atomic(path, text, strlen(text)) != 0)
        return ckb_err_set(err, CKB_E_IO, "cannot write %s: %s (the previous file is untouched)",
                           path, strerror(errno));
    /* The CSV forms, each replaced atomically like results.json. */
    const char *names[2] = {"results.csv", "results-jaxbench.csv"};
    for (int k = 0; k < 2; k++) {
        ckb_strbuf csv = {0};
        ckb_suite_csv(root, k, &csv);
        snprintf(path, sizeof path, "%s/%s", o->out_dir, names[k]);
        int rc = ckb_write_file_atomic(path, csv.data, csv.len);
        if (rc != 0)
            ckb_err_set(err, CKB_E_IO, "cannot write %s: %s", path, strerror(errno));
        ckb_strbuf_free(&csv);
        if (rc != 0)
            return CKB_E_IO;
    }
    return CKB_OK;
}

/* A millisecond figure for the table, "-" when not measured. */
static const char *suite__ms(double v, char *buf, size_t n)
{
    if (isfinite(v) && v > 0)
        snprintf(buf, n, "%.2f", v);
    else
        snprintf(buf, n, "-");
    return buf;
}

static void suite__table(json_object *root)
{
    json_object *list = NULL;
    json_object_object_get_ex(root, "workloads", &list);
    ckb_say_out("\n%-58s %11s %11s %8s %9s %7s %7s\n", "workload", "baseline ms", "expert ms",
                "speedup", "GFLOP/s", "% peak", "status");
    int ndisturbed = 0;
    for (size_t i = 0; list && i < json_object_array_length(list); i++) {
        json_object *e = json_object_array_get_idx(list, i);
        json_object *b = ckb_json_obj(e, "baseline"), *ex = ckb_json_obj(e, "expert"), *d;
        double bms = ckb_json_num(b, "median_ms"), ems = ckb_json_num(ex, "median_ms");
        double best = ems > 0 ? ems : bms, flops = ckb_json_num(e, "flops");
        double g = best > 0 && flops >= 0 ? flops / (best * 1e-3) / 1e9 : NAN;
        const char *st = ckb_json_str(ex, "status");
        if (!st)
            st = ckb_json_str(b, "status");
        int disturbed = json_object_object_get_ex(e, "timing_disturbed", &d) && d &&
                        json_object_get_boolean(d);
        ndisturbed += disturbed;
        ckb_roof roof;
        ckb_roof_from_json(json_object_object_get(e, "roof"), &roof);
        char bbuf[32], ebuf[32], sbuf[32] = "-", gbuf[32] = "-", pbuf[32] = "-", stbuf[32];
        if (ems > 0 && bms > 0)
            snprintf(sbuf, sizeof sbuf, "%.2fx", bms / ems);
        if (isfinite(g)) {
            snprintf(gbuf, sizeof gbuf, "%.1f", g);
            if (roof.compute_gflops > 0)
                snprintf(pbuf, sizeof pbuf, "%.1f", ckb_roof_pct(&roof, g));
        }
        snprintf(stbuf, sizeof stbuf, "%s%s", st ? st : "?", disturbed ? "*" : "");
        ckb_say_out("%-58s %11s %11s %8s %9s %7s %7s\n", ckb_json_str(e, "workload"),
                    suite__ms(bms, bbuf, sizeof bbuf), suite__ms(ems, ebuf, sizeof ebuf), sbuf,
                    gbuf, pbuf, stbuf);
    }
    if (ndisturbed)
        ckb_say_out("\n* %d workload%s timed while other work disturbed the machine: those figures "
                    "are not to be trusted (re-run them on a quiet machine)\n",
                    ndisturbed, ndisturbed == 1 ? " was" : "s were");
    json_object *noise = ckb_json_obj(root, "timing_noise");
    double ratio = ckb_json_num(noise, "ratio");
    if (isfinite(ratio))
        ckb_say_out("\ntiming noise: %s baseline against itself, ratio of medians %.3f\n",
                    ckb_json_str(noise, "workload"), ratio);
    char speed[640];
    ckb_host_speed_line(ckb_json_obj(root, "host_speed"), speed, sizeof speed);
    if (*speed)
        ckb_say_out("%s\n", speed);
}

/* Rounds of re-timing a run spends on its disturbed entries before it ends. */
enum { SUITE_RETIME_ROUNDS = 2 };

static int suite__disturbed(json_object *e)
{
    json_object *d;
    return e && json_object_object_get_ex(e, "timing_disturbed", &d) && d &&
           json_object_get_boolean(d);
}

static json_object *suite__find(json_object *list, const char *id)
{
    for (size_t i = 0; list && i < json_object_array_length(list); i++) {
        json_object *e = json_object_array_get_idx(list, i), *x;
        if (json_object_object_get_ex(e, "workload", &x) &&
            strcmp(json_object_get_string(x), id) == 0)
            return e;
    }
    return NULL;
}

/* Whether dir exists with anything in it. */
static int suite__nonempty(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    int entries = 0;
    while ((e = readdir(d)))
        entries += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return entries > 0;
}

/* The results a --resume continues: CKB_OK with *old the parsed
 * results.json (NULL when there is none yet); CKB_E_CONFLICT with err
 * saying why they cannot be continued by this run (the file is left as it
 * is). */
static int suite__load_old(const ckb_suite_opts *o, json_object **old, ckb_err *err)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/results.json", o->out_dir);
    *old = NULL;
    size_t len;
    char *text = ckb_read_file(path, &len);
    if (!text) {
        if (errno == ENOENT) {
            /* No results to continue; CSVs without their results.json would
             * be overwritten by a fresh run, so they are not taken over. */
            char csv[1100];
            for (int k = 0; k < 2; k++) {
                snprintf(csv, sizeof csv, "%s/%s", o->out_dir,
                         k ? "results-jaxbench.csv" : "results.csv");
                if (access(csv, F_OK) == 0)
                    return ckb_err_set(err, CKB_E_CONFLICT,
                                       "cannot resume %s: it has %s but no results.json "
                                       "to continue; move them away, or give another --out",
                                       o->out_dir, csv);
            }
            return 0;
        }
        return ckb_err_set(err, CKB_E_CONFLICT, "cannot resume %s: cannot read %s: %s", o->out_dir,
                           path, strerror(errno));
    }
    json_tokener *tok = json_tokener_new();
    json_object *j = json_tokener_parse_ex(tok, text, (int)len);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    /* Trailing bytes after the object are garbage too. */
    size_t used = jerr == json_tokener_success ? json_tokener_get_parse_end(tok) : 0;
    json_tokener_free(tok);
    while (used < len && (text[used] == ' ' || text[used] == '\n' || text[used] == '\t' ||
                          text[used] == '\r'))
        used++;
    json_object *meta = NULL, *list = NULL, *x;
    const char *why = NULL;
    if (!j || jerr != json_tokener_success)
        why = jerr == json_tokener_continue ? "it ends early (truncated)"
              : jerr != json_tokener_success ? json_tokener_error_desc(jerr)
                                             : "it is empty";
    else if (used < len)
        why = "there are bytes after the JSON object";
    else if (!json_object_is_type(j, json_type_object) ||
             !json_object_object_get_ex(j, "metadata", &meta) ||
             !json_object_is_type(meta, json_type_object) ||
             !json_object_object_get_ex(j, "workloads", &list) ||
             !json_object_is_type(list, json_type_array))
        why = "it has no \"metadata\" object and \"workloads\" array";
    free(text);
    if (why) {
        ckb_err_set(err, CKB_E_CONFLICT,
                    "cannot resume %s: %s is not a complete suite result (%s). It "
                    "is left as it is: move it away to start afresh, or give another --out",
                    o->out_dir, path, why);
        json_object_put(j);
        return CKB_E_CONFLICT;
    }
    /* Results measured another way cannot share one file. */
    const char *size = json_object_object_get_ex(meta, "size", &x) ? json_object_get_string(x)
                                                                   : "?";
    int threads = json_object_object_get_ex(meta, "threads", &x) ? json_object_get_int(x) : -1;
    int warmup = json_object_object_get_ex(meta, "warmup", &x) ? json_object_get_int(x) : -1;
    int iters = json_object_object_get_ex(meta, "iters", &x) ? json_object_get_int(x) : -1;
    if (strcmp(size, ckb_size_name(o->size)) != 0 || threads != o->threads ||
        warmup != o->warmup || iters != o->iters) {
        ckb_err_set(err, CKB_E_CONFLICT,
                    "cannot resume %s: its results were measured with --size %s "
                    "--threads %d --warmup %d --iters %d, and this run asks for --size %s "
                    "--threads %d --warmup %d --iters %d. Give the same to continue it, or "
                    "another --out for a new run; nothing was changed",
                    o->out_dir, size, threads, warmup, iters, ckb_size_name(o->size), o->threads,
                    o->warmup, o->iters);
        json_object_put(j);
        return CKB_E_CONFLICT;
    }
    *old = j;
    return CKB_OK;
}

int ckb_suite_check(const ckb_suite_opts *o, ckb_err *err)
{
    if (!o->resume && suite__nonempty(o->out_dir))
        return ckb_err_set(err, CKB_E_CONFLICT,
                           "%s exists and is not empty: continue its results with "
                           "--resume, or choose another --out (nothing was changed)",
                           o->out_dir);
    json_object *old = NULL;
    if (o->resume && suite__load_old(o, &old, err) != CKB_OK)
        return CKB_E_CONFLICT;
    json_object_put(old);
    return CKB_OK;
}

/* slurm: every workload's evaluation at once, a node each (the executor
 * bounds the sruns in flight); the results are then written in order. */
typedef struct {
    const ckb_suite_opts *o;
    json_object *old_list;
    json_object **entries;
} suite__pre;

static void suite__pre_one(void *ctx, int i)
{
    suite__pre *p = ctx;
    if (!suite__find(p->old_list, p->o->list[i]->id))
        p->entries[i] = suite__run_one(p->o, p->o->list[i]);
}

int ckb_suite_run(const ckb_suite_opts *o, ckb_err *err)
{
    if (!o->resume && suite__nonempty(o->out_dir))
        return ckb_suite_check(o, err); /* the refusal, said one way */
    json_object *old = NULL, *old_list = NULL;
    if (o->resume && suite__load_old(o, &old, err) != CKB_OK)
        return CKB_E_CONFLICT;
    if (old)
        json_object_object_get_ex(old, "workloads", &old_list);
    if (ckb_mkdirs(o->out_dir) != 0) {
        json_object_put(old);
        return ckb_err_set(err, CKB_E_IO, "cannot create %s: %s", o->out_dir, strerror(errno));
    }
    json_object *root = json_object_new_object();
    json_object *list = json_object_new_array();
    if (old) {
        /* A resumed run keeps its metadata, says when it was continued,
         * and keeps every finished workload, asked for this time or not. */
        json_object *meta = json_object_object_get(old, "metadata"), *resumed;
        if (!json_object_object_get_ex(meta, "resumed_at", &resumed) ||
            !json_object_is_type(resumed, json_type_array)) {
            resumed = json_object_new_array();
            json_object_object_add(meta, "resumed_at", resumed);
        }
        char when[32];
        time_t now = time(NULL);
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
        json_object_array_add(resumed, json_object_new_string(when));
        json_object_object_add(root, "metadata", json_object_get(meta));
        for (size_t i = 0; i < json_object_array_length(old_list); i++) {
            json_object *e = json_object_array_get_idx(old_list, i);
            /* Re-timing: a disturbed entry is not a figure; it is run again
             * below (and replaced, appended after the kept ones). */
            if (o->retime && suite__disturbed(e))
                continue;
            json_object_array_add(list, json_object_get(e));
        }
    } else {
        json_object_object_add(root, "metadata", suite__metadata(o));
    }
    json_object_object_add(root, "workloads", list);
    int tty = isatty(2), rc = 0;
    json_object **pre = NULL;
    /* The host's speed against its profile, at the start (a resumed run's
     * first start is kept) and at the end; on this machine only, where the
     * evaluations run. */
    const int probe_speed = o->machine && ckb_exec_kind_of(o->exec) == CKB_EXEC_LOCAL;
    ckb_host_speed speed_start = ckb_host_speed_start_of(ckb_json_obj(old, "host_speed"));
    if (probe_speed && !(speed_start.f32_gflops > 0)) {
        if (tty)
            ckb_say("\r\033[Khost speed ...");
        speed_start = ckb_host_speed_probe(o->machine, o->threads);
    }
    if (ckb_exec_kind_of(o->exec) == CKB_EXEC_SLURM && o->n > 0) {
        pre = ckb_xcalloc((size_t)o->n, sizeof *pre);
        ckb_say("ckbench: %d workloads on Slurm nodes ...\n", o->n);
        suite__pre ctx = {o, old_list, pre};
        ckb_parallel_for(o->n, o->n, suite__pre_one, &ctx);
    }
    for (int i = 0; i < o->n; i++) {
        const ckb_workload *w = o->list[i];
        json_object *had = suite__find(old_list, w->id);
        if (had && !(o->retime && suite__disturbed(had)))
            continue;
        if (pre && pre[i]) {
            json_object_array_add(list, pre[i]);
            pre[i] = NULL;
            if ((rc = suite__write(o, root, err)) != CKB_OK)
                break;
            continue;
        }
        if (tty)
            ckb_say("\r\033[K[%d/%d] %s ...", i + 1, o->n, w->id);
        else
            ckb_say("[%d/%d] %s\n", i + 1, o->n, w->id);
        json_object_array_add(list, suite__run_one(o, w));
        if ((rc = suite__write(o, root, err)) != CKB_OK)
            break;
    }
    /* A disturbed timing is not a figure: measured again, after a growing
     * pause, a bounded number of rounds before the run ends (what is still
     * disturbed then stays marked, for `ckbench retime`). Skipped when
     * re-timing, which is itself such a round. */
    for (int round = 1; rc == 0 && !o->retime && !pre && round <= SUITE_RETIME_ROUNDS; round++) {
        int nd = 0;
        for (size_t i = 0; i < json_object_array_length(list); i++)
            nd += suite__disturbed(json_object_array_get_idx(list, i));
        if (nd == 0)
            break;
        const char *pv = getenv("CKBENCH_RETIME_PAUSE_S");
        double pause = (pv && *pv ? atof(pv) : 5.0) * round;
        ckb_say("ckbench: %d workload%s timed while other work disturbed the machine: "
                "timing again in %.0f s (round %d of %d)\n",
                nd, nd == 1 ? " was" : "s were", pause, round, SUITE_RETIME_ROUNDS);
        if (pause > 0)
            usleep((useconds_t)(pause * 1e6));
        for (size_t i = 0; rc == 0 && i < json_object_array_length(list); i++) {
            json_object *e = json_object_array_get_idx(list, i), *x;
            const ckb_workload *w = json_object_object_get_ex(e, "workload", &x)
                                        ? ckb_workload_find(json_object_get_string(x))
                                        : NULL;
            if (!w || !suite__disturbed(e))
                continue;
            json_object_array_put_idx(list, i, suite__run_one(o, w));
            rc = suite__write(o, root, err);
        }
    }
    if (rc == 0) {
        const ckb_workload *nw = NULL;
        for (int i = 0; i < o->n; i++)
            if (strcmp(o->list[i]->id, o->noise_workload ? o->noise_workload : "8p_GEMM") == 0)
                nw = o->list[i];
        if (!nw && o->n > 0)
            nw = o->list[0];
        json_object *noise;
        if (old && json_object_object_get_ex(old, "timing_noise", &noise) &&
            !(o->retime && suite__disturbed(noise)))
            json_object_object_add(root, "timing_noise", json_object_get(noise));
        else if (nw) {
            if (tty)
                ckb_say("\r\033[Ktiming noise (%s against itself) ...", nw->id);
            json_object_object_add(root, "timing_noise", suite__noise(o, nw));
        }
        if (probe_speed)
            json_object_object_add(root, "host_speed",
                                   ckb_host_speed_json(o->machine, speed_start,
                                                       ckb_host_speed_probe(o->machine,
                                                                            o->threads)));
        rc = suite__write(o, root, err);
    }
    if (tty)
        ckb_say("\r\033[K");
    suite__table(root);
    ckb_say_out("\nresults: %s/results.json, %s/results.csv, %s/results-jaxbench.csv\n", o->out_dir,
                o->out_dir, o->out_dir);
    json_object_put(root);
    json_object_put(old);
    for (int i = 0; pre && i < o->n; i++)
        json_object_put(pre[i]);
    free(pre);
    return rc;
}

/* A host-size entry's scale value as it ran, so that a resumed or re-timed
 * run measures what the first one did; 1 when it was taken. */
static int suite__adopt_dims(const ckb_workload *w, json_object *e)
{
    json_object *dims, *v;
    int d = ckb_workload_scale_dim(w);
    return d >= 0 && json_object_object_get_ex(e, "dims", &dims) &&
           json_object_object_get_ex(dims, w->dims[d].name, &v) &&
           ckb_workload_set_host_scale(w, json_object_get_int64(v)) == 0;
}

int ckb_suite_adopt_host_dims(const char *dir, const ckb_workload **adopted, int max)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/results.json", dir);
    json_object *root = json_object_from_file(path), *meta, *list, *x;
    int n = 0;
    if (root && json_object_object_get_ex(root, "metadata", &meta) &&
        json_object_object_get_ex(meta, "size", &x) &&
        strcmp(json_object_get_string(x), ckb_size_name(CKB_SIZE_HOST)) == 0 &&
        json_object_object_get_ex(root, "workloads", &list) &&
        json_object_is_type(list, json_type_array))
        for (size_t i = 0; i < json_object_array_length(list) && n < max; i++) {
            json_object *e = json_object_array_get_idx(list, i);
            const ckb_workload *w = json_object_object_get_ex(e, "workload", &x)
                                        ? ckb_workload_find(json_object_get_string(x))
                                        : NULL;
            if (w && suite__adopt_dims(w, e))
                adopted[n++] = w;
        }
    json_object_put(root);
    return n;
}

int ckb_suite_retime_opts(const char *dir, ckb_suite_opts *o, int *ndisturbed, ckb_err *err)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/results.json", dir);
    json_object *root = json_object_from_file(path), *meta, *list, *x;
    *ndisturbed = 0;
    if (!root || !json_object_object_get_ex(root, "metadata", &meta) ||
        !json_object_object_get_ex(root, "workloads", &list) ||
        !json_object_is_type(list, json_type_array)) {
        json_object_put(root);
        return ckb_err_set(err, CKB_E_FORMAT,
                           "%s is not a suite result (no metadata and workloads)", path);
    }
    o->out_dir = dir;
    o->resume = o->retime = 1;
    if (!json_object_object_get_ex(meta, "size", &x) ||
        ckb_size_parse(json_object_get_string(x), &o->size) != 0) {
        json_object_put(root);
        return ckb_err_set(err, CKB_E_FORMAT, "%s names no known size", path);
    }
    o->threads = json_object_object_get_ex(meta, "threads", &x) ? json_object_get_int(x) : 0;
    o->warmup = json_object_object_get_ex(meta, "warmup", &x) ? json_object_get_int(x) : 5;
    o->iters = json_object_object_get_ex(meta, "iters", &x) ? json_object_get_int(x) : 50;
    o->n = 0;
    o->use_expert = 0;
    for (size_t i = 0; i < json_object_array_length(list) && o->n < 128; i++) {
        json_object *e = json_object_array_get_idx(list, i);
        const ckb_workload *w = json_object_object_get_ex(e, "workload", &x)
                                    ? ckb_workload_find(json_object_get_string(x))
                                    : NULL;
        if (!w)
            continue;
        if (o->size == CKB_SIZE_HOST)
            suite__adopt_dims(w, e);
        o->list[o->n++] = w;
        o->use_expert |= json_object_object_get_ex(e, "expert", &x);
        *ndisturbed += suite__disturbed(e);
    }
    json_object *noise;
    if (json_object_object_get_ex(root, "timing_noise", &noise)) {
        *ndisturbed += suite__disturbed(noise);
        if (json_object_object_get_ex(noise, "workload", &x))
            for (int i = 0; i < o->n; i++)
                if (strcmp(o->list[i]->id, json_object_get_string(x)) == 0)
                    o->noise_workload = o->list[i]->id;
    }
    json_object_put(root);
    return 0;
}
