/* expert-kit/ckb_kit_gemm.h's driver against a double-precision product, on
 * each unit this host can run, over the shapes that exercise its edges: m,
 * n and k not multiples of the tile, an odd k (the dot's last pair half
 * empty), k blocks (partial sums), both B layouts, a pre-packed B, the tile
 * epilogue and the sums left in the buffer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "kit_gemm.h"

static ckb_bf16 kit__rand(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return ckb_f32_to_bf16((float)((int64_t)(*s >> 40) % 2001 - 1000) / 500.0f);
}

/* The worst relative error of c[m][n] against the double-precision
 * product of a[m][k] and b (bt: b is [n][k]), and where. */
static double kit__worst(const ckb_bf16 *a, const ckb_bf16 *b, int bt, const float *c, int64_t m,
                         int64_t n, int64_t k, int64_t *wi, int64_t *wj)
{
    double worst = 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double ref = 0, mag = 0;
            for (int64_t q = 0; q < k; q++) {
                double x = ckb_bf16_to_f32(a[i * k + q]);
                double y = ckb_bf16_to_f32(bt ? b[j * k + q] : b[q * n + j]);
                ref += x * y, mag += fabs(x * y);
            }
            double err = fabs(c[i * n + j] - ref) / (mag + 1e-30);
            if (!(err <= worst)) /* NaN too */
                worst = isnan(err) ? INFINITY : err, *wi = i, *wj = j;
        }
    return worst;
}

static void kit__check(const char *unit, ckbt_kit_gemm_fn fn, int bt, int64_t m, int64_t n,
                       int64_t k, int64_t kc, int use_epi, int prepack)
{
    uint64_t s = (uint64_t)(m * 1000003 + n * 1009 + k + bt);
    ckb_bf16 *a = malloc((size_t)(m * k) * sizeof *a), *b = malloc((size_t)(k * n) * sizeof *b);
    float *c = malloc((size_t)(m * n) * sizeof *c);
    if (!a || !b || !c) {
        CKBT_EXPECT(0, "allocation");
        free(a), free(b), free(c);
        return;
    }
    for (int64_t i = 0; i < m * k; i++)
        a[i] = kit__rand(&s);
    for (int64_t i = 0; i < k * n; i++)
        b[i] = kit__rand(&s);
    for (int64_t i = 0; i < m * n; i++)
        c[i] = NAN;
    int rc = fn(a, b, bt, m, n, k, 24, 40, kc, use_epi, prepack, c);
    if (rc == -2) { /* no such unit here: nothing of the kit's driver to test */
        ckbt_skip("%s: this host has no unit for it", unit);
        free(a), free(b), free(c);
        return;
    }
    CKBT_EXPECT(rc >= 0, "%s: ran", unit);
    /* Which unit ran (the kit resolves its unit at compile time and the
     * case reports it): the dot where this build targets AVX-512 BF16, which
     * a host that has it gets (-march=native), else f32 FMA as the kit's
     * fallback. */
    int asks_dot = strncmp(unit, "dot", 3) == 0;
#if defined(__AVX512BF16__) && defined(__AVX512BW__) && defined(__AVX512VL__)
    int want = asks_dot ? 0 : 1;
#else
    int want = 1;
    if (asks_dot && __builtin_cpu_supports("avx512bf16"))
        printf("    (%s: this build does not target the AVX-512 BF16 this host has: the f32 "
               "FMA fallback is what is checked)\n", unit);
#endif
    CKBT_EXPECT(rc < 0 || rc == want, "%s: the kit ran unit %d, want %d (%s)", unit, rc, want,
                want == 0 ? "vdpbf16ps" : "f32 FMA");
    int64_t wi = 0, wj = 0;
    const double worst = rc >= 0 ? kit__worst(a, b, bt, c, m, n, k, &wi, &wj) : 0;
    CKBT_EXPECT(worst < 1e-5, "%s (unit %d) bt=%d %lldx%lldx%lld kc=%lld epi=%d pre=%d: worst "
                "relative error %g at [%lld][%lld]", unit, rc, bt, (long long)m, (long long)n,
                (long long)k, (long long)kc, use_epi, prepack, worst, (long long)wi,
                (long long)wj);
    free(a), free(b), free(c);
}

