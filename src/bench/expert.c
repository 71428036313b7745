#include "bench/expert.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/fsutil.h"

int ckb_expert_path(const ckb_workload *w, char *buf, size_t n)
{
    snprintf(buf, n, "%s/workloads/%s/expert.c", ckb_home(), w->id);
    return w->nparams >= 0 && access(buf, R_OK) == 0;
}

void ckb_expert_tuned_path(const ckb_workload *w, char *buf, size_t n)
{
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

static void expert__key(ckb_size s, int threads, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%dt", ckb_size_name(s), threads);
}

void ckb_expert_config_load(const ckb_workload *w, ckb_size s, int threads,
                            ckb_expert_config *cfg)
{
    int64_t values[CKB_MAX_PARAMS];
    for (int i = 0; i < w->nparams; i++)
        values[i] = w->params[i].fallback;
    char path[512], key[64];
    ckb_expert_tuned_path(w, path, sizeof path);
    expert__key(s, threads, key, sizeof key);
    int tuned = 0;
    json_object *root = json_object_from_file(path), *entry, *params, *v;
    if (root && json_object_object_get_ex(root, key, &entry) &&
        json_object_object_get_ex(entry, "params", &params)) {
        tuned = 1;
        for (int i = 0; i < w->nparams; i++) {
            if (json_object_object_get_ex(params, w->params[i].name, &v))
                values[i] = json_object_get_int64(v);
            else
                tuned = 0; /* a parameter added since tuning: not fully tuned */
        }
    }
    json_object_put(root);
    ckb_expert_config_set(w, values, cfg);
    cfg->tuned = tuned;
}

int ckb_expert_config_save(const ckb_workload *w, ckb_size s, int threads,
                           const ckb_expert_config *cfg, const ckb_tune_outcome *out)
{
    char path[512], key[64], when[32];
    ckb_expert_tuned_path(w, path, sizeof path);
    expert__key(s, threads, key, sizeof key);
    json_object *root = json_object_from_file(path);
    if (!root || !json_object_is_type(root, json_type_object)) {
        json_object_put(root);
        root = json_object_new_object();
    }
    json_object *entry = json_object_new_object(), *params = json_object_new_object();
    for (int i = 0; i < cfg->n; i++)
        json_object_object_add(params, w->params[i].name, json_object_new_int64(cfg->values[i]));
    json_object_object_add(entry, "params", params);
    json_object_object_add(entry, "median_ms", json_object_new_double(out->best_ms));
    json_object_object_add(entry, "speedup", json_object_new_double(out->speedup));
    /* the untuned defaults may fail where a tuned configuration does not */
    int have_untuned = out->untuned_speedup > 0;
    json_object_object_add(entry, "untuned_median_ms",
                           have_untuned ? json_object_new_double(out->untuned_ms) : NULL);
    json_object_object_add(entry, "untuned_speedup",
                           have_untuned ? json_object_new_double(out->untuned_speedup) : NULL);
    /* ranked by speedup over the interleaved baseline, so the gain is a ratio
     * of speedups: robust to the machine's load changing during the search */
    json_object_object_add(entry, "gain_over_untuned",
                           have_untuned ? json_object_new_double(out->speedup /
                                                                 out->untuned_speedup)
                                        : NULL);
    json_object_object_add(entry, "configs_tried", json_object_new_int(out->tried));
    json_object_object_add(entry, "configs_correct", json_object_new_int(out->correct));
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
