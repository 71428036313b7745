/* The generation-run parts of a report (see sections.h): every number comes
 * from src/score/, so the report and `ckbench score` agree. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/alloc.h"
#include "core/fsutil.h"
#include "report/escape.h"
#include "report/sections.h"
#include "report/svg.h"
#include "workloads/workload.h"

static const char *gen__f(char *buf, size_t n, double v, int decimals, const char *suffix)
{
    if (!isfinite(v))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.*f%s", decimals, v, suffix);
    return buf;
}

#define F(v, d) gen__f((char[48]){0}, 48, (v), (d), "")
#define PCT(v) gen__f((char[48]){0}, 48, 100 * (v), 1, "%")

void ckb_report_group_anchor(char *buf, size_t n, const ckb_score_group *g)
{
    char both[2 * CKB_SCORE_ID_MAX + 2];
    snprintf(both, sizeof both, "%s-%s", g->method, g->model);
    ckb_esc_id(buf, n, "g-", both);
}

void ckb_report_kernel_anchor(char *buf, size_t n, const ckb_score_group *g, const char *workload)
{
    char both[3 * CKB_SCORE_ID_MAX + 3];
    snprintf(both, sizeof both, "%s-%s-%s", g->method, g->model, workload);
    ckb_esc_id(buf, n, "k-", both);
}

/* The status colours of the taxonomy bars: ok green, the rest apart. */
static const char *gen__status_color(const char *status)
{
    static const char *const map[][2] = {
        {"ok", "#009E73"},           {"compile_error", "#D55E00"}, {"forbidden_symbol", "#882255"},
        {"crash", "#000000"},        {"timeout", "#E69F00"},       {"resource_limit", "#56B4E9"},
        {"wrong_result", "#CC79A7"}, {"nondeterministic", "#0072B2"},
        {"cheat_detected", "#AA4499"}, {"harness_error", "#999933"}, {"no_code", "#BBBBBB"},
        {"provider_error", "#666666"},
    };
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (strcmp(map[i][0], status) == 0)
            return map[i][1];
    return "#DDCC77";
}

static void gen__runs_table(ckb_doc *d, const ckb_score_set *s)
{
    static const char *const cols[] = {
        "run:Run",      "method:Method",     "model:Model",   "provider:Provider",
        "size:Size",    "budget#:Budget",    "workloads#:Workloads", "records#:Records",
        "notes:Notes",
    };
    ckb_table *t = ckb_doc_table(d, "gen-runs", "The runs read, in the order given",
                                 (int)(sizeof cols / sizeof *cols), cols);
    for (int i = 0; i < s->nruns; i++) {
        const ckb_score_run *r = &s->runs[i];
        int row = ckb_table_row(t, r->path, NULL);
        ckb_table_set(t, row, 0, "%s", r->path);
        ckb_table_set(t, row, 1, "%s", r->method);
        ckb_table_set(t, row, 2, "%s", r->model);
        ckb_table_set(t, row, 3, "%s", r->provider[0] ? r->provider : "-");
        ckb_table_set(t, row, 4, "%s", r->size[0] ? r->size : "-");
        ckb_table_set(t, row, 5, "%d%s", r->budget, r->budget_from_config ? "" : " (from records)");
        ckb_table_set(t, row, 6, "%d", r->nworkloads);
        ckb_table_set(t, row, 7, "%d", r->n);
        char notes[256] = "";
        size_t k = 0;
        if (r->dropped_last)
            k += (size_t)snprintf(notes + k, sizeof notes - k, "half-written last line dropped; ");
        if (r->skipped && k < sizeof notes)
            k += (size_t)snprintf(notes + k, sizeof notes - k, "%d malformed line(s) skipped; ",
                                  r->skipped);
        if (r->duplicates && k < sizeof notes)
            k += (size_t)snprintf(notes + k, sizeof notes - k, "%d duplicate record(s) ignored; ",
                                  r->duplicates);
        if (k >= 2 && k < sizeof notes)
            notes[k - 2] = '\0';
        ckb_table_set(t, row, 8, "%s", k ? notes : "-");
    }
}

