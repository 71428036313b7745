/*
 * host_speed.h — whether this host ran a suite as fast as it ran when its
 * profile was measured. Every % of peak divides by the profile's roofs; a
 * host that slows down for hours (neighbours on a shared socket: no steal
 * time, no other process, so no evaluation reads as disturbed) shows every
 * kernel further from its roof than it is, while speedups, being ratios of
 * calls timed side by side, hold. So `bench` measures the f32 FMA peak and
 * the L3 read bandwidth again at the start and the end of its run and
 * records them beside the profile's (results.json "host_speed",
 * docs/FORMATS.md).
 */
#ifndef CKB_BENCH_HOST_SPEED_H
#define CKB_BENCH_HOST_SPEED_H

#include <stddef.h>

#include "machine/profile.h"

struct json_object;

/* Below this share of the profile's figure a run says that its % of peak
 * reads low. */
#define CKB_HOST_SPEED_SLOW 0.9

typedef struct {
    double f32_gflops; /* -1: not measured */
    double l3_gbs;
} ckb_host_speed;

/* Both figures now, measured as the profile m measured them, while no
 * evaluation times. */
ckb_host_speed ckb_host_speed_probe(const ckb_machine *m, int threads);

/* The probes of a run's start and end against m: {"profile_gflops",
 * "start_gflops", "end_gflops", "ratio", and the same for the L3: "profile_l3_gbs",
 * "start_l3_gbs", "end_l3_gbs", "l3_ratio"}; a ratio is the slower probe over
 * the profile's figure (null where unknown). */
struct json_object *ckb_host_speed_json(const ckb_machine *m, ckb_host_speed start,
                                        ckb_host_speed end);

/* The start probe a results.json recorded ({-1, -1} where absent). */
ckb_host_speed ckb_host_speed_start_of(struct json_object *host_speed);

/* One line for bench's summary (with a warning when a ratio is below
 * CKB_HOST_SPEED_SLOW) into buf; "" when host_speed holds no ratio. */
void ckb_host_speed_line(struct json_object *host_speed, char *buf, size_t n);

#endif /* CKB_BENCH_HOST_SPEED_H */
