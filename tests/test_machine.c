/* The machine profile: plausible figures on this machine, a file that
 * round-trips every field, and a broken file that is refused, not trusted. */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "docs/docs.h"
#include "machine/isa.h"
#include "machine/profile.h"

/* A profile with every field set to something a round trip could lose:
 * fractions that need all 17 digits, 64-bit sizes, strings with quotes. */
static ckb_machine fake_profile(void)
{
    ckb_machine m;
    memset(&m, 0, sizeof m);
    snprintf(m.cpu, sizeof m.cpu, "AMD EPYC \"Zen 5\" / test");
    snprintf(m.isa, sizeof m.isa, "avx512f avx512bw avx512vl avx512_bf16 avx512_vnni fma");
    snprintf(m.isa_level, sizeof m.isa_level, "avx512bf16");
    m.cores = 2;
    m.threads = 2;
    m.l1d = 48 << 10;
    m.l2 = 1 << 20;
    m.l3 = (int64_t)5 << 32; /* beyond 32 bits */
    m.f32_gflops = 1.0 / 3.0 * 1000;
    m.bf16_gflops = 987.654321012345678;
    m.bw_gbs = 31.400000000000002;
    m.bf16_dot_gflops = 123.456789012345678;
    m.bf16_amx_gflops = 0;
    m.l2_gbs = 1.0 / 7.0 * 1000;
    m.l3_gbs = 0; /* unknown L3 */
    m.bf16_dot_gflops_1t = 61.75;
    m.f32_gflops_1t = 2.0 / 7.0 * 500;
    m.bf16_gflops_1t = 0.1 + 0.2;
    snprintf(m.measured_at, sizeof m.measured_at, "2025-01-02T03:04:05Z");
    snprintf(m.compiler, sizeof m.compiler, "gcc 12.2.0");
    return m;
}

static void expect_same(const ckb_machine *a, const ckb_machine *b)
{
    CKBT_EXPECT(strcmp(a->cpu, b->cpu) == 0, "cpu '%s' vs '%s'", a->cpu, b->cpu);
    CKBT_EXPECT(strcmp(a->isa, b->isa) == 0, "isa '%s' vs '%s'", a->isa, b->isa);
    CKBT_EXPECT(strcmp(a->isa_level, b->isa_level) == 0, "isa_level '%s' vs '%s'", a->isa_level,
                b->isa_level);
    CKBT_EXPECT(a->cores == b->cores, "cores %d vs %d", a->cores, b->cores);
    CKBT_EXPECT(a->threads == b->threads, "threads %d vs %d", a->threads, b->threads);
    CKBT_EXPECT(a->l1d == b->l1d, "l1d %lld vs %lld", (long long)a->l1d, (long long)b->l1d);
    CKBT_EXPECT(a->l2 == b->l2, "l2 %lld vs %lld", (long long)a->l2, (long long)b->l2);
    CKBT_EXPECT(a->l3 == b->l3, "l3 %lld vs %lld", (long long)a->l3, (long long)b->l3);
    CKBT_EXPECT(a->f32_gflops == b->f32_gflops, "f32 %.17g vs %.17g", a->f32_gflops,
                b->f32_gflops);
    CKBT_EXPECT(a->bf16_gflops == b->bf16_gflops, "bf16 %.17g vs %.17g", a->bf16_gflops,
                b->bf16_gflops);
    CKBT_EXPECT(a->bw_gbs == b->bw_gbs, "bw %.17g vs %.17g", a->bw_gbs, b->bw_gbs);
    CKBT_EXPECT(a->bf16_dot_gflops == b->bf16_dot_gflops && a->bf16_amx_gflops == b->bf16_amx_gflops,
                "dot %.17g vs %.17g, AMX %.17g vs %.17g", a->bf16_dot_gflops, b->bf16_dot_gflops,
                a->bf16_amx_gflops, b->bf16_amx_gflops);
    CKBT_EXPECT(a->bf16_dot_gflops_1t == b->bf16_dot_gflops_1t, "dot 1t %.17g vs %.17g",
                a->bf16_dot_gflops_1t, b->bf16_dot_gflops_1t);
    CKBT_EXPECT(a->l2_gbs == b->l2_gbs && a->l3_gbs == b->l3_gbs, "L2 %.17g vs %.17g, L3 %.17g vs %.17g",
                a->l2_gbs, b->l2_gbs, a->l3_gbs, b->l3_gbs);
    CKBT_EXPECT(a->f32_gflops_1t == b->f32_gflops_1t, "f32 1t %.17g vs %.17g", a->f32_gflops_1t,
                b->f32_gflops_1t);
    CKBT_EXPECT(a->bf16_gflops_1t == b->bf16_gflops_1t, "bf16 1t %.17g vs %.17g",
                a->bf16_gflops_1t, b->bf16_gflops_1t);
    CKBT_EXPECT(strcmp(a->measured_at, b->measured_at) == 0, "measured_at '%s' vs '%s'",
                a->measured_at, b->measured_at);
    CKBT_EXPECT(strcmp(a->compiler, b->compiler) == 0, "compiler '%s' vs '%s'", a->compiler,
                b->compiler);
}

