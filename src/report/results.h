/*
 * results.h — a suite result (results.json of `ckbench bench`) read back
 * for a report, with the figures a report shows derived once here: GFLOP/s
 * and % of peak from the medians, arithmetic intensity and the roofline
 * bound from the workload's FLOPs and bytes and the machine profile the run
 * recorded. Writers only format these numbers; they never recompute them.
 *
 * Strings point into the parsed JSON, which the suite owns: they live until
 * ckb_report_suite_free.
 */
#ifndef CKB_REPORT_RESULTS_H
#define CKB_REPORT_RESULTS_H

#include <stddef.h>

#include "core/error.h"
#include "machine/profile.h"
#include "machine/roofline.h"

struct json_object;

typedef struct {
    int present;              /* the variant was run (an expert may be absent) */
    const char *status;       /* "ok", or the eval status of a failed expert */
    double median_ms, mean_ms, std_ms, min_ms; /* NAN when not timed */
    double gflops, pct_of_peak;                /* NAN when not timed */
    const char *error;        /* why it failed, or NULL */
} ckb_report_variant;

typedef struct {
    const char *id, *model, *op, *tags, *shape;
    char *dims;               /* "M=256 K=256 N=512" (owned) */
    double flops, bytes;
    double ai;                /* FLOP per byte; NAN when bytes unknown */
    ckb_roof roof;            /* the workload's roofs: as the run recorded them, else made
                                 from the recorded profile (machine/roofline.h) */
    const char *bound;        /* "compute" or "memory" against roof; "-" unknown */
    ckb_report_variant base, expert;
    double speedup;           /* baseline / expert median; NAN without a timed expert, or
                                 when the timing was disturbed */
    int disturbed;            /* other work disturbed the timing: the times are shown
                                 marked, never used as figures (speedup, GFLOP/s NAN) */
    char *params;             /* the expert's parameters "MR=6 MC=1024" (owned), or NULL */
    int tuned;
    const char *source_path;  /* the expert source as recorded, or NULL */
    char *source;             /* its text when found unchanged, else NULL (owned) */
    char *source_note;        /* why the source is not shown or not verified, or NULL (owned) */
} ckb_report_workload;

typedef struct {
    char *path;               /* the results.json read (owned) */
    char label[8];            /* "A", "B", ... in the order given */
    struct json_object *root; /* owns every borrowed string */
    const char *started_at, *commit, *size, *timing, *compiler, *compile_flags;
    const char *onednn_version, *onednn_isa, *hostname, *kernel;
    char *libraries;          /* "json-c 0.16, libseccomp 2.5.4, ..." (owned), or NULL */
    int threads, warmup, iters;
    ckb_machine machine;      /* zero figures when the run recorded none */
    const char *noise_workload;
    double noise_ratio;       /* NAN when absent */
    double speed_ratio;       /* host_speed: slower probe / profile's f32 peak; NAN when absent */
    ckb_report_workload *w;
    int n;
} ckb_report_suite;

/* Reads a suite result: path is a results.json or a folder holding one.
 * The expert sources are looked for beside the results (path's folder),
 * then under the ckbench root, and kept only if their hash matches the
 * recorded one. CKB_OK, or a code with a message in err (what is wrong and
 * with which file) when the file is missing, not JSON or not a suite
 * result. `label` names the suite in comparisons. */
int ckb_report_suite_load(const char *path, const char *label, ckb_report_suite *s, ckb_err *err);
void ckb_report_suite_free(ckb_report_suite *s);

/* The workload with this id, or NULL. */
const ckb_report_workload *ckb_report_suite_find(const ckb_report_suite *s, const char *id);

/* Whether path holds a suite result (a results.json, or a folder with one)
 * rather than something else (a generation run). Reads nothing but names. */
int ckb_report_is_suite_path(const char *path);

#endif /* CKB_REPORT_RESULTS_H */
