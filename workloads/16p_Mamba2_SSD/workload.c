/*
 * 16p_Mamba2_SSD — the state-space-duality (matrix) form of Mamba-2's SSD
 * layer (JAXBench benchmark/16p_Mamba2_SSD, Mamba-2-2.7B): per batch and
 * head, with the selective decay a = sigmoid(A_log) and cs = cumsum(log(a + 1e-8)),
 *     s[i, j] = (q[i] . k[j]) * exp(cs[i] - cs[j]) for j <= i, else 0   (f32)
 *     p[i, j] = bf16(s[i, j] / max(|sum_j s[i, j]|, 1))
 *     out[i]  = bf16(sum_j p[i, j] * v[j])
 * q (C), k (B), v (x) and out bf16 [B, H, S, D]; A_log f32 [B, H, S].
 */
#include <math.h>
#include <stdlib.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

enum { B, H, S, D };
enum { T_Q, T_K, T_V, T_ALOG, T_OUT };

static void ssd_create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench: q, k, v ~ N(0, 1), A_log ~ N(-4, 0.5^2). Then a ~ 0.018:
     * exp(cs[i] - cs[j]) is ~e^-4 per step, so only the diagonal counts and
     * a kernel that skipped the decay matrix would pass. Here A_log ~
     * N(mu, 1) with a per-seed mu in [3.5, 4.5): a mostly in [0.8, 0.999], a
     * memory of tens to hundreds of steps that varies with the input, as
     * the selective scan intends. q, k ~ N(0, 0.12^2) (a per-seed factor on
     * q): scores ~0.1, so the signed row sum is O(1) and both branches of
     * max(|sum|, 1) occur. Larger scores make the normaliser cancel in some
     * rows and amplify P, and with it the bf16 rounding of P, towards atol.
     * v ~ N(0, 0.7^2). */
    const int64_t n = d[B] * d[H] * d[S] * d[D];
    ckb_fill_normal_bf16(t[T_Q], n, seed, T_Q, 0.0f,
                         0.12f * ckb_seed_factor(seed, T_Q, 0.8f, 1.25f));
    ckb_fill_normal_bf16(t[T_K], n, seed, T_K, 0.0f, 0.12f);
    ckb_fill_normal_bf16(t[T_V], n, seed, T_V, 0.0f, 0.7f);
    ckb_fill_normal_f32(t[T_ALOG], d[B] * d[H] * d[S], seed, T_ALOG,
                        ckb_seed_factor(seed, T_ALOG, 3.5f, 4.5f), 1.0f);
}

/* cs = cumsum(log(sigmoid(A_log) + 1e-8)) along S, in f32, as JAX has it. */
static void ssd_log_decay_cumsum(const float *a_log, int64_t rows, int64_t s, float *cs)
{
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        float acc = 0.0f;
        for (int64_t i = 0; i < s; i++) {
            const float a = 1.0f / (1.0f + expf(-a_log[r * s + i]));
            acc += logf(a + 1e-8f);
            cs[r * s + i] = acc;
        }
    }
}

/*
 * As XLA materialises it: one batched matmul writes every S x S score
 * (the upper triangle too), a row loop multiplies by the decay matrix
 * L[i, j] = exp(cs[i] - cs[j]) (exp(-1e30) = 0 above the diagonal, so it
 * is written as 0), normalises by the signed row sum and writes P in bf16,
 * a second batched matmul multiplies P by v.
 */
