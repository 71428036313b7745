/* The suite parts of a report (see sections.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "report/escape.h"
#include "report/report.h"
#include "report/sections.h"

/* One number as every table shows it; "-" when unknown. */
static const char *sec__f(char *buf, size_t n, double v, int decimals)
{
    if (!isfinite(v))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.*f", decimals, v);
    return buf;
}

#define F(v, d) sec__f((char[40]){0}, 40, (v), (d))

static const char *sec__s(const char *s) { return s && *s ? s : "-"; }

void ckb_report_workload_anchor(char *buf, size_t n, const char *id)
{
    ckb_esc_id(buf, n, "w-", id);
}

static void sec__bytes(char *buf, size_t n, int64_t b)
{
    if (b <= 0)
        snprintf(buf, n, "-");
    else if (b >= (1 << 20))
        snprintf(buf, n, "%lld MiB", (long long)(b >> 20));
    else
        snprintf(buf, n, "%lld KiB", (long long)(b >> 10));
}

void ckb_report_machine_section(ckb_doc *d, const ckb_report_suite *s, int n)
{
    if (n > CKB_REPORT_MAX_INPUTS)
        n = CKB_REPORT_MAX_INPUTS;
    ckb_doc_heading(d, 2, "machine", "Machine and settings");
    ckb_table *t = ckb_doc_table(d, "machine-table",
                                 "The machine profile each suite ran with (peaks measured by "
                                 "`ckbench machine`), the toolchain and the timing settings",
                                 1, (const char *const[]){"field:Field"});
    for (int k = 0; k < n; k++) {
        char key[16], head[64];
        snprintf(key, sizeof key, "%s", s[k].label);
        snprintf(head, sizeof head, "Suite %s", s[k].label);
        ckb_table_add_col(t, key, head, 0);
    }
    for (int k = 1; k < n; k++) {
        char key[24], head[64];
        snprintf(key, sizeof key, "%s_ratio", s[k].label);
        snprintf(head, sizeof head, "%s / %s", s[k].label, s[0].label);
        ckb_table_add_col(t, key, head, 1);
    }
    enum { ROWS = 28 };
    static const char *const rows[ROWS][2] = {
        {"path", "results file"},        {"host", "host"},
        {"cpu", "CPU"},                  {"isa", "ISA"},
        {"cores", "cores"},              {"threads", "thread budget"},
        {"caches", "L1d / L2 / L3"},     {"f32_peak", "f32 peak GFLOP/s"},
        {"bf16_peak", "compute roof GFLOP/s (bf16 work)"}, {"bw", "DRAM bandwidth GB/s"},
        {"ridge", "ridge (compute roof / DRAM) FLOP/B"}, {"profiled", "profile measured"},
        {"kernel", "kernel"},            {"compiler", "compiler"},
        {"flags", "candidate flags"},    {"onednn", "oneDNN"},
        {"libraries", "libraries"},      {"commit", "ckbench commit"},
        {"started", "run started"},      {"size", "size"},
        {"iters", "warm-up / timed calls"}, {"timing", "timing"},
        {"noise", "timing noise (baseline / itself)"}, {"workloads", "workloads"},
        {"units", "bf16 dot / AMX GFLOP/s"}, {"cachebw", "L2 / L3 read GB/s"},
        {"level", "ISA level"},
        {"speed", "host speed (f32 peak in the run / profile's)"},
    };
    for (int r = 0; r < ROWS; r++) {
        int row = ckb_table_row(t, rows[r][0], NULL);
        ckb_table_set(t, row, 0, "%s", rows[r][1]);
        double val[CKB_REPORT_MAX_INPUTS] = {0};
        int numeric = 0;
        for (int k = 0; k < n; k++) {
            const ckb_report_suite *x = &s[k];
            const ckb_machine *m = &x->machine;
            char a[48], b[48], c[48];
            int col = 1 + k;
            switch (r) {
            case 0: ckb_table_set(t, row, col, "%s", x->path); break;
            case 1: ckb_table_set(t, row, col, "%s", sec__s(x->hostname)); break;
            case 2: ckb_table_set(t, row, col, "%s", sec__s(m->cpu)); break;
            case 3: ckb_table_set(t, row, col, "%s", sec__s(m->isa)); break;
            case 4: ckb_table_set(t, row, col, "%d", m->cores); break;
            case 5: ckb_table_set(t, row, col, "%d", x->threads); break;
            case 6:
                sec__bytes(a, sizeof a, m->l1d);
                sec__bytes(b, sizeof b, m->l2);
                sec__bytes(c, sizeof c, m->l3);
                ckb_table_set(t, row, col, "%s / %s / %s", a, b, c);
                break;
            case 7:
            case 8:
            case 9:
                /* The measured figures, compared across suites by ratio. */
                val[k] = r == 7   ? m->f32_gflops
                         : r == 8 ? ckb_roof_compute(m, CKB_PREC_BF16, NULL)
                                  : m->bw_gbs;
                numeric = 1;
                ckb_table_set(t, row, col, "%s", F(val[k] > 0 ? val[k] : NAN, 1));
                break;
            case 10:
                val[k] = m->bw_gbs > 0 ? ckb_roof_compute(m, CKB_PREC_BF16, NULL) / m->bw_gbs
                                       : NAN;
                ckb_table_set(t, row, col, "%s", F(val[k], 2));
                break;
            case 11: ckb_table_set(t, row, col, "%s", sec__s(m->measured_at)); break;
            case 12: ckb_table_set(t, row, col, "%s", sec__s(x->kernel)); break;
            case 13: ckb_table_set(t, row, col, "%s", sec__s(x->compiler)); break;
            case 14: ckb_table_set(t, row, col, "%s", sec__s(x->compile_flags)); break;
            case 15:
                ckb_table_set(t, row, col, "%s (%s)", sec__s(x->onednn_version),
                              sec__s(x->onednn_isa));
                break;
            case 16: ckb_table_set(t, row, col, "%s", sec__s(x->libraries)); break;
            case 17: ckb_table_set(t, row, col, "%s", sec__s(x->commit)); break;
            case 18: ckb_table_set(t, row, col, "%s", sec__s(x->started_at)); break;
            case 19: ckb_table_set(t, row, col, "%s", sec__s(x->size)); break;
            case 20: ckb_table_set(t, row, col, "%d / %d", x->warmup, x->iters); break;
            case 21: ckb_table_set(t, row, col, "%s", sec__s(x->timing)); break;
            case 22:
                ckb_table_set(t, row, col, "%s (%s)", F(x->noise_ratio, 3),
                              sec__s(x->noise_workload));
                break;
            case 23: ckb_table_set(t, row, col, "%d", x->n); break;
            case 24:
                snprintf(a, sizeof a, "%s", F(m->bf16_dot_gflops > 0 ? m->bf16_dot_gflops : NAN, 1));
                ckb_table_set(t, row, col, "%s / %s", a,
                              F(m->bf16_amx_gflops > 0 ? m->bf16_amx_gflops : NAN, 1));
                break;
            case 25:
                snprintf(a, sizeof a, "%s", F(m->l2_gbs > 0 ? m->l2_gbs : NAN, 1));
                ckb_table_set(t, row, col, "%s / %s", a, F(m->l3_gbs > 0 ? m->l3_gbs : NAN, 1));
                break;
            case 26: ckb_table_set(t, row, col, "%s", sec__s(m->isa_level)); break;
            case 27: ckb_table_set(t, row, col, "%s", F(x->speed_ratio, 2)); break;
            }
        }
        for (int k = 1; numeric && k < n; k++)
            ckb_table_set(t, row, n + k, "%s", F(val[0] > 0 ? val[k] / val[0] : NAN, 2));
    }
}