static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* What a one-thread measurement must show, derived from the ISA level the
 * probe found (or CKBENCH_ISA left), never from the CPU this was written on. */
static void expect_plausible_1t(const ckb_machine *m)
{
    ckb_isa level = ckb_isa_level();
    printf("    cpu '%s' isa '%s' level %s cores %d l1d %lld l2 %lld l3 %lld\n"
           "    f32 %.1f dot %.1f AMX %.1f -> bf16 roof %.1f GFLOP/s; L2 %.1f L3 %.1f DRAM %.1f "
           "GB/s, ridge %.1f FLOP/B\n",
           m->cpu, m->isa, m->isa_level, m->cores, (long long)m->l1d, (long long)m->l2,
           (long long)m->l3, m->f32_gflops, m->bf16_dot_gflops, m->bf16_amx_gflops,
           m->bf16_gflops, m->l2_gbs, m->l3_gbs, m->bw_gbs, ckb_machine_ridge(m));
    CKBT_EXPECT(strcmp(m->isa_level, ckb_isa_name(level)) == 0, "isa_level '%s', in force %s",
                m->isa_level, ckb_isa_name(level));
    CKBT_EXPECT(m->threads == 1 && m->cores >= 1, "threads %d cores %d", m->threads, m->cores);
    CKBT_EXPECT(m->f32_gflops > 1 && m->f32_gflops < 1000, "f32 per thread: %g GFLOP/s",
                m->f32_gflops);
    CKBT_EXPECT(m->f32_gflops_1t == m->f32_gflops && m->bf16_gflops_1t == m->bf16_gflops &&
                    m->bf16_dot_gflops_1t == m->bf16_dot_gflops,
                "one thread: the 1t figures are the figures");
    /* Which unit is faster is the CPU's business (vdpbf16ps runs at half
     * the f32 FMA rate on some BF16 CPUs): expect only what the probe found. */
    CKBT_EXPECT(m->bf16_gflops > 0, "bf16 %g GFLOP/s", m->bf16_gflops);
    /* the bf16 roof is the fastest unit measured, f32 FMA included */
    CKBT_EXPECT(m->bf16_gflops >= m->f32_gflops && m->bf16_gflops >= m->bf16_dot_gflops &&
                    m->bf16_gflops >= m->bf16_amx_gflops,
                "bf16 roof %g below a unit (f32 %g, dot %g, AMX %g)", m->bf16_gflops,
                m->f32_gflops, m->bf16_dot_gflops, m->bf16_amx_gflops);
    CKBT_EXPECT((m->bf16_dot_gflops > 0) == (level >= CKB_ISA_AVX512BF16),
                "dot %g at level %s", m->bf16_dot_gflops, ckb_isa_name(level));
    /* cache levels of known size are measured, and read faster than DRAM
     * is streamed (a factor of several on any CPU; half is the floor) */
    CKBT_EXPECT(m->l2 <= 0 || m->l2_gbs > 0.5 * m->bw_gbs, "L2 %g GB/s, DRAM %g", m->l2_gbs,
                m->bw_gbs);
    CKBT_EXPECT(m->l3 <= 0 || m->l3_gbs > 0.5 * m->bw_gbs, "L3 %g GB/s, DRAM %g", m->l3_gbs,
                m->bw_gbs);
    CKBT_EXPECT(ckb_machine_has_bf16_kernel() == (level >= CKB_ISA_AVX512BF16),
                "the bf16 dot is measured iff the level (%s) has it", ckb_isa_name(level));
    CKBT_EXPECT(m->bf16_amx_gflops == 0 || level >= CKB_ISA_AMX,
                "AMX %g measured at level %s", m->bf16_amx_gflops, ckb_isa_name(level));
    CKBT_EXPECT(level >= CKB_ISA_AVX512 || !strstr(m->isa, "avx512"),
                "level %s but isa '%s' lists AVX-512", ckb_isa_name(level), m->isa);
    CKBT_EXPECT(m->bw_gbs > 0.5, "bandwidth %g GB/s", m->bw_gbs);
    CKBT_EXPECT(m->measured_at[0] && m->compiler[0], "stamped: '%s' '%s'", m->measured_at,
                m->compiler);
    CKBT_EXPECT(ckb_machine_ridge(m) > 0, "ridge %g", ckb_machine_ridge(m));
}

