/* tune's confirm pass decides from timings alone (ckb_tune_confirm_decide):
 * these tests hand it made-up rounds, so nothing here is timed and no
 * speed is asserted. The stored entry's fields are the ones FORMATS.md
 * documents. */
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/expert.h"
#include "bench/tune.h"
#include "core/fsutil.h"
#include "harness.h"

/* rounds of one side: ms[i] with speedup 20 / ms[i] (a correct, undisturbed
 * round over a 20 ms baseline), or code[i] when it is not 0: a speedup of
 * its own, or -1 not correct, -2 disturbed (such a round still carries the
 * median it timed). */
static void rounds_of(ckb_tune_timing *t, const double *ms, const double *code, int n)
{
    for (int i = 0; i < n; i++) {
        t[i].ms = ms[i];
        t[i].speedup = code && code[i] ? code[i] : 20.0 / ms[i];
    }
}

static int near(double a, double b)
{
    return fabs(a - b) < 1e-9 * (fabs(a) + fabs(b) + 1);
}

CKBT_TEST(tune_confirm_stores_a_clear_gain, "quick")
{
    ckb_tune_timing u[3], b[3];
    ckb_tune_confirmed c;
    rounds_of(u, (double[]){10, 11, 10.5}, NULL, 3);
    rounds_of(b, (double[]){9, 8.5, 9.5}, NULL, 3);
    int store = ckb_tune_confirm_decide(u, b, 3, &c);
    CKBT_EXPECT(store == 1 && c.store == 1 && !c.why[0], "stored (why '%s')", c.why);
    CKBT_EXPECT(near(c.untuned_ms, 10.5) && near(c.best_ms, 9) && near(c.gain, 10.5 / 9),
                "the medians of each side's rounds and their ratio: untuned %g, best %g, %gx",
                c.untuned_ms, c.best_ms, c.gain);
    CKBT_EXPECT(near(c.untuned_speedup, 20 / 10.5) && near(c.best_speedup, 20 / 9.0),
                "the speedups are each side's medians too (%g, %g)", c.untuned_speedup,
                c.best_speedup);
    CKBT_EXPECT(c.untuned_counted == 3 && c.best_counted == 3 && !c.untuned_disturbed &&
                    !c.best_disturbed,
                "every round counted");
}

/* Under CKB_TUNE_CONFIRM_MAX_RATIO of untuned's time or not at all: a gain
 * the noise could make is not stored, and it says so. */
CKBT_TEST(tune_confirm_within_the_noise_is_not_stored, "quick")
{
    ckb_tune_timing u[3], b[3];
    ckb_tune_confirmed c;
    rounds_of(u, (double[]){10, 10, 10}, NULL, 3);
    rounds_of(b, (double[]){9.9, 9.9, 9.9}, NULL, 3);
    CKBT_EXPECT(ckb_tune_confirm_decide(u, b, 3, &c) == 0 && !c.store,
                "1.01x is within the noise: not stored");
    CKBT_EXPECT(strstr(c.why, "not faster than untuned by more than the noise") &&
                    strstr(c.why, "0.98"),
                "it says why, with the threshold: '%s'", c.why);
    CKBT_EXPECT(near(c.gain, 10 / 9.9) && near(c.best_ms, 9.9), "the figures are still given");
    /* slower than untuned: not stored either */
    rounds_of(b, (double[]){11, 12, 11}, NULL, 3);
    CKBT_EXPECT(!ckb_tune_confirm_decide(u, b, 3, &c), "a slower winner is not stored");
    /* the threshold itself: at 0.98 of untuned's time not stored, under it
     * stored (the speedups over the baselines clearly agree: the
     * milliseconds decide) */
    double at = 10 * CKB_TUNE_CONFIRM_MAX_RATIO;
    rounds_of(u, (double[]){10, 10, 10}, (double[]){2, 2, 2}, 3);
    rounds_of(b, (double[]){at, at, at}, (double[]){3, 3, 3}, 3);
    CKBT_EXPECT(!ckb_tune_confirm_decide(u, b, 3, &c), "exactly at the threshold: not stored");
    rounds_of(b, (double[]){at * 0.999, at * 0.999, at * 0.999}, (double[]){3, 3, 3}, 3);
    CKBT_EXPECT(ckb_tune_confirm_decide(u, b, 3, &c), "just under it: stored (why '%s')", c.why);
}

