/*
 * 5p_Flex_Attention — flex attention with a score modification, Llama-3.1-
 * 70B shapes (JAXBench benchmark/5p_Flex_Attention, the JAX counterpart of
 * PyTorch's flex_attention; from MaxText attention_op): per batch and head,
 * s = q @ k^T * D^-0.5 + rel_pos_bias[h] (the score_mod), causal mask
 * -1e30, out = softmax(s) @ v. q/k/v/out bf16 [B, H, S, D], rel_pos_bias
 * bf16 [H, S, S], shared by every batch.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/ops.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

enum { B, H, S, D };
enum { T_Q, T_K, T_V, T_BIAS, T_OUT };

static void flex_create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench: q ~ N(0, 1), k, v ~ 0.02 N(0, 1), bias ~ 0.01 N(0, 1):
     * scores ~ N(0, 0.02^2) + the bias, a uniform softmax, outputs ~0.02 /
     * sqrt(i), inside atol: a kernel that dropped the bias, the scores or
     * the mask would pass. Here, as in 1p, q ~ N(0, s^2) with a per-seed s
     * in [1.5, 2.5) and k, v ~ N(0, 1) (scaled scores std 1.5..2.5, outputs
     * O(0.1..1)), and the bias ~ N(0, b^2) with a per-seed b in [0.75,
     * 1.25): the score_mod moves each softmax weight by a factor e^±1. */
    const int64_t n = d[B] * d[H] * d[S] * d[D];
    ckb_fill_normal_bf16(t[T_Q], n, seed, T_Q, 0.0f, ckb_seed_factor(seed, T_Q, 1.5f, 2.5f));
    ckb_fill_normal_bf16(t[T_K], n, seed, T_K, 0.0f, 1.0f);
    ckb_fill_normal_bf16(t[T_V], n, seed, T_V, 0.0f, 1.0f);
    ckb_fill_normal_bf16(t[T_BIAS], d[H] * d[S] * d[S], seed, T_BIAS, 0.0f,
                         ckb_seed_factor(seed, T_BIAS, 0.75f, 1.25f));
}

/*
 * As XLA materialises it: one batched matmul writes every S x S score in
 * f32 (the masked half too), one row loop adds the bias, masks and
 * normalises (the elementwise ops and the softmax XLA fuses into one pass
 * over the scores), a second batched matmul multiplies P by v. Scores and
 * score_mod f32, P bf16, as in 1p.
 */
static void flex_baseline(const int64_t *d, void *const *t)
{
    const int64_t bh = d[B] * d[H], h_ = d[H], s = d[S];
    const ckb_bf16 *bias = t[T_BIAS];
    /* Reused between calls, as XLA's buffer assignment reuses temporaries. */
    float *scores = ckb_scratch(0, (size_t)(bh * s * s) * sizeof(float));
    ckb_bf16 *p = ckb_scratch(1, (size_t)(bh * s * s) * sizeof(ckb_bf16));

    ckb_matmul_spec qk = {0};
    qk.batch = bh, qk.M = s, qk.K = d[D], qk.N = s;
    qk.a_type = qk.b_type = CKB_BF16, qk.c_type = CKB_F32;
    qk.b_transposed = 1;
    qk.out_scale = (float)(1.0 / sqrt((double)d[D]));
    ckb_dnnl_matmul(&qk, t[T_Q], t[T_K], NULL, scores);

    /* Row r is query i of head h = (r / S) % H. exp(-1e30 - max) is exactly
     * 0, so only j <= i goes through the softmax and the rest of P is 0. */
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t r = 0; r < bh * s; r++) {
        const int64_t i = r % s, h = r / s % h_;
        float *srow = scores + r * s;
        const ckb_bf16 *brow = bias + (h * s + i) * s;
        ckb_bf16 *prow = p + r * s;
#pragma omp simd
        for (int64_t j = 0; j <= i; j++)
            srow[j] += ckb_bf16_to_f32(brow[j]);
        ckb_op_softmax(srow, i + 1);
#pragma omp simd
        for (int64_t j = 0; j <= i; j++)
            prow[j] = ckb_f32_to_bf16(srow[j]);
        memset(prow + i + 1, 0, (size_t)(s - i - 1) * sizeof *prow);
    }

    ckb_matmul_spec pv = {0};
    pv.batch = bh, pv.M = s, pv.K = s, pv.N = d[D];
    pv.a_type = pv.b_type = pv.c_type = CKB_BF16;
    ckb_dnnl_matmul(&pv, p, t[T_V], NULL, t[T_OUT]);
}

