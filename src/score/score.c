/* Grouping, pooling and the metrics of a score (see score.h). */
#include "score/score.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "workloads/workload.h"

/* The failure taxonomy in the order tables and bars show it. */
static const char *const score__statuses[] = {
    "ok",           "compile_error",  "forbidden_symbol", "crash",
    "timeout",      "resource_limit", "wrong_result",     "nondeterministic",
    "cheat_detected", "harness_error", "no_code",         "provider_error",
};

static void *score__alloc(size_t n)
{
    void *p = ckb_xcalloc(1, n ? n : 1);
    return p;
}

static int score__not_compiled(const char *status)
{
    return strcmp(status, "compile_error") == 0 || strcmp(status, "no_code") == 0 ||
           strcmp(status, "provider_error") == 0;
}

static void score__count(ckb_score_count **list, int *n, const char *name)
{
    for (int i = 0; i < *n; i++)
        if (strcmp((*list)[i].name, name) == 0) {
            (*list)[i].count++;
            return;
        }
    ckb_score_count *l = ckb_xrealloc(*list, (size_t)(*n + 1) * sizeof *l);
    *list = l;
    snprintf(l[*n].name, sizeof l[*n].name, "%s", name);
    l[*n].count = 1;
    (*n)++;
}

int ckb_score_status_rank(const char *status)
{
    int k = (int)(sizeof score__statuses / sizeof *score__statuses);
    for (int i = 0; i < k; i++)
        if (strcmp(status, score__statuses[i]) == 0)
            return i;
    return k;
}

static int score__cmp_tax(const void *a, const void *b)
{
    const ckb_score_count *x = a, *y = b;
    int rx = ckb_score_status_rank(x->name), ry = ckb_score_status_rank(y->name);
    return rx != ry ? rx - ry : strcmp(x->name, y->name);
}

static int score__cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int score__cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return x < y ? -1 : x > y;
}

static ckb_score_group *score__group(ckb_score_set *s, const ckb_score_run *r)
{
    for (int i = 0; i < s->ng; i++)
        if (strcmp(s->g[i].method, r->method) == 0 && strcmp(s->g[i].model, r->model) == 0)
            return &s->g[i];
    ckb_score_group *g = ckb_xrealloc(s->g, (size_t)(s->ng + 1) * sizeof *g);
    s->g = g;
    g = &s->g[s->ng++];
    memset(g, 0, sizeof *g);
    snprintf(g->method, sizeof g->method, "%s", r->method);
    snprintf(g->model, sizeof g->model, "%s", r->model);
    snprintf(g->label, sizeof g->label, "%s / %s", r->method, r->model);
    return g;
}

/* The group's workloads: the union of its runs' lists, in first-seen order. */
static void score__workloads(ckb_score_set *s, ckb_score_group *g)
{
    int cap = 0;
    for (int k = 0; k < g->nruns; k++)
        cap += s->runs[g->runs[k]].nworkloads;
    g->w = score__alloc((size_t)cap * sizeof *g->w);
    for (int k = 0; k < g->nruns; k++) {
        const ckb_score_run *r = &s->runs[g->runs[k]];
        for (int i = 0; i < r->nworkloads; i++) {
            int seen = 0;
            for (int j = 0; j < g->nw && !seen; j++)
                seen = strcmp(g->w[j].id, r->workloads[i]) == 0;
            if (!seen)
                g->w[g->nw++].id = r->workloads[i];
        }
    }
}