/* The geometric mean of the finite positive values; NAN when none. */
static double sec__geomean(const double *v, int n, int *used)
{
    double acc = 0;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(v[i]) && v[i] > 0) {
            acc += log(v[i]);
            k++;
        }
    if (used)
        *used = k;
    return k ? exp(acc / k) : NAN;
}

static void sec__suite_table(ckb_doc *d, const ckb_report_suite *s)
{
    char id[32], cap[512];
    snprintf(id, sizeof id, "suite-%s", s->label);
    snprintf(cap, sizeof cap,
             "Suite %s (%s size, %d threads): medians of %d timed calls; GFLOP/s from the "
             "workload's FLOPs; %% of its compute roof (the fastest unit for its precision: "
             "f32 FMA, bf16 dot or AMX); bound against that roof and the memory roof its "
             "working set fits (L2, L3 or DRAM)",
             s->label, sec__s(s->size), s->threads, s->iters);
    static const char *const cols[] = {
        "workload:Workload",          "base_ms#:Baseline ms",
        "expert_ms#:Expert ms",       "speedup#:Speedup (x)",
        "base_gflops#:Baseline GFLOP/s", "expert_gflops#:Expert GFLOP/s",
        "base_pct#:Baseline % peak", "expert_pct#:Expert % peak",
        "ai#:AI (FLOP/B)", "bound:Bound",
        "base_status:Baseline status", "expert_status:Expert status",
    };
    ckb_table *t = ckb_doc_table(d, id, cap, (int)(sizeof cols / sizeof *cols), cols);
    double *sp = ckb_xcalloc((size_t)(s->n ? s->n : 1), sizeof *sp);
    for (int i = 0; i < s->n; i++) {
        const ckb_report_workload *w = &s->w[i];
        char link[128];
        ckb_report_workload_anchor(link, sizeof link, w->id);
        int r = ckb_table_row(t, w->id, link);
        ckb_table_set(t, r, 0, "%s", w->id);
        ckb_table_set(t, r, 1, "%s", F(w->base.median_ms, 3));
        ckb_table_set(t, r, 2, "%s", F(w->expert.median_ms, 3));
        ckb_table_set(t, r, 3, "%s", w->disturbed ? "disturbed" : F(w->speedup, 2));
        ckb_table_set(t, r, 4, "%s", F(w->base.gflops, 1));
        ckb_table_set(t, r, 5, "%s", F(w->expert.gflops, 1));
        ckb_table_set(t, r, 6, "%s", F(w->base.pct_of_peak, 1));
        ckb_table_set(t, r, 7, "%s", F(w->expert.pct_of_peak, 1));
        ckb_table_set(t, r, 8, "%s", F(w->ai, 2));
        ckb_table_set(t, r, 9, "%s", w->bound);
        ckb_table_set(t, r, 10, "%s", w->base.present ? w->base.status : "-");
        ckb_table_set(t, r, 11, "%s", w->expert.present ? w->expert.status : "-");
        sp[i] = w->speedup;
    }
    int used, failed = 0, base_failed = 0, disturbed = 0;
    for (int i = 0; i < s->n; i++) {
        failed += s->w[i].expert.present && strcmp(s->w[i].expert.status, "ok") != 0;
        base_failed += !(s->w[i].base.median_ms > 0);
        disturbed += s->w[i].disturbed;
    }
    double g = sec__geomean(sp, s->n, &used);
    ckb_doc_para(d, NULL,
                 "%d workloads; %d with a correct, timed expert, geometric-mean speedup %s over "
                 "them; %d expert(s) failed; %d baseline(s) not timed.",
                 s->n, used, F(g, 2), failed, base_failed);
    if (disturbed)
        ckb_doc_para(d, "note",
                     "%d workload%s marked disturbed: other work on the machine disturbed the "
                     "timing, so its times are shown but are not figures (no speedup, not in the "
                     "geometric mean, not plotted); `ckbench retime` measures them again.",
                     disturbed, disturbed == 1 ? " is" : "s are");
    free(sp);
}