CKBT_TEST(machine_measure_is_plausible_on_one_thread, "full")
{
    ckb_machine m;
    CKBT_EXPECT(ckb_machine_measure(1, &m) == 0, "the measurement runs");
    expect_plausible_1t(&m);
}

/* Sets CKBENCH_ISA (NULL: unsets it). */
static void put_isa(const char *v)
{
    if (v)
        setenv("CKBENCH_ISA", v, 1);
    else
        unsetenv("CKBENCH_ISA");
}

/* Sets CKBENCH_ISA and returns the old value (owned), for restore_isa. */
static char *set_isa(const char *v)
{
    char *keep = ckbt_env_save("CKBENCH_ISA");
    put_isa(v);
    return keep;
}

static void restore_isa(char *old) { ckbt_env_restore("CKBENCH_ISA", old); }

/* The same expectations on a host whose AVX-512 (and AVX2) is hidden: what
 * CI on an AMX machine sees when it acts as an AVX2-only or plain one. */
CKBT_TEST(machine_measure_under_hidden_isa, "full")
{
    const char *levels[] = {"avx2", "portable"};
    for (size_t i = 0; i < sizeof levels / sizeof *levels; i++) {
        char *old = set_isa(levels[i]);
        ckb_isa want;
        CKBT_EXPECT(ckb_isa_parse(levels[i], &want) == 0, "parse %s", levels[i]);
        if (want > ckb_isa_host())
            want = ckb_isa_host();
        CKBT_EXPECT(ckb_isa_level() == want, "CKBENCH_ISA=%s: level %s", levels[i],
                    ckb_isa_name(ckb_isa_level()));
        ckb_machine m;
        CKBT_EXPECT(ckb_machine_measure(1, &m) == 0, "the measurement runs at %s", levels[i]);
        expect_plausible_1t(&m);
        CKBT_EXPECT(m.bf16_amx_gflops == 0 && !ckb_machine_has_bf16_kernel(),
                    "%s: no bf16 unit measured", levels[i]);
        restore_isa(old);
    }
}

/* The switch itself: the ladder read from flags, the level in force, the
 * features, -march and the cache key that follow it. */
