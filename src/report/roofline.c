/* The roofline figure of a suite (see sections.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/sections.h"
#include "report/svg.h"

typedef struct {
    double *x, *y;
    const char **keys, **labels, **tips;
    char (*label_buf)[16], (*tip_buf)[200];
    int n;
} roofline__pts;

static void roofline__alloc(roofline__pts *p, int n)
{
    size_t m = (size_t)(n > 0 ? n : 1);
    p->x = calloc(m, sizeof *p->x);
    p->y = calloc(m, sizeof *p->y);
    p->keys = calloc(m, sizeof *p->keys);
    p->labels = calloc(m, sizeof *p->labels);
    p->tips = calloc(m, sizeof *p->tips);
    p->label_buf = calloc(m, sizeof *p->label_buf);
    p->tip_buf = calloc(m, sizeof *p->tip_buf);
    if (!p->x || !p->y || !p->keys || !p->labels || !p->tips || !p->label_buf || !p->tip_buf) {
        fputs("ckbench: out of memory\n", stderr);
        abort();
    }
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
    int roofs = m->bw_gbs > 0 && m->bf16_gflops > 0;
    double r16 = roofs ? m->bf16_gflops / m->bw_gbs : NAN;
    double r32 = roofs && m->f32_gflops > 0 ? m->f32_gflops / m->bw_gbs : NAN;
    if (roofs) {
        ckb_svg_axis_include(&f.x, r16);
        ckb_svg_axis_include(&f.y, m->bf16_gflops);
        ckb_svg_axis_include(&f.y, m->f32_gflops);
    }
    ckb_svg_axis_finish(&f.x);
    ckb_svg_axis_finish(&f.y);

    /* The roofs, from the profile: bandwidth x AI up to each ridge, then flat. */
    double bwx[2] = {f.x.lo, r16}, bwy[2] = {m->bw_gbs * f.x.lo, m->bf16_gflops};
    double b16x[2] = {r16, f.x.hi}, b16y[2] = {m->bf16_gflops, m->bf16_gflops};
    double f32x[2] = {r32, f.x.hi}, f32y[2] = {m->f32_gflops, m->f32_gflops};
    char n_bw[64], n_16[64], n_32[64];
    snprintf(n_bw, sizeof n_bw, "bandwidth %.1f GB/s", m->bw_gbs);
    snprintf(n_16, sizeof n_16, "bf16 peak %.0f GFLOP/s", m->bf16_gflops);
    snprintf(n_32, sizeof n_32, "f32 peak %.0f GFLOP/s", m->f32_gflops);
    ckb_svg_series sr[5 + 4];
    int ns = 0;
    if (roofs) {
        sr[ns++] = (ckb_svg_series){
            .name = n_bw, .color = "#555555", .style = CKB_SVG_LINE, .n = 2, .x = bwx, .y = bwy};
        sr[ns++] = (ckb_svg_series){
            .name = n_16, .color = "#000000", .style = CKB_SVG_LINE, .n = 2, .x = b16x, .y = b16y};
        if (isfinite(r32))
            sr[ns++] = (ckb_svg_series){.name = n_32,
                                        .color = "#888888",
                                        .style = CKB_SVG_LINE | CKB_SVG_DASHED,
                                        .n = 2,
                                        .x = f32x,
                                        .y = f32y};
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