void ckb_report_suite_section(ckb_doc *d, const ckb_report_suite *s, int n,
                              const ckb_score_set *runs)
{
    ckb_doc_heading(d, 2, "suite", "Suite results");
    for (int k = 0; k < n; k++) {
        char id[32], file[48];
        if (n > 1) {
            snprintf(id, sizeof id, "suite-%s-head", s[k].label);
            ckb_doc_heading(d, 3, id, "Suite %s: %s", s[k].label, s[k].path);
        }
        sec__suite_table(d, &s[k]);
        snprintf(id, sizeof id, "roofline-%s", s[k].label);
        snprintf(file, sizeof file, "roofline-%s.svg", s[k].label);
        const ckb_machine *m = &s[k].machine;
        char cap[768];
        const char *top_unit = NULL;
        double top = ckb_roof_compute(m, CKB_PREC_BF16, &top_unit);
        if (m->bw_gbs > 0 && top > 0)
            snprintf(cap, sizeof cap,
                     "Roofline of suite %s (log-log): roofs from the machine profile (compute "
                     "roof for bf16 work %.1f GFLOP/s from the %s, f32 FMA %.1f GFLOP/s, DRAM "
                     "%.1f GB/s, ridge %.1f FLOP/B; "
                     "dashed: the other units and the L2/L3 roofs a working set in cache "
                     "gets); circles are baselines, squares experts, other markers the best "
                     "kernel of each generation method and model at this size, labelled with "
                     "the workload number. A point above its roof means the profile missed "
                     "the machine's best.",
                     s[k].label, top, ckb_roof_unit_label(top_unit), m->f32_gflops, m->bw_gbs,
                     top / m->bw_gbs);
        else
            snprintf(cap, sizeof cap,
                     "Suite %s: the run recorded no machine peaks, so no roofs are drawn; "
                     "circles are baselines, squares experts.",
                     s[k].label);
        ckb_doc_figure(d, id, file, cap, ckb_report_roofline(&s[k], runs, id));
    }
}

