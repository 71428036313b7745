/* The untuned blocks come from the host model (machine/blocking.h): on
 * three made-up hosts the model gives the values worked out by hand from
 * its equations, and every expert's resolved defaults on each are values
 * its own compile-time checks accept. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/expert.h"
#include "core/fsutil.h"
#include "core/proc.h"
#include "eval/compile.h"
#include "harness.h"
#include "machine/blocking.h"

#define KIB (1LL << 10)
#define MIB (1LL << 20)

/* An AVX2 host with 32 MiB of L3 (a Zen 3 core: 32 KiB L1, 512 KiB L2). */
static const ckb_machine avx2_host = {.isa_level = "avx2", .threads = 2, .l1d = 32 * KIB,
                                      .l2 = 512 * KIB, .l3 = 32 * MIB, .f32_gflops = 192};
/* An AVX-512 host with 1 MiB of L2 (a Skylake-SP core), no bf16 unit. */
static const ckb_machine avx512_host = {.isa_level = "avx512", .threads = 2, .l1d = 32 * KIB,
                                        .l2 = 1 * MIB, .l3 = 16 * MIB, .f32_gflops = 330};
/* An AMX host (a Sapphire Rapids core: 48 KiB L1, 2 MiB L2, 105 MiB L3). */
static const ckb_machine amx_host = {.isa_level = "amx", .threads = 2, .l1d = 48 * KIB,
                                     .l2 = 2 * MIB, .l3 = 105 * MIB, .f32_gflops = 460,
                                     .bf16_dot_gflops = 120, .bf16_amx_gflops = 5900};

static void expect_gemm(const char *host, const ckb_machine *m, int64_t mr, int64_t nr,
                        int64_t kc, int64_t mc, int64_t nc)
{
    ckb_blocking_facts f;
    ckb_blocking_facts_of(m, ckb_expert_host_unit(m), &f);
    ckb_blocking g;
    ckb_blocking_gemm(&f, &g);
    CKBT_EXPECT(g.mr == mr && g.nr == nr && g.kc == kc && g.mc == mc && g.nc == nc,
                "%s: MR %lld NR %lld KC %lld MC %lld NC %lld, the model says %lld %lld %lld "
                "%lld %lld",
                host, (long long)g.mr, (long long)g.nr, (long long)g.kc, (long long)g.mc,
                (long long)g.nc, (long long)mr, (long long)nr, (long long)kc, (long long)mc,
                (long long)nc);
}

static void expect_attention(const char *host, const ckb_machine *m, int64_t head, int64_t bq,
                             int64_t bk)
{
    ckb_blocking_facts f;
    ckb_blocking_facts_of(m, ckb_expert_host_unit(m), &f);
    int64_t q, k;
    ckb_blocking_attention(&f, head, &q, &k);
    CKBT_EXPECT(q == bq && k == bk, "%s, head %lld: BQ %lld BK %lld, the model says %lld %lld",
                host, (long long)head, (long long)q, (long long)k, (long long)bq, (long long)bk);
}

/*
 * By hand, from the equations in machine/blocking.h (W = L1 / 4 KiB ways):
 * AVX2: 16 ymm, nv 2: NR 16, MR (16-2-1)/2 = 6, e 4. W 8, CA floor(7*6/22)
 *   = 1, KC 4096/24 = 170; B needs ceil(16*170*4/4096) = 3 of 6 ways: kept;
 *   down to 32: 160. MC 256 Ki/640 = 409 -> 408 (MR). NC 8 Mi/640 = 13107
 *   -> 13104 (NR). Attention, e' 4: BK 128 Ki/1024 = 128, BQ 128 Ki/1024 =
 *   128.
 * AVX-512: 32 zmm, nv 4: NR 64, MR 27/4 = 6. W 8, CA floor(42/70) -> 1, KC
 *   170 but B would need 11 of 6 ways: KC 6*4096/256 = 96. MC 512 Ki/384 =
 *   1365 -> 1362. NC 4 Mi/384 = 10922 -> 10880. BK = BQ = 256 Ki/1024 =
 *   256.
 * AMX: MR = NR = 32, e 2. W 12, CA floor(11*32/64) = 5, KC 5*4096/64 = 320;
 *   B needs 5 of 6 ways: kept. MC 1 Mi/640 = 1638 -> 1632. NC (105 Mi/2/2)
 *   / 640 = 43008. Attention, e' 2: BK 512 Ki/512 = 1024, BQ 512 Ki/768 =
 *   682 -> 672.
 */
