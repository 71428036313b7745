#include "bench/tune.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/expert.h"
#include "core/error.h"
#include "core/say.h"
#include "core/stats.h"
#include "core/strbuf.h"
#include "eval/eval.h"
#include "machine/roofline.h"

/* Evaluates one configuration; its speedup over the baseline timed in the
 * same interleaved run, -1 when not correct, -2 when its timing stayed
 * disturbed by other work (not a figure: it cannot win). Ranking by that
 * ratio rather than by milliseconds keeps a load change on a shared
 * machine between two configurations from choosing the winner. */
static double tune__eval(const ckb_workload *w, const ckb_tune_opts *o, const char *expert,
                         const int64_t *values, ckb_eval_result *r)
{
    ckb_expert_config cfg;
    ckb_expert_config_set(w, values, &cfg);
    ckb_eval_opts eo;
    ckb_eval_opts_default(&eo);
    eo.size = o->size;
    eo.threads = o->threads;
    eo.warmup = o->warmup;
    eo.iters = o->iters;
    eo.defines = cfg.defines;
    eo.ndefines = cfg.n;
    eo.expert_kit = 1;
    ckb_roof roof;
    ckb_roof_for_workload(o->machine, w, o->size, &roof);
    eo.peak_gflops = roof.compute_gflops;
    eo.bw_gbs = roof.mem_gbs;
    /* A disturbed timing is measured again, after a pause, a few times. */
    for (int attempt = 0; attempt < 3; attempt++) {
        if (attempt)
            sleep(5 * attempt);
        if (ckb_eval_run(w, expert, &eo, r) != 0 || r->status != CKB_ST_OK ||
            !(r->speedup > 0))
            return -1;
        if (!ckb_eval_timing_disturbed(r, &eo))
            return r->speedup;
    }
    return -2;
}

/* The median of the counted figures of one side (x[i] with ok[i]); -1: none. */
static double tune__median(const double *x, const int *ok, int n)
{
    double kept[CKB_TUNE_CONFIRM_MAX_ROUNDS];
    int k = 0;
    for (int i = 0; i < n && k < CKB_TUNE_CONFIRM_MAX_ROUNDS; i++)
        if (ok[i])
            kept[k++] = x[i];
    return k ? ckb_stats_of(kept, k).median : -1;
}

/* Why a side with too few undisturbed confirm rounds is not stored. */
static void tune__too_few(ckb_tune_confirmed *c, const char *side, int disturbed, int rounds,
                          int need)
{
    snprintf(c->why, sizeof c->why,
             "too few undisturbed confirm rounds: %s timing was disturbed by other work in %d of "
             "%d (at least %d must count); run tune again on a quiet machine",
             side, disturbed, rounds, need);
}

