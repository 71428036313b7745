/*
 * 15p_RetNet_Retention — multi-scale retention of RetNet-6.7B (JAXBench
 * benchmark/15p_RetNet_Retention): per batch and head h, with the fixed
 * decay gamma_h = 1 - 2^(-5-h),
 *     s[i, j] = (q[i] . k[j]) * gamma_h^(i-j) for j <= i, else 0     (f32)
 *     p[i, j] = bf16(s[i, j] / max(sum_j |s[i, j]|, 1))
 *     out[i]  = bf16(sum_j p[i, j] * v[j])
 * q/k/v/out bf16 [B, H, S, D].
 */
#include <math.h>
#include <stdlib.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

enum { B, H, S, D };
enum { T_Q, T_K, T_V, T_OUT, STREAM_KEY_NORM };

static void retention_create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench: q, k, v ~ N(0, 1). The L1 normaliser then averages v over
     * the whole decay window, so a head with a window of n keys outputs
     * ~1.25/sqrt(n): half the values of the slow heads are within 3*atol.
     * Each key row gets its own norm 2^(2.5 N(0, 1)) (keys of trained models
     * differ in norm), so a few keys carry each row and outputs stay
     * O(0.2..0.3) rms at every head; q gets a per-seed scale. */
    const float key_spread = 2.5f;
    const int64_t rows = d[B] * d[H] * d[S], hd = d[D];
    ckb_fill_normal_bf16(t[T_Q], rows * hd, seed, T_Q, 0.0f,
                         ckb_seed_factor(seed, T_Q, 0.5f, 2.0f));
    ckb_bf16 *k = t[T_K];
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const float norm = exp2f(key_spread * ckb_normal(seed, STREAM_KEY_NORM, (uint64_t)r));
        ckb_normal_row_bf16(k + r * hd, hd, seed, T_K, (uint64_t)(r * hd), norm);
    }
    ckb_fill_normal_bf16(t[T_V], rows * hd, seed, T_V, 0.0f, 1.0f);
}

/* log(gamma_h) as JAX computes it: gamma in f32, then its log in f32. */
static float retention_log_gamma(int64_t h)
{
    return logf(1.0f - exp2f(-5.0f - (float)h));
}

/*
 * As XLA materialises it: one batched matmul writes every S x S score (the
 * upper triangle too), a row loop applies the decay and the L1
 * normalisation and writes P in bf16 (zeros above the diagonal, where the
 * decay is exactly 0), a second batched matmul multiplies P by v. The decay
 * gamma^(i-j) depends on i - j only: it is JAX's exp(log(gamma) * (i-j)),
 * the same f32 values, tabulated once per head instead of per element.
 */
static void retention_baseline(const int64_t *d, void *const *t)
{
    const int64_t bh = d[B] * d[H], s = d[S];
    /* Reused between calls, as XLA's buffer assignment reuses temporaries. */
    float *scores = ckb_scratch(0, (size_t)(bh * s * s) * sizeof(float));
    ckb_bf16 *p = ckb_scratch(1, (size_t)(bh * s * s) * sizeof(ckb_bf16));
    float *decay = ckb_scratch(2, (size_t)(d[H] * s) * sizeof(float));

    for (int64_t h = 0; h < d[H]; h++) {
        const float lg = retention_log_gamma(h);
        for (int64_t n = 0; n < s; n++)
            decay[h * s + n] = expf(lg * (float)n);
    }

    ckb_matmul_spec qk = {0};
    qk.batch = bh, qk.M = s, qk.K = d[D], qk.N = s;
    qk.a_type = qk.b_type = CKB_BF16, qk.c_type = CKB_F32;
    qk.b_transposed = 1;
    ckb_dnnl_matmul(&qk, t[T_Q], t[T_K], NULL, scores);

#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t r = 0; r < bh * s; r++) {
        const int64_t i = r % s;
        const float *dec = decay + r / s % d[H] * s;
        float *row = scores + r * s;
        ckb_bf16 *prow = p + r * s;
        float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
        for (int64_t j = 0; j <= i; j++) {
            row[j] *= dec[i - j];
            sum += fabsf(row[j]);
        }
        const float den = sum > 1.0f ? sum : 1.0f;
#pragma omp simd
        for (int64_t j = 0; j <= i; j++)
            prow[j] = ckb_f32_to_bf16(row[j] / den);
        for (int64_t j = i + 1; j < s; j++)
            prow[j] = 0;
    }

    ckb_matmul_spec pv = {0};
    pv.batch = bh, pv.M = s, pv.K = s, pv.N = d[D];
    pv.a_type = pv.b_type = pv.c_type = CKB_BF16;
    ckb_dnnl_matmul(&pv, p, t[T_V], NULL, t[T_OUT]);
}