CKBT_TEST(blocking_model_gives_its_equations_values, "quick")
{
    expect_gemm("AVX2, 32 MiB L3", &avx2_host, 6, 16, 160, 408, 13104);
    expect_gemm("AVX-512, 1 MiB L2", &avx512_host, 6, 64, 96, 1362, 10880);
    expect_gemm("AMX", &amx_host, 32, 32, 320, 1632, 43008);
    expect_attention("AVX2, 32 MiB L3", &avx2_host, 256, 128, 128);
    expect_attention("AVX-512, 1 MiB L2", &avx512_host, 256, 256, 256);
    expect_attention("AMX", &amx_host, 256, 672, 1024);
    /* 3p's keys: a 192-wide K row and a 128-wide V row: 256 Ki/1280 = 204 */
    expect_attention("AVX-512, 1 MiB L2", &avx512_host, 320, 192, 192);

    /* a unit the ISA level lacks is modelled as the f32 FMA the expert
     * falls back to: the dot asked of an AVX2 host gives AVX2's blocks */
    ckb_blocking_facts f;
    ckb_blocking_facts_of(&avx2_host, 0, &f);
    CKBT_EXPECT(f.unit == 1 && f.nregs == 16 && f.vec_bytes == 32,
                "the dot on AVX2 runs as f32 FMA in ymm: unit %d, %d x %d bytes", f.unit,
                f.nregs, f.vec_bytes);
    /* no profile: assumed facts, still an answer */
    ckb_blocking g;
    ckb_blocking_facts_of(NULL, 1, &f);
    ckb_blocking_gemm(&f, &g);
    CKBT_EXPECT(g.kc == 160 && g.mc == 408 && g.nc == 400,
                "no profile: 32 KiB L1, 512 KiB L2, no L3 (L2 stands in: 256 Ki/640 -> 400): "
                "KC %lld MC %lld NC %lld",
                (long long)g.kc, (long long)g.mc, (long long)g.nc);
}

static int64_t default_of(const char *id, const char *name, const ckb_machine *m)
{
    const ckb_workload *w = ckb_workload_find(id);
    int64_t v[CKB_MAX_PARAMS];
    if (!w)
        return -100;
    ckb_expert_defaults(w, m, v);
    for (int i = 0; i < w->nparams; i++)
        if (strcmp(w->params[i].name, name) == 0)
            return v[i];
    return -100;
}

/* The model's values fitted to each expert: a multiple it takes, kept in
 * its grid's range; or its nearest grid value. */
