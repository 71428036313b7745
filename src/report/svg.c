#include "report/svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/escape.h"

enum { SVG_ML = 70, SVG_MR = 20, SVG_MT = 34, SVG_MB = 48, SVG_LEGEND_ROW = 18 };

static const char *const svg__palette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                           "#E69F00", "#56B4E9", "#000000", "#F0E442"};

const char *ckb_svg_color(int i)
{
    int n = (int)(sizeof svg__palette / sizeof *svg__palette);
    return svg__palette[((i % n) + n) % n];
}

void ckb_svg_axis_init(ckb_svg_axis *a, int log, const char *label)
{
    a->lo = INFINITY;
    a->hi = -INFINITY;
    a->log = log;
    a->label = label;
}

void ckb_svg_axis_include(ckb_svg_axis *a, double v)
{
    if (!isfinite(v) || (a->log && v <= 0))
        return;
    if (v < a->lo)
        a->lo = v;
    if (v > a->hi)
        a->hi = v;
}

/* 1, 2 or 5 times a power of ten, near span/5. */
static double svg__step(double span)
{
    double raw = span / 5, p = pow(10, floor(log10(raw))), m = raw / p;
    return p * (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10);
}

void ckb_svg_axis_finish(ckb_svg_axis *a)
{
    if (!(a->lo <= a->hi)) {
        a->lo = a->log ? 1 : 0;
        a->hi = a->log ? 10 : 1;
    }
    if (a->log) {
        a->lo = pow(10, floor(log10(a->lo)));
        a->hi = pow(10, ceil(log10(a->hi)));
        if (a->hi <= a->lo)
            a->hi = a->lo * 10;
        return;
    }
    if (a->hi == a->lo) {
        double d = a->lo != 0 ? fabs(a->lo) * 0.1 : 1;
        a->lo -= d;
        a->hi += d;
    }
    double st = svg__step(a->hi - a->lo);
    a->lo = floor(a->lo / st) * st;
    a->hi = ceil(a->hi / st) * st;
}

typedef struct {
    const ckb_svg_axis *ax;
    double p0, p1; /* pixel positions of lo and hi */
} svg__scale;

static double svg__t(const ckb_svg_axis *a, double v) { return a->log ? log10(v) : v; }

static double svg__map(const svg__scale *s, double v)
{
    double t0 = svg__t(s->ax, s->ax->lo), t1 = svg__t(s->ax, s->ax->hi);
    return s->p0 + (svg__t(s->ax, v) - t0) / (t1 - t0) * (s->p1 - s->p0);
}

static int svg__drawable(const ckb_svg_axis *a, double v)
{
    return isfinite(v) && !(a->log && v <= 0);
}

/* Tick values of an axis: decades (with 2 and 5 on short log axes) or steps. */
static int svg__ticks(const ckb_svg_axis *a, double *t, int max)
{
    int n = 0;
    if (a->log) {
        int k0 = (int)floor(log10(a->lo) + 1e-9), k1 = (int)ceil(log10(a->hi) - 1e-9);
        int fine = k1 - k0 <= 2;
        for (int k = k0; k <= k1 && n < max; k++)
            for (int m = 1; m <= 5 && n < max; m += (m == 1 ? 1 : 3)) {
                double v = m * pow(10, k);
                if ((m == 1 || fine) && v >= a->lo * (1 - 1e-9) && v <= a->hi * (1 + 1e-9))
                    t[n++] = v;
            }
        return n;
    }
    double st = svg__step(a->hi - a->lo);
    for (double v = ceil(a->lo / st - 1e-9) * st; v <= a->hi + st * 1e-9 && n < max; v += st)
        t[n++] = fabs(v) < st * 1e-9 ? 0 : v;
    return n;
}