CKBT_TEST(machine_isa_switch_lowers_everything, "quick")
{
    CKBT_EXPECT(ckb_isa_of_flags("fpu sse2 avx avx2 fma bmi2") == CKB_ISA_AVX2, "Zen 3");
    CKBT_EXPECT(ckb_isa_of_flags("sse2 avx avx2") == CKB_ISA_PORTABLE, "AVX2 without FMA");
    CKBT_EXPECT(ckb_isa_of_flags("avx2 fma avx512f avx512dq avx512cd avx512bw avx512vl") ==
                    CKB_ISA_AVX512,
                "Skylake-SP");
    CKBT_EXPECT(ckb_isa_of_flags("avx2 fma avx512f avx512dq avx512cd avx512bw avx512vl "
                                 "avx512_bf16 avx512_fp16") == CKB_ISA_AVX512BF16,
                "a BF16 CPU without AMX");
    CKBT_EXPECT(ckb_isa_of_flags("avx2 fma avx512f avx512dq avx512cd avx512bw avx512vl "
                                 "avx512_bf16 amx_bf16 amx_tile amx_int8") == CKB_ISA_AMX,
                "Sapphire Rapids");
    ckb_isa host = ckb_isa_host(), l;
    CKBT_EXPECT(ckb_isa_parse("avx9", &l) == -1, "an unknown level is refused");

    char *old = set_isa(NULL);
    CKBT_EXPECT(ckb_isa_level() == host, "unset: the host's level %s", ckb_isa_name(host));
    const char *flags[CKB_ISA_MAX_FLAGS];
    int n = ckb_isa_march(ckb_isa_level(), flags);
    CKBT_EXPECT(n == 1 && strcmp(flags[0], "-march=native") == 0, "nothing hidden: native");
    char native_path[1024];
    ckb_machine_default_path(2, native_path, sizeof native_path);

    for (int lv = 0; lv < CKB_ISA_COUNT; lv++) {
        put_isa(ckb_isa_name((ckb_isa)lv));
        ckb_isa got = ckb_isa_level();
        CKBT_EXPECT(got == ((ckb_isa)lv < host ? (ckb_isa)lv : host), "CKBENCH_ISA=%s: %s",
                    ckb_isa_name((ckb_isa)lv), ckb_isa_name(got));
        ckb_machine m;
        ckb_machine_probe(2, &m);
        CKBT_EXPECT(strcmp(m.isa_level, ckb_isa_name(got)) == 0, "probe's level '%s'",
                    m.isa_level);
        CKBT_EXPECT(ckb_isa_of_flags(m.isa) == got, "features '%s' are not the level %s",
                    m.isa, ckb_isa_name(got));
        n = ckb_isa_march(got, flags);
        char joined[256] = "";
        for (int i = 0; i < n; i++)
            snprintf(joined + strlen(joined), sizeof joined - strlen(joined), " %s", flags[i]);
        printf("    %-10s -> %-10s isa '%s' flags%s\n", ckb_isa_name((ckb_isa)lv),
               ckb_isa_name(got), m.isa, joined);
        if (got < host) {
            CKBT_EXPECT(got != CKB_ISA_AVX2 || strstr(joined, "x86-64-v3"), "avx2: %s", joined);
            CKBT_EXPECT(got != CKB_ISA_PORTABLE || strstr(joined, "x86-64-v2"), "portable: %s",
                        joined);
            CKBT_EXPECT(got < CKB_ISA_AVX512 || strstr(joined, "-mno-amx-tile"), "%s: %s",
                        ckb_isa_name(got), joined);
            char path[1024];
            ckb_machine_default_path(2, path, sizeof path);
            CKBT_EXPECT(strcmp(path, native_path) != 0 && strstr(path, ckb_isa_name(got)),
                        "a profile of its own: %s", path);
        }
        CKBT_EXPECT(strcmp(ckb_docs_default_target(), got >= CKB_ISA_AVX512BF16 ? "x86-avx512"
                                                      : got >= CKB_ISA_AVX2       ? "x86-avx2"
                                                                                  : "generic-c") == 0,
                    "docs target %s at %s", ckb_docs_default_target(), ckb_isa_name(got));
    }
    put_isa("not-a-level");
    CKBT_EXPECT(ckb_isa_level() == host, "an unknown CKBENCH_ISA is ignored");
    restore_isa(old);
}

/* A profile stored at one ISA level is not used at another. */
CKBT_TEST(machine_get_keys_the_isa_level, "quick")
{
    char *old = set_isa(NULL);
    ckb_machine here, other;
    ckb_machine_probe(2, &here);
    other = here;
    snprintf(other.isa_level, sizeof other.isa_level, "%s",
             ckb_isa_host() == CKB_ISA_PORTABLE ? "avx2" : "portable");
    CKBT_EXPECT(ckb_machine_same_host(&here, &here), "a host is itself");
    CKBT_EXPECT(!ckb_machine_same_host(&other, &here), "level %s is another host than %s",
                other.isa_level, here.isa_level);
    restore_isa(old);
}