int ckb_tune_confirm_decide(const ckb_tune_timing *untuned, const ckb_tune_timing *best,
                            int rounds, ckb_tune_confirmed *c)
{
    memset(c, 0, sizeof *c);
    if (rounds > CKB_TUNE_CONFIRM_MAX_ROUNDS)
        rounds = CKB_TUNE_CONFIRM_MAX_ROUNDS;
    enum { N = CKB_TUNE_CONFIRM_MAX_ROUNDS };
    double ums[N], usp[N], bms[N], bsp[N];
    int uok[N], bok[N], untuned_wrong = 0, best_wrong = 0;
    for (int i = 0; i < rounds; i++) {
        ums[i] = untuned[i].ms, usp[i] = untuned[i].speedup;
        bms[i] = best[i].ms, bsp[i] = best[i].speedup;
        /* disturbed (-2) and not correct (-1) rounds do not count */
        uok[i] = usp[i] > 0 && ums[i] > 0;
        bok[i] = bsp[i] > 0 && bms[i] > 0;
        c->untuned_counted += uok[i];
        c->best_counted += bok[i];
        c->untuned_disturbed += usp[i] == -2;
        c->best_disturbed += bsp[i] == -2;
        untuned_wrong += usp[i] == -1;
        best_wrong += bsp[i] == -1;
    }
    c->untuned_ms = tune__median(ums, uok, rounds);
    c->untuned_speedup = tune__median(usp, uok, rounds);
    c->best_ms = tune__median(bms, bok, rounds);
    c->best_speedup = tune__median(bsp, bok, rounds);
    c->gain = c->untuned_ms > 0 && c->best_ms > 0 ? c->untuned_ms / c->best_ms : -1;
    c->speedup_gain =
        c->untuned_speedup > 0 && c->best_speedup > 0 ? c->best_speedup / c->untuned_speedup : -1;
    int need = rounds / 2 + 1; /* more than half */
    if (rounds <= 0) {
        snprintf(c->why, sizeof c->why, "no confirm rounds were run");
    } else if (best_wrong) {
        snprintf(c->why, sizeof c->why,
                 "the best was not correct in %d of %d confirm rounds (a configuration that "
                 "passes only sometimes is not stored)", best_wrong, rounds);
    } else if (c->best_counted < need) {
        tune__too_few(c, "the best's", c->best_disturbed, rounds, need);
    } else if (untuned_wrong) {
        /* the untuned defaults can fail where a tuned configuration does not:
         * any correct configuration is then better than them */
        c->gain = c->speedup_gain = -1;
        c->store = 1;
        snprintf(c->why, sizeof c->why,
                 "the untuned defaults were not correct in %d of %d confirm rounds: the best is "
                 "stored without a gain over them", untuned_wrong, rounds);
    } else if (c->untuned_counted < need) {
        tune__too_few(c, "the untuned", c->untuned_disturbed, rounds, need);
    } else if (!(c->best_ms < CKB_TUNE_CONFIRM_MAX_RATIO * c->untuned_ms)) {
        snprintf(c->why, sizeof c->why,
                 "the best is not faster than untuned by more than the noise (%.2fx; storing "
                 "needs its time under %.2f of untuned's, %.2fx)", c->gain,
                 CKB_TUNE_CONFIRM_MAX_RATIO, 1 / CKB_TUNE_CONFIRM_MAX_RATIO);
    } else if (!(c->untuned_speedup < CKB_TUNE_CONFIRM_MAX_RATIO * c->best_speedup)) {
        /* the milliseconds say faster, the baselines timed beside each do not:
         * the load changed between the two sides' timings */
        snprintf(c->why, sizeof c->why,
                 "the best's gain in milliseconds (%.2fx) is not borne out over the baselines "
                 "timed beside each (%.2fx: the load changed between the timings?)", c->gain,
                 c->speedup_gain);
    } else {
        c->store = 1;
    }
    return c->store;
}

static void tune__print_config(const ckb_workload *w, const int64_t *v)
{
    for (int i = 0; i < w->nparams; i++)
        ckb_say_out("%s%s=%-5lld", i ? " " : "", w->params[i].name, (long long)v[i]);
}

/* "not stored": why, and what bench runs instead. An entry tuned.json
 * already has for this size, budget and host is left as it was (an earlier
 * search's, which this one did not time), and said, since bench then keeps
 * running it rather than the untuned blocks. */
static void tune__say_not_stored(const ckb_workload *w, const ckb_tune_opts *o, const char *why)
{
    ckb_expert_config cfg;
    ckb_expert_config_load(w, o->size, o->threads, o->machine, &cfg);
    if (!cfg.tuned) {
        ckb_say_out("not stored: %s; the untuned blocks stand\n", why);
        return;
    }
    char path[512];
    ckb_expert_tuned_path(w, path, sizeof path);
    ckb_say_out("not stored: %s\nkept: %s's entry for %s/%dt on this host (", why, path,
                ckb_size_name(o->size), o->threads);
    for (int i = 0; i < w->nparams; i++)
        ckb_say_out("%s%s=%lld", i ? " " : "", w->params[i].name, (long long)cfg.values[i]);
    ckb_say_out(") is left as it was: bench runs it, not the untuned blocks, until it is "
                "removed\n");
}

/* The odometer over the grid: idx[i] counts through ngrid[i] values, the
 * last parameter fastest. */
static void tune__advance(int *idx, const int *ngrid, int nparams)
{
    for (int i = nparams - 1; i >= 0; i--) {
        if (++idx[i] < ngrid[i])
            return;
        idx[i] = 0;
    }
}