static void svg__open(ckb_strbuf *o, const char *id, const char *cls, const char *title, int w,
                      int h)
{
    ckb_strbuf_printf(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"%s\" width=\"%d\" "
                         "height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\"",
                      cls, w, h, w, h);
    if (id) {
        ckb_strbuf_printf(o, " id=\"");
        ckb_esc_html(o, id);
        ckb_strbuf_printf(o, "\"");
    }
    ckb_strbuf_printf(o, " font-family=\"sans-serif\" font-size=\"12\">\n<title>");
    ckb_esc_html(o, title ? title : "");
    ckb_strbuf_printf(o, "</title>\n<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", w, h);
    if (title) {
        ckb_strbuf_printf(o, "<text x=\"%d\" y=\"20\" text-anchor=\"middle\" font-size=\"14\" "
                             "font-weight=\"bold\">",
                          w / 2);
        ckb_esc_html(o, title);
        ckb_strbuf_printf(o, "</text>\n");
    }
}

static void svg__num(char *buf, size_t n, double v)
{
    if (fabs(v) >= 1e5 || (v != 0 && fabs(v) < 1e-3))
        snprintf(buf, n, "%.0e", v);
    else
        snprintf(buf, n, "%g", v);
}

/* Legend entries laid out in rows under the plot; returns the rows used. */
static void svg__marker(ckb_strbuf *o, int shape, double x, double y, const char *color);

/* style[i]: 0 a line, 1 a dashed line, 2 + k marker shape k. */
static int svg__legend(ckb_strbuf *o, int w, int y0, int n, const char *const *names,
                       const char *const *colors, const int *style, int draw)
{
    int x = SVG_ML, rows = n > 0;
    for (int i = 0; i < n; i++) {
        int iw = 28 + 7 * (int)strlen(names[i]) + 16;
        if (x + iw > w - SVG_MR && x > SVG_ML) {
            x = SVG_ML;
            rows++;
        }
        int y = y0 + (rows - 1) * SVG_LEGEND_ROW;
        if (draw) {
            int st = style ? style[i] : 0;
            ckb_strbuf_printf(o, "<g class=\"legend-item\">");
            if (st >= 2) {
                svg__marker(o, st - 2, x + 11, y - 4, colors[i]);
                ckb_strbuf_printf(o, "/>");
            } else {
                ckb_strbuf_printf(o, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
                                     "stroke-width=\"3\"%s/>",
                                  x, y - 4, x + 22, y - 4, colors[i],
                                  st == 1 ? " stroke-dasharray=\"6 4\"" : "");
            }
            ckb_strbuf_printf(o, "<text x=\"%d\" y=\"%d\">", x + 28, y);
            ckb_esc_html(o, names[i]);
            ckb_strbuf_printf(o, "</text></g>\n");
        }
        x += iw;
    }
    return rows;
}

static void svg__marker(ckb_strbuf *o, int shape, double x, double y, const char *color)
{
    if (shape % 3 == 0)
        ckb_strbuf_printf(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"%s\"", x, y, color);
    else if (shape % 3 == 1)
        ckb_strbuf_printf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"8\" height=\"8\" fill=\"%s\"",
                          x - 4, y - 4, color);
    else
        ckb_strbuf_printf(o, "<path d=\"M%.1f %.1fl5 5l-5 5l-5 -5z\" fill=\"%s\"", x, y - 5,
                          color);
}

static void svg__axes(ckb_strbuf *o, const svg__scale *sx, const svg__scale *sy, int pb)
{
    double t[64];
    int n = svg__ticks(sx->ax, t, 64);
    char buf[32];
    for (int i = 0; i < n; i++) {
        double x = svg__map(sx, t[i]);
        svg__num(buf, sizeof buf, t[i]);
        ckb_strbuf_printf(o, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                             "stroke=\"#ddd\"/><text x=\"%.1f\" y=\"%d\" "
                             "text-anchor=\"middle\">%s</text>\n",
                          x, sy->p1, x, sy->p0, x, pb + 16, buf);
    }
    n = svg__ticks(sy->ax, t, 64);
    for (int i = 0; i < n; i++) {
        double y = svg__map(sy, t[i]);
        svg__num(buf, sizeof buf, t[i]);
        ckb_strbuf_printf(o, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                             "stroke=\"#ddd\"/><text x=\"%d\" y=\"%.1f\" "
                             "text-anchor=\"end\">%s</text>\n",
                          sx->p0, y, sx->p1, y, SVG_ML - 6, y + 4, buf);
    }
    ckb_strbuf_printf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
                         "stroke=\"#444\"/>\n",
                      sx->p0, sy->p1, sx->p1 - sx->p0, sy->p0 - sy->p1);
    ckb_strbuf_printf(o, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">",
                      (sx->p0 + sx->p1) / 2, pb + 34);
    ckb_esc_html(o, sx->ax->label ? sx->ax->label : "");
    ckb_strbuf_printf(o, "</text>\n<text transform=\"translate(16 %.1f) rotate(-90)\" "
                         "text-anchor=\"middle\">",
                      (sy->p0 + sy->p1) / 2);
    ckb_esc_html(o, sy->ax->label ? sy->ax->label : "");
    ckb_strbuf_printf(o, "</text>\n");
}

