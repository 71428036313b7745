/* The input sampler (src/workloads/inputs.c) against its definition through
 * libm, and the widening of input sets (src/eval/perturb.c) against ldexpf. */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eval/perturb.h"
#include "harness.h"
#include "workloads/inputs.h"

/* Within one float ulp of the larger magnitude. */
static int one_ulp(float a, float b)
{
    return fabsf(a - b) <= ldexpf(fmaxf(fabsf(a), fabsf(b)), -23);
}

CKBT_TEST(inputs_normal_is_libms_box_muller, "quick")
{
    /* The edges of both uniforms: u1 at its smallest (2^-32), in the
     * middle, near 1 and at 1; u2 at 0, on each side of every quarter turn
     * and of every point half way between (the reduction's boundaries), and
     * at its largest. The same float as libm's log and cos give, or one ulp
     * away. */
    static const uint32_t hi[] = {0, 1, 2, 0x7fffffffu, 0x80000000u, 0xfffffffeu, 0xffffffffu};
    static const uint32_t lo[] = {0,          1,           (1u << 29) - 1, 1u << 29,
                                  (1u << 29) + 1, (1u << 30) - 1, 1u << 30,    (1u << 30) + 1,
                                  3u << 29,   0x80000000u, 5u << 29,        0xc0000000u,
                                  7u << 29,   0xfffffffeu, 0xffffffffu,     0x9e3779b9u};
    for (size_t a = 0; a < sizeof hi / sizeof *hi; a++)
        for (size_t b = 0; b < sizeof lo / sizeof *lo; b++) {
            uint64_t h = (uint64_t)hi[a] << 32 | lo[b];
            float got = ckb_box_muller(h), want = ckb_box_muller_libm(h);
            CKBT_EXPECT(one_ulp(got, want), "hash %016llx: %.9g, libm %.9g",
                        (unsigned long long)h, got, want);
        }
    /* 2^21 samples of three seeds: a float can differ only where the exact
     * value lies within a few double ulps of a float rounding boundary
     * (none of 20 M samples did when this was written), and then by one
     * ulp. */
    const uint64_t seeds[] = {1, 42, 0x8000000000000005ull};
    int64_t n = 0, differ = 0;
    double sum = 0, sum2 = 0;
    for (int s = 0; s < 3; s++)
        for (uint64_t i = 0; i < (1u << 21) / 3; i++, n++) {
            float got = ckb_normal(seeds[s], 3, i);
            float want = ckb_box_muller_libm(ckb_input_hash(seeds[s], 3, i));
            sum += got, sum2 += (double)got * got;
            if (got == want)
                continue;
            differ++;
            CKBT_EXPECT(one_ulp(got, want), "seed %llu index %llu: %.9g, libm %.9g",
                        (unsigned long long)seeds[s], (unsigned long long)i, got, want);
        }
    CKBT_EXPECT(differ * 100000 <= n, "%lld of %lld samples differ from libm's",
                (long long)differ, (long long)n);
    const double mean = sum / (double)n, var = sum2 / (double)n - mean * mean;
    CKBT_EXPECT(fabs(mean) < 0.005 && fabs(var - 1.0) < 0.01, "mean %g, variance %g", mean, var);
}

/* The vectorised fills give, element by element, the scalar sample (so a
 * workload that draws with ckb_normal in its own loop sees the same
 * values), whatever the thread count. */