static void gen__compare_table(ckb_doc *d, const ckb_score_set *s)
{
    static const char *const cols[] = {
        "group:Method / model",       "solved#:Solved",
        "per_sample#:Per-sample correctness", "geomean#:Geomean speedup (x, floored)",
        "beating#:Beating baseline",  "pct_expert#:% of expert",
        "compile#:Compile rate",      "samples#:Samples",
        "budget#:Budget / workload",
    };
    ckb_table *t = ckb_doc_table(d, "gen-compare",
                                 "Method x model, as in the paper's tables: workloads solved (a "
                                 "correct sample), correct samples over samples, the geometric "
                                 "mean over workloads of the best correct speedup floored at 1x "
                                 "(unsolved = 1x), workloads with a correct sample faster than "
                                 "the baseline, and the geometric mean of (floored speedup / the "
                                 "expert's) over workloads with an expert",
                                 (int)(sizeof cols / sizeof *cols), cols);
    for (int i = 0; i < s->ng; i++) {
        const ckb_score_group *g = &s->g[i];
        char link[300];
        ckb_report_group_anchor(link, sizeof link, g);
        int r = ckb_table_row(t, g->label, link);
        ckb_table_set(t, r, 0, "%s", g->label);
        ckb_table_set(t, r, 1, "%d/%d", g->solved, g->covers_suite ? ckb_workload_count() : g->nw);
        ckb_table_set(t, r, 2, "%s", PCT(g->per_sample_correctness));
        ckb_table_set(t, r, 3, "%s", F(g->geomean_speedup, 2));
        ckb_table_set(t, r, 4, "%s", PCT(g->share_beating_baseline));
        ckb_table_set(t, r, 5, "%s", gen__f((char[48]){0}, 48, g->pct_of_expert, 1, "%"));
        ckb_table_set(t, r, 6, "%s", PCT(g->compile_rate));
        ckb_table_set(t, r, 7, "%d", g->samples);
        ckb_table_set(t, r, 8, "%d", g->budget);
    }
}

/* fast_p at every threshold and sample count the score reports. */
static void gen__fastp_table(ckb_doc *d, const ckb_score_set *s)
{
    int all[CKB_SCORE_MAX_N * 4];
    int na = ckb_score_all_n_values(s, all, (int)(sizeof all / sizeof *all));
    if (na > CKB_TABLE_MAXCOLS - 2)
        na = CKB_TABLE_MAXCOLS - 2;
    ckb_table *t = ckb_doc_table(d, "gen-fastp-table",
                                 "fast_p@N: the share of workloads with a correct sample faster "
                                 "than p x the baseline among their first N samples ('-': N is "
                                 "past that group's budget, where the last column holds)",
                                 2, (const char *const[]){"group:Method / model", "p#:p"});
    for (int k = 0; k < na; k++) {
        char key[32], head[32];
        snprintf(key, sizeof key, "n%d", all[k]);
        snprintf(head, sizeof head, "N = %d", all[k]);
        ckb_table_add_col(t, key, head, 1);
    }
    for (int i = 0; i < s->ng; i++) {
        const ckb_score_group *g = &s->g[i];
        int ns[CKB_SCORE_MAX_N + 1];
        int nn = ckb_score_n_values(s, g, ns, CKB_SCORE_MAX_N + 1);
        for (int p = 0; p < s->np; p++) {
            char key[300];
            snprintf(key, sizeof key, "%s p=%g", g->label, s->p[p]);
            int r = ckb_table_row(t, key, NULL);
            ckb_table_set(t, r, 0, "%s", g->label);
            ckb_table_set(t, r, 1, "%g", s->p[p]);
            for (int k = 0; k < na; k++) {
                /* Past the budget the share cannot change: '-' says so. */
                int has = all[k] <= g->budget;
                for (int j = 0; j < nn && !has; j++)
                    has = ns[j] == all[k];
                ckb_table_set(t, r, 2 + k, "%s",
                              has ? PCT(ckb_score_fast_p(g, s->p[p], all[k])) : "-");
            }
        }
    }
}