static void svg__attr(ckb_strbuf *o, const char *name, const char *v)
{
    ckb_strbuf_printf(o, " %s=\"", name);
    ckb_esc_html(o, v);
    ckb_strbuf_printf(o, "\"");
}

/* Point labels already placed in a plot, so that a new one goes where it
 * overlaps none (a crowded roofline has many points close together). */
enum { SVG_MAX_LABELS = 512, SVG_LABEL_H = 11 };
typedef struct {
    double x0[SVG_MAX_LABELS], y0[SVG_MAX_LABELS], x1[SVG_MAX_LABELS], y1[SVG_MAX_LABELS];
    int n;
} svg__placed;

static int svg__overlaps(const svg__placed *pl, double x0, double y0, double x1, double y1)
{
    for (int i = 0; i < pl->n; i++)
        if (x0 < pl->x1[i] && pl->x0[i] < x1 && y0 < pl->y1[i] && pl->y0[i] < y1)
            return 1;
    return 0;
}

/* Where the label of the point (px, py) goes: beside it on the right, then
 * below, then on the left, then further up or down, the first free place
 * (the first candidate when none is). The baseline's x and y are returned. */
static void svg__place_label(svg__placed *pl, double px, double py, const char *text, double *lx,
                             double *ly)
{
    double w = 6.0 * (double)strlen(text);
    const double dx[4] = {6, 6, -6 - w, -6 - w}, dy[4] = {-6, 14, -6, 14};
    int found = 0;
    for (int step = 0; step < 6 && !found; step++)
        for (int c = 0; c < 4 && !found; c++) {
            double shift = (c % 2 ? 1 : -1) * step * SVG_LABEL_H;
            double x = px + dx[c], y = py + dy[c] + shift;
            if (!svg__overlaps(pl, x, y - SVG_LABEL_H + 2, x + w, y + 2)) {
                *lx = x, *ly = y;
                found = 1;
            }
        }
    if (!found)
        *lx = px + 6, *ly = py - 6;
    if (pl->n < SVG_MAX_LABELS) {
        pl->x0[pl->n] = *lx, pl->y0[pl->n] = *ly - SVG_LABEL_H + 2;
        pl->x1[pl->n] = *lx + w, pl->y1[pl->n] = *ly + 2;
        pl->n++;
    }
}