/* One workload's pooled samples and its figures. */
static void score__workload(ckb_score_set *s, ckb_score_group *g, ckb_score_workload *w)
{
    int cap = 0;
    for (int k = 0; k < g->nruns; k++)
        cap += s->runs[g->runs[k]].n;
    w->pool = score__alloc((size_t)cap * sizeof *w->pool);
    w->pos = score__alloc((size_t)cap * sizeof *w->pos);
    w->run_of = score__alloc((size_t)cap * sizeof *w->run_of);
    double *experts = score__alloc((size_t)cap * sizeof *experts);
    int nexp = 0, offset = 0;
    for (int k = 0; k < g->nruns; k++) {
        const ckb_score_run *r = &s->runs[g->runs[k]];
        int holds = 0;
        for (int i = 0; i < r->nworkloads && !holds; i++)
            holds = strcmp(r->workloads[i], w->id) == 0;
        if (!holds)
            continue;
        /* In index order within the run: the file order is the order samples
         * finished, which concurrency may shuffle. */
        int first = w->npool;
        for (int i = 0; i < r->n; i++)
            if (strcmp(r->s[i].workload, w->id) == 0) {
                w->pool[w->npool] = &r->s[i];
                w->pos[w->npool] = offset + r->s[i].index;
                w->run_of[w->npool] = g->runs[k];
                w->npool++;
            }
        for (int a = first + 1; a < w->npool; a++)
            for (int b = a; b > first && w->pos[b] < w->pos[b - 1]; b--) {
                const ckb_score_sample *t = w->pool[b];
                w->pool[b] = w->pool[b - 1];
                w->pool[b - 1] = t;
                int tp = w->pos[b], tr = w->run_of[b];
                w->pos[b] = w->pos[b - 1];
                w->run_of[b] = w->run_of[b - 1];
                w->pos[b - 1] = tp;
                w->run_of[b - 1] = tr;
            }
        offset += r->budget;
    }
    w->budget = offset;
    w->best = -1;
    w->first_correct = -1;
    w->best_speedup = NAN;
    for (int i = 0; i < w->npool; i++) {
        const ckb_score_sample *x = w->pool[i];
        w->samples++;
        if (isfinite(x->expert_speedup) && x->expert_speedup > 0)
            experts[nexp++] = x->expert_speedup;
        if (!x->correct)
            continue;
        w->correct++;
        w->disturbed += x->disturbed; /* correct, but no figure: counted as untimed */
        if (w->first_correct < 0)
            w->first_correct = w->pos[i];
        /* The fastest correct sample; a correct one never timed only when
         * no correct sample was timed. Ties go to the earlier sample. */
        if (w->best < 0 || (isfinite(x->speedup) && (!isfinite(w->best_speedup) ||
                                                     x->speedup > w->best_speedup))) {
            w->best = i;
            w->best_speedup = x->speedup;
        }
    }
    w->speedup = isfinite(w->best_speedup) && w->best_speedup > 1 ? w->best_speedup : 1.0;
    w->expert_speedup = NAN;
    if (nexp > 0) {
        qsort(experts, (size_t)nexp, sizeof *experts, score__cmp_double);
        w->expert_speedup = nexp % 2 ? experts[nexp / 2]
                                     : 0.5 * (experts[nexp / 2 - 1] + experts[nexp / 2]);
    }
    w->pct_of_expert = isfinite(w->expert_speedup) ? 100 * w->speedup / w->expert_speedup : NAN;
    free(experts);
}

static int score__covers_suite(const ckb_score_group *g)
{
    int n = ckb_workload_count();
    if (n <= 0 || g->nw < n)
        return 0;
    for (int i = 0; i < n; i++) {
        const char *id = ckb_workload_at(i)->id;
        int found = 0;
        for (int j = 0; j < g->nw && !found; j++)
            found = strcmp(g->w[j].id, id) == 0;
        if (!found)
            return 0;
    }
    return 1;
}

