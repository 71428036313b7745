#include "bench/expert.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/fsutil.h"
#include "machine/blocking.h"
#include "machine/profile.h"
#include "machine/roofline.h"

int ckb_expert_path(const ckb_workload *w, char *buf, size_t n)
{
    snprintf(buf, n, "%s/workloads/%s/expert.c", ckb_home(), w->id);
    return w->nparams >= 0 && access(buf, R_OK) == 0;
}

void ckb_expert_tuned_path(const ckb_workload *w, char *buf, size_t n)
{
    /* $CKBENCH_TUNED_DIR: the same layout elsewhere (a test's folder, a
     * user's own tunings), read and written instead of the tree's files */
    const char *dir = getenv("CKBENCH_TUNED_DIR");
    if (dir && *dir)
        snprintf(buf, n, "%s/%s/tuned.json", dir, w->id);
    else
        snprintf(buf, n, "%s/workloads/%s/tuned.json", ckb_home(), w->id);
}

void ckb_expert_config_set(const ckb_workload *w, const int64_t *values, ckb_expert_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->n = w->nparams;
    for (int i = 0; i < w->nparams; i++) {
        cfg->values[i] = values[i];
        snprintf(cfg->text[i], sizeof cfg->text[i], "%s=%lld", w->params[i].name,
                 (long long)values[i]);
        cfg->defines[i] = cfg->text[i];
    }
}

int ckb_expert_host_unit(const ckb_machine *m)
{
    const char *unit = NULL;
    if (!m || !(ckb_roof_compute(m, CKB_PREC_BF16, &unit) > 0))
        return 1;
    return strcmp(unit, "amx") == 0 ? 2 : strcmp(unit, "bf16_dot") == 0 ? 0 : 1;
}

int64_t ckb_expert_param_value(int64_t v, const ckb_machine *m)
{
    return v == CKB_PARAM_HOST_UNIT ? ckb_expert_host_unit(m) : v;
}

int ckb_expert_value_runs(const ckb_param *p, int64_t v, const ckb_machine *m)
{
    if (p->fallback != CKB_PARAM_HOST_UNIT || !m)
        return 1;
    if (v == 0)
        return m->bf16_dot_gflops > 0;
    if (v == 2)
        return m->bf16_amx_gflops > 0;
    return 1;
}

int ckb_expert_param_is_block(const ckb_param *p)
{
    return p->fallback <= CKB_PARAM_HOST_MR && p->fallback >= CKB_PARAM_HOST_LAST;
}

int64_t ckb_expert_block_model(const ckb_param *p, const ckb_machine *m, int unit)
{
    ckb_blocking_facts f;
    ckb_blocking_facts_of(m, unit, &f);
    ckb_blocking g;
    ckb_blocking_gemm(&f, &g);
    int64_t bq, bk;
    ckb_blocking_attention(&f, p->head, &bq, &bk);
    switch (p->fallback) {
    case CKB_PARAM_HOST_MR: return g.mr;
    case CKB_PARAM_HOST_NR: return g.nr;
    case CKB_PARAM_HOST_KC: return g.kc;
    case CKB_PARAM_HOST_MC: return g.mc;
    case CKB_PARAM_HOST_NC: return g.nc;
    case CKB_PARAM_HOST_BQ: return bq;
    case CKB_PARAM_HOST_BK: return bk;
    /* alone, the GEMM's tile; with its partner, ckb_expert_defaults_on fits the pair */
    case CKB_PARAM_HOST_TILE_ROWS: return g.mr;
    case CKB_PARAM_HOST_TILE_VECS: return g.nr / (f.vec_bytes / 4);
    default: return p->fallback;
    }
}

int64_t ckb_expert_block_fit(const ckb_param *p, int64_t v)
{
    if (p->per > 0)
        v /= p->per;
    if (v < 1)
        v = 1;
    if (p->nvalues < 1) /* no grid to fit: the expert's own check decides */
        return v;
    int64_t lo = 0, hi = 0, best = 0;
    double best_d = 0;
    for (int k = 0; k < p->nvalues; k++) {
        const int64_t g = p->values[k];
        if (g < 1) /* 0 and the like mean "all of it": no block to compare */
            continue;
        lo = lo == 0 || g < lo ? g : lo;
        hi = g > hi ? g : hi;
        /* nearest by ratio, as blocks are judged: 96 is nearer 64 than 256 */
        double d = (double)(g > v ? g : v) / (double)(g > v ? v : g);
        if (best == 0 || d < best_d || (d == best_d && g < best))
            best = g, best_d = d;
    }
    if (p->multiple < 1 || best == 0)
        return best ? best : p->values[0];
    v = v / p->multiple * p->multiple;
    return v < lo ? lo : v > hi ? hi : v;
}