void ckb_svg_plot(ckb_strbuf *o, const ckb_svg_frame *f, const ckb_svg_series *s, int ns)
{
    svg__placed placed = {.n = 0};
    int w = f->width > 0 ? f->width : 720, h = f->height > 0 ? f->height : 440;
    const char *names[64], *colors[64];
    int lstyle[64], nl = 0;
    for (int i = 0; i < ns && nl < 64; i++)
        if (!(s[i].style & CKB_SVG_NOLEGEND)) {
            names[nl] = s[i].name ? s[i].name : "";
            colors[nl] = s[i].color ? s[i].color : ckb_svg_color(i);
            lstyle[nl++] = (s[i].style & CKB_SVG_LINE) ? (s[i].style & CKB_SVG_DASHED) != 0
                                                       : 2 + s[i].marker;
        }
    int rows = svg__legend(o, w, 0, nl, names, colors, lstyle, 0);
    int pb = h - SVG_MB - rows * SVG_LEGEND_ROW; /* bottom of the plot area */
    svg__scale sx = {&f->x, SVG_ML, w - SVG_MR}, sy = {&f->y, pb, SVG_MT};
    svg__open(o, f->id, "plot", f->title, w, h);
    svg__axes(o, &sx, &sy, pb);

    /* Clipped to the plot area: a roof or point beyond the range stays inside. */
    char clip[160];
    ckb_esc_id(clip, sizeof clip, "clip-", f->id ? f->id : "plot");
    ckb_strbuf_printf(o, "<clipPath id=\"%s\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                         "height=\"%.1f\"/></clipPath>\n<g clip-path=\"url(#%s)\">\n",
                      clip, sx.p0, sy.p1, sx.p1 - sx.p0, sy.p0 - sy.p1, clip);
    for (int i = 0; i < ns; i++) {
        const ckb_svg_series *e = &s[i];
        const char *color = e->color ? e->color : ckb_svg_color(i);
        ckb_strbuf_printf(o, "<g class=\"series\"");
        svg__attr(o, "data-series", e->name ? e->name : "");
        ckb_strbuf_printf(o, ">\n");
        if (e->style & CKB_SVG_LINE) {
            int open = 0;
            for (int k = 0; k <= e->n; k++) {
                int ok = k < e->n && svg__drawable(&f->x, e->x[k]) &&
                         svg__drawable(&f->y, e->y[k]);
                if (ok && !open) {
                    ckb_strbuf_printf(o, "<polyline fill=\"none\" stroke=\"%s\" "
                                         "stroke-width=\"2\"%s points=\"",
                                      color,
                                      e->style & CKB_SVG_DASHED ? " stroke-dasharray=\"6 4\"" : "");
                    open = 1;
                }
                if (ok)
                    ckb_strbuf_printf(o, "%.1f,%.1f ", svg__map(&sx, e->x[k]),
                                      svg__map(&sy, e->y[k]));
                else if (open) {
                    ckb_strbuf_printf(o, "\"/>\n");
                    open = 0;
                }
            }
        }
        for (int k = 0; (e->style & CKB_SVG_MARKERS) && k < e->n; k++) {
            if (!svg__drawable(&f->x, e->x[k]) || !svg__drawable(&f->y, e->y[k]))
                continue;
            double px = svg__map(&sx, e->x[k]), py = svg__map(&sy, e->y[k]);
            svg__marker(o, e->marker, px, py, color);
            ckb_strbuf_printf(o, " class=\"pt\"");
            svg__attr(o, "data-series", e->name ? e->name : "");
            if (e->keys)
                svg__attr(o, "data-key", e->keys[k]);
            ckb_strbuf_printf(o, " data-x=\"%.6g\" data-y=\"%.6g\"><title>", e->x[k], e->y[k]);
            ckb_esc_html(o, e->tips ? e->tips[k] : e->keys ? e->keys[k] : "");
            ckb_strbuf_printf(o, "</title>%s\n",
                              e->marker % 3 == 0   ? "</circle>"
                              : e->marker % 3 == 1 ? "</rect>"
                                                   : "</path>");
            if (e->labels && e->labels[k]) {
                double lx, ly;
                svg__place_label(&placed, px, py, e->labels[k], &lx, &ly);
                ckb_strbuf_printf(o, "<text class=\"pt-label\" x=\"%.1f\" y=\"%.1f\" "
                                     "font-size=\"10\" fill=\"%s\">",
                                  lx, ly, color);
                ckb_esc_html(o, e->labels[k]);
                ckb_strbuf_printf(o, "</text>\n");
            }
        }
        ckb_strbuf_printf(o, "</g>\n");
    }
    ckb_strbuf_printf(o, "</g>\n");
    svg__legend(o, w, pb + 44 + 12, nl, names, colors, lstyle, 1);
    ckb_strbuf_printf(o, "</svg>\n");
}