/* Narrows the grid by the --param limits: each names a parameter once and
 * lists values of its grid, which replace it in the order given.
 * CKB_E_USAGE with err saying what is wrong. */
static int tune__narrow(const ckb_workload *w, const ckb_tune_opts *o,
                        int64_t grid[][CKB_MAX_PARAM_VALUES], int *ngrid, ckb_err *err)
{
    int seen[CKB_MAX_PARAMS] = {0};
    for (int k = 0; k < o->nlimits; k++) {
        const char *spec = o->limits[k], *eq = strchr(spec, '=');
        int p = -1;
        for (int i = 0; eq && i < w->nparams; i++)
            if (strlen(w->params[i].name) == (size_t)(eq - spec) &&
                strncmp(w->params[i].name, spec, (size_t)(eq - spec)) == 0)
                p = i;
        if (p < 0) {
            ckb_strbuf names = {0};
            for (int i = 0; i < w->nparams; i++)
                ckb_strbuf_printf(&names, " %s", w->params[i].name);
            ckb_err_set(err, CKB_E_USAGE,
                        "tune: --param %s: %s has no parameter of that name (it has%s)", spec,
                        w->id, names.data ? names.data : "");
            ckb_strbuf_free(&names);
            return CKB_E_USAGE;
        }
        if (seen[p]++)
            return ckb_err_set(err, CKB_E_USAGE, "tune: --param %s: %s is limited twice", spec,
                               w->params[p].name);
        int64_t keep[CKB_MAX_PARAM_VALUES];
        int nkeep = 0;
        for (const char *v = eq + 1;;) {
            char *end;
            errno = 0;
            long long x = strtoll(v, &end, 10);
            int on_grid = 0;
            for (int g = 0; end != v && !errno && g < ngrid[p]; g++)
                on_grid |= grid[p][g] == x;
            if (!on_grid || (*end && *end != ',')) {
                ckb_strbuf values = {0};
                for (int g = 0; g < ngrid[p]; g++)
                    ckb_strbuf_printf(&values, "%s%lld", g ? " " : "", (long long)grid[p][g]);
                ckb_err_set(err, CKB_E_USAGE,
                            "tune: --param %s: '%.*s' is not a value of %s's grid on this host "
                            "(%s)",
                            spec, (int)strcspn(v, ","), v, w->params[p].name,
                            values.data ? values.data : "");
                ckb_strbuf_free(&values);
                return CKB_E_USAGE;
            }
            int dup = 0;
            for (int i = 0; i < nkeep; i++)
                dup |= keep[i] == x;
            if (!dup)
                keep[nkeep++] = x;
            if (!*end)
                break;
            v = end + 1;
        }
        memcpy(grid[p], keep, sizeof keep);
        ngrid[p] = nkeep;
    }
    return CKB_OK;
}

/* The confirm pass (tune.h): the untuned defaults and the winner timed
 * again alternately, o->confirm_rounds each, and the decision. 1: store,
 * with out's figures replaced by the confirmed ones; 0: not stored (said,
 * with why, and what becomes of an entry tuned.json has already). */