/* The group's best speedups over the whole budget, as a step curve of the
 * share of workloads with a correct sample faster than p, from p = 0 to
 * xmax: (p, share) at each step's both ends. Returns the point count. */
static int gen__fastp_curve(const ckb_score_group *g, double xmax, double *x, double *y)
{
    int nv = 0, n = 0;
    double *v = ckb_xmalloc((size_t)(g->nw ? g->nw : 1) * sizeof *v);
    for (int i = 0; i < g->nw; i++)
        if (isfinite(g->w[i].best_speedup))
            v[nv++] = g->w[i].best_speedup;
    for (int a = 1; a < nv; a++)
        for (int b = a; b > 0 && v[b] < v[b - 1]; b--) {
            double t = v[b];
            v[b] = v[b - 1];
            v[b - 1] = t;
        }
    double share = g->nw ? (double)nv / g->nw : 0; /* all timed speedups are > 0 */
    x[n] = 0;
    y[n++] = share;
    for (int i = 0; i < nv; i++) {
        if (i > 0 && v[i] == v[i - 1])
            continue;
        int above = 0;
        for (int j = 0; j < nv; j++)
            above += v[j] > v[i];
        x[n] = v[i];
        y[n++] = share;
        share = (double)above / g->nw;
        x[n] = v[i];
        y[n++] = share;
    }
    x[n] = xmax;
    y[n++] = share;
    free(v);
    return n;
}

char *ckb_report_fastp_plot(const ckb_score_set *s, const char *id)
{
    double xmax = 1;
    for (int i = 0; i < s->ng; i++)
        for (int j = 0; j < s->g[i].nw; j++)
            if (s->g[i].w[j].best_speedup > xmax)
                xmax = s->g[i].w[j].best_speedup;
    ckb_svg_frame f = {.id = id,
                       .title = "fast_p: share of workloads faster than p x the baseline"};
    ckb_svg_axis_init(&f.x, 0, "speedup threshold p (x the baseline)");
    ckb_svg_axis_init(&f.y, 0, "share of workloads (correct and faster than p)");
    ckb_svg_axis_include(&f.x, 0);
    ckb_svg_axis_include(&f.x, 1.1 * xmax); /* room to see the last step fall */
    ckb_svg_axis_include(&f.y, 0);
    ckb_svg_axis_include(&f.y, 1);
    ckb_svg_axis_finish(&f.x);
    ckb_svg_axis_finish(&f.y);
    ckb_svg_series *sr = ckb_xcalloc((size_t)(s->ng ? s->ng : 1), sizeof *sr);
    double **xs = ckb_xcalloc((size_t)(s->ng ? s->ng : 1), sizeof *xs);
    double **ys = ckb_xcalloc((size_t)(s->ng ? s->ng : 1), sizeof *ys);
    for (int i = 0; i < s->ng; i++) {
        const ckb_score_group *g = &s->g[i];
        xs[i] = ckb_xmalloc((size_t)(2 * g->nw + 2) * sizeof **xs);
        ys[i] = ckb_xmalloc((size_t)(2 * g->nw + 2) * sizeof **ys);
        int n = gen__fastp_curve(g, f.x.hi, xs[i], ys[i]);
        sr[i] = (ckb_svg_series){.name = g->label, .style = CKB_SVG_LINE, .n = n, .x = xs[i],
                                 .y = ys[i]};
    }
    ckb_strbuf sb = {0};
    ckb_svg_plot(&sb, &f, sr, s->ng);
    for (int i = 0; i < s->ng; i++) {
        free(xs[i]);
        free(ys[i]);
    }
    free(xs);
    free(ys);
    free(sr);
    return ckb_strbuf_take(&sb);
}

