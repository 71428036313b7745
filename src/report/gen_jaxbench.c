/* JAXBench's own summary of generation runs (score.h: a workload as the
 * task, its best correct sample as the task's kernel): the table of
 * summarize_results and upstream's two figures, the distribution of the
 * tasks' speedups and every task's speedup in order. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "report/sections.h"
#include "report/svg.h"
#include "report/table.h"

static void jb__table(ckb_doc *d, const ckb_score_set *s)
{
    static const char *const cols[] = {
        "group:Method / model",    "tasks#:Tasks",         "compiled#:Compiled",
        "correct#:Correct",        "improved#:Improved (> 1x)", "slower#:Slower (< 1x)",
        "max#:Max speedup",        "arith#:Arithmetic mean", "geo#:Geometric mean",
    };
    ckb_table *t = ckb_doc_table(d, "gen-jaxbench-table",
                                 "JAXBench's summary (MaxKernel/evaluation/evaluation_utils.py, "
                                 "summarize_results): a workload is a task and its best correct "
                                 "sample the task's kernel; counts with their share of the tasks; "
                                 "the means are over every task, each speedup clipped at 1x and "
                                 "an unsolved task counting 1x",
                                 (int)(sizeof cols / sizeof *cols), cols);
    for (int i = 0; i < s->ng; i++) {
        const ckb_score_group *g = &s->g[i];
        double nw = g->nw;
        char link[300];
        ckb_report_group_anchor(link, sizeof link, g);
        int r = ckb_table_row(t, g->label, link);
        ckb_table_set(t, r, 0, "%s", g->label);
        ckb_table_set(t, r, 1, "%d", g->nw);
        ckb_table_set(t, r, 2, "%d (%.1f%%)", g->jb_compiled, 100 * g->jb_compiled / nw);
        ckb_table_set(t, r, 3, "%d (%.1f%%)", g->solved, 100 * g->solved / nw);
        ckb_table_set(t, r, 4, "%d (%.1f%%)", g->jb_improved, 100 * g->jb_improved / nw);
        ckb_table_set(t, r, 5, "%d (%.1f%%)", g->jb_slower, 100 * g->jb_slower / nw);
        ckb_table_set(t, r, 6, "%.2f", g->nw ? g->jb_max_speedup : NAN);
        ckb_table_set(t, r, 7, "%.2f", g->jb_arithmetic_mean_speedup);
        ckb_table_set(t, r, 8, "%.2f", g->geomean_speedup);
    }
}

/* The bins of the distribution: powers of two around 1x. */
enum { JB_BINS = 8 };
static const double jb__edges[JB_BINS - 1] = {0.125, 0.25, 0.5, 1, 2, 4, 8};
static const char *const jb__bin_names[JB_BINS] = {"< 1/8x", "1/8-1/4x", "1/4-1/2x", "1/2-1x",
                                                   "1-2x",   "2-4x",     "4-8x",     ">= 8x"};

static int jb__bin(double v)
{
    int b = 0;
    while (b < JB_BINS - 1 && v >= jb__edges[b])
        b++;
    return b;
}

char *ckb_report_speedup_distribution(const ckb_score_set *s, const char *id)
{
    int ng = s->ng ? s->ng : 1;
    double *values = ckb_xcalloc((size_t)JB_BINS * (size_t)ng, sizeof *values);
    const char **names = ckb_xcalloc((size_t)ng, sizeof *names);
    for (int i = 0; i < s->ng; i++) {
        names[i] = s->g[i].label;
        for (int j = 0; j < s->g[i].nw; j++) {
            double v = s->g[i].w[j].best_speedup;
            if (isfinite(v) && v > 0)
                values[(size_t)jb__bin(v) * (size_t)ng + (size_t)i] += 1;
        }
    }
    ckb_svg_bars b = {.id = id,
                      .title = "Distribution of the tasks' speedups (best correct sample; "
                               "unsolved tasks left out)",
                      .ylabel = "tasks",
                      .ncat = JB_BINS,
                      .nseg = s->ng,
                      .cats = jb__bin_names,
                      .segs = names,
                      .values = values};
    ckb_strbuf sb = {0};
    ckb_svg_stacked_bars(&sb, &b);
    free(values);
    free(names);
    return ckb_strbuf_take(&sb);
}

typedef struct {
    double v;
    const char *id;
} jb__task;

static int jb__cmp(const void *a, const void *b)
{
    double x = ((const jb__task *)a)->v, y = ((const jb__task *)b)->v;
    return (x > y) - (x < y);
}