CKBT_TEST(kit_gemm_matches_the_product_on_every_unit, "quick")
{
    const struct {
        const char *name;
        ckbt_kit_gemm_fn fn;
    } units[] = {{"dot", ckbt_kit_gemm_dot},
                 {"dot 5x48", ckbt_kit_gemm_dot_odd},
                 {"fma", ckbt_kit_gemm_fma}};
    for (int u = 0; u < 3; u++)
        for (int bt = 0; bt < 2; bt++) {
            kit__check(units[u].name, units[u].fn, bt, 37, 75, 123, 0, 1, 0);
            kit__check(units[u].name, units[u].fn, bt, 37, 75, 123, 32, 1, 0);
            kit__check(units[u].name, units[u].fn, bt, 37, 75, 123, 33, 0, 0);
            kit__check(units[u].name, units[u].fn, bt, 9, 64, 64, 16, 1, 1);
            kit__check(units[u].name, units[u].fn, bt, 16, 96, 257, 64, 0, 1);
            kit__check(units[u].name, units[u].fn, bt, 1, 33, 1, 0, 1, 0);
        }
}

/* The resident driver (ckb_kit_gemm16_*, 8p 11p 41k 50k) on each unit: odd m,
 * n and k (the last pair half empty, rows past m recomputed, columns past
 * n masked) for the micro-kernels, AMX's whole tiles at several blocks per
 * row; blocks smaller than the job, a thread grid split both ways. Every
 * element is written (the buffer starts as NaN). */
CKBT_TEST(kit_gemm16_matches_the_product_on_every_unit, "quick")
{
    const struct {
        const char *name;
        ckbt_kit_gemm16_fn fn;
        int want;
    } units[] = {{"dot 5x48", ckbt_kit_gemm16_dot, 0},
                 {"fma 6x64", ckbt_kit_gemm16_fma, 1},
                 {"amx (emulated)", ckbt_kit_gemm16_amx, 2}};
    const struct {
        int64_t m, n, k, mc, nc;
        int tn, amx_ok;
    } shapes[] = {{37, 75, 123, 1024, 256, 0, 0}, {37, 75, 123, 10, 48, 1, 0},
                  {1, 33, 1, 6, 16, 0, 0},        {13, 200, 64, 5, 1, 2, 0},
                  {64, 96, 160, 32, 64, 0, 1},    {96, 64, 32, 1000, 32, 1, 1}};
    for (int u = 0; u < 3; u++)
        for (size_t c = 0; c < sizeof shapes / sizeof *shapes; c++) {
            const int64_t m = shapes[c].m, n = shapes[c].n, k = shapes[c].k;
            if (units[u].want == 2 && !shapes[c].amx_ok)
                continue; /* AMX takes whole tile pairs only (the experts ask so) */
            uint64_t s = (uint64_t)(m * 7919 + n * 31 + k);
            ckb_bf16 *a = malloc((size_t)(m * k) * sizeof *a);
            ckb_bf16 *b = malloc((size_t)(k * n) * sizeof *b);
            float *out = malloc((size_t)(m * n) * sizeof *out);
            if (!a || !b || !out) {
                CKBT_EXPECT(0, "allocation");
                free(a), free(b), free(out);
                return;
            }
            for (int64_t i = 0; i < m * k; i++)
                a[i] = kit__rand(&s);
            for (int64_t i = 0; i < k * n; i++)
                b[i] = kit__rand(&s);
            for (int64_t i = 0; i < m * n; i++)
                out[i] = NAN;
            const long products = ckbt_kit_amx_products();
            const int rc =
                units[u].fn(a, b, m, n, k, shapes[c].mc, shapes[c].nc, shapes[c].tn, out);
            if (rc == -2) {
                ckbt_skip("this build has no AVX-512 BF16: no resident driver to test");
                free(a), free(b), free(out);
                return;
            }
            CKBT_EXPECT(rc == units[u].want, "%s: the kit ran unit %d", units[u].name, rc);
            if (rc == 2)
                CKBT_EXPECT(ckbt_kit_amx_products() > products,
                            "%s: no tile product ran (%ld before, %ld after)", units[u].name,
                            products, ckbt_kit_amx_products());
            int64_t wi = 0, wj = 0;
            const double worst = kit__worst(a, b, 0, out, m, n, k, &wi, &wj);
            CKBT_EXPECT(worst < 1e-5,
                        "%s %lldx%lldx%lld mc=%lld nc=%lld tn=%d: worst relative "
                        "error %g at [%lld][%lld]",
                        units[u].name, (long long)m, (long long)n, (long long)k,
                        (long long)shapes[c].mc, (long long)shapes[c].nc, shapes[c].tn, worst,
                        (long long)wi, (long long)wj);
            free(a), free(b), free(out);
        }
}