static void score__metrics(ckb_score_set *s, ckb_score_group *g)
{
    score__workloads(s, g);
    double logsum = 0, explog = 0, clipped_sum = 0;
    int beating = 0;
    g->jb_max_speedup = 1;
    for (int i = 0; i < g->nw; i++) {
        ckb_score_workload *w = &g->w[i];
        score__workload(s, g, w);
        if (w->budget > g->budget)
            g->budget = w->budget;
        g->solved += w->correct > 0;
        beating += w->best_speedup > 1;
        int compiled = 0;
        for (int k = 0; k < w->npool && !compiled; k++)
            compiled = !score__not_compiled(w->pool[k]->status);
        g->jb_compiled += compiled;
        if (isfinite(w->best_speedup)) {
            g->jb_improved += w->best_speedup > 1;
            g->jb_slower += w->best_speedup < 1;
        }
        if (w->speedup > g->jb_max_speedup)
            g->jb_max_speedup = w->speedup;
        clipped_sum += w->speedup;
        logsum += log(w->speedup);
        if (isfinite(w->pct_of_expert)) {
            explog += log(w->speedup / w->expert_speedup);
            g->expert_workloads++;
        }
    }
    for (int k = 0; k < g->nruns; k++) {
        const ckb_score_run *r = &s->runs[g->runs[k]];
        for (int i = 0; i < r->n; i++) {
            const ckb_score_sample *x = &r->s[i];
            g->samples++;
            g->compiled += !score__not_compiled(x->status);
            g->correct += x->correct;
            score__count(&g->taxonomy, &g->ntax, x->status);
            if (strcmp(x->status, "compile_error") == 0)
                score__count(&g->compile_kinds, &g->nck, x->detail[0] ? x->detail : "unspecified");
        }
    }
    if (g->ntax > 1) /* a run of infra_error records only has no samples at all */
        qsort(g->taxonomy, (size_t)g->ntax, sizeof *g->taxonomy, score__cmp_tax);
    g->compile_rate = g->samples ? (double)g->compiled / g->samples : NAN;
    g->per_sample_correctness = g->samples ? (double)g->correct / g->samples : NAN;
    g->geomean_speedup = g->nw ? exp(logsum / g->nw) : NAN;
    g->share_beating_baseline = g->nw ? (double)beating / g->nw : NAN;
    g->jb_arithmetic_mean_speedup = g->nw ? clipped_sum / g->nw : NAN;
    g->pct_of_expert = g->expert_workloads ? 100 * exp(explog / g->expert_workloads) : NAN;
    g->covers_suite = score__covers_suite(g);
}

/* Adds v to a sorted list without duplicates; returns 0 or -1 when full. */
static int score__add_p(ckb_score_set *s, double p)
{
    for (int i = 0; i < s->np; i++)
        if (fabs(s->p[i] - p) < 1e-12)
            return 0;
    if (s->np == CKB_SCORE_MAX_P)
        return -1;
    s->p[s->np++] = p;
    qsort(s->p, (size_t)s->np, sizeof *s->p, score__cmp_double);
    return 0;
}

static int score__add_n(ckb_score_set *s, int n, int given)
{
    for (int i = 0; i < s->nn; i++)
        if (s->n[i] == n) {
            s->n_given[i] |= given;
            return 0;
        }
    if (s->nn == CKB_SCORE_MAX_N)
        return -1;
    /* Kept sorted with its flag: insert in place. */
    int at = s->nn;
    while (at > 0 && s->n[at - 1] > n) {
        s->n[at] = s->n[at - 1];
        s->n_given[at] = s->n_given[at - 1];
        at--;
    }
    s->n[at] = n;
    s->n_given[at] = given;
    s->nn++;
    return 0;
}

