#include "report/results.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/suite.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/jsonget.h"
#include "core/strbuf.h"
#include "workloads/workload.h"

static char *results__printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *results__printf(const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

/* "k=v k=v" from a JSON object of numbers, in the file's order; NULL when
 * there is none. */
static char *results__pairs(json_object *o)
{
    if (!o || json_object_object_length(o) == 0)
        return NULL;
    ckb_strbuf sb = {0};
    json_object_object_foreach(o, k, v)
    {
        ckb_strbuf_printf(&sb, "%s%s=%s", sb.len ? " " : "", k, json_object_get_string(v));
    }
    return ckb_strbuf_take(&sb);
}

static void results__machine(json_object *m, ckb_machine *out)
{
    memset(out, 0, sizeof *out);
    if (!m)
        return;
    const char *s;
    if ((s = ckb_json_str(m, "cpu")))
        snprintf(out->cpu, sizeof out->cpu, "%s", s);
    if ((s = ckb_json_str(m, "isa")))
        snprintf(out->isa, sizeof out->isa, "%s", s);
    if ((s = ckb_json_str(m, "isa_level")))
        snprintf(out->isa_level, sizeof out->isa_level, "%s", s);
    if ((s = ckb_json_str(m, "measured_at")))
        snprintf(out->measured_at, sizeof out->measured_at, "%s", s);
    if ((s = ckb_json_str(m, "compiler")))
        snprintf(out->compiler, sizeof out->compiler, "%s", s);
    double v;
    out->cores = isfinite(v = ckb_json_num(m, "cores")) ? (int)v : 0;
    out->threads = isfinite(v = ckb_json_num(m, "threads")) ? (int)v : 0;
    out->l1d = isfinite(v = ckb_json_num(m, "l1d_bytes")) ? (int64_t)v : 0;
    out->l2 = isfinite(v = ckb_json_num(m, "l2_bytes")) ? (int64_t)v : 0;
    out->l3 = isfinite(v = ckb_json_num(m, "l3_bytes")) ? (int64_t)v : 0;
    /* Figures that are absent or implausible read as 0: "unknown". */
    out->f32_gflops = (v = ckb_json_num(m, "f32_gflops")) > 0 ? v : 0;
    out->bf16_gflops = (v = ckb_json_num(m, "bf16_gflops")) > 0 ? v : 0;
    out->bf16_dot_gflops = (v = ckb_json_num(m, "bf16_dot_gflops")) > 0 ? v : 0;
    out->bf16_amx_gflops = (v = ckb_json_num(m, "bf16_amx_gflops")) > 0 ? v : 0;
    out->l2_gbs = (v = ckb_json_num(m, "l2_gbs")) > 0 ? v : 0;
    out->l3_gbs = (v = ckb_json_num(m, "l3_gbs")) > 0 ? v : 0;
    out->bw_gbs = (v = ckb_json_num(m, "bw_gbs")) > 0 ? v : 0;
    out->f32_gflops_1t = (v = ckb_json_num(m, "f32_gflops_1t")) > 0 ? v : 0;
    out->bf16_gflops_1t = (v = ckb_json_num(m, "bf16_gflops_1t")) > 0 ? v : 0;
    out->bf16_dot_gflops_1t = (v = ckb_json_num(m, "bf16_dot_gflops_1t")) > 0 ? v : 0;
}

static void results__variant(json_object *v, double flops, const ckb_roof *roof,
                             ckb_report_variant *out)
{
    memset(out, 0, sizeof *out);
    out->median_ms = out->mean_ms = out->std_ms = out->min_ms = NAN;
    out->gflops = out->pct_of_peak = NAN;
    if (!v)
        return;
    out->present = 1;
    out->status = ckb_json_str(v, "status");
    if (!out->status)
        out->status = "?";
    out->error = ckb_json_str(v, "error");
    double m = ckb_json_num(v, "median_ms");
    if (!(m > 0))
        return;
    out->median_ms = m;
    out->mean_ms = ckb_json_num(v, "mean_ms");
    out->std_ms = ckb_json_num(v, "std_ms");
    out->min_ms = ckb_json_num(v, "min_ms");
    if (flops > 0) {
        out->gflops = flops / (m * 1e-3) / 1e9;
        out->pct_of_peak = ckb_roof_pct(roof, out->gflops);
    }
}

/* Finds the recorded expert source beside the results, then in the tree,
 * and keeps it only if it is the text that ran. */
static void results__source(ckb_report_workload *w, json_object *x, const char *dir)
{
    const char *rel = ckb_json_str(x, "source"), *want = ckb_json_str(x, "source_hash");
    char path[2][2600];
    int verified = rel && want;
    if (!rel) {
        /* Results older than the recorded path: the tree's file, unverified. */
        snprintf(path[0], sizeof path[0], "%s/workloads/%s/expert.c", ckb_home(), w->id);
        snprintf(path[1], sizeof path[1], "%s", path[0]);
    } else if (rel[0] == '/') {
        snprintf(path[0], sizeof path[0], "%s", rel);
        snprintf(path[1], sizeof path[1], "%s", rel);
    } else {
        snprintf(path[0], sizeof path[0], "%s/%s", dir, rel);
        snprintf(path[1], sizeof path[1], "%s/%s", ckb_home(), rel);
    }
    w->source_path = rel;
    int found = 0;
    for (int i = 0; i < 2 && !w->source; i++) {
        size_t n;
        char *text = ckb_read_file(path[i], &n);
        if (!text)
            continue;
        found = 1;
        char hex[32];
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)ckb_suite_source_hash(text, n));
        if (!verified || strcmp(hex, want) == 0)
            w->source = text;
        else
            free(text);
    }
    if (!w->source)
        w->source_note = results__printf(found ? "the expert source %s has changed since this run"
                                               : "the expert source %s was not found",
                                         rel ? rel : path[0]);
    else if (!verified)
        w->source_note = results__printf("the results record no source; shown: %s as it is now",
                                         path[0]);
}

