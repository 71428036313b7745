/*
 * profile.c — the machine profile: this CPU's facts (model, ISA, caches),
 * the measurements of peak.c put together, and the JSON file that caches
 * them per thread budget.
 */
#include "machine/profile.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/cputime.h"
#include "core/excl.h"
#include "core/fsutil.h"
#include "core/say.h"
#include "machine/isa.h"

/* Bumped when a field changes meaning: an older file is then re-measured. */
enum { PROFILE__FORMAT = 2 }; /* 2: isa_level, the bf16 dot apart, L2/L3 bandwidth */

/* A single-thread peak this far below its share of the N-thread one (or the
 * reverse) means a vCPU was descheduled during one of the two runs. */
#define PROFILE__SCALING_MIN 0.8
enum { PROFILE__RETRIES = 2, PROFILE__RUNS = 3 };

/* The ISA features that decide which kernels can run, in this order. */
static const char *const profile__features[] = {
    "avx2",        "fma",         "avx512f",  "avx512dq", "avx512cd", "avx512bw", "avx512vl",
    "avx512_bf16", "avx512_vnni", "avx512_fp16", "avx_vnni", "amx_tile", "amx_bf16", "amx_int8",
};

static void profile__trim(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    size_t i = 0;
    while (s[i] == ' ' || s[i] == '\t')
        i++;
    memmove(s, s + i, n - i + 1);
}

/* Model name and ISA features of the first processor in /proc/cpuinfo,
 * the features above `level` left out. */
static void profile__cpuinfo(ckb_machine *m, ckb_isa level)
{
    snprintf(m->cpu, sizeof m->cpu, "unknown");
    m->isa[0] = '\0';
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[8192];
    int got_name = 0, got_flags = 0;
    while ((!got_name || !got_flags) && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        *colon = '\0';
        char *key = line, *val = colon + 1;
        profile__trim(key);
        profile__trim(val);
        if (!got_name && strcmp(key, "model name") == 0) {
            snprintf(m->cpu, sizeof m->cpu, "%s", val);
            got_name = 1;
        } else if (!got_flags && strcmp(key, "flags") == 0) {
            size_t len = 0;
            for (size_t i = 0; i < sizeof profile__features / sizeof *profile__features; i++) {
                if (!ckb_isa_flags_have(val, profile__features[i]) ||
                    !ckb_isa_feature_allowed(profile__features[i], level))
                    continue;
                int w = snprintf(m->isa + len, sizeof m->isa - len, "%s%s", len ? " " : "",
                                 profile__features[i]);
                if (w < 0 || (size_t)w >= sizeof m->isa - len)
                    break;
                len += (size_t)w;
            }
            got_flags = 1;
        }
    }
    fclose(f);
}

/* "48K", "32M", "1024" -> bytes; 0 when unreadable. */
static int64_t profile__sysfs_size(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    long long v = 0;
    char unit = '\0';
    int n = fscanf(f, "%lld%c", &v, &unit);
    fclose(f);
    if (n < 1 || v < 0)
        return 0;
    if (unit == 'K')
        v <<= 10;
    else if (unit == 'M')
        v <<= 20;
    else if (unit == 'G')
        v <<= 30;
    return (int64_t)v;
}

/* Cache sizes of cpu0 from sysfs (one instance of each level). */
static void profile__caches(ckb_machine *m)
{
    m->l1d = m->l2 = m->l3 = 0;
    for (int i = 0; i < 16; i++) {
        char path[128], type[32] = "";
        int level = 0;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        FILE *f = fopen(path, "r");
        if (!f)
            break;
        if (fscanf(f, "%d", &level) != 1)
            level = 0;
        fclose(f);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        if ((f = fopen(path, "r")) != NULL) {
            if (fscanf(f, "%31s", type) != 1)
                type[0] = '\0';
            fclose(f);
        }
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        int64_t size = profile__sysfs_size(path);
        if (level == 1 && strcmp(type, "Data") == 0)
            m->l1d = size;
        else if (level == 2 && strcmp(type, "Instruction") != 0)
            m->l2 = size;
        else if (level == 3 && strcmp(type, "Instruction") != 0)
            m->l3 = size;
    }
}