char *ckb_report_solved_plot(const ckb_score_set *s, const char *id)
{
    int kmax = 1;
    for (int i = 0; i < s->ng; i++)
        if (s->g[i].budget > kmax)
            kmax = s->g[i].budget;
    ckb_svg_frame f = {.id = id, .title = "Correctness against samples spent"};
    ckb_svg_axis_init(&f.x, 0, "samples spent per workload");
    ckb_svg_axis_init(&f.y, 0, "share of workloads solved");
    ckb_svg_axis_include(&f.x, 1);
    ckb_svg_axis_include(&f.x, kmax);
    ckb_svg_axis_include(&f.y, 0);
    ckb_svg_axis_include(&f.y, 1);
    ckb_svg_axis_finish(&f.x);
    ckb_svg_axis_finish(&f.y);
    ckb_svg_series *sr = ckb_xcalloc((size_t)(s->ng ? s->ng : 1), sizeof *sr);
    double *xs = ckb_xmalloc((size_t)kmax * sizeof *xs);
    double **ys = ckb_xcalloc((size_t)(s->ng ? s->ng : 1), sizeof *ys);
    for (int k = 0; k < kmax; k++)
        xs[k] = k + 1;
    for (int i = 0; i < s->ng; i++) {
        const ckb_score_group *g = &s->g[i];
        ys[i] = ckb_xmalloc((size_t)(g->budget ? g->budget : 1) * sizeof **ys);
        for (int k = 0; k < g->budget; k++)
            ys[i][k] = ckb_score_solved_within(g, k + 1);
        /* Markers only where a few samples keep them readable. */
        sr[i] = (ckb_svg_series){.name = g->label,
                                 .style = CKB_SVG_LINE | (g->budget <= 16 ? CKB_SVG_MARKERS : 0),
                                 .n = g->budget,
                                 .x = xs,
                                 .y = ys[i],
                                 .marker = i};
    }
    ckb_strbuf sb = {0};
    ckb_svg_plot(&sb, &f, sr, s->ng);
    for (int i = 0; i < s->ng; i++)
        free(ys[i]);
    free(ys);
    free(xs);
    free(sr);
    return ckb_strbuf_take(&sb);
}

static int gen__cmp_status(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    int rx = ckb_score_status_rank(x), ry = ckb_score_status_rank(y);
    return rx != ry ? rx - ry : strcmp(x, y);
}

/* The statuses any group has, in the taxonomy's order. */
static int gen__statuses(const ckb_score_set *s, const char **names, int max)
{
    int n = 0;
    for (int i = 0; i < s->ng; i++)
        for (int j = 0; j < s->g[i].ntax; j++) {
            const char *x = s->g[i].taxonomy[j].name;
            int seen = 0;
            for (int k = 0; k < n && !seen; k++)
                seen = strcmp(names[k], x) == 0;
            if (!seen && n < max)
                names[n++] = x;
        }
    qsort(names, (size_t)n, sizeof *names, gen__cmp_status);
    return n;
}

static int gen__count(const ckb_score_group *g, const char *status)
{
    for (int j = 0; j < g->ntax; j++)
        if (strcmp(g->taxonomy[j].name, status) == 0)
            return g->taxonomy[j].count;
    return 0;
}

