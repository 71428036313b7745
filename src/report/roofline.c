/* The roofline figure of a suite (see sections.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "report/sections.h"
#include "report/svg.h"
#include "machine/roofline.h"

typedef struct {
    double *x, *y;
    const char **keys, **labels, **tips;
    char (*label_buf)[16], (*tip_buf)[200];
    int n;
} roofline__pts;

static void roofline__alloc(roofline__pts *p, int n)
{
    size_t m = (size_t)(n > 0 ? n : 1);
    p->x = ckb_xcalloc(m, sizeof *p->x);
    p->y = ckb_xcalloc(m, sizeof *p->y);
    p->keys = ckb_xcalloc(m, sizeof *p->keys);
    p->labels = ckb_xcalloc(m, sizeof *p->labels);
    p->tips = ckb_xcalloc(m, sizeof *p->tips);
    p->label_buf = ckb_xcalloc(m, sizeof *p->label_buf);
    p->tip_buf = ckb_xcalloc(m, sizeof *p->tip_buf);
    p->n = 0;
}

static void roofline__free(roofline__pts *p)
{
    free(p->x);
    free(p->y);
    free(p->keys);
    free(p->labels);
    free(p->tips);
    free(p->label_buf);
    free(p->tip_buf);
}

static void roofline__add(roofline__pts *p, const ckb_report_workload *w,
                          const ckb_report_variant *v, const char *variant)
{
    if (!(v->gflops > 0) || !(w->ai > 0))
        return;
    int i = p->n++;
    p->x[i] = w->ai;
    p->y[i] = v->gflops;
    p->keys[i] = w->id;
    /* The workload's number ("8p") keeps 100 labels readable. */
    size_t k = strcspn(w->id, "_");
    snprintf(p->label_buf[i], sizeof p->label_buf[i], "%.*s", (int)(k < 15 ? k : 15), w->id);
    p->labels[i] = p->label_buf[i];
    snprintf(p->tip_buf[i], sizeof p->tip_buf[i], "%s %s: %.3f ms, %.1f GFLOP/s, %.1f FLOP/B",
             w->id, variant, v->median_ms, v->gflops, w->ai);
    p->tips[i] = p->tip_buf[i];
}

/* A method's best kernels: the workload's FLOPs (the suite baseline's
 * GFLOP/s times its median) over the best correct sample's median, for runs
 * at the suite's size only (other sizes are other problems). */
static void roofline__add_group(roofline__pts *p, const ckb_report_suite *s,
                                const ckb_score_set *runs, const ckb_score_group *g)
{
    for (int k = 0; k < g->nw; k++) {
        const ckb_score_workload *sw = &g->w[k];
        const ckb_report_workload *w = ckb_report_suite_find(s, sw->id);
        if (!w || sw->best < 0 || !(w->base.gflops > 0) || !(w->base.median_ms > 0))
            continue;
        const ckb_score_sample *b = sw->pool[sw->best];
        const ckb_score_run *r = &runs->runs[sw->run_of[sw->best]];
        if (!(b->cand_ms > 0) || !s->size || strcmp(r->size, s->size) != 0)
            continue;
        ckb_report_variant v = {.median_ms = b->cand_ms,
                                .gflops = w->base.gflops * w->base.median_ms / b->cand_ms};
        roofline__add(p, w, &v, g->label);
    }
}

