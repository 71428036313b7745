/*
 * host_speed.c — the suite's check of the host's speed against its profile
 * (see host_speed.h).
 */
#include "bench/host_speed.h"

#include <json-c/json.h>
#include <math.h>
#include <stdio.h>

#include "core/excl.h"
#include "core/jsonget.h"

double ckb_host_speed_probe(int threads)
{
    ckb_excl_lock();
    double g = ckb_machine_peak_f32(threads);
    ckb_excl_unlock();
    return g;
}

static json_object *host_speed__num(double v)
{
    return isfinite(v) && v > 0 ? json_object_new_double(v) : NULL;
}

json_object *ckb_host_speed_json(const ckb_machine *m, double start, double end)
{
    const double profile = m ? m->f32_gflops : -1;
    double slower = start > 0 && end > 0 ? fmin(start, end) : start > 0 ? start : end;
    json_object *j = json_object_new_object();
    json_object_object_add(j, "profile_gflops", host_speed__num(profile));
    json_object_object_add(j, "start_gflops", host_speed__num(start));
    json_object_object_add(j, "end_gflops", host_speed__num(end));
    json_object_object_add(j, "ratio",
                           host_speed__num(profile > 0 && slower > 0 ? slower / profile : -1));
    return j;
}

void ckb_host_speed_line(json_object *hs, char *buf, size_t n)
{
    const double ratio = ckb_json_num(hs, "ratio");
    if (!isfinite(ratio)) {
        snprintf(buf, n, "%s", "");
        return;
    }
    int len = snprintf(buf, n,
                       "host speed: f32 FMA peak %.1f GFLOP/s at the start, %.1f at the end, "
                       "against the profile's %.1f: %.2f",
                       ckb_json_num(hs, "start_gflops"), ckb_json_num(hs, "end_gflops"),
                       ckb_json_num(hs, "profile_gflops"), ratio);
    if (ratio < CKB_HOST_SPEED_SLOW && len >= 0 && (size_t)len < n)
        snprintf(buf + len, n - (size_t)len,
                 "\n  the host ran slower than when it was profiled: every %% of peak above "
                 "reads about %.0f%% low\n  (speedups, timed side by side, hold; measure on a "
                 "quieter host, or see ckbench machine --force)",
                 100.0 * (1.0 - ratio));
}