/* Milliseconds alone move with the load between two timings; the speedup
 * over the baseline timed beside each must bear the gain out. */
CKBT_TEST(tune_confirm_needs_the_baselines_to_agree, "quick")
{
    ckb_tune_timing u[3], b[3];
    ckb_tune_confirmed c;
    /* 1.25x faster in ms, but over their baselines the same (the machine
     * was quieter while the best ran) */
    rounds_of(u, (double[]){10, 10, 10}, (double[]){2, 2, 2}, 3);
    rounds_of(b, (double[]){8, 8, 8}, (double[]){2, 2, 2}, 3);
    CKBT_EXPECT(!ckb_tune_confirm_decide(u, b, 3, &c) && near(c.gain, 1.25) &&
                    near(c.speedup_gain, 1) && strstr(c.why, "baselines"),
                "not stored when the baselines disagree: gain %g, over baselines %g, '%s'",
                c.gain, c.speedup_gain, c.why);
    rounds_of(b, (double[]){8, 8, 8}, (double[]){2.5, 2.5, 2.5}, 3);
    CKBT_EXPECT(ckb_tune_confirm_decide(u, b, 3, &c) && near(c.speedup_gain, 1.25),
                "stored when both say 1.25x ('%s')", c.why);
    /* the same threshold on the speedups: untuned's at 0.98 of the best's
     * not stored, under it stored */
    double at = 2 / CKB_TUNE_CONFIRM_MAX_RATIO;
    rounds_of(b, (double[]){8, 8, 8}, (double[]){at, at, at}, 3);
    CKBT_EXPECT(!ckb_tune_confirm_decide(u, b, 3, &c), "at the threshold: not stored");
    rounds_of(b, (double[]){8, 8, 8}, (double[]){at * 1.001, at * 1.001, at * 1.001}, 3);
    CKBT_EXPECT(ckb_tune_confirm_decide(u, b, 3, &c), "just over it: stored ('%s')", c.why);
}

/* A disturbed round (speedup -2) does not count, whatever median it timed:
 * counted, it would flip these decisions. */
CKBT_TEST(tune_confirm_ignores_disturbed_rounds, "quick")
{
    ckb_tune_timing u[3], b[3];
    ckb_tune_confirmed c;
    rounds_of(u, (double[]){10, 10, 10}, NULL, 3);
    /* the best: 9.95 and 9.75 count (median 9.85, 0.985 of untuned: within
     * the noise); the disturbed 1 ms would make the median 9.75 (stored) */
    rounds_of(b, (double[]){9.95, 1, 9.75}, (double[]){0, -2, 0}, 3);
    CKBT_EXPECT(!ckb_tune_confirm_decide(u, b, 3, &c) && near(c.best_ms, 9.85),
                "the disturbed round is not counted: best %g ms, stored %d", c.best_ms,
                c.store);
    CKBT_EXPECT(c.best_counted == 2 && c.best_disturbed == 1 && c.untuned_counted == 3,
                "counted 2 of the best's 3 (%d, %d disturbed)", c.best_counted,
                c.best_disturbed);
    /* the other way: a disturbed slow untuned round would make a gain */
    rounds_of(b, (double[]){9.9, 9.9, 9.9}, NULL, 3);
    rounds_of(u, (double[]){10, 30, 10.1}, (double[]){0, -2, 0}, 3);
    CKBT_EXPECT(!ckb_tune_confirm_decide(u, b, 3, &c) && near(c.untuned_ms, 10.05) &&
                    c.untuned_disturbed == 1,
                "a disturbed untuned round is not counted: untuned %g ms", c.untuned_ms);
    /* and a clear gain survives a disturbed round on each side */
    rounds_of(u, (double[]){10, 3, 10}, (double[]){0, -2, 0}, 3);
    rounds_of(b, (double[]){8, 8, 50}, (double[]){0, 0, -2}, 3);
    CKBT_EXPECT(ckb_tune_confirm_decide(u, b, 3, &c) && near(c.gain, 10 / 8.0),
                "stored at %gx with one disturbed round a side", c.gain);
}