/* The JAX program literally (every score, the bias, the -1e30 mask, softmax
 * over the whole row) with the baseline's precision (f32 scores, bf16 P). */
static void flex_reference(const int64_t *d, void *const *t)
{
    const ckb_bf16 *q = t[T_Q], *k = t[T_K], *v = t[T_V], *bias = t[T_BIAS];
    ckb_bf16 *out = t[T_OUT];
    const int64_t s = d[S], hd = d[D];
    const float scale = (float)(1.0 / sqrt((double)hd));
#pragma omp parallel for
    for (int64_t r = 0; r < d[B] * d[H] * s; r++) {
        const int64_t base = r / s * s * hd, i = r % s, h = r / s % d[H];
        float *row = malloc((size_t)s * sizeof *row);
        if (!row)
            abort();
        float mx = -INFINITY, sum = 0.0f;
        for (int64_t j = 0; j < s; j++) {
            float acc = 0.0f;
            for (int64_t c = 0; c < hd; c++)
                acc += ckb_bf16_to_f32(q[base + i * hd + c]) *
                       ckb_bf16_to_f32(k[base + j * hd + c]);
            const float sc = acc * scale + ckb_bf16_to_f32(bias[(h * s + i) * s + j]);
            row[j] = j <= i ? sc : -1e30f;
            mx = fmaxf(mx, row[j]);
        }
        for (int64_t j = 0; j < s; j++) {
            row[j] = expf(row[j] - mx);
            sum += row[j];
        }
        for (int64_t j = 0; j < s; j++)
            row[j] = ckb_bf16_to_f32(ckb_f32_to_bf16(row[j] / sum));
        for (int64_t c = 0; c < hd; c++) {
            float acc = 0.0f;
            for (int64_t j = 0; j < s; j++)
                acc += row[j] * ckb_bf16_to_f32(v[base + j * hd + c]);
            out[base + i * hd + c] = ckb_f32_to_bf16(acc);
        }
        free(row);
    }
}

/* Useful flops: QK^T and PV at 2*S*S*D each per head and the bias add,
 * halved by the causal mask (JAXBench counts the full 4*B*H*S*S*D +
 * B*H*S*S). */
static double flex_flops(const int64_t *d)
{
    return (double)d[B] * d[H] * d[S] * d[S] * (2.0 * d[D] + 0.5);
}

static double flex_bytes(const int64_t *d)
{
    return 2.0 * (4.0 * d[B] * d[H] * d[S] * d[D] + (double)d[H] * d[S] * d[S]);
}

const ckb_workload ckb_wl_5p_Flex_Attention = {
    .id = "5p_Flex_Attention",
    .model = "Llama-3.1-70B",
    .op = "flex_attention",
    .tags = "attention",
    .summary = "out = softmax(causal_mask(q @ k^T * D^-0.5 + rel_pos_bias[h])) @ v per batch "
               "and head, bf16 in/out, f32 scores and softmax, bf16 P",
    .ndims = 4,
    .scale_dim = "H",
    .dims = {{"B", {2, 2, 4}}, {"H", {4, 8, 64}}, {"S", {128, 2048, 4096}}, {"D", {128, 128, 128}}},
    .ntensors = 5,
    .tensors = {{"q", CKB_BF16, CKB_IN, 4, {B, H, S, D}},
                {"k", CKB_BF16, CKB_IN, 4, {B, H, S, D}},
                {"v", CKB_BF16, CKB_IN, 4, {B, H, S, D}},
                {"rel_pos_bias", CKB_BF16, CKB_IN, 3, {H, S, S}},
                {"out", CKB_BF16, CKB_OUT, 4, {B, H, S, D}}},
    .create_inputs = flex_create_inputs,
    .baseline = flex_baseline,
    .reference = flex_reference,
    .flops = flex_flops,
    .bytes = flex_bytes,
};