char *ckb_report_taxonomy_bars(const ckb_score_set *s, const char *id)
{
    const char *names[64], *colors[64];
    int ns = gen__statuses(s, names, 64);
    const char **cats = ckb_xcalloc((size_t)(s->ng ? s->ng : 1), sizeof *cats);
    double *v = ckb_xcalloc((size_t)(s->ng ? s->ng : 1) * (size_t)(ns ? ns : 1), sizeof *v);
    for (int j = 0; j < ns; j++)
        colors[j] = gen__status_color(names[j]);
    for (int i = 0; i < s->ng; i++) {
        cats[i] = s->g[i].label;
        for (int j = 0; j < ns; j++)
            v[(size_t)i * (size_t)ns + (size_t)j] = gen__count(&s->g[i], names[j]);
    }
    ckb_svg_bars b = {.id = id, .title = "Failure taxonomy: samples per status",
                      .ylabel = "samples", .ncat = s->ng, .nseg = ns, .cats = cats,
                      .segs = names, .colors = colors, .values = v};
    ckb_strbuf sb = {0};
    ckb_svg_stacked_bars(&sb, &b);
    free(cats);
    free(v);
    return ckb_strbuf_take(&sb);
}

static void gen__taxonomy_table(ckb_doc *d, const ckb_score_set *s)
{
    const char *names[64];
    int ns = gen__statuses(s, names, 64);
    if (ns > CKB_TABLE_MAXCOLS - 3)
        ns = CKB_TABLE_MAXCOLS - 3;
    ckb_table *t = ckb_doc_table(d, "gen-taxonomy-table",
                                 "Samples per status (DESIGN §8's failure taxonomy, plus no_code: "
                                 "nothing to compile, and provider_error: no reply); compile "
                                 "errors by kind where the compiler's message tells it",
                                 1, (const char *const[]){"group:Method / model"});
    for (int j = 0; j < ns; j++)
        ckb_table_add_col(t, names[j], names[j], 1);
    ckb_table_add_col(t, "compile_kinds", "Compile errors by kind", 0);
    ckb_table_add_col(t, "total", "Samples", 1);
    for (int i = 0; i < s->ng; i++) {
        const ckb_score_group *g = &s->g[i];
        int r = ckb_table_row(t, g->label, NULL);
        ckb_table_set(t, r, 0, "%s", g->label);
        for (int j = 0; j < ns; j++)
            ckb_table_set(t, r, 1 + j, "%d", gen__count(g, names[j]));
        char kinds[512] = "-";
        size_t k = 0;
        for (int j = 0; j < g->nck && k < sizeof kinds; j++)
            k += (size_t)snprintf(kinds + k, sizeof kinds - k, "%s%s %d", j ? ", " : "",
                                  g->compile_kinds[j].name, g->compile_kinds[j].count);
        ckb_table_set(t, r, 1 + ns, "%s", kinds);
        ckb_table_set(t, r, 2 + ns, "%d", g->samples);
    }
}

static void gen__group_table(ckb_doc *d, const ckb_score_set *s, const ckb_score_group *g)
{
    char anchor[300], tid[320];
    ckb_report_group_anchor(anchor, sizeof anchor, g);
    ckb_doc_heading(d, 3, anchor, "%s", g->label);
    ckb_doc_para(d, NULL,
                 "%d run%s, %d samples over %d workloads; %d solved, %d correct samples. Each "
                 "workload links to its best kernel.",
                 g->nruns, g->nruns == 1 ? "" : "s (pooled)", g->samples, g->nw, g->solved,
                 g->correct);
    static const char *const cols[] = {
        "workload:Workload",          "samples#:Samples / budget",
        "correct#:Correct",           "first_correct#:Samples to first correct",
        "best#:Best speedup (x)",     "floored#:Floored (x)",
        "expert#:Expert speedup (x)", "pct_expert#:% of expert",
        "best_sample:Best sample",
    };
    snprintf(tid, sizeof tid, "%s-workloads", anchor);
    ckb_table *t = ckb_doc_table(d, tid, NULL, (int)(sizeof cols / sizeof *cols), cols);
    for (int i = 0; i < g->nw; i++) {
        const ckb_score_workload *w = &g->w[i];
        char link[400];
        ckb_report_kernel_anchor(link, sizeof link, g, w->id);
        int r = ckb_table_row(t, w->id, link);
        ckb_table_set(t, r, 0, "%s", w->id);
        ckb_table_set(t, r, 1, "%d/%d", w->samples, w->budget);
        ckb_table_set(t, r, 2, "%d", w->correct);
        if (w->first_correct >= 0)
            ckb_table_set(t, r, 3, "%d", w->first_correct + 1);
        else
            ckb_table_set(t, r, 3, "-");
        ckb_table_set(t, r, 4, "%s", F(w->best_speedup, 2));
        ckb_table_set(t, r, 5, "%s", F(w->speedup, 2));
        ckb_table_set(t, r, 6, "%s", F(w->expert_speedup, 2));
        ckb_table_set(t, r, 7, "%s", gen__f((char[48]){0}, 48, w->pct_of_expert, 1, "%"));
        char dist[96] = "";
        if (w->disturbed)
            snprintf(dist, sizeof dist, " (%d disturbed timing%s, not counted)", w->disturbed,
                     w->disturbed == 1 ? "" : "s");
        if (w->best >= 0)
            ckb_table_set(t, r, 8, "%s #%d%s", s->runs[w->run_of[w->best]].path,
                          w->pool[w->best]->index, dist);
        else
            ckb_table_set(t, r, 8, "-%s", dist);
    }
}

