/* The fused workloads' vocabulary (src/workloads/ops.h), each op once
 * against its formula evaluated in double. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "workloads/inputs.h"
#include "workloads/ops.h"

static double sig(double x) { return 1.0 / (1.0 + exp(-x)); }
static double softplus(double x) { return log1p(exp(x)); }

/* |got - want| within a few f32 ulps of the larger magnitude */
static int near(double got, double want, double tol)
{
    return fabs(got - want) <= tol * (1.0 + fabs(want));
}

CKBT_TEST(ops_activations_match_their_formulas, "quick")
{
    for (int i = -400; i <= 400; i++) {
        double x = i * 0.025; /* -10 .. 10 */
        float f = (float)x;
        double c = sqrt(2.0 / M_PI);
        struct {
            const char *name;
            double got, want;
        } cases[] = {
            {"relu", ckb_op_relu(f), x > 0 ? x : 0},
            {"leaky_relu", ckb_op_leaky_relu(f, 0.01f), x >= 0 ? x : 0.01 * x},
            {"sigmoid", ckb_op_sigmoid(f), sig(x)},
            {"swish", ckb_op_swish(f), x * sig(x)},
            {"tanh", ckb_op_tanh(f), tanh(x)},
            {"gelu_tanh", ckb_op_gelu_tanh(f), 0.5 * x * (1 + tanh(c * (x + 0.044715 * x * x * x)))},
            {"gelu_erf", ckb_op_gelu_erf(f), 0.5 * x * (1 + erf(x / sqrt(2.0)))},
            {"mish", ckb_op_mish(f), x * tanh(softplus(x))},
            {"softplus", ckb_op_softplus(f), softplus(x)},
            {"hardtanh", ckb_op_hardtanh(f), x < -1 ? -1 : x > 1 ? 1 : x},
            {"hardswish", ckb_op_hardswish(f), x * fmin(fmax(x + 3, 0), 6) / 6},
            {"clamp", ckb_op_clamp(f, -0.5f, 2.0f), fmin(fmax(x, -0.5), 2.0)},
        };
        for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
            CKBT_EXPECT(near(cases[k].got, cases[k].want, 1e-6), "%s(%g) = %.9g, formula %.9g",
                        cases[k].name, x, cases[k].got, cases[k].want);
    }
}

CKBT_TEST(ops_reductions_and_softmax, "quick")
{
    enum { N = 1000 };
    float x[N];
    double s = 0, mx = -1e30, mn = 1e30;
    for (int i = 0; i < N; i++) {
        x[i] = 3.0f * ckb_normal(1, 2, (uint64_t)i);
        s += x[i];
        mx = fmax(mx, x[i]);
        mn = fmin(mn, x[i]);
    }
    double lse = 0;
    for (int i = 0; i < N; i++)
        lse += exp(x[i] - mx);
    lse = mx + log(lse);
    CKBT_EXPECT(near(ckb_op_sum(x, N), s, 1e-4), "sum");
    CKBT_EXPECT(near(ckb_op_mean(x, N), s / N, 1e-4), "mean");
    CKBT_EXPECT(ckb_op_max(x, N) == (float)mx && ckb_op_min(x, N) == (float)mn, "max/min");
    CKBT_EXPECT(near(ckb_op_logsumexp(x, N), lse, 1e-6), "logsumexp %g vs %g",
                ckb_op_logsumexp(x, N), lse);
    float y[N];
    memcpy(y, x, sizeof y);
    ckb_op_softmax(y, N);
    for (int i = 0; i < N; i++)
        CKBT_EXPECT(near(y[i], exp(x[i] - lse), 1e-5), "softmax[%d]", i);
}

/* Mean 0 and variance 1 (then the affine) over each normalised group. */
static void expect_normalised(const float *y, int64_t count, int64_t stride, double g, double b,
                              const char *what)
{
    double m = 0, v = 0;
    for (int64_t i = 0; i < count; i++)
        m += (y[i * stride] - b) / g;
    m /= count;
    for (int64_t i = 0; i < count; i++) {
        double d = (y[i * stride] - b) / g - m;
        v += d * d;
    }
    v /= count;
    CKBT_EXPECT(fabs(m) < 1e-4 && fabs(v - 1) < 1e-3, "%s: mean %g var %g", what, m, v);
}

