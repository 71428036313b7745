#include "score/runs.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/jsonget.h"
#include "core/jsonl.h"

static int runs__int(json_object *o, const char *key, int dflt)
{
    json_object *x;
    if (!o || !json_object_object_get_ex(o, key, &x) || !json_object_is_type(x, json_type_int))
        return dflt;
    return json_object_get_int(x);
}

static void runs__copy(char *dst, size_t n, const char *src)
{
    snprintf(dst, n, "%s", src ? src : "");
}

int ckb_score_is_run_path(const char *path)
{
    char p[4096];
    struct stat st;
    snprintf(p, sizeof p, "%s/records.jsonl", path);
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int runs__has_workload(const ckb_score_run *r, const char *id)
{
    for (int i = 0; i < r->nworkloads; i++)
        if (strcmp(r->workloads[i], id) == 0)
            return 1;
    return 0;
}

static void runs__add_workload(ckb_score_run *r, const char *id)
{
    if (!id || !*id || runs__has_workload(r, id))
        return;
    char **w = ckb_xrealloc(r->workloads, (size_t)(r->nworkloads + 1) * sizeof *w);
    char *d = ckb_xstrdup(id);
    r->workloads = w;
    r->workloads[r->nworkloads++] = d;
}

/* config.json: method, model, provider, size, workloads (an array of ids,
 * or one comma-separated string), budget. A missing file is no error (the
 * records say method and model too); one that is not a JSON object is. */
static int runs__config(ckb_score_run *r, ckb_err *err)
{
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/config.json", r->path);
    if (stat(path, &st) != 0)
        return 0;
    json_object *c = json_object_from_file(path);
    if (!c || !json_object_is_type(c, json_type_object)) {
        ckb_err_set(err, CKB_E_FORMAT,
                    "%s is not a JSON object (%s); a run's config.json is written "
                    "by `ckbench generate`",
                    path, c ? "another JSON value" : json_util_get_last_err());
        json_object_put(c);
        return CKB_E_FORMAT;
    }
    runs__copy(r->method, sizeof r->method, ckb_json_str(c, "method"));
    runs__copy(r->model, sizeof r->model, ckb_json_str(c, "model"));
    runs__copy(r->provider, sizeof r->provider, ckb_json_str(c, "provider"));
    runs__copy(r->size, sizeof r->size, ckb_json_str(c, "size"));
    json_object *w;
    if (json_object_object_get_ex(c, "workloads", &w)) {
        if (json_object_is_type(w, json_type_array)) {
            for (size_t i = 0; i < json_object_array_length(w); i++) {
                json_object *e = json_object_array_get_idx(w, i);
                if (json_object_is_type(e, json_type_string))
                    runs__add_workload(r, json_object_get_string(e));
            }
        } else if (json_object_is_type(w, json_type_string)) {
            char *list = ckb_xstrdup(json_object_get_string(w)), *save = NULL;
            for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save))
                runs__add_workload(r, t);
            free(list);
        }
    }
    int budget = runs__int(c, "budget", -1);
    if (budget < 1)
        budget = runs__int(c, "budget_per_workload", -1);
    if (budget >= 1) {
        r->budget = budget;
        r->budget_from_config = 1;
    }
    json_object_put(c);
    return 0;
}

/* The position of (w, index) among the samples, or -1. */
static int runs__find(const ckb_score_run *r, const char *w, int index)
{
    /* Runs hold thousands of records at most; a scan keeps this simple. */
    for (int i = r->n - 1; i >= 0; i--)
        if (r->s[i].index == index && strcmp(r->s[i].workload, w) == 0)
            return i;
    return -1;
}

static int runs__seen(const ckb_score_run *r, const char *w, int index)
{
    return runs__find(r, w, index) >= 0;
}

/* One record line into a sample; -1 when it is not a usable record. */
static int runs__record(ckb_score_run *r, json_object *o, ckb_score_sample *s)
{
    const char *w = ckb_json_str(o, "workload"), *st = ckb_json_str(o, "status");
    json_object *ix;
    if (!w || !*w || !st || !*st || !json_object_object_get_ex(o, "index", &ix) ||
        !json_object_is_type(ix, json_type_int) || json_object_get_int(ix) < 0)
        return -1;
    memset(s, 0, sizeof *s);
    runs__copy(s->workload, sizeof s->workload, w);
    runs__copy(s->status, sizeof s->status, st);
    s->index = json_object_get_int(ix);
    json_object *c;
    s->correct = json_object_object_get_ex(o, "correct", &c) &&
                 json_object_is_type(c, json_type_boolean) && json_object_get_boolean(c);
    s->speedup = ckb_json_num(o, "speedup");
    s->speedup_disturbed = NAN;
    s->retimed = ckb_json_obj(o, "retimed") != NULL;
    if (ckb_json_timing_disturbed(o)) {
        /* other work disturbed the timing: not a figure (DESIGN §5) */
        s->disturbed = 1;
        s->speedup_disturbed = isfinite(s->speedup) ? s->speedup
                                                    : ckb_json_num(ckb_json_obj(o, "eval"),
                                                                   "speedup");
        s->speedup = NAN;
    }
    s->expert_speedup = ckb_json_num(o, "expert_speedup");
    s->chain = runs__int(o, "chain", -1);
    s->turn = runs__int(o, "turn", -1);
    json_object *ev = ckb_json_obj(o, "eval");
    runs__copy(s->detail, sizeof s->detail, ckb_json_str(ev, "detail"));
    s->cand_ms = ckb_json_num(ckb_json_obj(ev, "candidate"), "median_ms");
    s->base_ms = ckb_json_num(ckb_json_obj(ev, "baseline"), "median_ms");
    if (s->disturbed)
        s->cand_ms = s->base_ms = NAN; /* not measurements */
    /* A run without a config still names its method and model per record. */
    if (!r->method[0])
        runs__copy(r->method, sizeof r->method, ckb_json_str(o, "method"));
    if (!r->model[0])
        runs__copy(r->model, sizeof r->model, ckb_json_str(o, "model"));
    if (!r->provider[0])
        runs__copy(r->provider, sizeof r->provider, ckb_json_str(o, "provider"));
    return 0;
}

