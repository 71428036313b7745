/* expert-kit/ckb_kit_simd.h against libm in double and against the scalar
 * bf16 helpers, in each form this build has (8 lanes on AVX2 + FMA, 16 on
 * AVX-512; the lowered ISA levels build the tests without the wider one).
 * The error bounds are the ones the header states. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "kit_gemm.h"

/* The distance from y to ref in units of the f32 spacing at ref. */
static double simd__ulps(float y, double ref)
{
    const double mag = fabs(ref) < 1.1754943508222875e-38 ? 1.1754943508222875e-38 : fabs(ref);
    return fabs((double)y - ref) / (ldexp(1.0, ilogb(mag) - 23));
}

static double simd__gelu(double v)
{
    return v / (1.0 + exp(-1.5957691216057308 * (v + 0.044715 * v * v * v)));
}

CKBT_TEST(kit_simd_math_within_its_stated_error, "quick")
{
    const struct {
        const char *name;
        ckbt_kit_fn fn;
        double lo, hi;
        int ulps;     /* 1: in ulps; 0: |y - ref| / max(|ref|, floor) */
        double floor; /* where relative error stops meaning anything */
        double bound;
    } cases[] = {
        {"exp8", CKBT_KIT_EXP8, -87, 88, 1, 0, 1},
        {"exp16", CKBT_KIT_EXP16, -87, 88, 1, 0, 1},
        {"exp2_8", CKBT_KIT_EXP2_8, -126, 0, 0, 0, 2.5e-7},
        {"exp2_16", CKBT_KIT_EXP2_16, -126, 0, 0, 0, 2.5e-7},
        {"tanh8", CKBT_KIT_TANH8, -12, 12, 0, 1e-2, 3e-6},
        {"tanh16", CKBT_KIT_TANH16, -12, 12, 0, 1e-2, 3e-6},
        {"gelu8", CKBT_KIT_GELU8, -12, 12, 0, 1e-30, 1.5e-5},
        {"gelu16", CKBT_KIT_GELU16, -12, 12, 0, 1e-30, 1.5e-5},
    };
    enum { n = 1 << 17 };
    float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    if (!in || !out) {
        CKBT_EXPECT(0, "allocation");
        free(in), free(out);
        return;
    }
    int ran = 0;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        for (int i = 0; i < n; i++) /* a dense grid, the ends included */
            in[i] = (float)(cases[c].lo + (cases[c].hi - cases[c].lo) * i / (n - 1));
        if (ckbt_kit_simd(cases[c].fn, in, out, n) == -2)
            continue; /* no such form in this build */
        ran++;
        double worst = 0;
        float at = 0;
        for (int i = 0; i < n; i++) {
            const double x = in[i];
            double ref, err;
            switch (cases[c].fn) {
            case CKBT_KIT_EXP8:
            case CKBT_KIT_EXP16:
                ref = exp(x);
                break;
            case CKBT_KIT_EXP2_8:
            case CKBT_KIT_EXP2_16:
                ref = exp2(x);
                break;
            case CKBT_KIT_TANH8:
            case CKBT_KIT_TANH16:
                ref = tanh(x);
                break;
            default:
                ref = simd__gelu(x);
            }
            if (cases[c].ulps)
                err = simd__ulps(out[i], ref);
            else
                err = fabs(out[i] - ref) / fmax(fabs(ref), cases[c].floor);
            if (!(err <= worst)) /* NaN too */
                worst = isnan(err) ? INFINITY : err, at = in[i];
        }
        printf("    (%s on [%g, %g]: worst %.3g %s at x = %.9g)\n", cases[c].name, cases[c].lo,
               cases[c].hi, worst, cases[c].ulps ? "ulp" : "relative", (double)at);
        CKBT_EXPECT(worst <= cases[c].bound, "%s: worst error %g at x = %.9g, bound %g",
                    cases[c].name, worst, (double)at, cases[c].bound);
    }
    if (!ran)
        ckbt_skip("this build has neither AVX2 + FMA nor AVX-512: no kit primitive to test");
    free(in), free(out);
}

/* The 8-lane bf16 forms round as ckb_f32_to_bf16 (ties to even, overflow to
 * inf, NaN made quiet with its sign; the _top form on finite values only),
 * and the tail loads, stores and the widened row keep every element and no
 * more. */
CKBT_TEST(kit_simd_bf16_forms_match_the_scalar_helpers, "quick")
{
    static const uint32_t edges[] = {0x3f800000u, 0x3f808000u, 0x3f818000u, 0x3f80ffffu,
                                     0xbf808001u, 0x7f7fffffu, 0x7f800000u, 0xff800000u,
                                     0x7fc00001u, 0x7f800001u, 0xffa00000u, 0x00000001u,
                                     0x807fffffu, 0x477fe000u, 0x477ff000u, 0xc2fe8000u};
    enum { n = 1 << 14 };
    float in[n], out[n], top[n];
    uint64_t s = 0x2545f4914f6cdd1dULL;
    for (int i = 0; i < n; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        uint32_t b = i < (int)(sizeof edges / sizeof *edges) ? edges[i] : (uint32_t)(s >> 32);
        memcpy(&in[i], &b, sizeof b);
    }
    if (ckbt_kit_simd(CKBT_KIT_BF16X8, in, out, n) == -2) {
        ckbt_skip("this build has no AVX2 + FMA: no 8-lane form to test");
        return;
    }
    ckbt_kit_simd(CKBT_KIT_BF16X8_TOP, in, top, n);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        const float want = ckb_bf16_to_f32(ckb_f32_to_bf16(in[i]));
        uint32_t w, got, t;
        memcpy(&w, &want, 4), memcpy(&got, &out[i], 4), memcpy(&t, &top[i], 4);
        uint32_t bits;
        memcpy(&bits, &in[i], 4);
        const int finite = (bits & 0x7f800000u) != 0x7f800000u;
        if ((got != w || (finite && t != w)) && bad++ < 5)
            CKBT_EXPECT(0, "0x%08x rounds to 0x%08x (_top 0x%08x), want 0x%08x", bits, got, t, w);
    }
    CKBT_EXPECT(bad == 0, "%d of %d values rounded wrongly", bad, n);

    ckb_bf16 src[40], back[48];
    /* widen8 stores aligned vectors, as the experts' scratch rows are */
    float wide[48] __attribute__((aligned(32)));
    for (int64_t len = 1; len <= 40; len++) {
        for (int i = 0; i < 40; i++)
            src[i] = ckb_f32_to_bf16((float)(i + 1) * 0.75f);
        for (int i = 0; i < 48; i++)
            back[i] = 0xdead, wide[i] = NAN;
        ckbt_kit_bf16_io(src, len, wide, back);
        int wrong = 0;
        for (int64_t i = 0; i < 48; i++) {
            wrong += i < len ? back[i] != src[i] : back[i] != 0xdead;
            if (i < (len + 7) / 8 * 8)
                wrong += i < len ? wide[i] != ckb_bf16_to_f32(src[i]) : wide[i] != 0.0f;
        }
        CKBT_EXPECT(wrong == 0, "n = %lld: %d elements wrong or written past the end",
                    (long long)len, wrong);
    }
}