/* The workloads of every suite, each once, in the order first seen. */
static int sec__union(const ckb_report_suite *s, int n, const char ***ids)
{
    int cap = 0, m = 0;
    for (int k = 0; k < n; k++)
        cap += s[k].n;
    *ids = ckb_xcalloc((size_t)(cap ? cap : 1), sizeof **ids);
    for (int k = 0; k < n; k++)
        for (int i = 0; i < s[k].n; i++) {
            int seen = 0;
            for (int j = 0; j < m && !seen; j++)
                seen = strcmp((*ids)[j], s[k].w[i].id) == 0;
            if (!seen)
                (*ids)[m++] = s[k].w[i].id;
        }
    return m;
}

void ckb_report_compare_section(ckb_doc *d, const ckb_report_suite *s, int n)
{
    if (n < 2)
        return;
    ckb_doc_heading(d, 2, "compare", "Comparison");
    ckb_table *t = ckb_doc_table(d, "compare-table",
                                 "Times and speedups of every suite side by side; ratios are "
                                 "times relative to the first suite (below 1: faster than it)",
                                 1, (const char *const[]){"workload:Workload"});
    for (int k = 0; k < n; k++) {
        char key[32], head[64];
        const char *L = s[k].label;
        snprintf(key, sizeof key, "%s_base_ms", L);
        snprintf(head, sizeof head, "%s baseline ms", L);
        ckb_table_add_col(t, key, head, 1);
        snprintf(key, sizeof key, "%s_expert_ms", L);
        snprintf(head, sizeof head, "%s expert ms", L);
        ckb_table_add_col(t, key, head, 1);
        snprintf(key, sizeof key, "%s_speedup", L);
        snprintf(head, sizeof head, "%s speedup", L);
        ckb_table_add_col(t, key, head, 1);
    }
    for (int k = 1; k < n; k++) {
        char key[32], head[64];
        snprintf(key, sizeof key, "%s_base_ratio", s[k].label);
        snprintf(head, sizeof head, "baseline time %s/%s", s[k].label, s[0].label);
        ckb_table_add_col(t, key, head, 1);
        snprintf(key, sizeof key, "%s_expert_ratio", s[k].label);
        snprintf(head, sizeof head, "expert time %s/%s", s[k].label, s[0].label);
        ckb_table_add_col(t, key, head, 1);
    }
    const char **ids;
    int m = sec__union(s, n, &ids);
    /* ratios[k][2*i + v]: suite k's time over the first's, v = baseline/expert */
    double *ratios = ckb_xcalloc((size_t)(n * 2 * (m ? m : 1)), sizeof *ratios);
    for (int i = 0; i < m; i++) {
        char link[128];
        ckb_report_workload_anchor(link, sizeof link, ids[i]);
        int r = ckb_table_row(t, ids[i], link);
        ckb_table_set(t, r, 0, "%s", ids[i]);
        const ckb_report_workload *w0 = ckb_report_suite_find(&s[0], ids[i]);
        for (int k = 0; k < n; k++) {
            const ckb_report_workload *w = ckb_report_suite_find(&s[k], ids[i]);
            ckb_table_set(t, r, 1 + 3 * k, "%s", F(w ? w->base.median_ms : NAN, 3));
            ckb_table_set(t, r, 2 + 3 * k, "%s", F(w ? w->expert.median_ms : NAN, 3));
            ckb_table_set(t, r, 3 + 3 * k, "%s",
                          w && w->disturbed ? "disturbed" : F(w ? w->speedup : NAN, 2));
            if (k == 0)
                continue;
            /* a disturbed timing is no figure to divide by */
            double rb = w && w0 && !w->disturbed && !w0->disturbed
                            ? w->base.median_ms / w0->base.median_ms
                            : NAN;
            double re = w && w0 && w->speedup > 0 && w0->speedup > 0
                            ? w->expert.median_ms / w0->expert.median_ms
                            : NAN;
            ratios[(size_t)k * 2 * (size_t)m + 2 * (size_t)i] = rb;
            ratios[(size_t)k * 2 * (size_t)m + 2 * (size_t)i + 1] = re;
            ckb_table_set(t, r, 3 * n + 2 * (k - 1) + 1, "%s", F(rb, 3));
            ckb_table_set(t, r, 3 * n + 2 * (k - 1) + 2, "%s", F(re, 3));
        }
    }
    int r = ckb_table_row(t, "geomean", NULL);
    ckb_table_set(t, r, 0, "geometric mean");
    for (int k = 1; k < n; k++)
        for (int v = 0; v < 2; v++) {
            double *col = ckb_xmalloc((size_t)(m ? m : 1) * sizeof *col);
            for (int i = 0; i < m; i++)
                col[i] = ratios[(size_t)k * 2 * (size_t)m + 2 * (size_t)i + (size_t)v];
            double g = sec__geomean(col, m, NULL);
            ckb_table_set(t, r, 3 * n + 2 * (k - 1) + 1 + v, "%s", F(g, 3));
            free(col);
        }
    free(ratios);
    free(ids);
}