void ckb_machine_probe(int threads, ckb_machine *m)
{
    memset(m, 0, sizeof *m);
    ckb_isa level = ckb_isa_level();
    profile__cpuinfo(m, level);
    snprintf(m->isa_level, sizeof m->isa_level, "%s", ckb_isa_name(level));
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    m->cores = n > 0 ? (int)n : 1;
    m->threads = threads;
    profile__caches(m);
#if defined(__clang__)
    snprintf(m->compiler, sizeof m->compiler, "clang %s", __clang_version__);
#elif defined(__GNUC__)
    snprintf(m->compiler, sizeof m->compiler, "gcc %s", __VERSION__);
#else
    snprintf(m->compiler, sizeof m->compiler, "unknown");
#endif
}

/* Whether the N-thread figure is within reach of N (at most cores) times
 * the single-thread one. */
static int profile__scales(double nt, double one, int threads, int cores)
{
    int expect = threads < cores ? threads : cores;
    return nt >= PROFILE__SCALING_MIN * expect * one;
}

static double profile__max3(double a, double b, double c)
{
    double m = a > b ? a : b;
    return m > c ? m : c;
}

/* The units for `threads`: f32 FMA, the bf16 dot and AMX (0 where the ISA
 * level has none). 0 on success. */
static int profile__units(int threads, double *f32, double *dot, double *amx)
{
    *f32 = ckb_machine_peak_f32(threads);
    *dot = ckb_machine_peak_bf16_dot(threads);
    *amx = ckb_machine_peak_bf16_amx(threads);
    return *f32 > 0 && *dot >= 0 && *amx >= 0 ? 0 : -1;
}

/* Bytes per thread for a streaming read that stays in L2 (half of one, a
 * core's own) and in L3 (a quarter of it, shared by the team: a shared L3
 * is rarely all ours; half of this host's 32 MiB read at DRAM speed from one
 * thread); 0 when the size is unknown. With many threads an L3 share can be
 * as small as an L2 and the figure then leans towards L2's: too high a roof
 * is safe (a % of peak a little low), too low one is not (the evaluator's
 * beyond_roofline note would call an honest kernel too fast). */
static int64_t profile__l2_buffer(const ckb_machine *m) { return m->l2 > 0 ? m->l2 / 2 : 0; }

static int64_t profile__l3_buffer(const ckb_machine *m, int threads)
{
    if (m->l3 <= 0)
        return 0;
    int64_t b = m->l3 / 4 / threads;
    return b > 16384 ? b : 16384;
}

double ckb_machine_l3_read_now(const ckb_machine *m, int threads)
{
    const int64_t b = m && threads > 0 ? profile__l3_buffer(m, threads) : 0;
    return b > 0 ? ckb_machine_read_bandwidth(threads, b) : -1.0;
}