/* Too few rounds count: nothing is stored, and the reason says the timings
 * were disturbed, not that the winner is slow. */
CKBT_TEST(tune_confirm_all_disturbed_is_not_stored, "quick")
{
    ckb_tune_timing u[3], b[3];
    ckb_tune_confirmed c;
    rounds_of(u, (double[]){10, 10, 10}, (double[]){-2, -2, -2}, 3);
    rounds_of(b, (double[]){5, 5, 5}, (double[]){-2, -2, -2}, 3);
    CKBT_EXPECT(!ckb_tune_confirm_decide(u, b, 3, &c), "every round disturbed: not stored");
    CKBT_EXPECT(strstr(c.why, "disturbed") && strstr(c.why, "3 of 3") && strstr(c.why, "quiet"),
                "a clear reason: '%s'", c.why);
    CKBT_EXPECT(c.best_ms < 0 && c.untuned_ms < 0 && c.gain < 0 && !c.best_counted &&
                    c.best_disturbed == 3,
                "no figures from disturbed rounds (best %g, untuned %g, gain %g)", c.best_ms,
                c.untuned_ms, c.gain);
    /* one counted round of three is not a median: not stored either */
    rounds_of(b, (double[]){5, 5, 5}, (double[]){0, -2, -2}, 3);
    rounds_of(u, (double[]){10, 10, 10}, NULL, 3);
    CKBT_EXPECT(!ckb_tune_confirm_decide(u, b, 3, &c) && strstr(c.why, "2 of 3") &&
                    strstr(c.why, "at least 2"),
                "1 of 3 counted: '%s'", c.why);
    rounds_of(b, (double[]){5, 5, 5}, NULL, 3);
    rounds_of(u, (double[]){10, 10, 10}, (double[]){-2, 0, -2}, 3);
    CKBT_EXPECT(!ckb_tune_confirm_decide(u, b, 3, &c) && strstr(c.why, "untuned"),
                "the untuned side too: '%s'", c.why);
    CKBT_EXPECT(!ckb_tune_confirm_decide(u, b, 0, &c) && c.why[0], "no rounds: not stored");
}

/* A winner that fails a round is not stored; untuned defaults that fail
 * leave the winner stored, with no gain. */
CKBT_TEST(tune_confirm_incorrect_rounds, "quick")
{
    ckb_tune_timing u[3], b[3];
    ckb_tune_confirmed c;
    rounds_of(u, (double[]){10, 10, 10}, NULL, 3);
    rounds_of(b, (double[]){5, 5, -1}, (double[]){0, 0, -1}, 3);
    CKBT_EXPECT(!ckb_tune_confirm_decide(u, b, 3, &c) && strstr(c.why, "not correct"),
                "a winner wrong once is not stored: '%s'", c.why);
    rounds_of(u, (double[]){-1, -1, -1}, (double[]){-1, -1, -1}, 3);
    rounds_of(b, (double[]){5, 5, 5}, NULL, 3);
    CKBT_EXPECT(ckb_tune_confirm_decide(u, b, 3, &c) && c.gain < 0 && near(c.best_ms, 5) &&
                    strstr(c.why, "untuned defaults were not correct"),
                "stored without a gain: gain %g, '%s'", c.gain, c.why);
}