/* The generation runs' kernels of one workload, in its own section: per
 * method and model, samples, correct ones and the best, linked to the
 * kernel's source in the "Best kernels" section. */
static void sec__generated(ckb_doc *d, const char *anchor, const char *id,
                           const ckb_score_set *runs)
{
    if (!runs || runs->ng == 0)
        return;
    char tid[200];
    snprintf(tid, sizeof tid, "%s-generated", anchor);
    ckb_table *t = ckb_doc_table(
        d, tid, "Generated kernels of this workload: per method and model, the samples, the "
                "correct ones and the best correct speedup (disturbed timings not counted)",
        4, (const char *const[]){"group:Method / model", "samples#:Samples",
                                 "correct#:Correct", "best#:Best speedup (x)"});
    for (int g = 0; g < runs->ng; g++) {
        const ckb_score_group *grp = &runs->g[g];
        for (int i = 0; i < grp->nw; i++) {
            const ckb_score_workload *sw = &grp->w[i];
            if (!sw->id || strcmp(sw->id, id) != 0)
                continue;
            char link[300];
            ckb_report_kernel_anchor(link, sizeof link, grp, id);
            int r = ckb_table_row(t, grp->label, sw->best >= 0 ? link : NULL);
            ckb_table_set(t, r, 0, "%s", grp->label);
            ckb_table_set(t, r, 1, "%d", sw->samples);
            ckb_table_set(t, r, 2, "%d", sw->correct);
            ckb_table_set(t, r, 3, "%s", F(sw->best_speedup, 2));
        }
    }
}