void ckb_report_generation_sections(ckb_doc *d, const ckb_score_set *s)
{
    ckb_doc_heading(d, 2, "generation", "Generation runs");
    ckb_doc_para(d, NULL,
                 "%d run%s in %d method/model group%s; runs of the same method and model are "
                 "pooled (a workload in several runs has their samples in the order given). "
                 "Scored as `ckbench score` scores them.",
                 s->nruns, s->nruns == 1 ? "" : "s", s->ng, s->ng == 1 ? "" : "s");
    gen__runs_table(d, s);
    ckb_doc_heading(d, 3, "gen-compare-head", "Comparison");
    gen__compare_table(d, s);
    ckb_doc_heading(d, 3, "gen-fastp-head", "fast_p");
    ckb_doc_figure(d, "gen-fastp", "fastp.svg",
                   "fast_p against the threshold p over the whole budget: the share of "
                   "workloads whose best correct sample is faster than p x the baseline, one "
                   "curve per method and model (at p = 1: the share beating the baseline).",
                   ckb_report_fastp_plot(s, "gen-fastp-svg"));
    gen__fastp_table(d, s);
    ckb_doc_heading(d, 3, "gen-solved-head", "Correctness against samples spent");
    ckb_doc_figure(d, "gen-solved", "solved.svg",
                   "The share of workloads with a correct sample among their first k samples, "
                   "k = 1 to the budget, one curve per method and model.",
                   ckb_report_solved_plot(s, "gen-solved-svg"));
    ckb_doc_heading(d, 3, "gen-taxonomy-head", "Failure taxonomy");
    ckb_doc_figure(d, "gen-taxonomy", "taxonomy.svg",
                   "Every sample by its status, one bar per method and model.",
                   ckb_report_taxonomy_bars(s, "gen-taxonomy-svg"));
    gen__taxonomy_table(d, s);
    ckb_report_jaxbench_section(d, s);
    for (int i = 0; i < s->ng; i++)
        gen__group_table(d, s, &s->g[i]);
}

/* The best sample's source as the run kept it: best/<workload>.c, whose
 * name the run made from the id. NULL when absent (note says why). */