int ckb_score_load(const char *const *paths, int n, const double *extra_p, int nextra_p,
                   const int *extra_n, int nextra_n, ckb_score_set *s, ckb_err *err)
{
    memset(s, 0, sizeof *s);
    if (n < 1 || n > CKB_SCORE_MAX_RUNS) {
        return ckb_err_set(err, CKB_E_USAGE, "give 1 to %d run folders (got %d)",
                           CKB_SCORE_MAX_RUNS, n);
    }
    static const double dp[] = CKB_SCORE_DEFAULT_P;
    static const int dn[] = CKB_SCORE_DEFAULT_N;
    for (size_t i = 0; i < sizeof dp / sizeof *dp; i++)
        score__add_p(s, dp[i]);
    for (size_t i = 0; i < sizeof dn / sizeof *dn; i++)
        score__add_n(s, dn[i], 0);
    for (int i = 0; i < nextra_p; i++)
        if (!(extra_p[i] >= 0) || score__add_p(s, extra_p[i]) != 0) {
            return ckb_err_set(err, CKB_E_USAGE,
                               "fast_p thresholds must be >= 0, at most %d in all (got %g)",
                               CKB_SCORE_MAX_P, extra_p[i]);
        }
    for (int i = 0; i < nextra_n; i++)
        if (extra_n[i] < 1 || score__add_n(s, extra_n[i], 1) != 0) {
            return ckb_err_set(err, CKB_E_USAGE,
                               "fast_p sample counts must be >= 1, at most %d in all (got %d)",
                               CKB_SCORE_MAX_N, extra_n[i]);
        }
    for (int i = 0; i < n; i++) {
        int rc = ckb_score_run_load(paths[i], &s->runs[i], err);
        if (rc != CKB_OK) {
            ckb_score_free(s);
            return rc;
        }
        s->nruns++;
    }
    for (int i = 0; i < s->nruns; i++) {
        ckb_score_group *g = score__group(s, &s->runs[i]);
        g->runs[g->nruns++] = i;
    }
    for (int i = 0; i < s->ng; i++)
        score__metrics(s, &s->g[i]);
    return 0;
}

void ckb_score_free(ckb_score_set *s)
{
    for (int i = 0; i < s->ng; i++) {
        ckb_score_group *g = &s->g[i];
        for (int j = 0; j < g->nw; j++) {
            free(g->w[j].pool);
            free(g->w[j].pos);
            free(g->w[j].run_of);
        }
        free(g->w);
        free(g->taxonomy);
        free(g->compile_kinds);
    }
    free(s->g);
    for (int i = 0; i < s->nruns; i++)
        ckb_score_run_free(&s->runs[i]);
    memset(s, 0, sizeof *s);
}

double ckb_score_fast_p(const ckb_score_group *g, double p, int n)
{
    if (g->nw == 0)
        return NAN;
    int hit = 0;
    for (int i = 0; i < g->nw; i++) {
        const ckb_score_workload *w = &g->w[i];
        int ok = 0;
        for (int k = 0; k < w->npool && !ok && w->pos[k] < n; k++)
            ok = w->pool[k]->correct && w->pool[k]->speedup > p;
        hit += ok;
    }
    return (double)hit / g->nw;
}

double ckb_score_solved_within(const ckb_score_group *g, int k)
{
    if (g->nw == 0)
        return NAN;
    int hit = 0;
    for (int i = 0; i < g->nw; i++)
        hit += g->w[i].first_correct >= 0 && g->w[i].first_correct < k;
    return (double)hit / g->nw;
}

int ckb_score_n_values(const ckb_score_set *s, const ckb_score_group *g, int *out, int max)
{
    int m = 0, has_budget = 0;
    for (int i = 0; i < s->nn && m < max; i++)
        if (s->n_given[i] || s->n[i] < g->budget) {
            out[m++] = s->n[i];
            has_budget |= s->n[i] == g->budget;
        }
    if (!has_budget && g->budget > 0 && m < max) {
        out[m++] = g->budget;
        qsort(out, (size_t)m, sizeof *out, score__cmp_int);
    }
    return m;
}

int ckb_score_all_n_values(const ckb_score_set *s, int *out, int max)
{
    int na = 0;
    for (int i = 0; i < s->ng; i++) {
        int ns[CKB_SCORE_MAX_N + 1];
        int nn = ckb_score_n_values(s, &s->g[i], ns, CKB_SCORE_MAX_N + 1);
        for (int j = 0; j < nn; j++) {
            int seen = 0;
            for (int k = 0; k < na && !seen; k++)
                seen = out[k] == ns[j];
            if (!seen && na < max)
                out[na++] = ns[j];
        }
    }
    for (int a = 1; a < na; a++)
        for (int b = a; b > 0 && out[b] < out[b - 1]; b--) {
            int x = out[b];
            out[b] = out[b - 1];
            out[b - 1] = x;
        }
    return na;
}