static void runs__push(ckb_score_run *r, const ckb_score_sample *s, int *cap)
{
    if (r->n == *cap) {
        *cap = *cap ? 2 * *cap : 256;
        ckb_score_sample *p = ckb_xrealloc(r->s, (size_t)*cap * sizeof *p);
        r->s = p;
    }
    r->s[r->n++] = *s;
}

typedef struct {
    ckb_score_run *r, *infra;
    int *cap, *infra_cap;
    int max_index;
} runs__loader;

/* One whole JSON value of records.jsonl (borrowed). */
static void runs__value(void *ctx, json_object *o, int lineno)
{
    runs__loader *ld = ctx;
    ckb_score_run *r = ld->r;
    ckb_score_sample s;
    (void)lineno;
    if (!json_object_is_type(o, json_type_object) || runs__record(r, o, &s) != 0) {
        r->skipped++;
    } else if (strcmp(s.status, "infra_error") == 0) {
        /* the provider failed, not the model: not a sample; counted below
         * when no later record did the sample */
        runs__push(ld->infra, &s, ld->infra_cap);
    } else if (runs__seen(r, s.workload, s.index)) {
        /* a re-timed record replaces the one it re-times: the latest wins */
        int k = s.retimed ? runs__find(r, s.workload, s.index) : -1;
        if (k >= 0) {
            r->s[k] = s;
            r->retimed++;
        } else {
            r->duplicates++;
        }
    } else {
        runs__push(r, &s, ld->cap);
        if (s.index > ld->max_index)
            ld->max_index = s.index;
    }
}

int ckb_score_run_load(const char *path, ckb_score_run *r, ckb_err *err)
{
    memset(r, 0, sizeof *r);
    r->path = ckb_xstrdup(path);
    char rec[4096];
    size_t len = 0;
    char *text = NULL;
    int rc = CKB_E_NOT_FOUND, cap = 0, infra_cap = 0;
    ckb_score_run infra = {0};
    snprintf(rec, sizeof rec, "%s/records.jsonl", path);
    text = ckb_read_file(rec, &len);
    if (!text) {
        ckb_err_set(err, CKB_E_NOT_FOUND,
                    "%s: cannot read %s (%s); give a run folder written by "
                    "`ckbench generate`",
                    path, rec, strerror(errno));
        goto cleanup;
    }
    if ((rc = runs__config(r, err)) != CKB_OK)
        goto cleanup;
    rc = CKB_E_FORMAT;
    runs__loader ld = {r, &infra, &cap, &infra_cap, -1};
    ckb_jsonl_stats st;
    ckb_jsonl_each(text, len, runs__value, &ld, &st);
    int max_index = ld.max_index;
    r->dropped_last = st.last_cut; /* a record cut by a kill: resume drops it too */
    r->skipped += st.bad;
    r->nul_bytes = st.nul_bytes;
    for (int i = 0; i < infra.n; i++)
        r->infra += !runs__seen(r, infra.s[i].workload, infra.s[i].index);
    for (int i = 0; i < r->n; i++) {
        runs__add_workload(r, r->s[i].workload);
        r->disturbed += r->s[i].disturbed && r->s[i].correct;
    }
    /* A record past the configured budget still counts (the budget may have
     * been raised on resume); the budget covers every index seen. */
    if (max_index + 1 > r->budget)
        r->budget = max_index + 1;
    if (!r->method[0])
        snprintf(r->method, sizeof r->method, "unknown");
    if (!r->model[0])
        snprintf(r->model, sizeof r->model, "unknown");
    rc = CKB_OK;
cleanup:
    free(text);
    free(infra.s);
    if (rc != 0)
        ckb_score_run_free(r);
    return rc;
}

void ckb_score_run_free(ckb_score_run *r)
{
    free(r->path);
    for (int i = 0; i < r->nworkloads; i++)
        free(r->workloads[i]);
    free(r->workloads);
    free(r->s);
    memset(r, 0, sizeof *r);
}
