/* The text tables of `ckbench score` (see score.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "score/score.h"
#include "workloads/workload.h"

/* An aligned table: cells collected, then printed with each column as wide
 * as its widest cell; column 0 left-aligned, the others right-aligned. */
enum { ST_MAXCOLS = 40 };

typedef struct {
    int ncols, nrows;
    char **cells; /* nrows x ST_MAXCOLS, owned */
} st_table;

static void st__row(st_table *t)
{
    t->cells = ckb_xrealloc(t->cells, (size_t)(t->nrows + 1) * ST_MAXCOLS * sizeof *t->cells);
    memset(t->cells + (size_t)t->nrows * ST_MAXCOLS, 0, ST_MAXCOLS * sizeof *t->cells);
    t->nrows++;
}

static void st__set(st_table *t, int col, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void st__set(st_table *t, int col, const char *fmt, ...)
{
    if (col >= ST_MAXCOLS)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    char **c = &t->cells[(size_t)(t->nrows - 1) * ST_MAXCOLS + (size_t)col];
    free(*c);
    *c = s;
    if (col + 1 > t->ncols)
        t->ncols = col + 1;
}

static void st__print(st_table *t, ckb_strbuf *out)
{
    int w[ST_MAXCOLS] = {0};
    for (int r = 0; r < t->nrows; r++)
        for (int c = 0; c < t->ncols; c++) {
            const char *s = t->cells[(size_t)r * ST_MAXCOLS + (size_t)c];
            int l = s ? (int)strlen(s) : 0;
            if (l > w[c])
                w[c] = l;
        }
    for (int r = 0; r < t->nrows; r++) {
        for (int c = 0; c < t->ncols; c++) {
            const char *s = t->cells[(size_t)r * ST_MAXCOLS + (size_t)c];
            ckb_strbuf_printf(out, c == 0 ? "%-*s" : "  %*s", w[c], s ? s : "");
        }
        /* No trailing blanks after a left-aligned last column. */
        while (out->len && out->data[out->len - 1] == ' ')
            out->data[--out->len] = '\0';
        ckb_strbuf_printf(out, "\n");
    }
    for (int i = 0; i < t->nrows * ST_MAXCOLS; i++)
        free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}

/* A share as a percentage, a speedup with its x; "-" when unknown. */
static const char *st__pct(char *b, double v)
{
    if (isfinite(v))
        snprintf(b, 32, "%.1f%%", 100 * v);
    else
        snprintf(b, 32, "-");
    return b;
}

static const char *st__x(char *b, double v)
{
    if (isfinite(v))
        snprintf(b, 32, "%.2fx", v);
    else
        snprintf(b, 32, "-");
    return b;
}

#define PCT(v) st__pct((char[32]){0}, (v))
#define X(v) st__x((char[32]){0}, (v))

static void st__main(const ckb_score_set *s, ckb_strbuf *out)
{
    st_table t = {0};
    st__row(&t);
    static const char *const heads[] = {"method / model", "runs",    "samples", "compile",
                                        "correct",        "solved",  "geomean", "beat base",
                                        "% expert"};
    for (int c = 0; c < 9; c++)
        st__set(&t, c, "%s", heads[c]);
    for (int i = 0; i < s->ng; i++) {
        const ckb_score_group *g = &s->g[i];
        st__row(&t);
        st__set(&t, 0, "%s", g->label);
        st__set(&t, 1, "%d", g->nruns);
        st__set(&t, 2, "%d", g->samples);
        st__set(&t, 3, "%s", PCT(g->compile_rate));
        st__set(&t, 4, "%s", PCT(g->per_sample_correctness));
        st__set(&t, 5, "%d/%d", g->solved, g->covers_suite ? ckb_workload_count() : g->nw);
        st__set(&t, 6, "%s", X(g->geomean_speedup));
        st__set(&t, 7, "%s", PCT(g->share_beating_baseline));
        if (isfinite(g->pct_of_expert))
            st__set(&t, 8, "%.1f%%", g->pct_of_expert);
        else
            st__set(&t, 8, "-");
    }
    st__print(&t, out);
}

static void st__jaxbench(const ckb_score_set *s, ckb_strbuf *out)
{
    st_table t = {0};
    st__row(&t);
    static const char *const heads[] = {"method / model", "tasks",    "compiled", "correct",
                                        "improved",       "slower",   "max",      "arith mean",
                                        "geo mean"};
    for (int c = 0; c < 9; c++)
        st__set(&t, c, "%s", heads[c]);
    for (int i = 0; i < s->ng; i++) {
        const ckb_score_group *g = &s->g[i];
        double nw = g->nw;
        st__row(&t);
        st__set(&t, 0, "%s", g->label);
        st__set(&t, 1, "%d", g->nw);
        st__set(&t, 2, "%d (%s)", g->jb_compiled, PCT(g->jb_compiled / nw));
        st__set(&t, 3, "%d (%s)", g->solved, PCT(g->solved / nw));
        st__set(&t, 4, "%d (%s)", g->jb_improved, PCT(g->jb_improved / nw));
        st__set(&t, 5, "%d (%s)", g->jb_slower, PCT(g->jb_slower / nw));
        st__set(&t, 6, "%s", X(g->nw ? g->jb_max_speedup : NAN));
        st__set(&t, 7, "%s", X(g->jb_arithmetic_mean_speedup));
        st__set(&t, 8, "%s", X(g->geomean_speedup));
    }
    st__print(&t, out);
}

static void st__fast_p(const ckb_score_set *s, ckb_strbuf *out)
{
    /* Columns: every N any group reports; "-" where a group does not. */
    int all[CKB_SCORE_MAX_N * 4];
    int na = ckb_score_all_n_values(s, all, (int)(sizeof all / sizeof *all));
    if (na + 2 > ST_MAXCOLS)
        na = ST_MAXCOLS - 2;
    st_table t = {0};
    st__row(&t);
    st__set(&t, 0, "method / model");
    st__set(&t, 1, "p");
    for (int k = 0; k < na; k++)
        st__set(&t, 2 + k, "@%d", all[k]);
    for (int i = 0; i < s->ng; i++) {
        const ckb_score_group *g = &s->g[i];
        int ns[CKB_SCORE_MAX_N + 1];
        int nn = ckb_score_n_values(s, g, ns, CKB_SCORE_MAX_N + 1);
        for (int p = 0; p < s->np; p++) {
            st__row(&t);
            st__set(&t, 0, "%s", p == 0 ? g->label : "");
            st__set(&t, 1, ">%g", s->p[p]);
            for (int k = 0; k < na; k++) {
                int has = all[k] <= g->budget; /* past it nothing changes */
                for (int j = 0; j < nn && !has; j++)
                    has = ns[j] == all[k];
                if (has)
                    st__set(&t, 2 + k, "%s", PCT(ckb_score_fast_p(g, s->p[p], all[k])));
                else
                    st__set(&t, 2 + k, "-");
            }
        }
    }
    st__print(&t, out);
}

static void st__taxonomy(const ckb_score_set *s, ckb_strbuf *out)
{
    const char *names[ST_MAXCOLS];
    int nn = 0;
    for (int i = 0; i < s->ng; i++)
        for (int j = 0; j < s->g[i].ntax; j++) {
            int seen = 0;
            for (int k = 0; k < nn && !seen; k++)
                seen = strcmp(names[k], s->g[i].taxonomy[j].name) == 0;
            if (!seen && nn < ST_MAXCOLS - 1)
                names[nn++] = s->g[i].taxonomy[j].name;
        }
    st_table t = {0};
    st__row(&t);
    st__set(&t, 0, "method / model");
    for (int k = 0; k < nn; k++)
        st__set(&t, 1 + k, "%s", names[k]);
    for (int i = 0; i < s->ng; i++) {
        const ckb_score_group *g = &s->g[i];
        st__row(&t);
        st__set(&t, 0, "%s", g->label);
        for (int k = 0; k < nn; k++) {
            int c = 0;
            for (int j = 0; j < g->ntax; j++)
                if (strcmp(g->taxonomy[j].name, names[k]) == 0)
                    c = g->taxonomy[j].count;
            st__set(&t, 1 + k, "%d", c);
        }
    }
    st__print(&t, out);
    for (int i = 0; i < s->ng; i++) {
        const ckb_score_group *g = &s->g[i];
        if (g->nck == 0)
            continue;
        ckb_strbuf_printf(out, "  compile errors of %s:", g->label);
        for (int j = 0; j < g->nck; j++)
            ckb_strbuf_printf(out, "%s %s %d", j ? "," : "", g->compile_kinds[j].name,
                              g->compile_kinds[j].count);
        ckb_strbuf_printf(out, "\n");
    }
}

static void st__workloads(const ckb_score_set *s, const ckb_score_group *g, ckb_strbuf *out)
{
    st_table t = {0};
    st__row(&t);
    static const char *const heads[] = {"workload", "samples", "correct",   "to 1st correct",
                                        "best",     "floored", "expert",    "% expert",
                                        "best sample"};
    for (int c = 0; c < 9; c++)
        st__set(&t, c, "%s", heads[c]);
    for (int i = 0; i < g->nw; i++) {
        const ckb_score_workload *w = &g->w[i];
        st__row(&t);
        st__set(&t, 0, "%s", w->id);
        st__set(&t, 1, "%d/%d", w->samples, w->budget);
        st__set(&t, 2, "%d", w->correct);
        if (w->first_correct >= 0)
            st__set(&t, 3, "%d", w->first_correct + 1);
        else
            st__set(&t, 3, "-");
        st__set(&t, 4, "%s", X(w->best_speedup));
        st__set(&t, 5, "%s", X(w->speedup));
        st__set(&t, 6, "%s", X(w->expert_speedup));
        if (isfinite(w->pct_of_expert))
            st__set(&t, 7, "%.1f%%", w->pct_of_expert);
        else
            st__set(&t, 7, "-");
        if (w->best >= 0)
            st__set(&t, 8, "%s #%d", s->runs[w->run_of[w->best]].path, w->pool[w->best]->index);
        else
            st__set(&t, 8, "-");
    }
    st__print(&t, out);
}

void ckb_score_text(const ckb_score_set *s, int verbose, ckb_strbuf *out)
{
    for (int i = 0; i < s->nruns; i++) {
        const ckb_score_run *r = &s->runs[i];
        if (r->n == 0)
            ckb_strbuf_printf(out, "note: %s holds no records yet\n", r->path);
        if (r->dropped_last || r->skipped || r->duplicates)
            ckb_strbuf_printf(out,
                              "note: %s: %s%d malformed line(s) skipped, %d duplicate "
                              "record(s) ignored\n",
                              r->path, r->dropped_last ? "a half-written last line dropped, " : "",
                              r->skipped, r->duplicates);
        if (r->disturbed)
            ckb_strbuf_printf(out,
                              "note: %s: %d correct sample(s) with a disturbed timing (other work "
                              "on the machine): disturbed, not counted as a speedup until "
                              "`ckbench retime %s` measures them\n",
                              r->path, r->disturbed, r->path);
        if (r->nul_bytes)
            ckb_strbuf_printf(out,
                              "note: %s: %ld NUL byte(s) skipped in records.jsonl (what a crash "
                              "can leave); the records around them were read\n",
                              r->path, r->nul_bytes);
        if (r->infra)
            ckb_strbuf_printf(out,
                              "note: %s: %d model call(s) failed on the provider's side "
                              "(infra_error): not samples, not counted; `ckbench generate "
                              "--resume` asks them again\n",
                              r->path, r->infra);
    }
    ckb_strbuf_printf(out, "Scores (speedups floored at 1x: an unsolved workload counts as the "
                           "baseline)\n");
    st__main(s, out);
    ckb_strbuf_printf(out, "\nfast_p@N: share of workloads with a correct sample faster than p "
                           "x the baseline among their first N samples\n");
    st__fast_p(s, out);
    ckb_strbuf_printf(out, "\nJAXBench's summary (evaluation_utils.summarize_results): a "
                           "workload is a task, its best correct sample the task's kernel\n");
    st__jaxbench(s, out);
    ckb_strbuf_printf(out, "\nFailure taxonomy: samples per status\n");
    st__taxonomy(s, out);
    for (int i = 0; verbose && i < s->ng; i++) {
        ckb_strbuf_printf(out, "\n%s: per workload\n", s->g[i].label);
        st__workloads(s, &s->g[i], out);
    }
}