void ckb_report_workload_sections(ckb_doc *d, const ckb_report_suite *s, int n,
                                  const ckb_score_set *runs)
{
    ckb_doc_heading(d, 2, "workloads", "Workloads");
    const char **ids;
    int m = sec__union(s, n, &ids);
    static const char *const cols[] = {
        "suite:Suite",           "base_status:Baseline status", "base_ms#:Baseline ms",
        "base_spread:mean / std / min ms", "expert_status:Expert status",
        "expert_ms#:Expert ms",  "expert_spread:mean / std / min ms", "speedup#:Speedup (x)",
        "expert_gflops#:Expert GFLOP/s", "params:Expert parameters", "error:Error",
    };
    for (int i = 0; i < m; i++) {
        char anchor[128];
        ckb_report_workload_anchor(anchor, sizeof anchor, ids[i]);
        ckb_doc_heading(d, 3, anchor, "%s", ids[i]);
        const ckb_report_workload *w = NULL;
        int wk = 0;
        for (; wk < n && !w; wk++)
            w = ckb_report_suite_find(&s[wk], ids[i]);
        ckb_doc_para(d, NULL,
                     "%s, %s (tags: %s). Dims %s, output %s. %s GFLOP and %s MB moved per "
                     "call: %s FLOP/B, %s-bound on the machine of suite %s.",
                     sec__s(w->model), sec__s(w->op), sec__s(w->tags), sec__s(w->dims),
                     sec__s(w->shape), F(w->flops / 1e9, 4), F(w->bytes / 1e6, 3),
                     F(w->ai, 2), w->bound, s[wk - 1].label);
        char tid[160];
        snprintf(tid, sizeof tid, "%s-results", anchor);
        ckb_table *t = ckb_doc_table(d, tid, NULL, (int)(sizeof cols / sizeof *cols), cols);
        const ckb_report_workload *src = NULL;
        const char *src_label = NULL;
        for (int k = 0; k < n; k++) {
            const ckb_report_workload *x = ckb_report_suite_find(&s[k], ids[i]);
            int r = ckb_table_row(t, s[k].label, NULL);
            ckb_table_set(t, r, 0, "%s", s[k].label);
            if (!x) {
                ckb_table_set(t, r, 10, "not in this suite");
                continue;
            }
            ckb_table_set(t, r, 1, "%s", x->base.present ? x->base.status : "-");
            ckb_table_set(t, r, 2, "%s", F(x->base.median_ms, 3));
            if (x->base.median_ms > 0)
                ckb_table_set(t, r, 3, "%s / %s / %s", F(x->base.mean_ms, 3),
                              F(x->base.std_ms, 3), F(x->base.min_ms, 3));
            ckb_table_set(t, r, 4, "%s", x->expert.present ? x->expert.status : "-");
            ckb_table_set(t, r, 5, "%s", F(x->expert.median_ms, 3));
            if (x->expert.median_ms > 0)
                ckb_table_set(t, r, 6, "%s / %s / %s", F(x->expert.mean_ms, 3),
                              F(x->expert.std_ms, 3), F(x->expert.min_ms, 3));
            ckb_table_set(t, r, 7, "%s", x->disturbed ? "disturbed" : F(x->speedup, 2));
            ckb_table_set(t, r, 8, "%s", F(x->expert.gflops, 1));
            if (x->params)
                ckb_table_set(t, r, 9, "%s%s", x->params, x->tuned ? " (tuned)" : " (defaults)");
            const char *err = x->expert.error ? x->expert.error : x->base.error;
            ckb_table_set(t, r, 10, "%s", sec__s(err));
            if (!src && x->source) {
                src = x;
                src_label = s[k].label;
            }
        }
        for (int k = 0; k < n; k++) {
            const ckb_report_workload *x = ckb_report_suite_find(&s[k], ids[i]);
            if (x && x->source_note)
                ckb_doc_para(d, "note", "Suite %s: %s.", s[k].label, x->source_note);
        }
        if (src) {
            char sum[300];
            snprintf(sum, sizeof sum, "Expert source, as run in suite %s: %s", src_label,
                     src->source_path ? src->source_path : "(the file in this tree)");
            ckb_doc_code(d, sum, src->source);
        }
        sec__generated(d, anchor, ids[i], runs);
    }
    free(ids);
}