/* The register tile's pair, on both grids at once (machine/blocking.h). */
static void expert__fit_tile(const ckb_workload *w, const ckb_machine *m, int unit,
                             int64_t *values)
{
    int ir = -1, iv = -1;
    for (int i = 0; i < w->nparams; i++) {
        if (w->params[i].fallback == CKB_PARAM_HOST_TILE_ROWS)
            ir = i;
        if (w->params[i].fallback == CKB_PARAM_HOST_TILE_VECS)
            iv = i;
    }
    if (ir < 0 || iv < 0)
        return;
    ckb_blocking_facts f;
    ckb_blocking_facts_of(m, unit, &f);
    const ckb_param *pr = &w->params[ir], *pv = &w->params[iv];
    ckb_blocking_tile(&f, pr->values, pr->nvalues, pv->values, pv->nvalues, &values[ir],
                      &values[iv]);
}

void ckb_expert_defaults_on(const ckb_workload *w, const ckb_machine *m, int unit,
                            int64_t *values)
{
    for (int i = 0; i < w->nparams; i++) {
        const ckb_param *p = &w->params[i];
        if (ckb_expert_param_is_block(p))
            values[i] = ckb_expert_block_fit(p, ckb_expert_block_model(p, m, unit));
        else
            values[i] = p->fallback == CKB_PARAM_HOST_UNIT ? unit : p->fallback;
    }
    expert__fit_tile(w, m, unit, values);
}

void ckb_expert_defaults(const ckb_workload *w, const ckb_machine *m, int64_t *values)
{
    ckb_expert_defaults_on(w, m, ckb_expert_host_unit(m), values);
}

void ckb_expert_host(char *buf, size_t n)
{
    ckb_machine m;
    ckb_machine_probe(1, &m);
    snprintf(buf, n, "%s | %s", m.cpu, m.isa_level);
}

/* "<size>/<threads>t", the key of tuned.json before host keys; the host
 * size is named with its scale value ("host(B=512)"), since another search
 * may choose another. */
static void expert__base_key(const ckb_workload *w, ckb_size s, int threads, char *buf, size_t n)
{
    char label[96];
    ckb_size_label(w, s, label, sizeof label);
    snprintf(buf, n, "%s/%dt", label, threads);
}

static void expert__key(const ckb_workload *w, ckb_size s, int threads, const char *host,
                        char *buf, size_t n)
{
    char label[96];
    ckb_size_label(w, s, label, sizeof label);
    snprintf(buf, n, "%s/%dt @ %s", label, threads, host);
}

/* The hosts tuned.json has for this size and budget, for the note. */
static void expert__others(json_object *root, const char *base, char *buf, size_t n)
{
    size_t used = 0, blen = strlen(base);
    buf[0] = '\0';
    if (!root || !json_object_is_type(root, json_type_object))
        return;
    json_object_object_foreach(root, k, v)
    {
        (void)v;
        if (strncmp(k, base, blen) != 0 || used + 8 >= n)
            continue;
        const char *host = k[blen] == '\0' ? "an unrecorded host" : k + blen + 3;
        if (k[blen] != '\0' && strncmp(k + blen, " @ ", 3) != 0)
            continue;
        int w = snprintf(buf + used, n - used, "%s'%s'", used ? ", " : "", host);
        used = w > 0 && (size_t)w < n - used ? used + (size_t)w : n - 1;
    }
}

void ckb_expert_config_read(const char *path, const char *host, const ckb_workload *w,
                            ckb_size s, int threads, const ckb_machine *m,
                            ckb_expert_config *cfg)
{
    int64_t values[CKB_MAX_PARAMS];
    ckb_expert_defaults(w, m, values);
    char key[512], base[128], others[160];
    expert__key(w, s, threads, host, key, sizeof key);
    expert__base_key(w, s, threads, base, sizeof base);
    int tuned = 0, missing = 0;
    json_object *root = json_object_from_file(path), *entry, *params, *v;
    if (root && json_object_is_type(root, json_type_object) &&
        json_object_object_get_ex(root, key, &entry) &&
        json_object_object_get_ex(entry, "params", &params)) {
        tuned = 1;
        for (int i = 0; i < w->nparams; i++) {
            if (json_object_object_get_ex(params, w->params[i].name, &v))
                values[i] = json_object_get_int64(v);
            else
                tuned = 0, missing = 1; /* a parameter added since tuning */
        }
    }
    expert__others(root, base, others, sizeof others);
    json_object_put(root);
    ckb_expert_config_set(w, values, cfg);
    cfg->tuned = tuned;
    if (tuned)
        return;
    /* the untuned blocks are not arbitrary: say where they came from */
    int blocks = 0;
    for (int i = 0; i < w->nparams; i++)
        blocks |= ckb_expert_param_is_block(&w->params[i]);
    const char *from = blocks ? " on blocks from the host model (caches, registers, unit)" : "";
    if (missing)
        snprintf(cfg->note, sizeof cfg->note,
                 "untuned on this host%s: a parameter was added since it was tuned", from);
    else if (others[0])
        snprintf(cfg->note, sizeof cfg->note,
                 "untuned on this host%s ('%s', %s): tuned.json has it for %s only", from, host,
                 base, others);
    else
        snprintf(cfg->note, sizeof cfg->note, "untuned%s: no tuned values for %s", from, base);
}