static int tune__confirm(const ckb_workload *w, const ckb_tune_opts *o, const char *expert,
                         const int64_t *untuned_v, const int64_t *best_v, ckb_tune_outcome *out)
{
    int rounds = o->confirm_rounds < CKB_TUNE_CONFIRM_MAX_ROUNDS ? o->confirm_rounds
                                                                 : CKB_TUNE_CONFIRM_MAX_ROUNDS;
    if (memcmp(untuned_v, best_v, sizeof *best_v * (size_t)w->nparams) == 0) {
        /* bench runs these values with no entry: nothing to confirm or store */
        tune__say_not_stored(w, o, "the best is the untuned defaults");
        return 0;
    }
    ckb_say_out("confirm: untuned and best timed again alternately, %d rounds each\n", rounds);
    ckb_tune_timing ut[CKB_TUNE_CONFIRM_MAX_ROUNDS], bt[CKB_TUNE_CONFIRM_MAX_ROUNDS];
    ckb_eval_result r;
    for (int i = 0; i < rounds; i++)
        for (int side = 0; side < 2; side++) {
            ckb_tune_timing *t = side ? &bt[i] : &ut[i];
            t->speedup = tune__eval(w, o, expert, side ? best_v : untuned_v, &r);
            t->ms = t->speedup > 0 || t->speedup == -2 ? r.cand.median : -1;
            ckb_say_out("[c%d/%d] %-8s", i + 1, rounds, side ? "best" : "untuned");
            if (t->speedup > 0)
                ckb_say_out("  %9.3f ms  %.2fx baseline\n", t->ms, t->speedup);
            else if (t->speedup == -2)
                ckb_say_out("  %9.3f ms  timing disturbed by other work: not counted\n", t->ms);
            else
                ckb_say_out("  %s: %.100s\n", ckb_status_name(r.status), r.message);
        }
    ckb_tune_confirmed c;
    int store = ckb_tune_confirm_decide(ut, bt, rounds, &c);
    ckb_say_out("confirmed: untuned ");
    if (c.untuned_ms > 0)
        ckb_say_out("%.3f ms", c.untuned_ms);
    else
        ckb_say_out("-");
    ckb_say_out(", best ");
    if (c.best_ms > 0)
        ckb_say_out("%.3f ms", c.best_ms);
    else
        ckb_say_out("-");
    if (c.gain > 0)
        ckb_say_out(", %.2fx over untuned", c.gain);
    ckb_say_out(" (%d round%s alternated", rounds, rounds == 1 ? "" : "s");
    if (c.speedup_gain > 0)
        ckb_say_out("; over the baseline timed beside each: untuned %.2fx, best %.2fx, %.2fx",
                    c.untuned_speedup, c.best_speedup, c.speedup_gain);
    if (c.untuned_disturbed || c.best_disturbed)
        ckb_say_out("; disturbed, not counted: untuned %d, best %d", c.untuned_disturbed,
                    c.best_disturbed);
    ckb_say_out(")\n");
    if (!store) {
        tune__say_not_stored(w, o, c.why);
        return 0;
    }
    if (c.why[0])
        ckb_say_out("note: %s\n", c.why);
    out->best_ms = c.best_ms;
    out->speedup = c.best_speedup;
    out->untuned_ms = c.untuned_ms;
    out->untuned_speedup = c.untuned_speedup;
    out->gain = c.gain;
    out->confirm_rounds = rounds;
    return 1;
}

