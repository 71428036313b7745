/*
 * metrics.h — what /metrics says, in Prometheus' text format: the queue,
 * evaluations by state and verdict (from the store, so they survive a
 * restart), the share whose timing was disturbed, evaluation and compile
 * seconds as histograms, HTTP requests by status, and the host speed check
 * (bench/host_speed.h) made at the server's start.
 */
#ifndef CKB_SERVE_METRICS_H
#define CKB_SERVE_METRICS_H

#include "serve/store.h"

typedef struct ckb_metrics ckb_metrics;

ckb_metrics *ckb_metrics_new(void);
void ckb_metrics_free(ckb_metrics *m);

/* An evaluation that ended: its run seconds, and its compile seconds when
 * it has some (< 0: none). */
void ckb_metrics_observe_eval(ckb_metrics *m, double run_s, double compile_s);
/* An HTTP response. */
void ckb_metrics_observe_http(ckb_metrics *m, int status, double seconds);
/* The host speed check: the f32 FMA peak and L3 bandwidth measured now,
 * over the machine profile's (ratios; < 0: not measured). */
void ckb_metrics_set_host_speed(ckb_metrics *m, double fma_ratio, double l3_ratio);

/* The whole text (caller frees). */
char *ckb_metrics_render(ckb_metrics *m, const ckb_store_counts *c, int running);

#endif /* CKB_SERVE_METRICS_H */