/* The panel GEMM of 29k and 32k, on vdpbf16ps and on the emulated tiles:
 * both packers (B as it is and transposed), k in one pass and in several
 * (the partial sums reloaded), row blocks shared by a team, against the
 * double-precision product. */
CKBT_TEST(kit_panel_gemm_matches_the_product, "quick")
{
    enum { m = 96, np = 4, k = 96, n = 16 * np };
    static const struct {
        const char *name;
        ckbt_kit_panel_fn *fn;
        int unit;
    } units[] = {{"vdpbf16ps", ckbt_kit_panel_dot, 0}, {"AMX (emulated)", ckbt_kit_panel_amx, 2}};
    uint64_t s = 12345;
    static ckb_bf16 a[m * k], b[k * n];
    static float c[m * n];
    for (int64_t i = 0; i < m * k; i++)
        a[i] = kit__rand(&s);
    for (int64_t i = 0; i < k * n; i++)
        b[i] = kit__rand(&s);
    const int64_t passes[] = {0, 32, 64};
    for (int u = 0; u < 2; u++)
        for (int bt = 0; bt < 2; bt++)
            for (int t = 0; t < 3; t++) {
                for (int64_t i = 0; i < m * n; i++)
                    c[i] = NAN;
                const long products = ckbt_kit_amx_products();
                const int rc = units[u].fn(a, b, bt, m, np, k, passes[t], 32, c);
                if (rc == -2) {
                    ckbt_skip("this build has no AVX-512 BF16: no panel GEMM to test");
                    return;
                }
                int64_t wi = 0, wj = 0;
                const double worst = kit__worst(a, b, bt, c, m, n, k, &wi, &wj);
                const int tiles = ckbt_kit_amx_products() > products;
                CKBT_EXPECT(rc == units[u].unit && tiles == (units[u].unit == 2) && worst < 1e-5,
                            "%s, B%s, kc=%lld: unit %d, tile products %s, worst relative error "
                            "%g at [%lld][%lld]",
                            units[u].name, bt ? " transposed" : "", (long long)passes[t], rc,
                            tiles ? "yes" : "no", worst, (long long)wi, (long long)wj);
            }
}

/* The portable GEMM the experts' portable paths run (ckb_kit_gemm_rows):
 * every row through the row epilogue, from zero and from a bias row. */
CKBT_TEST(kit_gemm_rows_matches_the_product, "quick")
{
    enum { m = 37, n = 75, k = 123 };
    uint64_t s = 4242;
    static ckb_bf16 a[m * k], b[k * n], bias[n];
    static float c[m * n];
    for (int64_t i = 0; i < m * k; i++)
        a[i] = kit__rand(&s);
    for (int64_t i = 0; i < k * n; i++)
        b[i] = kit__rand(&s);
    for (int64_t j = 0; j < n; j++)
        bias[j] = kit__rand(&s);
    for (int with_bias = 0; with_bias < 2; with_bias++) {
        for (int64_t i = 0; i < m * n; i++)
            c[i] = NAN;
        ckbt_kit_gemm_rows(a, b, m, n, k, with_bias ? bias : NULL, c);
        for (int64_t i = 0; with_bias && i < m * n; i++)
            c[i] -= ckb_bf16_to_f32(bias[i % n]);
        int64_t wi = 0, wj = 0;
        const double worst = kit__worst(a, b, 0, c, m, n, k, &wi, &wj);
        CKBT_EXPECT(worst < 1e-5, "bias %d: worst relative error %g at [%lld][%lld]", with_bias,
                    worst, (long long)wi, (long long)wj);
    }
}

/* The thread grid covers C exactly once whatever the team, the column
 * split asked for and the ragged edges; row shares start on multiples of
 * rstep and column shares on whole units. */
