/*
 * 12p_RMSNorm — Llama-3.1-70B pre-attention RMSNorm (JAXBench
 * benchmark/12p_RMSNorm, from MaxText normalizations.py): per row of x,
 * out = bf16(bf16(x * rsqrt(mean(x^2) + EPS)) * scale), the statistics in f32.
 */
#include <math.h>

#include "workloads/inputs.h"
#include "workloads/workload.h"

#define RMSNORM_EPS 1e-5

enum { B, S, D };
enum { T_X, T_SCALE, T_OUT, STREAM_ROW_SCALE };

static void rmsnorm_create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench: x ~ N(0, 1), scale ~ 1 + 0.1 N(0, 1). With every row at unit
     * RMS, rsqrt(mean(x^2)) is 1 to within 1% at D = 8192, so a kernel that
     * skipped the normalisation would pass; each row gets its own scale,
     * 2^N(0, 1) (mostly within [1/4, 4]) times a per-seed factor, so the
     * statistics are needed. */
    const int64_t rows = d[B] * d[S], n = d[D];
    const float sx = ckb_seed_factor(seed, T_X, 0.5f, 2.0f);
    ckb_bf16 *x = t[T_X];
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        float rs = sx * exp2f(ckb_normal(seed, STREAM_ROW_SCALE, (uint64_t)r));
        ckb_normal_row_bf16(x + r * n, n, seed, T_X, (uint64_t)(r * n), rs);
    }
    ckb_fill_normal_bf16(t[T_SCALE], n, seed, T_SCALE, 1.0f, 0.1f);
}

/* One row per iteration; both inner loops vectorise (omp simd), so the row
 * is read twice from L1/L2 and the kernel runs at memory speed. */
static void rmsnorm_baseline(const int64_t *d, void *const *t)
{
    const ckb_bf16 *x = t[T_X], *scale = t[T_SCALE];
    ckb_bf16 *out = t[T_OUT];
    const int64_t rows = d[B] * d[S], n = d[D];
    const float eps = (float)RMSNORM_EPS;
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const ckb_bf16 *xr = x + r * n;
        ckb_bf16 *o = out + r * n;
        float ss = 0.0f;
#pragma omp simd reduction(+ : ss)
        for (int64_t j = 0; j < n; j++) {
            float v = ckb_bf16_to_f32(xr[j]);
            ss += v * v;
        }
        const float inv = 1.0f / sqrtf(ss / (float)n + eps);
#pragma omp simd
        for (int64_t j = 0; j < n; j++) {
            /* JAX casts the normalised row to x's dtype before the scale. */
            float normed = ckb_bf16_to_f32(ckb_f32_to_bf16(ckb_bf16_to_f32(xr[j]) * inv));
            o[j] = ckb_f32_to_bf16(normed * ckb_bf16_to_f32(scale[j]));
        }
    }
}

static void rmsnorm_reference(const int64_t *d, void *const *t)
{
    const ckb_bf16 *x = t[T_X], *scale = t[T_SCALE];
    ckb_bf16 *out = t[T_OUT];
    for (int64_t r = 0; r < d[B] * d[S]; r++) {
        float ss = 0.0f;
        for (int64_t j = 0; j < d[D]; j++)
            ss += ckb_bf16_to_f32(x[r * d[D] + j]) * ckb_bf16_to_f32(x[r * d[D] + j]);
        float inv = 1.0f / sqrtf(ss / (float)d[D] + (float)RMSNORM_EPS);
        for (int64_t j = 0; j < d[D]; j++) {
            ckb_bf16 normed = ckb_f32_to_bf16(ckb_bf16_to_f32(x[r * d[D] + j]) * inv);
            out[r * d[D] + j] =
                ckb_f32_to_bf16(ckb_bf16_to_f32(normed) * ckb_bf16_to_f32(scale[j]));
        }
    }
}

/* JAXBench's count: square, mean, rsqrt and two multiplies per element. */
static double rmsnorm_flops(const int64_t *d) { return 5.0 * d[B] * d[S] * d[D]; }

static double rmsnorm_bytes(const int64_t *d) { return 2.0 * (2.0 * d[B] * d[S] * d[D] + d[D]); }

const ckb_workload ckb_wl_12p_RMSNorm = {
    .id = "12p_RMSNorm",
    .model = "Llama-3.1-70B",
    .op = "rms_norm",
    .tags = "norm",
    .summary = "out = bf16(x * rsqrt(mean(x^2) + EPS)) * scale per row, f32 statistics, bf16 out",
    .ndims = 3,
    .scale_dim = "S",
    .dims = {{"B", {2, 8, 8}}, {"S", {64, 2048, 4096}}, {"D", {1024, 8192, 8192}}},
    .nconsts = 1,
    .consts = {{"EPS", RMSNORM_EPS}},
    .ntensors = 3,
    .tensors = {{"x", CKB_BF16, CKB_IN, 3, {B, S, D}},
                {"scale", CKB_BF16, CKB_IN, 1, {D}},
                {"out", CKB_BF16, CKB_OUT, 3, {B, S, D}}},
    .atol = 1e-2,
    .rtol = 2e-2,
    .tolerance_reason = "JAX rounds the normalised row to bf16 before the scale and again after: "
                        "an f32 difference in the row statistic (summation order, rsqrt) flips the "
                        "first rounding by one bf16 ulp and the second can double it, 2 ulps = up "
                        "to 1.6% of |out|, above rtol 1e-2 for |out| >= 2",
    .create_inputs = rmsnorm_create_inputs,
    .baseline = rmsnorm_baseline,
    .reference = rmsnorm_reference,
    .flops = rmsnorm_flops,
    .bytes = rmsnorm_bytes,
};
