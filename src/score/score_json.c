/* score.json (docs/FORMATS.md, "Scores"). A figure that cannot be
 * computed is null, never 0. */
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>

#include "core/utf8.h"
#include "score/score.h"
#include "workloads/workload.h"

static json_object *sj__num(double v) { return isfinite(v) ? json_object_new_double(v) : NULL; }

static void sj__add(json_object *o, const char *k, json_object *v)
{
    json_object_object_add(o, k, v);
}

static json_object *sj__counts(const ckb_score_count *c, int n)
{
    json_object *o = json_object_new_object();
    for (int i = 0; i < n; i++)
        sj__add(o, c[i].name, json_object_new_int(c[i].count));
    return o;
}

static json_object *sj__workload(const ckb_score_set *s, const ckb_score_workload *w)
{
    json_object *o = json_object_new_object();
    sj__add(o, "workload", json_object_new_string(w->id));
    sj__add(o, "budget", json_object_new_int(w->budget));
    sj__add(o, "samples", json_object_new_int(w->samples));
    sj__add(o, "correct", json_object_new_int(w->correct));
    sj__add(o, "solved", json_object_new_boolean(w->correct > 0));
    sj__add(o, "best_speedup", sj__num(w->best_speedup));
    sj__add(o, "speedup_floored", sj__num(w->speedup));
    sj__add(o, "expert_speedup", sj__num(w->expert_speedup));
    sj__add(o, "pct_of_expert", sj__num(w->pct_of_expert));
    sj__add(o, "first_correct_position",
            w->first_correct >= 0 ? json_object_new_int(w->first_correct) : NULL);
    if (w->best >= 0) {
        json_object *b = json_object_new_object();
        sj__add(b, "run", json_object_new_string(s->runs[w->run_of[w->best]].path));
        sj__add(b, "index", json_object_new_int(w->pool[w->best]->index));
        sj__add(b, "position", json_object_new_int(w->pos[w->best]));
        sj__add(o, "best_sample", b);
    } else {
        sj__add(o, "best_sample", NULL);
    }
    return o;
}

static json_object *sj__group(const ckb_score_set *s, const ckb_score_group *g)
{
    json_object *o = json_object_new_object();
    sj__add(o, "method", json_object_new_string(g->method));
    sj__add(o, "model", json_object_new_string(g->model));
    json_object *runs = json_object_new_array();
    for (int k = 0; k < g->nruns; k++)
        json_object_array_add(runs, json_object_new_string(s->runs[g->runs[k]].path));
    sj__add(o, "runs", runs);
    sj__add(o, "budget", json_object_new_int(g->budget));
    sj__add(o, "samples", json_object_new_int(g->samples));
    sj__add(o, "compiled_samples", json_object_new_int(g->compiled));
    sj__add(o, "correct_samples", json_object_new_int(g->correct));
    sj__add(o, "compile_rate", sj__num(g->compile_rate));
    sj__add(o, "per_sample_correctness", sj__num(g->per_sample_correctness));
    sj__add(o, "solved", json_object_new_int(g->solved));
    sj__add(o, "workloads", json_object_new_int(g->nw));
    sj__add(o, "covers_suite", json_object_new_boolean(g->covers_suite));
    sj__add(o, "suite_workloads", json_object_new_int(ckb_workload_count()));
    sj__add(o, "geomean_speedup_floored", sj__num(g->geomean_speedup));
    sj__add(o, "share_beating_baseline", sj__num(g->share_beating_baseline));
    int ns[CKB_SCORE_MAX_N + 1];
    int nn = ckb_score_n_values(s, g, ns, CKB_SCORE_MAX_N + 1);
    json_object *fp = json_object_new_object();
    for (int i = 0; i < s->np; i++) {
        json_object *row = json_object_new_object();
        char key[32];
        for (int j = 0; j < nn; j++) {
            snprintf(key, sizeof key, "%d", ns[j]);
            sj__add(row, key, sj__num(ckb_score_fast_p(g, s->p[i], ns[j])));
        }
        snprintf(key, sizeof key, "%g", s->p[i]);
        sj__add(fp, key, row);
    }
    sj__add(o, "fast_p", fp);
    sj__add(o, "pct_of_expert", sj__num(g->pct_of_expert));
    sj__add(o, "expert_workloads", json_object_new_int(g->expert_workloads));
    /* JAXBench's summary, its own field names (score.h says how a workload
     * maps to its task) */
    json_object *jb = json_object_new_object();
    double nw = g->nw;
    sj__add(jb, "total_attempted", json_object_new_int(g->nw));
    sj__add(jb, "compiled_successfully", json_object_new_int(g->jb_compiled));
    sj__add(jb, "failed_compilation", json_object_new_int(g->nw - g->jb_compiled));
    sj__add(jb, "numerically_correct", json_object_new_int(g->solved));
    sj__add(jb, "improved", json_object_new_int(g->jb_improved));
    sj__add(jb, "slower", json_object_new_int(g->jb_slower));
    sj__add(jb, "max_speedup", sj__num(g->nw ? g->jb_max_speedup : NAN));
    sj__add(jb, "arithmetic_mean_speedup", sj__num(g->jb_arithmetic_mean_speedup));
    sj__add(jb, "geometric_mean_speedup", sj__num(g->geomean_speedup));
    sj__add(jb, "compile_ratio_pct", sj__num(100 * g->jb_compiled / nw));
    sj__add(jb, "correct_ratio_pct", sj__num(100 * g->solved / nw));
    sj__add(jb, "improvement_ratio_pct", sj__num(100 * g->jb_improved / nw));
    sj__add(jb, "slowdown_ratio_pct", sj__num(100 * g->jb_slower / nw));
    sj__add(o, "jaxbench_summary", jb);
    sj__add(o, "taxonomy", sj__counts(g->taxonomy, g->ntax));
    sj__add(o, "compile_errors", sj__counts(g->compile_kinds, g->nck));
    json_object *per = json_object_new_array();
    for (int i = 0; i < g->nw; i++)
        json_object_array_add(per, sj__workload(s, &g->w[i]));
    sj__add(o, "per_workload", per);
    return o;
}

