/*
 * expert.h — a workload's expert kernel: workloads/<id>/expert.c, a
 * candidate file whose tunable macros the registry declares, and the tuned
 * values `ckbench tune` stores beside it in tuned.json, keyed by size,
 * thread budget and host (CPU model and ISA level in force): one file holds
 * the values of every host it was tuned on, and a host without an entry
 * runs the declared defaults, untuned, and is told so.
 *
 * tuned.json: {"<size>/<threads>t @ <cpu> | <isa level>": {"params": {...},
 * "cpu", "isa_level", "size", "threads", "median_ms", "speedup", ...,
 * "confirm_rounds", "param_limits": ["NAME=V,V", ...] when `tune --param`
 * narrowed the grid}} (docs/FORMATS.md, "Tuned values").
 * Entries keyed "<size>/<threads>t" alone (written before host keys) name
 * no host and are used by none.
 */
#ifndef CKB_EXPERT_H
#define CKB_EXPERT_H

#include <stddef.h>
#include <stdint.h>

#include "machine/profile.h"
#include "workloads/workload.h"

typedef struct {
    int n;
    int64_t values[CKB_MAX_PARAMS];
    char text[CKB_MAX_PARAMS][80];          /* "NAME=VALUE" */
    const char *defines[CKB_MAX_PARAMS];    /* points into text, for ckb_eval_opts */
    int tuned;                              /* 1: read from tuned.json for this host */
    char note[512];                         /* why untuned, for the user; "" when tuned */
} ckb_expert_config;

/* This host as tuned.json keys it: "<cpu model> | <ISA level in force>". */
void ckb_expert_host(char *buf, size_t n);

/* 1 when w has an expert; its path goes into buf. */
int ckb_expert_path(const ckb_workload *w, char *buf, size_t n);
/* Fills cfg from values[] (w->nparams of them). */
void ckb_expert_config_set(const ckb_workload *w, const int64_t *values, ckb_expert_config *cfg);
/* The value of a CKB_PARAM_HOST_UNIT parameter on the host m profiles: 2
 * when AMX is its fastest bf16 unit, 0 the bf16 dot, else 1 (f32 FMA; also
 * for m NULL or without figures). */
int ckb_expert_host_unit(const ckb_machine *m);
/* A grid value as it runs on m: CKB_PARAM_HOST_UNIT resolved, any other
 * as it is (defaults: ckb_expert_defaults). */
int64_t ckb_expert_param_value(int64_t v, const ckb_machine *m);
/* 0 when v, a grid value of p, names a matmul unit of p's HOST_UNIT kind
 * that m measured absent (0 the bf16 dot, 2 AMX): the expert would fall back
 * to another unit, and timing it again would only repeat that one. */
int ckb_expert_value_runs(const ckb_param *p, int64_t v, const ckb_machine *m);
/* 1 when p's default is a block of the host model (CKB_PARAM_HOST_MR ...
 * CKB_PARAM_HOST_LAST in workloads/workload.h). */
int ckb_expert_param_is_block(const ckb_param *p);
/* The model's value of p's block for an expert on `unit` (the MMA
 * encoding) on the host m profiles (machine/blocking.h; m NULL: assumed
 * facts), before it is fitted to the expert. */
int64_t ckb_expert_block_model(const ckb_param *p, const ckb_machine *m, int unit);
/* v, a model value, as p's expert accepts it: divided by p->per; with
 * p->multiple, rounded down to a multiple and kept within the grid's
 * range (grid values below 1, "all of it", aside); else the grid value
 * nearest by ratio (ties: the smaller). */
int64_t ckb_expert_block_fit(const ckb_param *p, int64_t v);
/* The declared defaults as they run on m with the matmul unit `unit`:
 * a CKB_PARAM_HOST_UNIT parameter is unit, a block is the model's for that
 * unit, fitted (a register tile's rows and vectors as a pair); any other as
 * declared. */
void ckb_expert_defaults_on(const ckb_workload *w, const ckb_machine *m, int unit,
                            int64_t *values);
/* The same on m's fastest unit (ckb_expert_host_unit): the untuned
 * defaults, which need no tuned.json. */
void ckb_expert_defaults(const ckb_workload *w, const ckb_machine *m, int64_t *values);
/* The tuned values for (size, threads, this host), else the declared
 * defaults (resolved for m) with cfg->tuned = 0 and cfg->note saying what
 * tuned.json holds. */
void ckb_expert_config_load(const ckb_workload *w, ckb_size s, int threads,
                            const ckb_machine *m, ckb_expert_config *cfg);
/* The same from the tuned.json at path for the given host string. */
void ckb_expert_config_read(const char *path, const char *host, const ckb_workload *w,
                            ckb_size s, int threads, const ckb_machine *m,
                            ckb_expert_config *cfg);
/* What a search found: the best configuration's and the untuned defaults'
 * medians and speedups over the baseline timed beside them (-1: not correct);
 * after a confirm pass (confirm_rounds > 0) the medians of its rounds'
 * (bench/tune.h), else the search's single timings. gain: the best over
 * untuned (confirmed: untuned_ms / best_ms; unconfirmed: speedup /
 * untuned_speedup); <= 0: none. */
typedef struct {
    double best_ms, untuned_ms;
    double speedup, untuned_speedup;
    double gain;
    int confirm_rounds;
    int tried, correct;
    const char *const *limits; /* the --param limits of a narrowed grid (nlimits), stored */
    int nlimits;               /* as "param_limits"; 0: the whole grid was searched */
} ckb_tune_outcome;
/* Records the tuned values for this host with what the search found; 0 on
 * success. Other hosts' entries are kept. */
int ckb_expert_config_save(const ckb_workload *w, ckb_size s, int threads,
                           const ckb_expert_config *cfg, const ckb_tune_outcome *out);
/* The same into the tuned.json at path for the given host string. */
int ckb_expert_config_write(const char *path, const char *host, const ckb_workload *w,
                            ckb_size s, int threads, const ckb_expert_config *cfg,
                            const ckb_tune_outcome *out);
/* Where tuned values live: workloads/<id>/tuned.json, or
 * $CKBENCH_TUNED_DIR/<id>/tuned.json when that is set (and not empty):
 * every reader and writer (tune, bench, generate's expert, serve) then uses
 * that file instead, and the tree's is neither read nor changed. */
void ckb_expert_tuned_path(const ckb_workload *w, char *buf, size_t n);

#endif /* CKB_EXPERT_H */