/* The roofs of entry e: recorded by the run, else made from the profile
 * the run recorded (results from before the roofline model): the registry's
 * workload at the run's size gives precision and working set; a workload
 * no longer known counts as bf16 over its bytes. */
static void results__roof(json_object *e, const ckb_machine *m, const char *size,
                          const ckb_report_workload *w, ckb_roof *out)
{
    if (ckb_roof_from_json(ckb_json_obj(e, "roof"), out) == 0)
        return;
    const ckb_workload *wl = ckb_workload_find(w->id);
    ckb_size s;
    if (wl && size && ckb_size_parse(size, &s) == 0)
        ckb_roof_for_workload(m, wl, s, out);
    else
        ckb_roof_make(m, CKB_PREC_BF16, w->bytes > 0 ? w->bytes : 0, out);
}

static int results__workload(json_object *e, const ckb_machine *m, const char *size,
                             const char *dir, ckb_report_workload *w)
{
    memset(w, 0, sizeof *w);
    w->id = ckb_json_str(e, "workload");
    if (!w->id)
        return -1;
    w->model = ckb_json_str(e, "model");
    w->op = ckb_json_str(e, "operator");
    w->tags = ckb_json_str(e, "tags");
    w->shape = ckb_json_str(e, "output_shape");
    w->dims = results__pairs(ckb_json_obj(e, "dims"));
    w->flops = ckb_json_num(e, "flops");
    w->bytes = ckb_json_num(e, "bytes");
    w->ai = w->flops >= 0 && w->bytes > 0 ? w->flops / w->bytes : NAN;
    results__roof(e, m, size, w, &w->roof);
    w->bound = isfinite(w->ai) ? ckb_roof_bound(&w->roof, w->flops, w->bytes) : NULL;
    if (!w->bound)
        w->bound = "-";
    json_object *x = ckb_json_obj(e, "expert");
    results__variant(ckb_json_obj(e, "baseline"), w->flops, &w->roof, &w->base);
    results__variant(x, w->flops, &w->roof, &w->expert);
    if (!w->base.error)
        w->base.error = ckb_json_str(e, "error");
    w->speedup = NAN;
    if (w->expert.present && strcmp(w->expert.status, "ok") == 0 && w->base.median_ms > 0 &&
        w->expert.median_ms > 0)
        w->speedup = w->base.median_ms / w->expert.median_ms;
    if (ckb_json_timing_disturbed(e)) {
        /* not a figure (DESIGN §5): no speedup, nothing to plot */
        w->disturbed = 1;
        w->speedup = NAN;
        w->base.gflops = w->base.pct_of_peak = NAN;
        w->expert.gflops = w->expert.pct_of_peak = NAN;
    }
    if (x) {
        w->params = results__pairs(ckb_json_obj(x, "params"));
        json_object *t;
        w->tuned = json_object_object_get_ex(x, "tuned", &t) && json_object_get_boolean(t);
        results__source(w, x, dir);
    }
    return 0;
}

int ckb_report_is_suite_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return 0;
    if (S_ISDIR(st.st_mode)) {
        char p[1200];
        snprintf(p, sizeof p, "%s/results.json", path);
        return stat(p, &st) == 0;
    }
    size_t n = strlen(path);
    return n >= 5 && strcmp(path + n - 5, ".json") == 0;
}