json_object *ckb_score_json(const ckb_score_set *s)
{
    json_object *root = json_object_new_object();
    sj__add(root, "format", json_object_new_int(1));
    json_object *runs = json_object_new_array();
    for (int i = 0; i < s->nruns; i++) {
        const ckb_score_run *r = &s->runs[i];
        json_object *o = json_object_new_object();
        sj__add(o, "path", json_object_new_string(r->path));
        sj__add(o, "method", json_object_new_string(r->method));
        sj__add(o, "model", json_object_new_string(r->model));
        sj__add(o, "provider", r->provider[0] ? json_object_new_string(r->provider) : NULL);
        sj__add(o, "size", r->size[0] ? json_object_new_string(r->size) : NULL);
        sj__add(o, "budget", json_object_new_int(r->budget));
        sj__add(o, "budget_from_config", json_object_new_boolean(r->budget_from_config));
        sj__add(o, "workloads", json_object_new_int(r->nworkloads));
        sj__add(o, "records", json_object_new_int(r->n));
        sj__add(o, "dropped_last_line", json_object_new_boolean(r->dropped_last));
        sj__add(o, "skipped_lines", json_object_new_int(r->skipped));
        sj__add(o, "duplicate_records", json_object_new_int(r->duplicates));
        sj__add(o, "infra_error_records", json_object_new_int(r->infra));
        sj__add(o, "disturbed_timings", json_object_new_int(r->disturbed));
        sj__add(o, "retimed_records", json_object_new_int(r->retimed));
        json_object_array_add(runs, o);
    }
    sj__add(root, "runs", runs);
    json_object *ps = json_object_new_array();
    for (int i = 0; i < s->np; i++)
        json_object_array_add(ps, json_object_new_double(s->p[i]));
    sj__add(root, "fast_p_thresholds", ps);
    json_object *scores = json_object_new_array();
    for (int i = 0; i < s->ng; i++)
        json_object_array_add(scores, sj__group(s, &s->g[i]));
    sj__add(root, "scores", scores);
    ckb_json_fix_utf8(root); /* paths and ids as bytes may be any bytes */
    return root;
}