char *ckb_report_speedup_bars(const ckb_score_set *s, const char *id)
{
    ckb_svg_frame f = {.id = id,
                       .title = "Every task's speedup, in order (unsolved tasks as squares at 1x)"};
    ckb_svg_axis_init(&f.x, 0, "tasks, slowest to fastest");
    ckb_svg_axis_init(&f.y, 1, "best correct speedup (x the baseline)");
    ckb_svg_axis_include(&f.x, 0);
    ckb_svg_axis_include(&f.y, 1);
    int maxw = 1;
    for (int i = 0; i < s->ng; i++) {
        if (s->g[i].nw + 1 > maxw)
            maxw = s->g[i].nw + 1;
        for (int j = 0; j < s->g[i].nw; j++)
            ckb_svg_axis_include(&f.y, s->g[i].w[j].best_speedup);
    }
    ckb_svg_axis_include(&f.x, maxw);
    ckb_svg_axis_finish(&f.x);
    ckb_svg_axis_finish(&f.y);
    int ng = s->ng ? s->ng : 1;
    ckb_svg_series *sr = ckb_xcalloc((size_t)(2 * ng), sizeof *sr);
    double *xs = ckb_xmalloc((size_t)(2 * ng) * (size_t)maxw * sizeof *xs);
    double *ys = ckb_xmalloc((size_t)(2 * ng) * (size_t)maxw * sizeof *ys);
    const char **keys = ckb_xcalloc((size_t)(2 * ng) * (size_t)maxw, sizeof *keys);
    char(*labels)[320] = ckb_xcalloc((size_t)ng, sizeof *labels);
    jb__task *tasks = ckb_xmalloc((size_t)maxw * sizeof *tasks);
    int nsr = 0;
    for (int i = 0; i < s->ng; i++) {
        const ckb_score_group *g = &s->g[i];
        int nt = 0;
        for (int j = 0; j < g->nw; j++)
            tasks[nt++] = (jb__task){isfinite(g->w[j].best_speedup) ? g->w[j].best_speedup : NAN,
                                     g->w[j].id};
        /* Unsolved at 1x, as upstream draws an invalid task (log 0). */
        for (int j = 0; j < nt; j++)
            if (!isfinite(tasks[j].v))
                tasks[j].v = -1;
        qsort(tasks, (size_t)nt, sizeof *tasks, jb__cmp);
        size_t solved = (size_t)(2 * i) * (size_t)maxw, unsolved = solved + (size_t)maxw;
        int ns = 0, nu = 0;
        for (int j = 0; j < nt; j++) {
            int bad = tasks[j].v < 0;
            size_t at = bad ? unsolved + (size_t)nu++ : solved + (size_t)ns++;
            xs[at] = j + 1;
            ys[at] = bad ? 1.0 : tasks[j].v;
            keys[at] = tasks[j].id;
        }
        snprintf(labels[i], sizeof labels[i], "%s: not correct", g->label);
        sr[nsr++] = (ckb_svg_series){.name = g->label, .color = ckb_svg_color(i),
                                     .style = CKB_SVG_MARKERS, .n = ns, .x = xs + solved,
                                     .y = ys + solved, .keys = keys + solved, .marker = 0};
        if (nu)
            sr[nsr++] = (ckb_svg_series){.name = labels[i], .color = ckb_svg_color(i),
                                         .style = CKB_SVG_MARKERS, .n = nu, .x = xs + unsolved,
                                         .y = ys + unsolved, .keys = keys + unsolved,
                                         .marker = 1};
    }
    ckb_strbuf sb = {0};
    ckb_svg_plot(&sb, &f, sr, nsr);
    free(tasks);
    free(labels);
    free(keys);
    free(ys);
    free(xs);
    free(sr);
    return ckb_strbuf_take(&sb);
}

void ckb_report_jaxbench_section(ckb_doc *d, const ckb_score_set *s)
{
    ckb_doc_heading(d, 3, "gen-jaxbench-head", "JAXBench's summary");
    jb__table(d, s);
    ckb_doc_figure(d, "gen-jaxbench-dist", "speedup_distribution.svg",
                   "How the tasks' speedups are spread, per method and model (upstream's "
                   "speedup_distribution): bins of a factor of two.",
                   ckb_report_speedup_distribution(s, "gen-jaxbench-dist-svg"));
    ckb_doc_figure(d, "gen-jaxbench-bars", "speedup_bars.svg",
                   "Every task's speedup from slowest to fastest, per method and model "
                   "(upstream's speedup plot); a task without a correct kernel is a square at 1x.",
                   ckb_report_speedup_bars(s, "gen-jaxbench-bars-svg"));
}