/* The JAX program literally, one query row at a time: every score, the
 * masked decay matrix, the L1 normaliser, P rounded to bf16. */
static void retention_reference(const int64_t *d, void *const *t)
{
    const ckb_bf16 *q = t[T_Q], *k = t[T_K], *v = t[T_V];
    ckb_bf16 *out = t[T_OUT];
    const int64_t s = d[S], hd = d[D];
#pragma omp parallel for
    for (int64_t r = 0; r < d[B] * d[H] * s; r++) {
        const int64_t base = r / s * s * hd, i = r % s;
        const float lg = retention_log_gamma(r / s % d[H]);
        float *row = malloc((size_t)s * sizeof *row);
        if (!row)
            abort();
        float sum = 0.0f;
        for (int64_t j = 0; j < s; j++) {
            float acc = 0.0f;
            for (int64_t c = 0; c < hd; c++)
                acc += ckb_bf16_to_f32(q[base + i * hd + c]) *
                       ckb_bf16_to_f32(k[base + j * hd + c]);
            const float dist = (float)(i - j);
            const float decay = j <= i ? expf(lg * fmaxf(dist, 0.0f)) : 0.0f;
            row[j] = acc * decay;
            sum += fabsf(row[j]);
        }
        const float den = fmaxf(sum, 1.0f);
        for (int64_t j = 0; j < s; j++)
            row[j] = ckb_bf16_to_f32(ckb_f32_to_bf16(row[j] / den));
        for (int64_t c = 0; c < hd; c++) {
            float acc = 0.0f;
            for (int64_t j = 0; j < s; j++)
                acc += row[j] * ckb_bf16_to_f32(v[base + j * hd + c]);
            out[base + i * hd + c] = ckb_f32_to_bf16(acc);
        }
        free(row);
    }
}

/* Useful flops: q k^T and P v at 2*S*S*D each per head, halved by the
 * causal decay (JAXBench counts the full 4*B*H*S*S*D). */
static double retention_flops(const int64_t *d) { return 2.0 * d[B] * d[H] * d[S] * d[S] * d[D]; }

static double retention_bytes(const int64_t *d) { return 2.0 * 4.0 * d[B] * d[H] * d[S] * d[D]; }

const ckb_workload ckb_wl_15p_RetNet_Retention = {
    .id = "15p_RetNet_Retention",
    .model = "RetNet-6.7B",
    .op = "multi_scale_retention",
    .tags = "attention,scan",
    .summary = "out = bf16((q @ k^T * gamma_h^(i-j), causal) / max(L1 row sum, 1)) @ v per "
               "batch and head, gamma_h = 1 - 2^(-5-h), f32 scores, bf16 P",
    .ndims = 4,
    .scale_dim = "H",
    .dims = {{"B", {1, 1, 4}}, {"H", {4, 16, 16}}, {"S", {128, 2048, 4096}}, {"D", {256, 256, 256}}},
    .ntensors = 4,
    .tensors = {{"q", CKB_BF16, CKB_IN, 4, {B, H, S, D}},
                {"k", CKB_BF16, CKB_IN, 4, {B, H, S, D}},
                {"v", CKB_BF16, CKB_IN, 4, {B, H, S, D}},
                {"out", CKB_BF16, CKB_OUT, 4, {B, H, S, D}}},
    .create_inputs = retention_create_inputs,
    .baseline = retention_baseline,
    .reference = retention_reference,
    .flops = retention_flops,
    .bytes = retention_bytes,
};