static int profile__measure_once(int threads, ckb_machine *out)
{
    int rc = -1;
    ckb_machine m;
    ckb_machine_probe(threads, &m);
    double dot1, amx1;
    if (profile__units(1, &m.f32_gflops_1t, &dot1, &amx1) != 0)
        goto cleanup;
    m.bf16_gflops_1t = profile__max3(m.f32_gflops_1t, dot1, amx1);
    m.bf16_dot_gflops_1t = dot1;
    if (threads == 1) {
        m.f32_gflops = m.f32_gflops_1t;
        m.bf16_dot_gflops = dot1;
        m.bf16_amx_gflops = amx1;
    } else {
        /* a descheduled vCPU shows as a team at single-thread speed: redo it */
        for (int tries = 0; tries <= PROFILE__RETRIES; tries++) {
            double f, d, a;
            if (profile__units(threads, &f, &d, &a) != 0)
                goto cleanup;
            if (f > m.f32_gflops)
                m.f32_gflops = f;
            if (d > m.bf16_dot_gflops)
                m.bf16_dot_gflops = d;
            if (a > m.bf16_amx_gflops)
                m.bf16_amx_gflops = a;
            if (profile__scales(m.f32_gflops, m.f32_gflops_1t, threads, m.cores) &&
                profile__scales(m.bf16_dot_gflops, dot1, threads, m.cores))
                break;
        }
        if (!profile__scales(m.f32_gflops, m.f32_gflops_1t, threads, m.cores) ||
            !profile__scales(m.bf16_dot_gflops, dot1, threads, m.cores))
            ckb_say("ckbench: warning: %d threads reach only %.2fx the single-thread f32 peak "
                    "(%.1f vs %.1f GFLOP/s); a core may be busy or descheduled\n",
                    threads, m.f32_gflops / m.f32_gflops_1t, m.f32_gflops, m.f32_gflops_1t);
    }
    m.bf16_gflops = profile__max3(m.f32_gflops, m.bf16_dot_gflops, m.bf16_amx_gflops);
    int64_t b2 = profile__l2_buffer(&m), b3 = profile__l3_buffer(&m, threads);
    m.l2_gbs = b2 > 0 ? ckb_machine_read_bandwidth(threads, b2) : 0;
    m.l3_gbs = b3 > 0 ? ckb_machine_read_bandwidth(threads, b3) : 0;
    if (m.l2_gbs < 0 || m.l3_gbs < 0)
        goto cleanup;
    m.bw_gbs = ckb_machine_bandwidth(threads, m.l3);
    if (m.bw_gbs <= 0)
        goto cleanup;
    time_t now = time(NULL);
    struct tm tm;
    if (!gmtime_r(&now, &tm) ||
        strftime(m.measured_at, sizeof m.measured_at, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(m.measured_at, sizeof m.measured_at, "unknown");
    *out = m;
    rc = 0;
cleanup:
    return rc;
}

static double profile__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int ckb_machine_measure(int threads, ckb_machine *out)
{
    if (threads < 1 || !out)
        return -1;
    /* Every % of peak divides by these figures: they are measured while no
     * evaluation times (the machine-wide lock), and again when other work
     * took the machine meanwhile (a profile taken under load reads low and
     * would flatter every kernel); the least disturbed of a few runs is kept
     * and says how disturbed it was. */
    ckb_excl_lock();
    int rc = -1;
    double best = 1e9;
    for (int run = 0; run < PROFILE__RUNS; run++) {
        pid_t self = getpid();
        ckb_cpu_times t0, t1;
        ckb_cpu_times_read(&self, 1, &t0);
        double start = profile__now();
        ckb_machine m;
        if (profile__measure_once(threads, &m) != 0)
            break;
        ckb_cpu_times_read(&self, 1, &t1);
        double steal, other;
        ckb_cpu_times_disturbance(&t0, &t1, profile__now() - start, &steal, &other);
        m.disturbed_pct = steal + other;
        rc = 0;
        if (m.disturbed_pct < best) {
            best = m.disturbed_pct;
            *out = m;
        }
        if (m.disturbed_pct <= CKB_MACHINE_MAX_DISTURBED_PCT)
            break;
        ckb_say("ckbench: other work took %.0f%% of the machine (%.0f%% stolen by the "
                "hypervisor) while it was measured%s\n",
                m.disturbed_pct, steal, run + 1 < PROFILE__RUNS ? "; measuring again" : "");
    }
    ckb_excl_unlock();
    return rc;
}

json_object *ckb_machine_to_json(const ckb_machine *m)
{
    json_object *j = json_object_new_object();
    json_object_object_add(j, "format", json_object_new_int(PROFILE__FORMAT));
    json_object_object_add(j, "cpu", json_object_new_string(m->cpu));
    json_object_object_add(j, "isa", json_object_new_string(m->isa));
    json_object_object_add(j, "isa_level", json_object_new_string(m->isa_level));
    json_object_object_add(j, "cores", json_object_new_int(m->cores));
    json_object_object_add(j, "threads", json_object_new_int(m->threads));
    json_object_object_add(j, "l1d_bytes", json_object_new_int64(m->l1d));
    json_object_object_add(j, "l2_bytes", json_object_new_int64(m->l2));
    json_object_object_add(j, "l3_bytes", json_object_new_int64(m->l3));
    json_object_object_add(j, "f32_gflops", json_object_new_double(m->f32_gflops));
    json_object_object_add(j, "bf16_gflops", json_object_new_double(m->bf16_gflops));
    json_object_object_add(j, "bf16_dot_gflops", json_object_new_double(m->bf16_dot_gflops));
    json_object_object_add(j, "bf16_amx_gflops", json_object_new_double(m->bf16_amx_gflops));
    json_object_object_add(j, "l2_gbs", json_object_new_double(m->l2_gbs));
    json_object_object_add(j, "l3_gbs", json_object_new_double(m->l3_gbs));
    json_object_object_add(j, "bw_gbs", json_object_new_double(m->bw_gbs));
    json_object_object_add(j, "f32_gflops_1t", json_object_new_double(m->f32_gflops_1t));
    json_object_object_add(j, "bf16_gflops_1t", json_object_new_double(m->bf16_gflops_1t));
    json_object_object_add(j, "bf16_dot_gflops_1t", json_object_new_double(m->bf16_dot_gflops_1t));
    json_object_object_add(j, "measured_at", json_object_new_string(m->measured_at));
    json_object_object_add(j, "compiler", json_object_new_string(m->compiler));
    json_object_object_add(j, "disturbed_pct", json_object_new_double(m->disturbed_pct));
    return j;
}

int ckb_machine_save(const ckb_machine *m, const char *path)
{
    int rc = -1;
    json_object *j = NULL;
    char *dir = NULL;
    if (!m || !path || !*path) {
        errno = EINVAL;
        goto cleanup;
    }
    dir = ckb_xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        if (ckb_mkdirs(dir) != 0)
            goto cleanup;
    }
    j = ckb_machine_to_json(m);
    const char *text =
        json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
    size_t len = strlen(text);
    /* a trailing newline for the people who cat it */
    char *buf = ckb_xmalloc(len + 2);
    memcpy(buf, text, len);
    buf[len] = '\n';
    rc = ckb_write_file_atomic(path, buf, len + 1);
    free(buf);
cleanup:
    if (j)
        json_object_put(j);
    free(dir);
    return rc;
}

static int profile__get_str(json_object *o, const char *key, char *dst, size_t n)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
        return -1;
    snprintf(dst, n, "%s", json_object_get_string(v));
    return 0;
}

