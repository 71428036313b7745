/* The report's first section: what a researcher came for, before the
 * machine and the tables that back it. */
#include <math.h>
#include <stdio.h>

#include "report/sections.h"
#include "workloads/workload.h"

static const char *headline__num(char *buf, size_t n, double v, int digits, const char *unit)
{
    if (isfinite(v))
        snprintf(buf, n, "%.*f%s", digits, v, unit);
    else
        snprintf(buf, n, "-");
    return buf;
}

/* The geometric mean of the suite's timed, undisturbed expert speedups, and
 * how many workloads it covers. */
static double headline__expert_geomean(const ckb_report_suite *s, int *count)
{
    double logsum = 0;
    *count = 0;
    for (int i = 0; i < s->n; i++) {
        double x = s->w[i].speedup;
        if (s->w[i].expert.present && !s->w[i].disturbed && isfinite(x) && x > 0) {
            logsum += log(x);
            (*count)++;
        }
    }
    return *count ? exp(logsum / *count) : NAN;
}

void ckb_report_headline_section(ckb_doc *d, const ckb_report_suite *s, int n,
                                 const ckb_score_set *runs)
{
    char a[48], b[48], c[48], e[48];
    ckb_doc_heading(d, 2, "headline", "Headline");
    if (runs && runs->ng > 0) {
        ckb_table *t = ckb_doc_table(
            d, "headline-methods",
            "Per method and model: workloads solved, the geometric mean of the best correct "
            "speedup floored at 1x (unsolved = 1x), % of expert, and fast_1 (the share of "
            "workloads with a correct sample faster than the baseline). Disturbed timings are "
            "not counted. Details in the generation section below.",
            5,
            (const char *const[]){"group:Method / model", "solved#:Solved",
                                  "geomean#:Geomean (floored)", "pct_expert#:% of expert",
                                  "fast1#:fast_1"});
        for (int i = 0; i < runs->ng; i++) {
            const ckb_score_group *g = &runs->g[i];
            char link[300];
            ckb_report_group_anchor(link, sizeof link, g);
            int r = ckb_table_row(t, g->label, link);
            ckb_table_set(t, r, 0, "%s", g->label);
            ckb_table_set(t, r, 1, "%d/%d", g->solved,
                          g->covers_suite ? ckb_workload_count() : g->nw);
            ckb_table_set(t, r, 2, "%s", headline__num(a, sizeof a, g->geomean_speedup, 2, "x"));
            ckb_table_set(t, r, 3, "%s", headline__num(b, sizeof b, g->pct_of_expert, 1, "%"));
            ckb_table_set(t, r, 4, "%s",
                          headline__num(c, sizeof c, 100 * ckb_score_fast_p(g, 1.0, g->budget), 1,
                                        "%"));
        }
    }
    if (n > 0) {
        ckb_table *t = ckb_doc_table(
            d, "headline-suites",
            "Per suite: the geometric mean of the experts' speedups over the baseline (timed, "
            "undisturbed), over how many workloads, and the timing noise (one baseline timed "
            "against itself: the ratio that means no difference on that machine).",
            5,
            (const char *const[]){"suite:Suite", "size:Size", "geomean#:Expert geomean",
                                  "n#:Experts", "noise#:Noise ratio"});
        for (int k = 0; k < n; k++) {
            int count;
            double gm = headline__expert_geomean(&s[k], &count);
            int r = ckb_table_row(t, s[k].label, NULL);
            ckb_table_set(t, r, 0, "%s: %s", s[k].label, s[k].path);
            ckb_table_set(t, r, 1, "%s", s[k].size ? s[k].size : "?");
            ckb_table_set(t, r, 2, "%s", headline__num(a, sizeof a, gm, 2, "x"));
            ckb_table_set(t, r, 3, "%d", count);
            ckb_table_set(t, r, 4, "%s", headline__num(e, sizeof e, s[k].noise_ratio, 3, ""));
        }
    }
}