/* The entry tune writes has exactly the fields FORMATS.md's tuned.json
 * table documents (confirm_rounds among them), and the confirmed figures. */
CKBT_TEST(tune_confirm_entry_matches_formats_md, "quick")
{
    const ckb_workload *w = ckb_workload_find("8p_GEMM");
    CKBT_EXPECT(w && w->nparams > 0, "8p_GEMM has tunable parameters");
    if (!w || w->nparams == 0)
        return;
    char path[512], key[300];
    snprintf(path, sizeof path, "%s/tuned.json", ckbt_tmpdir());
    const char *host = "Some CPU | avx2", *lim[] = {"NC=64,256"};
    int64_t v[CKB_MAX_PARAMS];
    ckb_expert_defaults(w, NULL, v);
    ckb_expert_config cfg;
    ckb_expert_config_set(w, v, &cfg);
    ckb_tune_outcome out = {.best_ms = 9, .untuned_ms = 10.5, .speedup = 2.2,
                            .untuned_speedup = 1.9, .gain = 10.5 / 9, .confirm_rounds = 3,
                            .tried = 2, .correct = 2, .limits = lim, .nlimits = 1};
    CKBT_EXPECT(ckb_expert_config_write(path, host, w, CKB_SIZE_SMALL, 2, &cfg, &out) == 0,
                "write");
    json_object *root = json_object_from_file(path), *e = NULL;
    snprintf(key, sizeof key, "small/2t @ %s", host);
    CKBT_EXPECT(root && json_object_object_get_ex(root, key, &e), "entry '%s'", key);
    if (!e) {
        json_object_put(root);
        return;
    }
    json_object *x;
    CKBT_EXPECT(json_object_object_get_ex(e, "confirm_rounds", &x) && json_object_get_int(x) == 3,
                "confirm_rounds 3");
    CKBT_EXPECT(json_object_object_get_ex(e, "gain_over_untuned", &x) &&
                    near(json_object_get_double(x), 10.5 / 9) &&
                    json_object_object_get_ex(e, "median_ms", &x) &&
                    near(json_object_get_double(x), 9) &&
                    json_object_object_get_ex(e, "untuned_median_ms", &x) &&
                    near(json_object_get_double(x), 10.5),
                "the gain is the outcome's (confirmed), with both medians");

    /* FORMATS.md: the table after "<!-- fields: tuned_entry -->" */
    char *doc = ckb_read_file("docs/FORMATS.md", NULL);
    char *t = doc ? strstr(doc, "<!-- fields: tuned_entry -->") : NULL;
    CKBT_EXPECT(t != NULL, "FORMATS.md has the tuned_entry table");
    char names[64][40];
    int nn = 0;
    for (char *l = t ? strchr(t, '\n') : NULL; l && nn < 64; l = strchr(l + 1, '\n')) {
        if (l[1] == '\n' && nn)
            break; /* the table's end */
        if (l[1] != '|' || strncmp(l + 1, "| field", 7) == 0 || strncmp(l + 1, "|---", 4) == 0)
            continue;
        char *end = strchr(l + 2, '|');
        for (char *p = l + 2; (p = strchr(p, '`')) && p < end && nn < 64;) {
            char *q = strchr(p + 1, '`');
            if (!q || q > end)
                break;
            snprintf(names[nn++], sizeof names[0], "%.*s", (int)(q - p - 1), p + 1);
            p = q + 1;
        }
    }
    json_object_object_foreach(e, k, val)
    {
        (void)val;
        int found = 0;
        for (int i = 0; i < nn; i++)
            found |= strcmp(names[i], k) == 0;
        CKBT_EXPECT(found, "tuned.json's %s is written but FORMATS.md does not document it", k);
    }
    for (int i = 0; i < nn; i++)
        CKBT_EXPECT(json_object_object_get_ex(e, names[i], &x),
                    "FORMATS.md documents %s but this entry has none", names[i]);
    free(doc);
    json_object_put(root);
}