int ckb_tune_run(const ckb_workload *w, const ckb_tune_opts *o, ckb_err *err)
{
    char expert[512];
    if (!ckb_expert_path(w, expert, sizeof expert) || w->nparams == 0)
        return ckb_err_set(err, CKB_E_NOT_FOUND, "%s has no expert kernel with tunable parameters",
                           w->id);
    /* the grid: every declared value, less the units this host lacks */
    int64_t grid[CKB_MAX_PARAMS][CKB_MAX_PARAM_VALUES];
    int ngrid[CKB_MAX_PARAMS];
    int total = 1;
    for (int i = 0; i < w->nparams; i++) {
        ngrid[i] = 0;
        for (int k = 0; k < w->params[i].nvalues; k++) {
            int64_t v = w->params[i].values[k];
            if (ckb_expert_value_runs(&w->params[i], v, o->machine))
                grid[i][ngrid[i]++] = ckb_expert_param_value(v, o->machine);
        }
    }
    if (tune__narrow(w, o, grid, ngrid, err) != CKB_OK)
        return CKB_E_USAGE;
    for (int i = 0; i < w->nparams; i++)
        total *= ngrid[i];
    ckb_say_out("tuning %s at size %s, %d threads: %d configurations of", w->id,
                ckb_size_name(o->size), o->threads, total);
    for (int i = 0; i < w->nparams; i++)
        ckb_say_out(" %s", w->params[i].name);
    if (o->nlimits)
        ckb_say_out(" (narrowed by --param)");
    ckb_say_out("\n");
    if (o->dry_run) {
        /* the grid only: what a real run would evaluate, nothing timed */
        int idx[CKB_MAX_PARAMS] = {0};
        int64_t v[CKB_MAX_PARAMS];
        for (int n = 0; n < total; n++) {
            for (int i = 0; i < w->nparams; i++)
                v[i] = grid[i][idx[i]];
            ckb_say_out("[%3d/%d] ", n + 1, total);
            tune__print_config(w, v);
            ckb_say_out("\n");
            tune__advance(idx, ngrid, w->nparams);
        }
        return CKB_OK;
    }

    int64_t fallback[CKB_MAX_PARAMS], cur[CKB_MAX_PARAMS], best_v[CKB_MAX_PARAMS];
    ckb_expert_defaults(w, o->machine, fallback);
    ckb_eval_result r;
    double untuned = tune__eval(w, o, expert, fallback, &r);
    double untuned_ms = untuned > 0 ? r.cand.median : -1;
    ckb_say_out("untuned  ");
    tune__print_config(w, fallback);
    if (untuned > 0)
        ckb_say_out("  %9.3f ms  %.2fx baseline\n", untuned_ms, untuned);
    else if (untuned == -2)
        ckb_say_out("  timing disturbed by other work: no untuned figure\n");
    else
        ckb_say_out("  %s: %.120s\n", ckb_status_name(r.status), r.message);

    double best = -1, best_ms = -1;
    int correct = 0, tried = 0;
    int idx[CKB_MAX_PARAMS] = {0};
    for (int n = 0; n < total; n++) {
        for (int i = 0; i < w->nparams; i++)
            cur[i] = grid[i][idx[i]];
        double sp = tune__eval(w, o, expert, cur, &r);
        tried++;
        ckb_say_out("[%3d/%d] ", n + 1, total);
        tune__print_config(w, cur);
        if (sp > 0) {
            correct++;
            ckb_say_out("  %9.3f ms  %.2fx baseline%s\n", r.cand.median, sp,
                        sp > best ? "  *" : "");
            if (sp > best) {
                best = sp;
                best_ms = r.cand.median;
                memcpy(best_v, cur, sizeof cur);
            }
        } else if (sp == -2) {
            correct++;
            ckb_say_out("  %9.3f ms  timing disturbed by other work: not ranked\n", r.cand.median);
        } else {
            ckb_say_out("  %s: %.100s\n", ckb_status_name(r.status), r.message);
        }
        tune__advance(idx, ngrid, w->nparams);
    }
    if (best < 0)
        return ckb_err_set(err, CKB_E_HARNESS, "no configuration of %s was correct", w->id);
    ckb_say_out("best     ");
    tune__print_config(w, best_v);
    ckb_say_out("  %9.3f ms  %.2fx baseline", best_ms, best);
    if (untuned > 0)
        ckb_say_out("  %.2fx over untuned", best / untuned);
    ckb_say_out("  (%d tried, %d correct)\n", tried, correct);
    ckb_tune_outcome out = {.best_ms = best_ms, .untuned_ms = untuned_ms, .speedup = best,
                            .untuned_speedup = untuned,
                            .gain = untuned > 0 ? best / untuned : -1, .tried = tried,
                            .correct = correct, .limits = o->limits, .nlimits = o->nlimits};
    if (o->confirm_rounds > 0) {
        if (!tune__confirm(w, o, expert, fallback, best_v, &out))
            return CKB_OK; /* not stored, and it said why: a result, not a failure */
    } else {
        ckb_say_out("not confirmed (--confirm 0): the search's single timings are stored\n");
    }
    ckb_expert_config cfg;
    ckb_expert_config_set(w, best_v, &cfg);
    if (ckb_expert_config_save(w, o->size, o->threads, &cfg, &out) != 0)
        return ckb_err_set(err, CKB_E_IO, "cannot store the tuned values: %s", strerror(errno));
    char path[512], host[200];
    ckb_expert_tuned_path(w, path, sizeof path);
    ckb_expert_host(host, sizeof host);
    ckb_say_out("stored in %s for %s/%dt on '%s'\n", path, ckb_size_name(o->size), o->threads,
                host);
    return CKB_OK;
}