static int profile__get_int(json_object *o, const char *key, int64_t *dst)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
        return -1;
    *dst = json_object_get_int64(v);
    return 0;
}

/* A positive, finite number (an integer is accepted: "100" is a figure too). */
static int profile__get_pos(json_object *o, const char *key, double *dst)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) ||
        !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
        return -1;
    *dst = json_object_get_double(v);
    return isfinite(*dst) && *dst > 0 ? 0 : -1;
}

/* A finite number >= 0. */
static int profile__get_nonneg(json_object *o, const char *key, double *dst)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) ||
        !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
        return -1;
    *dst = json_object_get_double(v);
    return isfinite(*dst) && *dst >= 0 ? 0 : -1;
}

int ckb_machine_load(const char *path, ckb_machine *out)
{
    int rc = -1;
    char *text = NULL;
    json_object *j = NULL;
    ckb_machine m;
    int64_t format, cores, threads;
    memset(&m, 0, sizeof m);
    if (!path || !out || !(text = ckb_read_file(path, NULL)))
        goto cleanup;
    j = json_tokener_parse(text);
    if (!j || !json_object_is_type(j, json_type_object))
        goto cleanup;
    if (profile__get_int(j, "format", &format) != 0 || format != PROFILE__FORMAT)
        goto cleanup;
    if (profile__get_str(j, "cpu", m.cpu, sizeof m.cpu) != 0 ||
        profile__get_str(j, "isa", m.isa, sizeof m.isa) != 0 ||
        profile__get_str(j, "isa_level", m.isa_level, sizeof m.isa_level) != 0 ||
        profile__get_str(j, "measured_at", m.measured_at, sizeof m.measured_at) != 0 ||
        profile__get_str(j, "compiler", m.compiler, sizeof m.compiler) != 0)
        goto cleanup;
    /* optional: profiles stored before it say nothing of their load */
    json_object *dist;
    if (json_object_object_get_ex(j, "disturbed_pct", &dist))
        m.disturbed_pct = json_object_get_double(dist);
    if (profile__get_int(j, "cores", &cores) != 0 || profile__get_int(j, "threads", &threads) != 0 ||
        profile__get_int(j, "l1d_bytes", &m.l1d) != 0 ||
        profile__get_int(j, "l2_bytes", &m.l2) != 0 || profile__get_int(j, "l3_bytes", &m.l3) != 0)
        goto cleanup;
    if (cores < 1 || cores > 1 << 20 || threads < 1 || threads > 1 << 20 || m.l1d < 0 ||
        m.l2 < 0 || m.l3 < 0)
        goto cleanup;
    m.cores = (int)cores;
    m.threads = (int)threads;
    /* a zero or negative peak would divide every % of peak by nothing */
    if (profile__get_pos(j, "f32_gflops", &m.f32_gflops) != 0 ||
        profile__get_pos(j, "bf16_gflops", &m.bf16_gflops) != 0 ||
        profile__get_pos(j, "bw_gbs", &m.bw_gbs) != 0 ||
        profile__get_pos(j, "f32_gflops_1t", &m.f32_gflops_1t) != 0 ||
        profile__get_pos(j, "bf16_gflops_1t", &m.bf16_gflops_1t) != 0)
        goto cleanup;
    /* Required, 0 allowed (no such unit, or the cache size unknown): a
     * profile without them is of an older format and is measured again. */
    if (profile__get_nonneg(j, "bf16_amx_gflops", &m.bf16_amx_gflops) != 0 ||
        profile__get_nonneg(j, "bf16_dot_gflops", &m.bf16_dot_gflops) != 0 ||
        profile__get_nonneg(j, "bf16_dot_gflops_1t", &m.bf16_dot_gflops_1t) != 0 ||
        profile__get_nonneg(j, "l2_gbs", &m.l2_gbs) != 0 ||
        profile__get_nonneg(j, "l3_gbs", &m.l3_gbs) != 0)
        goto cleanup;
    *out = m;
    rc = 0;
cleanup:
    if (j)
        json_object_put(j);
    free(text);
    return rc;
}