CKBT_TEST(inputs_fills_are_the_scalar_samples_at_any_thread_count, "quick")
{
    enum { N = 100003 }; /* odd: the vector loop's tail runs too */
    ckb_bf16 *b[2];
    float *f[2];
    const int keep = omp_get_max_threads();
    for (int k = 0; k < 2; k++) {
        b[k] = malloc(N * sizeof **b);
        f[k] = malloc(N * sizeof **f);
        if (!b[k] || !f[k]) {
            CKBT_EXPECT(0, "out of memory");
            return;
        }
        omp_set_num_threads(k == 0 ? 1 : 3);
        ckb_fill_normal_bf16(b[k], N, 77, 5, 0.25f, 3.0f);
        ckb_fill_normal_f32(f[k], N, 77, 5, 0.25f, 3.0f);
    }
    omp_set_num_threads(keep);
    int64_t bad = 0;
    for (int64_t i = 0; i < N; i++) {
        /* one rounding of mean + std x, as the fill's fmaf */
        float want = fmaf(3.0f, ckb_normal(77, 5, (uint64_t)i), 0.25f);
        int ok = f[0][i] == want && b[0][i] == ckb_f32_to_bf16(want) && f[1][i] == f[0][i] &&
                 b[1][i] == b[0][i];
        if (!ok && bad++ == 0)
            CKBT_EXPECT(ok, "element %lld: f32 %.9g / %.9g, bf16 %04x / %04x, scalar %.9g",
                        (long long)i, f[0][i], f[1][i], b[0][i], b[1][i], want);
    }
    CKBT_EXPECT(bad == 0, "%lld of %d elements differ", (long long)bad, N);
    /* the uniform fills: the top 53 bits of the hash over 2^53, then one
     * rounding of lo + (hi - lo) u */
    const float lo = -1.5f, hi = 1.7f; /* hi - lo no power of two: the product rounds */
    ckb_fill_uniform_f32(f[0], N, 77, 7, lo, hi);
    ckb_fill_uniform_bf16(b[0], N, 77, 7, lo, hi);
    for (int64_t i = 0; i < N; i++) {
        const double u = (double)(ckb_input_hash(77, 7, (uint64_t)i) >> 11) / 9007199254740992.0;
        const float want = fmaf(hi - lo, (float)u, lo);
        if (f[0][i] != want || b[0][i] != ckb_f32_to_bf16(want)) {
            CKBT_EXPECT(0, "uniform element %lld: %.9g (bf16 %04x), formula %.9g", (long long)i,
                        f[0][i], b[0][i], want);
            break;
        }
    }
    /* a row of a row-scaled fill, from index 1000 on */
    ckb_normal_row_bf16(b[0], N, 77, 6, 1000, -0.75f);
    for (int64_t i = 0; i < N; i++)
        if (b[0][i] != ckb_f32_to_bf16(-0.75f * ckb_normal(77, 6, 1000 + (uint64_t)i))) {
            CKBT_EXPECT(0, "row element %lld: %04x, scalar %04x", (long long)i, b[0][i],
                        ckb_f32_to_bf16(-0.75f * ckb_normal(77, 6, 1000 + (uint64_t)i)));
            break;
        }
    for (int k = 0; k < 2; k++) {
        free(b[k]);
        free(f[k]);
    }
}

/* Widening an input set rounds each value as ldexpf does, subnormal and
 * overflowing results included, in both input types. */
CKBT_TEST(widen_inputs_rounds_as_ldexpf, "quick")
{
    enum { N = 4096 };
    ckb_workload w;
    memset(&w, 0, sizeof w);
    w.id = "widen_test";
    w.wide_range = 20;
    w.ndims = 1;
    w.dims[0].name = "N";
    w.ntensors = 3;
    w.tensors[0] = (ckb_tensor){.name = "a", .dtype = CKB_F32, .role = CKB_IN, .rank = 1};
    w.tensors[1] = (ckb_tensor){.name = "b", .dtype = CKB_BF16, .role = CKB_IN, .rank = 1};
    w.tensors[2] = (ckb_tensor){.name = "c", .dtype = CKB_F32, .role = CKB_OUT, .rank = 1};
    w.dims[0].value[CKB_SIZE_SMALL] = N;
    ckb_instance in;
    if (ckb_instance_resolve(&w, CKB_SIZE_SMALL, 0, &in) != 0) {
        CKBT_EXPECT(0, "no instance of the test workload");
        return;
    }
    static float a[N], a0[N], c[N];
    static ckb_bf16 b[N], b0[N];
    for (int i = 0; i < N; i++) {
        /* magnitudes from 2^-149 (the least subnormal) to 2^127 */
        uint32_t u = (uint32_t)ckb_input_hash(9, 1, (uint64_t)i);
        u = (u & 0x807fffffu) | (uint32_t)(i % 256) << 23;
        if ((u & 0x7f800000u) == 0x7f800000u)
            u &= 0xff7fffffu; /* no inf or NaN in */
        memcpy(&a0[i], &u, sizeof u);
        b0[i] = (ckb_bf16)(u >> 16);
    }
    for (int sign = -1; sign <= 1; sign += 2) {
        const int e = sign * 20;
        memcpy(a, a0, sizeof a);
        memcpy(b, b0, sizeof b);
        void *t[3] = {a, b, c};
        ckb_widen_inputs(&in, t, e);
        int bad = 0;
        for (int i = 0; i < N && bad < 3; i++) {
            float wa = ldexpf(a0[i], e);
            ckb_bf16 wb = ckb_f32_to_bf16(ldexpf(ckb_bf16_to_f32(b0[i]), -e));
            if (memcmp(&a[i], &wa, sizeof wa) != 0 || b[i] != wb) {
                bad++;
                CKBT_EXPECT(0, "e %d, element %d: f32 %a, ldexpf %a; bf16 %04x, ldexpf %04x", e,
                            i, a[i], wa, b[i], wb);
            }
        }
    }
}
