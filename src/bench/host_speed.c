/*
 * host_speed.c — the suite's check of the host's speed against its profile
 * (see host_speed.h).
 */
#include "bench/host_speed.h"

#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "core/cputime.h"
#include "core/excl.h"
#include "core/jsonget.h"
#include "core/proc.h"

/* Runs of a probe at most: one is enough unless other work took the
 * machine meanwhile, as the profile itself is measured. */
enum { HOST_SPEED__RUNS = 3 };

ckb_host_speed ckb_host_speed_probe(const ckb_machine *m, int threads)
{
    ckb_host_speed best = {-1, -1};
    double least = 1e9;
    ckb_excl_lock();
    for (int run = 0; run < HOST_SPEED__RUNS; run++) {
        pid_t self = getpid();
        ckb_cpu_times t0, t1;
        ckb_cpu_times_read(&self, 1, &t0);
        const double start = ckb_now();
        ckb_host_speed s = {ckb_machine_peak_f32(threads), ckb_machine_l3_read_now(m, threads)};
        ckb_cpu_times_read(&self, 1, &t1);
        double steal, other;
        ckb_cpu_times_disturbance(&t0, &t1, ckb_now() - start, &steal, &other);
        if (steal + other < least) {
            least = steal + other;
            best = s;
        }
        if (least <= CKB_MACHINE_MAX_DISTURBED_PCT)
            break;
    }
    ckb_excl_unlock();
    return best;
}

static json_object *host_speed__num(double v)
{
    return isfinite(v) && v > 0 ? json_object_new_double(v) : NULL;
}

/* profile, start, end and the slower probe's ratio under the four names. */
static void host_speed__add(json_object *j, const char *const names[4], double profile,
                            double start, double end)
{
    const double slower = start > 0 && end > 0 ? fmin(start, end) : start > 0 ? start : end;
    json_object_object_add(j, names[0], host_speed__num(profile));
    json_object_object_add(j, names[1], host_speed__num(start));
    json_object_object_add(j, names[2], host_speed__num(end));
    json_object_object_add(j, names[3],
                           host_speed__num(profile > 0 && slower > 0 ? slower / profile : -1));
}

json_object *ckb_host_speed_json(const ckb_machine *m, ckb_host_speed start, ckb_host_speed end)
{
    static const char *const peak[4] = {"profile_gflops", "start_gflops", "end_gflops", "ratio"};
    static const char *const l3[4] = {"profile_l3_gbs", "start_l3_gbs", "end_l3_gbs",
                                      "l3_ratio"};
    json_object *j = json_object_new_object();
    host_speed__add(j, peak, m ? m->f32_gflops : -1, start.f32_gflops, end.f32_gflops);
    host_speed__add(j, l3, m ? m->l3_gbs : -1, start.l3_gbs, end.l3_gbs);
    return j;
}

ckb_host_speed ckb_host_speed_start_of(json_object *hs)
{
    const double g = ckb_json_num(hs, "start_gflops"), b = ckb_json_num(hs, "start_l3_gbs");
    return (ckb_host_speed){g > 0 ? g : -1, b > 0 ? b : -1};
}

void ckb_host_speed_line(json_object *hs, char *buf, size_t n)
{
    const double ratio = ckb_json_num(hs, "ratio"), l3 = ckb_json_num(hs, "l3_ratio");
    if (!isfinite(ratio) && !isfinite(l3)) {
        snprintf(buf, n, "%s", "");
        return;
    }
    int len = snprintf(buf, n,
                       "host speed against the profile: f32 FMA peak %.1f GFLOP/s at the start, "
                       "%.1f at the end, against %.1f: %.2f; L3 read %.1f and %.1f GB/s against "
                       "%.1f: %.2f",
                       ckb_json_num(hs, "start_gflops"), ckb_json_num(hs, "end_gflops"),
                       ckb_json_num(hs, "profile_gflops"), ratio,
                       ckb_json_num(hs, "start_l3_gbs"), ckb_json_num(hs, "end_l3_gbs"),
                       ckb_json_num(hs, "profile_l3_gbs"), l3);
    const int slow_peak = ratio < CKB_HOST_SPEED_SLOW, slow_l3 = l3 < CKB_HOST_SPEED_SLOW;
    char how[96];
    if (slow_peak)
        snprintf(how, sizeof how, "about %.0f%% low", 100.0 * (1.0 - ratio));
    else
        snprintf(how, sizeof how, "low, most for kernels bound by the L3");
    if ((slow_peak || slow_l3) && len >= 0 && (size_t)len < n)
        snprintf(buf + len, n - (size_t)len,
                 "\n  the host ran slower than when it was profiled: every %% of peak above "
                 "reads %s\n  (speedups, timed side by side, hold; measure on a quieter "
                 "host, or re-profile with ckbench machine --force if it stays this slow)",
                 how);
}
