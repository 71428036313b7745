/*
 * The beam search (Autocomp-style, DESIGN §7). Each iteration asks every
 * beam element for candidates (plan, then implement), W*K per iteration in
 * all, spread round-robin over the elements (a one-element beam gets all
 * of them). Translation phase (at most translate_iters iterations): until a
 * correct kernel exists; while none does, the furthest-along failures
 * (wrong result > crash/limits > compile error) are the beam, to be fixed.
 * Optimization phase: the iterations left of the budget; a child is kept
 * only if correct and faster than its parent by the keep factor (1.1 in the
 * first half of the phase, 1.0 after); the next beam is the best W correct
 * kernels of the beam and the kept children, by measured speedup (the
 * candidate's time over the baseline's in the same run, so drift cancels).
 * Every choice reads the records, so a resumed run makes the same beam.
 */
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/jsonget.h"
#include "core/parallel.h"
#include "gen/sample.h"

typedef struct {
    ckb_gen_wl *g;
    ckb_sample_spec *specs;
} beam__batch;

static void beam__one(void *ctx, int i)
{
    beam__batch *b = ctx;
    ckb_gen_sample(b->g, &b->specs[i]);
}

typedef struct {
    int index;
    double key; /* larger is better */
} beam__cand;

static int beam__by_key(const void *a, const void *b)
{
    const beam__cand *x = a, *y = b;
    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    return x->index - y->index;
}

/* How far a failing kernel got; 0: no code to build on. */
static int beam__progress(json_object *rec)
{
    const char *s = ckb_rec_str(rec, "status");
    if (!strcmp(s, "wrong_result") || !strcmp(s, "nondeterministic"))
        return 3;
    if (!strcmp(s, "compile_error"))
        return 1;
    if (!strcmp(s, "no_code") || !strcmp(s, "provider_error") || !strcmp(s, "harness_error"))
        return 0;
    return 2; /* crash, timeout, resource_limit, forbidden_symbol, cheat_detected */
}

/* A correct kernel's speedup; one whose timing was disturbed (or never
 * taken) is correct but of unknown speed: it ranks below every timed one. */
#define BEAM_UNTIMED 1e-6

static double beam__speedup(ckb_gen_wl *g, int index)
{
    json_object *rec = index >= 0 ? ckb_run_record(g->run, g->w->id, index) : NULL;
    if (!ckb_rec_correct(rec))
        return -1;
    double s = ckb_json_timing_disturbed(rec) ? NAN : ckb_json_num(rec, "speedup");
    return isfinite(s) && s > 0 ? s : BEAM_UNTIMED;
}

/* The top `width` of cands[0..n-1] into beam; returns the new size. */
static int beam__top(beam__cand *cands, int n, int width, int *beam)
{
    qsort(cands, (size_t)n, sizeof *cands, beam__by_key);
    int m = n < width ? n : width;
    for (int i = 0; i < m; i++)
        beam[i] = cands[i].index;
    return m;
}

int ckb_gen_beam(ckb_gen_wl *g)
{
    const ckb_gen_opts *o = g->o;
    const int W = o->beam_width, per_iter = o->beam_width * o->beam_candidates;
    const int niters = (o->budget + per_iter - 1) / per_iter;
    int beam[64], nbeam = 1, next = 0, translating = 1, t_iters = 0, opt_start = -1;
    beam[0] = -1; /* the root: no kernel yet, the reference */
    ckb_sample_spec *specs = ckb_xcalloc((size_t)per_iter, sizeof *specs);
    beam__cand *cands = ckb_xcalloc((size_t)(per_iter + W), sizeof *cands);
    for (int it = 0; it < niters && next < o->budget && !g->failed && !g->sh->unreachable;
         it++) {
        if (translating && t_iters >= o->translate_iters)
            translating = 0;
        if (!translating && opt_start < 0)
            opt_start = it;
        const char *phase = translating ? "translate" : "optimize";
        int n = o->budget - next < per_iter ? o->budget - next : per_iter;
        for (int c = 0; c < n; c++) {
            int e = c % nbeam, parent = beam[e];
            ckb_sample_spec *s = &specs[c];
            *s = (ckb_sample_spec){.kind = CKB_SAMPLE_BEAM, .index = next + c, .chain = e,
                                   .turn = it, .parent = parent, .phase = phase,
                                   .iter = translating ? t_iters + 1 : it - opt_start + 1,
                                   .niters = translating ? o->translate_iters
                                                         : niters - opt_start};
            if (parent >= 0) {
                json_object *pr = ckb_run_record(g->run, g->w->id, parent), *gp;
                s->prev = ckb_rec_prev(pr);
                /* the parent's own parent: its medians beside the parent's */
                if (pr && json_object_object_get_ex(pr, "parent", &gp) && gp)
                    s->prev.before =
                        ckb_rec_prev(ckb_run_record(g->run, g->w->id, json_object_get_int(gp)))
                            .eval;
            }
        }
        beam__batch b = {g, specs};
        ckb_parallel_for(n, o->concurrency, beam__one, &b);
        if (g->failed || g->sh->unreachable)
            break;

        /* The next beam. */
        int ncand = 0;
        if (translating) {
            t_iters++;
            for (int c = 0; c < n; c++) {
                double s = beam__speedup(g, next + c);
                if (s > 0)
                    cands[ncand++] = (beam__cand){next + c, s};
            }
            if (ncand) {
                translating = 0; /* a correct kernel exists: optimize from here */
            } else {
                for (int c = 0; c < n; c++) {
                    int p = beam__progress(ckb_run_record(g->run, g->w->id, next + c));
                    if (p > 0)
                        cands[ncand++] = (beam__cand){next + c, p};
                }
            }
        } else {
            int done = it - opt_start, nopt = niters - opt_start;
            double factor = done < (nopt + 1) / 2 ? 1.1 : 1.0;
            for (int e = 0; e < nbeam; e++) {
                double s = beam__speedup(g, beam[e]);
                if (s > 0)
                    cands[ncand++] = (beam__cand){beam[e], s};
            }
            for (int c = 0; c < n; c++) {
                double s = beam__speedup(g, next + c), ps = beam__speedup(g, specs[c].parent);
                if (s > 0 && (ps <= 0 || s >= factor * ps))
                    cands[ncand++] = (beam__cand){next + c, s};
            }
            if (ncand == 0) /* still nothing correct: build on the furthest failures */
                for (int c = 0; c < n; c++) {
                    int p = beam__progress(ckb_run_record(g->run, g->w->id, next + c));
                    if (p > 0)
                        cands[ncand++] = (beam__cand){next + c, p};
                }
        }
        if (ncand)
            nbeam = beam__top(cands, ncand, W, beam);
        next += n;
    }
    free(specs);
    free(cands);
    return g->failed ? -1 : 0;
}
