/*
 * svg.h — plots drawn as SVG text, for the HTML report (inlined) and the
 * Markdown report (separate .svg files). Two kinds cover every figure:
 *   ckb_svg_plot          x/y axes, linear or log10 each, with series drawn
 *                         as markers (scatter, roofline points), lines
 *                         (roofs, fast_p curves, correctness vs samples) or both;
 *   ckb_svg_stacked_bars  one bar per category, split in segments (failure
 *                         taxonomy per method).
 * Every data mark is one element with class "pt" (markers) or "bar"
 * (segments) and data- attributes holding its values, so tests and scripts
 * read the figure's numbers from the DOM. Every string is HTML-escaped.
 */
#ifndef CKB_REPORT_SVG_H
#define CKB_REPORT_SVG_H

#include "core/strbuf.h"

typedef struct {
    double lo, hi;          /* the range drawn; log axes need lo > 0 */
    int log;                /* 1: log10 scale */
    const char *label;
} ckb_svg_axis;

typedef struct {
    const char *id;         /* id of the <svg> element (may be NULL) */
    const char *title;
    int width, height;      /* pixels; 0 picks 720 x 440 */
    ckb_svg_axis x, y;
} ckb_svg_frame;

enum {
    CKB_SVG_MARKERS = 1,    /* a marker per point, with data- attributes */
    CKB_SVG_LINE = 2,       /* a polyline through the points in order */
    CKB_SVG_DASHED = 4,     /* the line dashed */
    CKB_SVG_NOLEGEND = 8,   /* leave the series out of the legend */
};

typedef struct {
    const char *name;           /* legend text and data-series */
    const char *color;          /* CSS colour; NULL picks from the palette */
    int style;                  /* CKB_SVG_* flags */
    int n;
    const double *x, *y;        /* non-finite (and, on a log axis, <= 0) points are skipped */
    const char *const *labels;  /* text drawn beside each marker, or NULL */
    const char *const *keys;    /* data-key of each marker (e.g. a workload id), or NULL */
    const char *const *tips;    /* hover text of each marker, or NULL */
    int marker;                 /* 0 circle, 1 square, 2 diamond */
} ckb_svg_series;

/* An empty axis: include values, then finish. */
void ckb_svg_axis_init(ckb_svg_axis *a, int log, const char *label);
/* Widens the range to hold v (ignored when not finite, or <= 0 on a log axis). */
void ckb_svg_axis_include(ckb_svg_axis *a, double v);
/* Rounds the range out to whole decades (log) or tick steps (linear); an
 * empty or one-value range gets a sensible width. */
void ckb_svg_axis_finish(ckb_svg_axis *a);

/* Appends one <svg> element: frame, ticks, grid, series in order, legend. */
void ckb_svg_plot(ckb_strbuf *out, const ckb_svg_frame *f, const ckb_svg_series *s, int ns);

typedef struct {
    const char *id, *title, *ylabel;
    int width, height;          /* 0 picks 720 x 400 */
    int ncat, nseg;
    const char *const *cats;    /* category (bar) names */
    const char *const *segs;    /* segment names, in stacking order from the bottom */
    const char *const *colors;  /* per segment; NULL picks from the palette */
    const double *values;       /* ncat x nseg, row-major; negative or non-finite = 0 */
} ckb_svg_bars;

/* Appends one <svg> element of stacked bars with a legend. */
void ckb_svg_stacked_bars(ckb_strbuf *out, const ckb_svg_bars *b);

/* Colour i of the palette (Okabe-Ito, told apart by colour-blind readers). */
const char *ckb_svg_color(int i);

#endif /* CKB_REPORT_SVG_H */