CKBT_TEST(ops_norms_normalise_the_right_groups, "quick")
{
    enum { NB = 4, C = 6, L = 50 };
    float x[NB * C * L], y[NB * C * L], gamma[C], beta[C];
    for (int i = 0; i < NB * C * L; i++)
        x[i] = 2.0f + 5.0f * ckb_normal(3, 4, (uint64_t)i);
    for (int c = 0; c < C; c++)
        gamma[c] = 1.5f + 0.1f * c, beta[c] = 0.25f * c;

    memcpy(y, x, sizeof y);
    ckb_op_instancenorm(y, NB, C, L, gamma, beta, 1e-5f);
    for (int s = 0; s < NB; s++)
        for (int c = 0; c < C; c++)
            expect_normalised(y + (s * C + c) * L, L, 1, gamma[c], beta[c], "instancenorm");

    memcpy(y, x, sizeof y);
    ckb_op_groupnorm(y, NB, C, L, 3, NULL, NULL, 1e-5f);
    for (int s = 0; s < NB; s++)
        for (int g = 0; g < 3; g++)
            expect_normalised(y + (s * C + g * 2) * L, 2 * L, 1, 1, 0, "groupnorm");

    memcpy(y, x, sizeof y);
    ckb_op_layernorm(y, NB * C, L, NULL, NULL, 1e-5f);
    for (int r = 0; r < NB * C; r++)
        expect_normalised(y + r * L, L, 1, 1, 0, "layernorm");

    /* batchnorm (training): per channel over batch and L; check with L = 1 */
    float z[NB * C];
    for (int i = 0; i < NB * C; i++)
        z[i] = x[i];
    ckb_op_batchnorm(z, NB, C, 1, NULL, NULL, gamma, beta, 1e-5f);
    for (int c = 0; c < C; c++)
        expect_normalised(z + c, NB, C, gamma[c], beta[c], "batchnorm");
    /* inference mode uses the given statistics */
    float mean[C], var[C], one = 3.0f;
    for (int c = 0; c < C; c++)
        mean[c] = 1.0f, var[c] = 4.0f;
    ckb_op_batchnorm(&one, 1, 1, 1, mean, var, NULL, NULL, 0.0f);
    CKBT_EXPECT(near(one, (3.0 - 1.0) / 2.0, 1e-6), "running-stat batchnorm %g", one);
}

CKBT_TEST(ops_pools_and_dropout, "quick")
{
    float x[2 * 8], y[2 * 4];
    for (int i = 0; i < 16; i++)
        x[i] = (float)i;
    ckb_op_avgpool1d(x, y, 2, 8, 2);
    CKBT_EXPECT(y[0] == 0.5f && y[3] == 6.5f && y[4] == 8.5f, "avgpool1d");
    int64_t dims[3] = {1, 4, 4};
    ckb_op_avgpool(x, y, 1, dims, 2);
    /* window (0,0): 0 1 4 5 -> 2.5; window (1,1): 10 11 14 15 -> 12.5 */
    CKBT_EXPECT(y[0] == 2.5f && y[3] == 12.5f, "avgpool2d %g %g", y[0], y[3]);
    ckb_op_global_avgpool(x, y, 2, 8);
    CKBT_EXPECT(y[0] == 3.5f && y[1] == 11.5f, "global avgpool");
    int kept = 0;
    for (int i = 0; i < 100000; i++) {
        float v = ckb_op_dropout(1.0f, 77, (uint64_t)i, 0.2f);
        CKBT_EXPECT(v == 0.0f || v == 1.25f, "kept values scaled by 1/(1-p)");
        kept += v != 0.0f;
        if (i < 100)
            CKBT_EXPECT(v == ckb_op_dropout(1.0f, 77, (uint64_t)i, 0.2f), "deterministic");
    }
    CKBT_EXPECT(kept > 79000 && kept < 81000, "keep rate %d / 100000", kept);
}

CKBT_TEST(ops_batchnorm_fold_matches_running_stat_batchnorm, "quick")
{
    enum { C = 5 };
    ckb_bf16 g[C], b[C], m[C], v[C];
    float gf[C], bf[C], mf[C], vf[C], a[C], c[C];
    for (int i = 0; i < C; i++) {
        g[i] = ckb_f32_to_bf16(0.5f + 0.25f * i), b[i] = ckb_f32_to_bf16(-1.0f + 0.5f * i);
        m[i] = ckb_f32_to_bf16(0.1f * i), v[i] = ckb_f32_to_bf16(0.5f + i);
        gf[i] = ckb_bf16_to_f32(g[i]), bf[i] = ckb_bf16_to_f32(b[i]);
        mf[i] = ckb_bf16_to_f32(m[i]), vf[i] = ckb_bf16_to_f32(v[i]);
    }
    ckb_op_batchnorm_fold(g, b, m, v, C, 1e-5, a, c);
    float x[C];
    for (int i = 0; i < C; i++)
        x[i] = 2.0f - 0.7f * i;
    float y[C];
    memcpy(y, x, sizeof y);
    ckb_op_batchnorm(y, 1, C, 1, mf, vf, gf, bf, 1e-5f);
    for (int i = 0; i < C; i++)
        CKBT_EXPECT(near(x[i] * a[i] + c[i], y[i], 1e-6), "channel %d: %g vs %g", i,
                    x[i] * a[i] + c[i], y[i]);
}