static void ssd_baseline(const int64_t *d, void *const *t)
{
    const int64_t bh = d[B] * d[H], s = d[S];
    /* Reused between calls, as XLA's buffer assignment reuses temporaries. */
    float *scores = ckb_scratch(0, (size_t)(bh * s * s) * sizeof(float));
    ckb_bf16 *p = ckb_scratch(1, (size_t)(bh * s * s) * sizeof(ckb_bf16));
    float *cs = ckb_scratch(2, (size_t)(bh * s) * sizeof(float));

    ssd_log_decay_cumsum(t[T_ALOG], bh, s, cs);

    ckb_matmul_spec qk = {0};
    qk.batch = bh, qk.M = s, qk.K = d[D], qk.N = s;
    qk.a_type = qk.b_type = CKB_BF16, qk.c_type = CKB_F32;
    qk.b_transposed = 1;
    ckb_dnnl_matmul(&qk, t[T_Q], t[T_K], NULL, scores);

#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t r = 0; r < bh * s; r++) {
        const int64_t i = r % s;
        const float *c = cs + r / s * s;
        float *row = scores + r * s;
        ckb_bf16 *prow = p + r * s;
        float sum = 0.0f;
        for (int64_t j = 0; j <= i; j++) {
            row[j] *= expf(c[i] - c[j]);
            sum += row[j];
        }
        if (fabsf(sum) < 1e-6f)
            sum = 1.0f;
        const float den = fmaxf(fabsf(sum), 1.0f);
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
 * masked decay exp(where(j <= i, cs[i] - cs[j], -1e30)), the signed-sum
 * normaliser, P rounded to bf16. */
static void ssd_reference(const int64_t *d, void *const *t)
{
    const ckb_bf16 *q = t[T_Q], *k = t[T_K], *v = t[T_V];
    ckb_bf16 *out = t[T_OUT];
    const int64_t bh = d[B] * d[H], s = d[S], hd = d[D];
    float *cs = malloc((size_t)(bh * s) * sizeof *cs);
    if (!cs)
        abort();
    ssd_log_decay_cumsum(t[T_ALOG], bh, s, cs);
#pragma omp parallel for
    for (int64_t r = 0; r < bh * s; r++) {
        const int64_t base = r / s * s * hd, i = r % s;
        const float *c = cs + r / s * s;
        float *row = malloc((size_t)s * sizeof *row);
        if (!row)
            abort();
        float sum = 0.0f;
        for (int64_t j = 0; j < s; j++) {
            float acc = 0.0f;
            for (int64_t e = 0; e < hd; e++)
                acc += ckb_bf16_to_f32(q[base + i * hd + e]) *
                       ckb_bf16_to_f32(k[base + j * hd + e]);
            row[j] = acc * expf(j <= i ? c[i] - c[j] : -1e30f);
            sum += row[j];
        }
        sum = fabsf(sum) < 1e-6f ? 1.0f : sum;
        const float den = fmaxf(fabsf(sum), 1.0f);
        for (int64_t j = 0; j < s; j++)
            row[j] = ckb_bf16_to_f32(ckb_f32_to_bf16(row[j] / den));
        for (int64_t e = 0; e < hd; e++) {
            float acc = 0.0f;
            for (int64_t j = 0; j < s; j++)
                acc += row[j] * ckb_bf16_to_f32(v[base + j * hd + e]);
            out[base + i * hd + e] = ckb_f32_to_bf16(acc);
        }
        free(row);
    }
    free(cs);
}

/* Useful flops: C B^T and P x at 2*S*S*D each per head, halved by the
 * causal mask (JAXBench counts the full 4*B*H*S*S*D). */
static double ssd_flops(const int64_t *d) { return 2.0 * d[B] * d[H] * d[S] * d[S] * d[D]; }

static double ssd_bytes(const int64_t *d)
{
    return 2.0 * 4.0 * d[B] * d[H] * d[S] * d[D] + 4.0 * d[B] * d[H] * d[S];
}

const ckb_workload ckb_wl_16p_Mamba2_SSD = {
    .id = "16p_Mamba2_SSD",
    .model = "Mamba-2-2.7B",
    .op = "state_space_duality",
    .tags = "attention,scan",
    .summary = "out = bf16((q @ k^T * exp(cs_i - cs_j), causal) / max(|row sum|, 1)) @ v, "
               "cs = cumsum(log(sigmoid(A_log) + 1e-8)), f32 scores, bf16 P",
    .ndims = 4,
    .scale_dim = "H",
    .dims = {{"B", {1, 1, 4}}, {"H", {4, 32, 64}}, {"S", {256, 2048, 4096}}, {"D", {64, 64, 64}}},
    .ntensors = 5,
    .tensors = {{"q", CKB_BF16, CKB_IN, 4, {B, H, S, D}},
                {"k", CKB_BF16, CKB_IN, 4, {B, H, S, D}},
                {"v", CKB_BF16, CKB_IN, 4, {B, H, S, D}},
                {"A_log", CKB_F32, CKB_IN, 3, {B, H, S}},
                {"out", CKB_BF16, CKB_OUT, 4, {B, H, S, D}}},
    .create_inputs = ssd_create_inputs,
    .baseline = ssd_baseline,
    .reference = ssd_reference,
    .flops = ssd_flops,
    .bytes = ssd_bytes,
};