CKBT_TEST(machine_profile_round_trips, "quick")
{
    char path[512];
    snprintf(path, sizeof path, "%s/new/dirs/machine-2t.json", ckbt_tmpdir());
    ckb_machine m = fake_profile(), back;
    CKBT_EXPECT(ckb_machine_save(&m, path) == 0, "save creates the parent dirs of %s", path);
    memset(&back, 0x5a, sizeof back);
    CKBT_EXPECT(ckb_machine_load(path, &back) == 0, "load %s", path);
    expect_same(&m, &back);
    /* saving over an existing profile replaces it */
    m.bw_gbs = 12.5;
    CKBT_EXPECT(ckb_machine_save(&m, path) == 0, "save over");
    CKBT_EXPECT(ckb_machine_load(path, &back) == 0 && back.bw_gbs == 12.5, "bw %g", back.bw_gbs);
    CKBT_EXPECT(ckb_machine_ridge(&m) == m.bf16_gflops / 12.5, "ridge = bf16 / bw");
}

CKBT_TEST(machine_load_refuses_broken_files, "quick")
{
    char path[512];
    snprintf(path, sizeof path, "%s/broken.json", ckbt_tmpdir());
    ckb_machine m = fake_profile(), back;
    CKBT_EXPECT(ckb_machine_load(path, &back) == -1, "a missing file");

    const char *bad[] = {
        "",
        "not json at all",
        "{\"cpu\": \"x\", ",                   /* truncated */
        "[1, 2, 3]",                           /* not an object */
        "{\"format\": 1}",                     /* fields missing */
        "\x01\x02\xff\xfe garbage \x00",       /* binary */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CKBT_EXPECT(write_text(path, bad[i]) == 0, "write %s", path);
        CKBT_EXPECT(ckb_machine_load(path, &back) == -1, "malformed file #%zu accepted", i);
    }

    /* a well-formed file with one field wrong: each must be refused */
    struct {
        const char *key;
        json_object *value;
    } edits[] = {
        {"format", json_object_new_int(999)},
        {"format", json_object_new_int(1)}, /* before the roofline model: re-measured */
        {"l2_gbs", json_object_new_double(-1.0)},
        {"threads", json_object_new_string("2")},
        {"threads", json_object_new_int(0)},
        {"bf16_gflops", json_object_new_double(0.0)},
        {"bw_gbs", json_object_new_double(-3.0)},
        {"f32_gflops", json_object_new_string("fast")},
        {"cpu", json_object_new_int(5)},
        {"l3_bytes", json_object_new_int(-1)},
    };
    for (size_t i = 0; i < sizeof edits / sizeof *edits; i++) {
        json_object *j = ckb_machine_to_json(&m);
        json_object_object_add(j, edits[i].key, edits[i].value);
        CKBT_EXPECT(write_text(path, json_object_to_json_string(j)) == 0, "write");
        json_object_put(j);
        CKBT_EXPECT(ckb_machine_load(path, &back) == -1, "%s edited (#%zu) accepted",
                    edits[i].key, i);
    }
    /* a missing field; all but the first are what a format-1 profile lacks */
    const char *drop[] = {"compiler", "isa_level", "bf16_dot_gflops", "bf16_dot_gflops_1t",
                          "l2_gbs", "l3_gbs"};
    for (size_t i = 0; i < sizeof drop / sizeof *drop; i++) {
        json_object *j = ckb_machine_to_json(&m);
        json_object_object_del(j, drop[i]);
        CKBT_EXPECT(write_text(path, json_object_to_json_string(j)) == 0, "write");
        json_object_put(j);
        CKBT_EXPECT(ckb_machine_load(path, &back) == -1, "%s missing: accepted", drop[i]);
    }
}

CKBT_TEST(machine_default_path_follows_xdg, "quick")
{
    char buf[1024];
    ckb_machine_default_path(4, buf, sizeof buf);
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    char want[1024];
    if (xdg && *xdg)
        snprintf(want, sizeof want, "%s/ckbench/machine-4t-%s.json", xdg,
                 ckb_isa_name(ckb_isa_level()));
    else
        snprintf(want, sizeof want, "%s/.cache/ckbench/machine-4t-%s.json",
                 home && *home ? home : "/tmp", ckb_isa_name(ckb_isa_level()));
    CKBT_EXPECT(strcmp(buf, want) == 0, "'%s' vs '%s'", buf, want);
    char tiny[8];
    ckb_machine_default_path(4, tiny, sizeof tiny);
    CKBT_EXPECT(strlen(tiny) == sizeof tiny - 1, "truncated, terminated: '%s'", tiny);
}