void ckb_expert_config_load(const ckb_workload *w, ckb_size s, int threads,
                            const ckb_machine *m, ckb_expert_config *cfg)
{
    char path[512], host[200];
    ckb_expert_tuned_path(w, path, sizeof path);
    ckb_expert_host(host, sizeof host);
    ckb_expert_config_read(path, host, w, s, threads, m, cfg);
}

int ckb_expert_config_save(const ckb_workload *w, ckb_size s, int threads,
                           const ckb_expert_config *cfg, const ckb_tune_outcome *out)
{
    char path[512], host[200], dir[512];
    ckb_expert_tuned_path(w, path, sizeof path);
    ckb_expert_host(host, sizeof host);
    /* under $CKBENCH_TUNED_DIR the workload's folder may not exist yet */
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) {
        *slash = '\0';
        if (ckb_mkdirs(dir) != 0)
            return -1;
    }
    return ckb_expert_config_write(path, host, w, s, threads, cfg, out);
}

int ckb_expert_config_write(const char *path, const char *host, const ckb_workload *w,
                            ckb_size s, int threads, const ckb_expert_config *cfg,
                            const ckb_tune_outcome *out)
{
    char key[512], when[32];
    expert__key(w, s, threads, host, key, sizeof key);
    json_object *root = json_object_from_file(path);
    if (!root || !json_object_is_type(root, json_type_object)) {
        json_object_put(root);
        root = json_object_new_object();
    }
    json_object *entry = json_object_new_object(), *params = json_object_new_object();
    for (int i = 0; i < cfg->n; i++)
        json_object_object_add(params, w->params[i].name, json_object_new_int64(cfg->values[i]));
    /* the key's parts, spelled out for a reader of the file */
    const char *bar = strstr(host, " | ");
    json_object_object_add(entry, "cpu", bar ? json_object_new_string_len(host, (int)(bar - host))
                                              : json_object_new_string(host));
    json_object_object_add(entry, "isa_level", json_object_new_string(bar ? bar + 3 : "?"));
    char label[96];
    ckb_size_label(w, s, label, sizeof label);
    json_object_object_add(entry, "size", json_object_new_string(label));
    json_object_object_add(entry, "threads", json_object_new_int(threads));
    json_object_object_add(entry, "params", params);
    json_object_object_add(entry, "median_ms", json_object_new_double(out->best_ms));
    json_object_object_add(entry, "speedup", json_object_new_double(out->speedup));
    /* the untuned defaults may fail where a tuned configuration does not */
    int have_untuned = out->untuned_speedup > 0;
    json_object_object_add(entry, "untuned_median_ms",
                           have_untuned ? json_object_new_double(out->untuned_ms) : NULL);
    json_object_object_add(entry, "untuned_speedup",
                           have_untuned ? json_object_new_double(out->untuned_speedup) : NULL);
    /* confirmed: the ratio of the alternated rounds' medians; unconfirmed:
     * of the search's speedups over their interleaved baselines (robust to
     * the load changing during the search), as the caller computed it */
    json_object_object_add(entry, "gain_over_untuned",
                           out->gain > 0 ? json_object_new_double(out->gain) : NULL);
    /* 0: the search's single timings, stored unconfirmed (tune --confirm 0) */
    json_object_object_add(entry, "confirm_rounds", json_object_new_int(out->confirm_rounds));
    json_object_object_add(entry, "configs_tried", json_object_new_int(out->tried));
    json_object_object_add(entry, "configs_correct", json_object_new_int(out->correct));
    if (out->nlimits > 0) { /* a narrowed grid: the best of those values only */
        json_object *lim = json_object_new_array();
        for (int i = 0; i < out->nlimits; i++)
            json_object_array_add(lim, json_object_new_string(out->limits[i]));
        json_object_object_add(entry, "param_limits", lim);
    }
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    json_object_object_add(entry, "tuned_at", json_object_new_string(when));
    json_object_object_add(root, key, entry);
    const char *text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
                                                                JSON_C_TO_STRING_NOSLASHESCAPE);
    int rc = ckb_write_file_atomic(path, text, strlen(text));
    json_object_put(root);
    return rc;
}