CKBT_TEST(kit_gemm_grid_covers_c_once, "quick")
{
    const struct {
        int nthr, tn;
        int64_t m, rstep, n, unit;
    } cases[] = {{2, 0, 128, 8, 4096, 32},  {2, 1, 128, 8, 4096, 32}, {4, 2, 37, 6, 75, 16},
                 {8, 0, 5, 8, 40, 64},      {3, 0, 100, 5, 96, 48},   {6, 4, 1000, 32, 130, 32},
                 {1, 0, 17, 8, 33, 32},     {16, 3, 64, 8, 512, 64}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const int64_t m = cases[c].m, n = cases[c].n;
        unsigned char *hit = calloc((size_t)(m * n), 1);
        if (!hit)
            return;
        int team = 0, bad_start = 0;
        for (int t = 0; t < cases[c].nthr; t++) {
            int64_t m0, m1, n0, n1;
            int nteam;
            ckbt_kit_grid_share(cases[c].nthr, cases[c].tn, t, m, cases[c].rstep, n,
                                cases[c].unit, &nteam, &m0, &m1, &n0, &n1);
            team = nteam;
            if (t >= nteam)
                continue;
            bad_start += m0 % cases[c].rstep != 0 || n0 % cases[c].unit != 0;
            for (int64_t i = m0; i < m1; i++)
                for (int64_t j = n0; j < n1; j++)
                    hit[i * n + j]++;
        }
        int64_t wrong = 0;
        for (int64_t e = 0; e < m * n; e++)
            wrong += hit[e] != 1;
        CKBT_EXPECT(team >= 1 && team <= cases[c].nthr && wrong == 0 && bad_start == 0,
                    "case %zu: team %d, %lld elements not covered exactly once, %d misaligned "
                    "starts", c, team, (long long)wrong, bad_start);
        free(hit);
    }
}

/* expert-kit/ckb_kit_simd.h rounds as ckb_f32_to_bf16 does (ties to even,
 * overflow to inf, a NaN made quiet with its sign kept), over edge values and
 * random bit patterns, in each of its forms: the one the experts call, which
 * is the instruction on an AVX-512 BF16 target (that flushes denormal inputs
 * to zero: there a denormal may also give a signed zero), the integer one,
 * and the one kept as f32. Without AVX-512 there is nothing of it to run. */
CKBT_TEST(kit_bf16x16_rounds_as_the_scalar_helper, "quick")
{
    static const uint32_t edges[] = {
        0x3f800000u, 0x3f808000u, 0x3f818000u, 0x3f80ffffu, 0xbf808001u, 0x3f7fffffu,
        0x7f7fffffu, 0xff7fffffu, 0x7f800000u, 0xff800000u, 0x7fc00001u, 0x7f800001u,
        0xffa00000u, 0x00000000u, 0x80000000u, 0x00000001u, 0x807fffffu, 0x00800000u,
        0x477fe000u, 0x477ff000u, 0xc2fe8000u, 0x3b808000u, 0x3b818000u, 0x01018000u};
    static const char *const forms[] = {"experts'", "integer", "f32"};
    const int nedge = (int)(sizeof edges / sizeof *edges);
    uint64_t s = 0x9e3779b97f4a7c15ULL;
    int64_t checked = 0, bad = 0;
    for (int batch = 0; batch < 4096; batch++) {
        uint32_t bits[16];
        float in[16];
        for (int l = 0; l < 16; l++) {
            int e = batch * 16 + l;
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            bits[l] = e < nedge ? edges[e] : (uint32_t)(s >> 32);
            memcpy(&in[l], &bits[l], sizeof in[l]);
        }
        for (int form = 0; form < 3; form++) {
            ckb_bf16 out[16];
            const int rc = ckbt_kit_bf16x16(in, out, form);
            if (rc == -2) {
                ckbt_skip("the bf16 rounding forms need AVX-512, which this host lacks");
                return;
            }
            if (rc != 0 && bad++ < 5)
                CKBT_EXPECT(0, "f32 form: a lane's low half is not zero (batch %d)", batch);
            for (int l = 0; l < 16; l++) {
                const ckb_bf16 want = ckb_f32_to_bf16(in[l]);
                const int denormal = (bits[l] & 0x7f800000u) == 0 && (bits[l] & 0x007fffffu) != 0;
                const ckb_bf16 flushed = (ckb_bf16)((bits[l] >> 16) & 0x8000u);
                const int ok = out[l] == want || (form != 1 && denormal && out[l] == flushed);
                if (!ok && bad++ < 5)
                    CKBT_EXPECT(0, "%s form: 0x%08x rounds to 0x%04x, want 0x%04x", forms[form],
                                bits[l], out[l], want);
                checked++;
            }
        }
    }
    CKBT_EXPECT(bad == 0 && checked == 3 * 4096 * 16, "%lld of %lld lanes rounded wrongly",
                (long long)bad, (long long)checked);
}
