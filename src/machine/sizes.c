/* The host size: the search of `ckbench size` and its per-host file. */
#include "machine/sizes.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/excl.h"
#include "core/fsutil.h"
#include "core/jsonget.h"
#include "core/say.h"
#include "core/stats.h"
#include "machine/isa.h"
#include "machine/roofline.h"

#define SIZES_FORMAT 1
#define SIZES_MAX_LADDER 32
/* A probe allocates every tensor: values past this are not tried. */
#define SIZES_MAX_BYTES ((double)(6ull << 30))

void ckb_sizes_opts_default(ckb_sizes_opts *o)
{
    memset(o, 0, sizeof *o);
    o->min_ms = 10;
    o->max_ms = 100;
    o->share = 0.6;
    o->calls = 3;
}

static double sizes__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The real probe: the baseline is trusted code, so it runs here, on fresh
 * inputs, one warm-up call and then `calls` timed ones. */
static double sizes__baseline_ms(void *ctx, const ckb_workload *w, const int64_t *dims,
                                 int threads, int calls)
{
    (void)ctx;
    void *t[CKB_MAX_TENSORS];
    if (ckb_tensors_alloc(w, dims, t) != 0)
        return -1;
    omp_set_num_threads(threads);
    w->create_inputs(dims, 1, t);
    double ms[16];
    calls = calls < 1 ? 1 : calls > 16 ? 16 : calls;
    w->baseline(dims, t);
    for (int i = 0; i < calls; i++) {
        double t0 = sizes__now_ms();
        w->baseline(dims, t);
        ms[i] = sizes__now_ms() - t0;
    }
    ckb_tensors_free(w, t);
    return ckb_stats_of(ms, calls).median;
}

static double sizes__bytes(const ckb_workload *w, const int64_t *dims)
{
    double b = 0;
    for (int i = 0; i < w->ntensors; i++)
        b += (double)ckb_tensor_bytes(&w->tensors[i], dims);
    return b;
}

int ckb_sizes_ladder(const ckb_workload *w, int64_t *values, int max)
{
    int d = ckb_workload_scale_dim(w);
    if (d < 0 || max < 1)
        return 0;
    int64_t small = w->dims[d].value[CKB_SIZE_SMALL], def = w->dims[d].value[CKB_SIZE_DEFAULT];
    int64_t paper = w->dims[d].value[CKB_SIZE_PAPER];
    int64_t top = 4 * def < paper ? 4 * def : paper > def ? paper : def;
    int n = 0;
    /* downwards from the default, halving, each rounded down to a multiple
     * of the small value (which every dim relation of the workload allows) */
    int64_t down[SIZES_MAX_LADDER];
    int nd = 0;
    for (int64_t v = def; v >= small && nd < SIZES_MAX_LADDER; v /= 2) {
        int64_t r = v / small * small;
        if (nd == 0 || r != down[nd - 1])
            down[nd++] = r;
    }
    if (nd == 0 || down[nd - 1] != small)
        if (nd < SIZES_MAX_LADDER)
            down[nd++] = small;
    for (int i = nd - 1; i >= 0 && n < max; i--)
        values[n++] = down[i];
    for (int64_t v = def * 2; v <= top && n < max; v *= 2)
        values[n++] = v / small * small;
    return n;
}