void ckb_machine_default_path(int threads, char *buf, size_t n)
{
    if (!buf || n == 0)
        return;
    snprintf(buf, n, "%s/machine-%dt-%s.json", ckb_cache_dir(), threads,
             ckb_isa_name(ckb_isa_level()));
}

int ckb_machine_same_host(const ckb_machine *a, const ckb_machine *b)
{
    return a->threads == b->threads && a->cores == b->cores && strcmp(a->cpu, b->cpu) == 0 &&
           strcmp(a->isa, b->isa) == 0 && strcmp(a->isa_level, b->isa_level) == 0;
}

int ckb_machine_get(int threads, const char *path, ckb_machine *out)
{
    char def[1024];
    if (threads < 1 || !out)
        return -1;
    if (!path) {
        ckb_machine_default_path(threads, def, sizeof def);
        path = def;
    }
    ckb_machine here, m;
    ckb_machine_probe(threads, &here);
    if (ckb_machine_load(path, &m) == 0 && ckb_machine_same_host(&m, &here)) {
        *out = m;
        return 0;
    }
    ckb_say("ckbench: measuring this machine (once) with %d thread%s...\n", threads,
            threads == 1 ? "" : "s");
    if (ckb_machine_measure(threads, &m) != 0)
        return -1;
    if (m.disturbed_pct > CKB_MACHINE_MAX_DISTURBED_PCT)
        ckb_say("ckbench: warning: the machine profile was measured while other work "
                "took %.0f%% of the machine; it is used now but not stored, so the next "
                "command measures again (`ckbench machine --force` on a quiet machine)\n",
                m.disturbed_pct);
    else if (ckb_machine_save(&m, path) != 0)
        ckb_say("ckbench: warning: cannot store the profile in %s: %s\n", path, strerror(errno));
    else
        ckb_say("ckbench: machine profile stored in %s\n", path);
    *out = m;
    return 0;
}

double ckb_machine_ridge(const ckb_machine *m)
{
    return m && m->bw_gbs > 0 ? m->bf16_gflops / m->bw_gbs : 0.0;
}