int ckb_report_suite_load(const char *path, const char *label, ckb_report_suite *s, ckb_err *err)
{
    memset(s, 0, sizeof *s);
    s->noise_ratio = NAN;
    s->speed_ratio = NAN;
    snprintf(s->label, sizeof s->label, "%s", label);
    struct stat st;
    if (stat(path, &st) != 0) {
        return ckb_err_set(err, CKB_E_NOT_FOUND, "%s: %s", path, strerror(errno));
    }
    s->path = S_ISDIR(st.st_mode) ? results__printf("%s/results.json", path) : ckb_xstrdup(path);
    char dir[1200];
    snprintf(dir, sizeof dir, "%s", s->path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");

    size_t len;
    char *text = ckb_read_file(s->path, &len);
    if (!text) {
        ckb_err_set(err, CKB_E_IO, "%s: cannot read (%s)", s->path, strerror(errno));
        goto fail;
    }
    json_tokener *tok = json_tokener_new();
    s->root = json_tokener_parse_ex(tok, text, (int)len);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    json_tokener_free(tok);
    free(text);
    if (!s->root || jerr != json_tokener_success) {
        ckb_err_set(err, CKB_E_FORMAT, "%s: not valid JSON (%s)", s->path,
                    jerr != json_tokener_success ? json_tokener_error_desc(jerr) : "empty");
        goto fail;
    }
    json_object *meta = ckb_json_obj(s->root, "metadata"), *list;
    if (!meta || !json_object_object_get_ex(s->root, "workloads", &list) ||
        !json_object_is_type(list, json_type_array)) {
        ckb_err_set(err, CKB_E_FORMAT,
                    "%s: not a suite result (no \"metadata\" object and \"workloads\" "
                    "array; make one with `ckbench bench`)",
                    s->path);
        goto fail;
    }
    s->started_at = ckb_json_str(meta, "started_at");
    s->commit = ckb_json_str(meta, "ckbench_commit");
    s->size = ckb_json_str(meta, "size");
    s->timing = ckb_json_str(meta, "timing");
    s->compiler = ckb_json_str(meta, "compiler");
    s->compile_flags = ckb_json_str(meta, "compile_flags");
    s->onednn_version = ckb_json_str(meta, "onednn_version");
    s->onednn_isa = ckb_json_str(meta, "onednn_isa");
    s->hostname = ckb_json_str(meta, "hostname");
    s->kernel = ckb_json_str(meta, "kernel");
    json_object *lib = ckb_json_obj(meta, "libraries");
    if (lib) {
        ckb_strbuf sb = {0};
        json_object_object_foreach(lib, k, v)
        {
            ckb_strbuf_printf(&sb, "%s%s %s", sb.len ? ", " : "", k, json_object_get_string(v));
        }
        s->libraries = ckb_strbuf_take(&sb);
    }
    double v;
    s->threads = isfinite(v = ckb_json_num(meta, "threads")) ? (int)v : 0;
    s->warmup = isfinite(v = ckb_json_num(meta, "warmup")) ? (int)v : 0;
    s->iters = isfinite(v = ckb_json_num(meta, "iters")) ? (int)v : 0;
    results__machine(ckb_json_obj(meta, "machine"), &s->machine);
    json_object *noise = ckb_json_obj(s->root, "timing_noise");
    s->noise_workload = ckb_json_str(noise, "workload");
    s->noise_ratio = ckb_json_num(noise, "ratio");
    s->speed_ratio = ckb_json_num(ckb_json_obj(s->root, "host_speed"), "ratio");

    size_t n = json_object_array_length(list);
    s->w = ckb_xcalloc(n ? n : 1, sizeof *s->w);
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(list, i);
        if (!json_object_is_type(e, json_type_object) ||
            results__workload(e, &s->machine, s->size, dir, &s->w[s->n]) != 0) {
            ckb_err_set(err, CKB_E_FORMAT,
                        "%s: workloads[%zu] is not a workload result (no \"workload\" "
                        "id)",
                        s->path, i);
            goto fail;
        }
        s->n++;
    }
    return CKB_OK;
fail:
    ckb_report_suite_free(s);
    return err ? err->code : CKB_E_FORMAT;
}

void ckb_report_suite_free(ckb_report_suite *s)
{
    for (int i = 0; i < s->n; i++) {
        free(s->w[i].dims);
        free(s->w[i].params);
        free(s->w[i].source);
        free(s->w[i].source_note);
    }
    free(s->w);
    free(s->libraries);
    free(s->path);
    json_object_put(s->root);
    memset(s, 0, sizeof *s);
}

const ckb_report_workload *ckb_report_suite_find(const ckb_report_suite *s, const char *id)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->w[i].id, id) == 0)
            return &s->w[i];
    return NULL;
}