int ckb_sizes_search(const ckb_machine *m, int threads, const ckb_workload *w,
                     const ckb_sizes_opts *o, ckb_size_choice *out, ckb_err *err)
{
    memset(out, 0, sizeof *out);
    int d = ckb_workload_scale_dim(w);
    int64_t dims[CKB_MAX_DIMS];
    ckb_workload_dims(w, CKB_SIZE_DEFAULT, dims);
    out->baseline_ms = out->gflops = out->pct_of_roof = NAN;
    if (d < 0) {
        out->value = -1;
        out->fixed = 1;
        snprintf(out->why, sizeof out->why, "fixed");
        return 0;
    }
    out->value = dims[d];
    double (*probe)(void *, const ckb_workload *, const int64_t *, int, int) =
        o->probe ? o->probe : sizes__baseline_ms;
    int heavy = ckb_workload_has_tag(w, "matmul") || ckb_workload_has_tag(w, "conv");
    double roof = ckb_roof_compute(m, ckb_roof_precision(w), NULL);
    int64_t ladder[SIZES_MAX_LADDER];
    int n = ckb_sizes_ladder(w, ladder, SIZES_MAX_LADDER);
    /* the best so far within the window, by share of the roof */
    int best = -1, last_in_window = -1, chosen = -1;
    double best_pct = -1, ms_of[SIZES_MAX_LADDER], g_of[SIZES_MAX_LADDER];
    const char *why = NULL;
    for (int i = 0; i < n && chosen < 0; i++) {
        dims[d] = ladder[i];
        if (sizes__bytes(w, dims) > SIZES_MAX_BYTES)
            break;
        double ms = probe(o->probe_ctx, w, dims, threads, o->calls);
        if (ms < 0)
            return ckb_err_set(err, CKB_E_HARNESS,
                               "size: %s: the baseline could not run at %s=%lld", w->id,
                               w->dims[d].name, (long long)ladder[i]);
        double g = ms > 0 ? w->flops(dims) / (ms * 1e6) : 0;
        double pct = roof > 0 ? 100.0 * g / roof : NAN;
        ms_of[i] = ms, g_of[i] = g;
        if (o->log)
            fprintf(o->log, "  %-12.12s %s=%-7lld %9.2f ms %8.1f GFLOP/s %6.1f%% of the roof\n",
                    w->id, w->dims[d].name, (long long)ladder[i], ms, g, pct);
        if (ms > o->max_ms) {
            if (last_in_window < 0 && best < 0) {
                chosen = i; /* even the smallest is slower than the window */
                why = "max_ms";
            }
            break;
        }
        last_in_window = i;
        if (ms < o->min_ms)
            continue;
        if (!heavy) {
            chosen = i, why = "min_ms reached";
        } else if (!(pct < 100.0 * o->share)) {
            chosen = i, why = "share reached";
        } else if (pct > best_pct) {
            best = i, best_pct = pct;
        }
    }
    if (chosen < 0 && best >= 0)
        chosen = best, why = "closest to the share";
    if (chosen < 0 && last_in_window >= 0)
        chosen = last_in_window, why = "largest value";
    if (chosen < 0) /* nothing could be probed: keep the default */
        return 0;
    out->value = ladder[chosen];
    out->baseline_ms = ms_of[chosen];
    out->gflops = g_of[chosen];
    out->pct_of_roof = roof > 0 ? 100.0 * g_of[chosen] / roof : NAN;
    snprintf(out->why, sizeof out->why, "%s", why);
    return 0;
}

void ckb_sizes_default_path(int threads, char *buf, size_t n)
{
    snprintf(buf, n, "%s/sizes-%dt-%s.json", ckb_cache_dir(), threads,
             ckb_isa_name(ckb_isa_level()));
}

/* The stored file when it was made on this host with these options, else
 * a fresh one; the caller owns it. */
static json_object *sizes__open(const ckb_machine *m, int threads, const char *path,
                                const ckb_sizes_opts *o)
{
    char *text = ckb_read_file(path, NULL);
    json_object *j = text ? json_tokener_parse(text) : NULL;
    free(text);
    const char *cpu = j ? ckb_json_str(j, "cpu") : NULL, *lvl = j ? ckb_json_str(j, "isa_level") : NULL;
    int same = j && json_object_is_type(j, json_type_object) &&
               ckb_json_long(j, "format") == SIZES_FORMAT && cpu && strcmp(cpu, m->cpu) == 0 &&
               lvl && strcmp(lvl, m->isa_level) == 0 && ckb_json_long(j, "threads") == threads &&
               (!o || o->any_window || (ckb_json_num(j, "min_ms") == o->min_ms &&
                       ckb_json_num(j, "max_ms") == o->max_ms &&
                       ckb_json_num(j, "share") == o->share)) &&
               json_object_is_type(ckb_json_obj(j, "workloads"), json_type_object);
    if (same)
        return j;
    json_object_put(j);
    if (!o)
        return NULL;
    j = json_object_new_object();
    json_object_object_add(j, "format", json_object_new_int(SIZES_FORMAT));
    json_object_object_add(j, "cpu", json_object_new_string(m->cpu));
    json_object_object_add(j, "isa_level", json_object_new_string(m->isa_level));
    json_object_object_add(j, "threads", json_object_new_int(threads));
    json_object_object_add(j, "min_ms", json_object_new_double(o->min_ms));
    json_object_object_add(j, "max_ms", json_object_new_double(o->max_ms));
    json_object_object_add(j, "share", json_object_new_double(o->share));
    json_object_object_add(j, "workloads", json_object_new_object());
    return j;
}