static char *gen__source(const ckb_score_run *r, const ckb_score_sample *best, char *note,
                         size_t nn)
{
    char path[4096];
    /* The id comes from the records: a name with a slash or a dot could
     * reach outside best/, so only the ids workloads can have are read. */
    if (best->workload[strspn(best->workload, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                              "0123456789_-")] != '\0') {
        snprintf(note, nn, "the workload id '%s' is not a plain name: its source is not read",
                 best->workload);
        return NULL;
    }
    snprintf(path, sizeof path, "%s/best/%s.c", r->path, best->workload);
    char *src = ckb_read_file(path, NULL);
    if (!src) {
        snprintf(note, nn, "%s was not found: the run kept no source for its best sample", path);
        return NULL;
    }
    /* The run's own best may disagree with ours if its record is newer than
     * the records read; say so rather than show a kernel as another. */
    snprintf(path, sizeof path, "%s/best/%s.json", r->path, best->workload);
    char *meta = ckb_read_file(path, NULL);
    note[0] = '\0';
    if (meta) {
        const char *ix = strstr(meta, "\"index\"");
        const char *colon = ix ? strchr(ix, ':') : NULL;
        if (colon && atoi(colon + 1) != best->index)
            snprintf(note, nn, "%s records sample #%d as the best, the records say #%d", path,
                     atoi(colon + 1), best->index);
        free(meta);
    }
    return src;
}

void ckb_report_kernel_sections(ckb_doc *d, const ckb_score_set *s)
{
    ckb_doc_heading(d, 2, "kernels", "Best kernels");
    ckb_doc_para(d, NULL, "Per method and model, each workload's fastest correct sample and its "
                          "source as the run kept it (best/<workload>.c).");
    for (int i = 0; i < s->ng; i++) {
        const ckb_score_group *g = &s->g[i];
        char ganchor[300];
        ckb_report_group_anchor(ganchor, sizeof ganchor, g);
        char hid[320];
        snprintf(hid, sizeof hid, "%s-kernels", ganchor);
        ckb_doc_heading(d, 3, hid, "%s", g->label);
        for (int j = 0; j < g->nw; j++) {
            const ckb_score_workload *w = &g->w[j];
            char anchor[400];
            ckb_report_kernel_anchor(anchor, sizeof anchor, g, w->id);
            ckb_doc_heading(d, 4, anchor, "%s: %s", g->label, w->id);
            if (w->best < 0) {
                ckb_doc_para(d, NULL, "No correct sample among %d (budget %d): unsolved, counted "
                                      "as 1x.",
                             w->samples, w->budget);
                continue;
            }
            const ckb_score_sample *b = w->pool[w->best];
            const ckb_score_run *r = &s->runs[w->run_of[w->best]];
            char expert[128] = "";
            if (isfinite(w->expert_speedup))
                snprintf(expert, sizeof expert, "; the expert is %.2fx, so this is %.1f%% of it",
                         w->expert_speedup, w->pct_of_expert);
            ckb_doc_para(d, NULL,
                         "Best of %d samples (%d correct): sample #%d of %s (position %d of the "
                         "pooled budget %d), status %s, %sx the baseline (candidate %s ms, "
                         "baseline %s ms), floored %sx%s.",
                         w->samples, w->correct, b->index, r->path, w->pos[w->best] + 1,
                         w->budget, b->status, F(b->speedup, 2), F(b->cand_ms, 3),
                         F(b->base_ms, 3), F(w->speedup, 2), expert);
            if (w->disturbed)
                ckb_doc_para(d, "note",
                             "%d correct sample%s had %s timing disturbed by other work on the "
                             "machine: not a figure, counted as untimed (1x) until `ckbench "
                             "retime %s` measures %s.",
                             w->disturbed, w->disturbed == 1 ? "" : "s",
                             w->disturbed == 1 ? "its" : "their", r->path,
                             w->disturbed == 1 ? "it" : "them");
            char note[4600];
            char *src = gen__source(r, b, note, sizeof note);
            if (note[0])
                ckb_doc_para(d, "note", "%s.", note);
            if (src) {
                char sum[4400];
                snprintf(sum, sizeof sum, "Source: %s/best/%s.c", r->path, w->id);
                ckb_doc_code(d, sum, src);
                free(src);
            }
        }
    }
}