CKBT_TEST(machine_probe_reads_this_cpu, "quick")
{
    ckb_machine m;
    ckb_machine_probe(3, &m);
    CKBT_EXPECT(m.cpu[0] && m.cores >= 1 && m.threads == 3, "cpu '%s' cores %d threads %d",
                m.cpu, m.cores, m.threads);
    CKBT_EXPECT(m.l1d >= 0 && m.l2 >= 0 && m.l3 >= 0, "sizes are bytes or 0");
    CKBT_EXPECT(m.f32_gflops == 0 && m.bw_gbs == 0 && !m.measured_at[0], "nothing measured");
#if defined(__x86_64__)
    CKBT_EXPECT(m.l1d >= 4096, "an x86 core has an L1d: %lld", (long long)m.l1d);
#endif
#if defined(__AVX512F__)
    CKBT_EXPECT(strstr(m.isa, "avx512f") != NULL, "built for AVX-512, isa '%s'", m.isa);
#endif
}

/* A cached profile of this CPU and thread budget is used as it is. */
CKBT_TEST(machine_get_uses_a_matching_profile, "quick")
{
    char path[512];
    snprintf(path, sizeof path, "%s/machine-2t.json", ckbt_tmpdir());
    ckb_machine m, got;
    ckb_machine_probe(2, &m);
    m.f32_gflops = m.f32_gflops_1t = 123.25;
    m.bf16_gflops = m.bf16_gflops_1t = 246.5;
    m.bw_gbs = 7.75;
    snprintf(m.measured_at, sizeof m.measured_at, "2025-01-02T03:04:05Z");
    CKBT_EXPECT(ckb_machine_save(&m, path) == 0, "save");
    CKBT_EXPECT(ckb_machine_get(2, path, &got) == 0, "get");
    expect_same(&m, &got);
}

/* A profile of another CPU is measured again, and the file replaced. */
CKBT_TEST(machine_get_remeasures_another_cpu, "full")
{
    char path[512];
    snprintf(path, sizeof path, "%s/machine-1t.json", ckbt_tmpdir());
    ckb_machine m = fake_profile(), got, stored;
    m.threads = 1;
    snprintf(m.cpu, sizeof m.cpu, "a CPU that is not this one");
    CKBT_EXPECT(ckb_machine_save(&m, path) == 0, "save");
    CKBT_EXPECT(ckb_machine_get(1, path, &got) == 0, "get");
    CKBT_EXPECT(strcmp(got.cpu, m.cpu) != 0 && got.f32_gflops != m.f32_gflops,
                "measured afresh: cpu '%s' f32 %g", got.cpu, got.f32_gflops);
    CKBT_EXPECT(ckb_machine_load(path, &stored) == 0, "the new profile was stored");
    expect_same(&got, &stored);
}

/* Other work during the measurement is seen and said: with every CPU kept
 * busy by other processes, the profile records how disturbed it was (well
 * over the limit), and ckb_machine_get does not store it. */
CKBT_TEST(machine_measure_under_load_says_so, "full")
{
    int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
    pid_t busy[256];
    int n = 0;
    for (int i = 0; i < ncpu && i < 256; i++) {
        pid_t p = fork();
        if (p == 0) {
            for (volatile unsigned long x = 0;; x++)
                ;
        }
        if (p > 0)
            busy[n++] = p;
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/machine-loaded.json", ckbt_tmpdir());
    remove(path);
    ckb_machine m;
    int rc = ckb_machine_get(1, path, &m);
    for (int i = 0; i < n; i++) {
        kill(busy[i], SIGKILL);
        waitpid(busy[i], NULL, 0);
    }
    CKBT_EXPECT(rc == 0 && m.disturbed_pct > CKB_MACHINE_MAX_DISTURBED_PCT,
                "measured under load: rc %d, disturbed %.1f%%", rc, m.disturbed_pct);
    CKBT_EXPECT(access(path, F_OK) != 0, "a profile measured under load was stored");
}