CKBT_TEST(blocking_defaults_fit_each_expert, "quick")
{
    struct {
        const char *id, *name;
        const ckb_machine *m;
        int64_t want;
        const char *why;
    } cases[] = {
        {"8p", "MR", &amx_host, 6, "AMX's 32 rows snapped to the grid {5, 6}"},
        {"8p", "MC", &amx_host, 1632, "a multiple of 32 inside [256, 4096]: kept"},
        {"8p", "MC", &avx2_host, 384, "408 down to a multiple of 32"},
        {"8p", "NC", &avx2_host, 1024, "13104 capped at the grid's largest"},
        {"8p", "MMA", &amx_host, 2, "the host unit"},
        {"1p", "BQ", &avx2_host, 128, "the model's 128"},
        {"1p", "BK", &amx_host, 256, "1024 capped at the grid's largest"},
        {"3p", "BK", &avx512_host, 192, "off the grid {128, 256} but a multiple of 16"},
        {"3p", "GKC", &avx512_host, 128, "96 raised to the grid's smallest"},
        {"6p", "NPB", &avx2_host, 4, "128 keys are 8 pages of 16, capped at 4"},
        {"32k", "KC", &avx2_host, 1024, "160 to the grid's nearest; 0 (all of K) is no block"},
        {"32k", "MB", &avx2_host, 512, "408 to the nearest grid value (512 is 1.25x, 128 3.2x away)"},
        {"33k", "R", &avx512_host, 8, "8 x 3 zmm: 24 accumulators in 28 of 32 registers"},
        {"33k", "PV", &avx512_host, 3, "8 x 3 zmm: 24 accumulators in 28 of 32 registers"},
        {"33k", "R", &avx2_host, 4, "4 x 3 ymm: 12 accumulators in all 16 (8 rows leave 1 vector)"},
        {"33k", "PV", &avx2_host, 3, "4 x 3 ymm: 12 accumulators in all 16 (8 rows leave 1 vector)"},
        {"33k", "PV", &amx_host, 3, "AMX runs its own tiles; the dot's pair on 32 zmm"},
        {"11p", "NCB", &amx_host, 12, "43008 columns are 672 panels of 64, capped at 12"},
        {"11p", "KC", &amx_host, 320, "a multiple of 32 inside [256, 512]"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        int64_t got = default_of(cases[c].id, cases[c].name, cases[c].m);
        CKBT_EXPECT(got == cases[c].want, "%s %s: %lld, wanted %lld (%s)", cases[c].id,
                    cases[c].name, (long long)got, (long long)cases[c].want, cases[c].why);
    }
}

/* Every expert's resolved defaults on each made-up host pass the expert's
 * own compile-time checks (#error on a bad MR, a BK not a multiple of 16, an
 * MB that does not divide B ...) at small and default size: preprocessing
 * for that host's target with those -D values finds no #error. */
CKBT_TEST(blocking_defaults_pass_each_experts_checks, "quick")
{
    const struct {
        const char *name;
        const ckb_machine *m;
        const char *march;
    } hosts[] = {{"AVX2", &avx2_host, "-march=haswell"},
                 {"AVX-512", &avx512_host, "-march=skylake-avx512"},
                 {"AMX", &amx_host, "-march=sapphirerapids"}};
    const ckb_size sizes[] = {CKB_SIZE_SMALL, CKB_SIZE_DEFAULT};
    const char *dir = ckbt_tmpdir();
    char dims[600], inc[600], kit[600];
    snprintf(dims, sizeof dims, "%s/blocking-dims.h", dir);
    snprintf(inc, sizeof inc, "-I%s/include", ckb_home());
    snprintf(kit, sizeof kit, "-I%s/expert-kit", ckb_home());
    int checked = 0;
    for (int i = 0; i < ckb_workload_count(); i++) {
        const ckb_workload *w = ckb_workload_at(i);
        char path[512];
        if (!ckb_expert_path(w, path, sizeof path) || w->nparams == 0)
            continue;
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
            char *header = ckb_workload_candidate_header(w, sizes[s]);
            CKBT_EXPECT(header && ckb_write_file_atomic(dims, header, strlen(header)) == 0,
                        "write %s", dims);
            free(header);
            for (size_t h = 0; h < sizeof hosts / sizeof *hosts; h++) {
                int64_t v[CKB_MAX_PARAMS];
                ckb_expert_defaults(w, hosts[h].m, v);
                char defs[CKB_MAX_PARAMS][96];
                char *argv[32 + CKB_MAX_PARAMS];
                int n = 0;
                argv[n++] = (char *)ckb_compiler();
                argv[n++] = (char *)hosts[h].march;
                argv[n++] = "-fopenmp";
                argv[n++] = "-std=gnu11";
                argv[n++] = inc;
                argv[n++] = kit;
                argv[n++] = "-include";
                argv[n++] = dims;
                for (int p = 0; p < w->nparams; p++) {
                    snprintf(defs[p], sizeof defs[p], "-D%s=%lld", w->params[p].name,
                             (long long)v[p]);
                    argv[n++] = defs[p];
                }
                argv[n++] = "-E";
                argv[n++] = path;
                argv[n++] = "-o";
                argv[n++] = "/dev/null";
                argv[n] = NULL;
                ckb_proc_result r;
                memset(&r, 0, sizeof r);
                int ok = ckb_proc_run(argv, 120, 1 << 14, &r) == 0 && r.exited &&
                         r.exit_code == 0;
                CKBT_EXPECT(ok, "%s on the %s host, size %s: %.500s", w->id, hosts[h].name,
                            ckb_size_name(sizes[s]), r.output ? r.output : "");
                ckb_proc_result_free(&r);
                checked += ok;
            }
        }
    }
    CKBT_EXPECT(checked >= 13 * 2 * 3, "%d expert, size and host checks", checked);
}