static json_object *sizes__num(double v)
{
    return isfinite(v) ? json_object_new_double(v) : NULL;
}

int ckb_sizes_get(const ckb_machine *m, int threads, const ckb_workload *const *ws, int n,
                  const char *path, int force, const ckb_sizes_opts *o, ckb_err *err)
{
    char def[1024];
    if (!path) {
        ckb_sizes_default_path(threads, def, sizeof def);
        path = def;
    }
    json_object *root = force ? NULL : sizes__open(m, threads, path, o);
    if (!root)
        root = sizes__open(m, threads, "", o); /* a fresh one */
    /* one file, one window: what is missing is searched as the rest was */
    ckb_sizes_opts so = *o;
    so.min_ms = ckb_json_num(root, "min_ms");
    so.max_ms = ckb_json_num(root, "max_ms");
    so.share = ckb_json_num(root, "share");
    o = &so;
    json_object *all = ckb_json_obj(root, "workloads");
    int rc = 0, said = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        const ckb_workload *w = ws[i];
        int d = ckb_workload_scale_dim(w);
        if (d < 0)
            continue;
        json_object *e = ckb_json_obj(all, w->id);
        const char *dim = e ? ckb_json_str(e, "dim") : NULL;
        if (e && dim && strcmp(dim, w->dims[d].name) == 0 &&
            ckb_workload_set_host_scale(w, ckb_json_long(e, "value")) == 0)
            continue;
        if (!said++)
            ckb_say("ckbench: choosing this host's sizes (once; `ckbench size` shows them): a "
                    "baseline call of %g-%g ms and, where matmul-heavy, %.0f%% of the roof\n",
                    o->min_ms, o->max_ms, 100 * o->share);
        ckb_size_choice c;
        /* a probe is a timing: never beside an evaluation (core/excl.h) */
        if (!o->probe)
            ckb_excl_lock();
        rc = ckb_sizes_search(m, threads, w, o, &c, err);
        if (!o->probe)
            ckb_excl_unlock();
        if (rc != 0)
            break;
        ckb_workload_set_host_scale(w, c.value);
        e = json_object_new_object();
        json_object_object_add(e, "dim", json_object_new_string(w->dims[d].name));
        json_object_object_add(e, "value", json_object_new_int64(c.value));
        json_object_object_add(e, "default", json_object_new_int64(w->dims[d].value[CKB_SIZE_DEFAULT]));
        json_object_object_add(e, "baseline_ms", sizes__num(c.baseline_ms));
        json_object_object_add(e, "gflops", sizes__num(c.gflops));
        json_object_object_add(e, "pct_of_roof", sizes__num(c.pct_of_roof));
        json_object_object_add(e, "why", json_object_new_string(c.why));
        json_object_object_add(all, w->id, e);
        const char *text = json_object_to_json_string_ext(
            root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
        char dir[1024];
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = 0;
        if ((slash && ckb_mkdirs(dir) != 0) || ckb_write_file_atomic(path, text, strlen(text)) != 0)
            ckb_say("ckbench: warning: cannot store the sizes in %s: %s\n", path, strerror(errno));
        ckb_say("ckbench: size: %-40.40s %s=%lld (default %lld): %s\n", w->id, w->dims[d].name,
                (long long)c.value, (long long)w->dims[d].value[CKB_SIZE_DEFAULT], c.why);
    }
    json_object_put(root);
    return rc;
}

char *ckb_sizes_describe(const ckb_machine *m, int threads, const char *path)
{
    char def[1024];
    if (!path) {
        ckb_sizes_default_path(threads, def, sizeof def);
        path = def;
    }
    json_object *j = sizes__open(m, threads, path, NULL);
    if (!j)
        return NULL;
    json_object_object_add(j, "path", json_object_new_string(path));
    char *text = ckb_xstrdup(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY |
                                                                   JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(j);
    return text;
}