char *ckb_report_roofline(const ckb_report_suite *s, const ckb_score_set *runs, const char *id)
{
    const ckb_machine *m = &s->machine;
    roofline__pts base, exp, gen[4];
    int ngen = runs ? (runs->ng < 4 ? runs->ng : 4) : 0; /* more would not stay readable */
    roofline__alloc(&base, s->n);
    roofline__alloc(&exp, s->n);
    for (int i = 0; i < s->n; i++) {
        roofline__add(&base, &s->w[i], &s->w[i].base, "baseline");
        if (s->w[i].expert.present && strcmp(s->w[i].expert.status, "ok") == 0)
            roofline__add(&exp, &s->w[i], &s->w[i].expert, "expert");
    }
    for (int k = 0; k < ngen; k++) {
        roofline__alloc(&gen[k], s->n);
        roofline__add_group(&gen[k], s, runs, &runs->g[k]);
    }
    ckb_svg_frame f = {0};
    char title[96];
    snprintf(title, sizeof title, "Roofline, suite %s", s->label);
    f.id = id;
    f.title = title;
    f.width = 860;
    f.height = 520;
    ckb_svg_axis_init(&f.x, 1, "arithmetic intensity (FLOP/byte)");
    ckb_svg_axis_init(&f.y, 1, "GFLOP/s");
    for (int i = 0; i < base.n; i++) {
        ckb_svg_axis_include(&f.x, base.x[i]);
        ckb_svg_axis_include(&f.y, base.y[i]);
    }
    for (int i = 0; i < exp.n; i++) {
        ckb_svg_axis_include(&f.x, exp.x[i]);
        ckb_svg_axis_include(&f.y, exp.y[i]);
    }
    for (int k = 0; k < ngen; k++)
        for (int i = 0; i < gen[k].n; i++) {
            ckb_svg_axis_include(&f.x, gen[k].x[i]);
            ckb_svg_axis_include(&f.y, gen[k].y[i]);
        }
    /* The roofs of the one model (machine/roofline.h): every compute unit
     * the profile measured and every memory level, each memory line up to
     * the top compute roof, each compute roof from its ridge with the
     * fastest memory level. The solid pair is the bf16 roof over DRAM. */
    const char *top_unit;
    double top = ckb_roof_compute(m, CKB_PREC_BF16, &top_unit);
    int roofs = m->bw_gbs > 0 && top > 0;
    double fastest_bw = m->bw_gbs;
    if (m->l3_gbs > fastest_bw)
        fastest_bw = m->l3_gbs;
    if (m->l2_gbs > fastest_bw)
        fastest_bw = m->l2_gbs;
    if (roofs) {
        ckb_svg_axis_include(&f.x, top / m->bw_gbs);
        ckb_svg_axis_include(&f.y, top);
        ckb_svg_axis_include(&f.y, m->f32_gflops);
    }
    ckb_svg_axis_finish(&f.x);
    ckb_svg_axis_finish(&f.y);

    struct {
        double v;
        const char *what;
        int memory;
    } lines[6] = {
        {m->bw_gbs, "DRAM", 1},
        {m->l3_gbs, "L3", 1},
        {m->l2_gbs, "L2", 1},
        {m->f32_gflops, "f32 FMA", 0},
        {m->bf16_dot_gflops, "bf16 dot", 0},
        {m->bf16_amx_gflops, "AMX", 0},
    };
    /* a profile that gives only the bf16 roof (older results): that line */
    if (top > m->f32_gflops && top > m->bf16_dot_gflops && top > m->bf16_amx_gflops)
        lines[4].v = top, lines[4].what = "bf16";
    double lx[6][2], ly[6][2];
    char names[6][64];
    ckb_svg_series sr[6 + 2 + 4];
    int ns = 0;
    for (int i = 0; roofs && i < 6; i++) {
        double v = lines[i].v;
        if (!(v > 0))
            continue;
        if (lines[i].memory) {
            lx[i][0] = f.x.lo, ly[i][0] = v * f.x.lo;
            lx[i][1] = top / v, ly[i][1] = top;
            snprintf(names[i], sizeof names[i], "%s %.1f GB/s", lines[i].what, v);
        } else {
            lx[i][0] = v / fastest_bw, ly[i][0] = v;
            lx[i][1] = f.x.hi, ly[i][1] = v;
            snprintf(names[i], sizeof names[i], "%s %.0f GFLOP/s", lines[i].what, v);
        }
        int solid = i == 0 || (!lines[i].memory && v == top);
        sr[ns++] = (ckb_svg_series){.name = names[i],
                                    .color = solid ? "#000000" : "#888888",
                                    .style = CKB_SVG_LINE | (solid ? 0 : CKB_SVG_DASHED),
                                    .n = 2,
                                    .x = lx[i],
                                    .y = ly[i]};
    }
    sr[ns++] = (ckb_svg_series){.name = "baseline",
                                .color = ckb_svg_color(0),
                                .style = CKB_SVG_MARKERS,
                                .n = base.n,
                                .x = base.x,
                                .y = base.y,
                                .labels = base.labels,
                                .keys = base.keys,
                                .tips = base.tips,
                                .marker = 0};
    sr[ns++] = (ckb_svg_series){.name = "expert",
                                .color = ckb_svg_color(1),
                                .style = CKB_SVG_MARKERS,
                                .n = exp.n,
                                .x = exp.x,
                                .y = exp.y,
                                .labels = exp.labels,
                                .keys = exp.keys,
                                .tips = exp.tips,
                                .marker = 1};
    for (int k = 0; k < ngen; k++)
        sr[ns++] = (ckb_svg_series){.name = runs->g[k].label,
                                    .color = ckb_svg_color(2 + k),
                                    .style = CKB_SVG_MARKERS,
                                    .n = gen[k].n,
                                    .x = gen[k].x,
                                    .y = gen[k].y,
                                    .labels = gen[k].labels,
                                    .keys = gen[k].keys,
                                    .tips = gen[k].tips,
                                    .marker = 2 + k};
    ckb_strbuf sb = {0};
    ckb_svg_plot(&sb, &f, sr, ns);
    roofline__free(&base);
    roofline__free(&exp);
    for (int k = 0; k < ngen; k++)
        roofline__free(&gen[k]);
    return ckb_strbuf_take(&sb);
}