void ckb_svg_stacked_bars(ckb_strbuf *o, const ckb_svg_bars *b)
{
    int w = b->width > 0 ? b->width : 720, h = b->height > 0 ? b->height : 400;
    const char *colors[64], *names[64];
    int nseg = b->nseg < 64 ? b->nseg : 64;
    for (int j = 0; j < nseg; j++) {
        colors[j] = b->colors && b->colors[j] ? b->colors[j] : ckb_svg_color(j);
        names[j] = b->segs[j] ? b->segs[j] : "";
    }
    int rows = svg__legend(o, w, 0, nseg, names, colors, NULL, 0);
    int pb = h - SVG_MB - rows * SVG_LEGEND_ROW;
    ckb_svg_axis ya;
    ckb_svg_axis_init(&ya, 0, b->ylabel);
    ckb_svg_axis_include(&ya, 0);
    for (int i = 0; i < b->ncat; i++) {
        double tot = 0;
        for (int j = 0; j < nseg; j++) {
            double v = b->values[(size_t)i * (size_t)b->nseg + (size_t)j];
            tot += isfinite(v) && v > 0 ? v : 0;
        }
        ckb_svg_axis_include(&ya, tot);
    }
    ckb_svg_axis_finish(&ya);
    /* The x axis is categorical: an empty label axis spans the bars. */
    ckb_svg_axis xa = {0, b->ncat > 0 ? b->ncat : 1, 0, NULL};
    svg__scale sx = {&xa, SVG_ML, w - SVG_MR}, sy = {&ya, pb, SVG_MT};
    svg__open(o, b->id, "bars", b->title, w, h);
    double t[64];
    int nt = svg__ticks(&ya, t, 64);
    char buf[32];
    for (int k = 0; k < nt; k++) {
        double y = svg__map(&sy, t[k]);
        svg__num(buf, sizeof buf, t[k]);
        ckb_strbuf_printf(o, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                             "stroke=\"#ddd\"/><text x=\"%d\" y=\"%.1f\" "
                             "text-anchor=\"end\">%s</text>\n",
                          sx.p0, y, sx.p1, y, SVG_ML - 6, y + 4, buf);
    }
    ckb_strbuf_printf(o, "<text transform=\"translate(16 %.1f) rotate(-90)\" "
                         "text-anchor=\"middle\">",
                      (sy.p0 + sy.p1) / 2);
    ckb_esc_html(o, b->ylabel ? b->ylabel : "");
    ckb_strbuf_printf(o, "</text>\n");
    double slot = (sx.p1 - sx.p0) / (b->ncat > 0 ? b->ncat : 1), bw = slot * 0.6;
    for (int i = 0; i < b->ncat; i++) {
        double x = sx.p0 + slot * i + (slot - bw) / 2, acc = 0;
        ckb_strbuf_printf(o, "<g class=\"bar-group\"");
        svg__attr(o, "data-cat", b->cats[i] ? b->cats[i] : "");
        ckb_strbuf_printf(o, ">\n");
        for (int j = 0; j < nseg; j++) {
            double v = b->values[(size_t)i * (size_t)b->nseg + (size_t)j];
            v = isfinite(v) && v > 0 ? v : 0;
            double y0 = svg__map(&sy, acc), y1 = svg__map(&sy, acc + v);
            acc += v;
            ckb_strbuf_printf(o, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                                 "height=\"%.1f\" fill=\"%s\"",
                              x, y1, bw, y0 - y1, colors[j]);
            svg__attr(o, "data-cat", b->cats[i] ? b->cats[i] : "");
            svg__attr(o, "data-seg", names[j]);
            ckb_strbuf_printf(o, " data-value=\"%.6g\"><title>", v);
            ckb_esc_html(o, b->cats[i] ? b->cats[i] : "");
            ckb_strbuf_printf(o, ": ");
            ckb_esc_html(o, names[j]);
            ckb_strbuf_printf(o, " %.6g</title></rect>\n", v);
        }
        ckb_strbuf_printf(o, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", x + bw / 2,
                          pb + 16);
        ckb_esc_html(o, b->cats[i] ? b->cats[i] : "");
        ckb_strbuf_printf(o, "</text>\n</g>\n");
    }
    ckb_strbuf_printf(o,
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>\n",
                      sx.p0, sy.p0, sx.p1, sy.p0);
    svg__legend(o, w, pb + 44 + 12, nseg, names, colors, NULL, 1);
    ckb_strbuf_printf(o, "</svg>\n");
}
