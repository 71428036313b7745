/*
 * host_speed.h — whether this host ran a suite as fast as it ran when its
 * profile was measured. Every % of peak divides by the profile's roof; a
 * host that slows down for hours (neighbours on a shared socket: no steal
 * time, no other process, so no evaluation reads as disturbed) shows every
 * kernel further from its roof than it is, while speedups, being ratios of
 * calls timed side by side, hold. So `bench` measures the f32 FMA peak
 * again at the start and the end of its run and records it beside the
 * profile's (results.json "host_speed", docs/FORMATS.md).
 */
#ifndef CKB_BENCH_HOST_SPEED_H
#define CKB_BENCH_HOST_SPEED_H

#include "machine/profile.h"

struct json_object;

/* Below this share of the profile's peak a run says that its % of peak
 * reads low: twice the run-to-run spread of the peak on a quiet host. */
#define CKB_HOST_SPEED_SLOW 0.9

/* The f32 FMA peak (GFLOP/s) on `threads` threads now, measured as the
 * profile measures it, while no evaluation times; -1 when it failed. */
double ckb_host_speed_probe(int threads);

/* {"profile_gflops", "start_gflops", "end_gflops", "ratio"}: ratio is the
 * slower probe over the profile's f32 peak (null where unknown). */
struct json_object *ckb_host_speed_json(const ckb_machine *m, double start, double end);

/* One line for bench's summary (with a warning when the ratio is below
 * CKB_HOST_SPEED_SLOW) into buf; "" when host_speed holds no ratio. */
void ckb_host_speed_line(struct json_object *host_speed, char *buf, size_t n);

#endif /* CKB_BENCH_HOST_SPEED_H */
