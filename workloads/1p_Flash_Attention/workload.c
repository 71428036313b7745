/*
 * 1p_Flash_Attention — causal multi-head attention (JAXBench
 * benchmark/1p_Flash_Attention, the config of the Pallas flash_attention
 * kernel): per batch and head, out = softmax(mask(q @ k^T * D^-0.5)) @ v,
 * masked scores -1e9, q/k/v/out bf16 [B, H, S, D].
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

enum { B, H, S, D };
enum { T_Q, T_K, T_V, T_OUT };

static void attn_create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench: q, k, v ~ N(0, 1), so scores ~ N(0, 1) and row i averages
     * v over ~i/3 keys: outputs shrink to ~0.03 at S = 4096, inside atol.
     * A per-seed q scale in [1.5, 2.5) sharpens the softmax (scores std
     * 1.5..2.5, as trained models have) and keeps the outputs O(0.1..1). */
    const int64_t n = d[B] * d[H] * d[S] * d[D];
    ckb_fill_normal_bf16(t[T_Q], n, seed, T_Q, 0.0f, ckb_seed_factor(seed, T_Q, 1.5f, 2.5f));
    ckb_fill_normal_bf16(t[T_K], n, seed, T_K, 0.0f, 1.0f);
    ckb_fill_normal_bf16(t[T_V], n, seed, T_V, 0.0f, 1.0f);
}

/*
 * As XLA materialises it: one batched matmul writes every S x S score
 * (the masked half too), a row loop masks and normalises, a second batched
 * matmul multiplies P by v. Scores stay f32, as oneDNN's accumulator
 * produces them and as a fused kernel keeps them in registers (JAX rounds
 * them to bf16; that would put this oracle a bf16 rounding away from every
 * flash kernel). P is bf16, as JAX feeds it to the second einsum.
 */
static void attn_baseline(const int64_t *d, void *const *t)
{
    const int64_t bh = d[B] * d[H], s = d[S];
    /* Reused between calls, as XLA's buffer assignment reuses temporaries. */
    float *scores = ckb_scratch(0, (size_t)(bh * s * s) * sizeof(float));
    ckb_bf16 *p = ckb_scratch(1, (size_t)(bh * s * s) * sizeof(ckb_bf16));

    ckb_matmul_spec qk = {0};
    qk.batch = bh, qk.M = s, qk.K = d[D], qk.N = s;
    qk.a_type = qk.b_type = CKB_BF16, qk.c_type = CKB_F32;
    qk.b_transposed = 1;
    qk.out_scale = (float)(1.0 / sqrt((double)d[D]));
    ckb_dnnl_matmul(&qk, t[T_Q], t[T_K], NULL, scores);

    /* Row r is query i = r % S. Its masked scores are -1e9, whose exp
     * underflows to exactly 0 beside the unmasked diagonal, so only j <= i
     * is computed and the rest of the row of P is written as 0. */
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t r = 0; r < bh * s; r++) {
        const int64_t i = r % s;
        float *row = scores + r * s;
        ckb_bf16 *prow = p + r * s;
        float mx = row[0];
#pragma omp simd reduction(max : mx)
        for (int64_t j = 0; j <= i; j++)
            mx = row[j] > mx ? row[j] : mx;
        float sum = 0.0f;
        for (int64_t j = 0; j <= i; j++) {
            row[j] = expf(row[j] - mx);
            sum += row[j];
        }
        const float inv = 1.0f / sum;
#pragma omp simd
        for (int64_t j = 0; j <= i; j++)
            prow[j] = ckb_f32_to_bf16(row[j] * inv);
        for (int64_t j = i + 1; j < s; j++)
            prow[j] = 0;
    }

    ckb_matmul_spec pv = {0};
    pv.batch = bh, pv.M = s, pv.K = s, pv.N = d[D];
    pv.a_type = pv.b_type = pv.c_type = CKB_BF16;
    ckb_dnnl_matmul(&pv, p, t[T_V], NULL, t[T_OUT]);

}

/* The JAX program literally: every score, the -1e9 mask, softmax over the
 * whole row; with the baseline's precision choices (f32 scores, bf16 P). */
static void attn_reference(const int64_t *d, void *const *t)
{
    const ckb_bf16 *q = t[T_Q], *k = t[T_K], *v = t[T_V];
    ckb_bf16 *out = t[T_OUT];
    const int64_t s = d[S], hd = d[D];
    const float scale = (float)(1.0 / sqrt((double)hd));
#pragma omp parallel for
    for (int64_t r = 0; r < d[B] * d[H] * s; r++) {
        const int64_t base = r / s * s * hd, i = r % s;
        float *row = malloc((size_t)s * sizeof *row);
        if (!row)
            abort();
        float mx = -INFINITY, sum = 0.0f;
        for (int64_t j = 0; j < s; j++) {
            float acc = 0.0f;
            for (int64_t c = 0; c < hd; c++)
                acc += ckb_bf16_to_f32(q[base + i * hd + c]) *
                       ckb_bf16_to_f32(k[base + j * hd + c]);
            row[j] = j <= i ? acc * scale : -1e9f;
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

/* Useful flops: QK^T and PV at 2*S*S*D each per head, halved by the causal
 * mask (JAXBench counts the full 4*B*H*S*S*D). */
static double attn_flops(const int64_t *d) { return 2.0 * d[B] * d[H] * d[S] * d[S] * d[D]; }

static double attn_bytes(const int64_t *d) { return 2.0 * 4.0 * d[B] * d[H] * d[S] * d[D]; }

const ckb_workload ckb_wl_1p_Flash_Attention = {
    .id = "1p_Flash_Attention",
    .model = "Baseline-MHA",
    .op = "causal_mha",
    .tags = "attention",
    .summary = "out = softmax(causal_mask(q @ k^T * D^-0.5)) @ v per batch and head, bf16 "
               "q/k/v/out, f32 scores and softmax, bf16 P",
    .ndims = 4,
    .scale_dim = "H",
    .dims = {{"B", {1, 1, 4}}, {"H", {4, 16, 64}}, {"S", {256, 2048, 4096}}, {"D", {128, 128, 128}}},
    .ntensors = 4,
    .tensors = {{"q", CKB_BF16, CKB_IN, 4, {B, H, S, D}},
                {"k", CKB_BF16, CKB_IN, 4, {B, H, S, D}},
                {"v", CKB_BF16, CKB_IN, 4, {B, H, S, D}},
                {"out", CKB_BF16, CKB_OUT, 4, {B, H, S, D}}},
    .create_inputs = attn_create_inputs,
    .baseline = attn_baseline,
    .reference = attn_reference,
    .flops = attn_flops,
    .bytes = attn_bytes,
    /* expert.c: query and key block sizes, the schedule of query blocks
     * (0 dynamic heaviest-first, 1 the same order static cyclic), and the
     * matmul unit (ckb_kit_flash.h's MMA): the host's fastest, not searched. */
    .nparams = 4,
    .params = {{"BQ", CKB_PARAM_HOST_BQ, 6, {32, 64, 96, 128, 192, 256}, .multiple = 4,
                .head = 256},
               {"BK", CKB_PARAM_HOST_BK, 5, {64, 96, 128, 192, 256}, .multiple = 16, .head = 256},
               {"SCHED", 0, 2, {0, 1}},
               {"MMA", CKB_PARAM_HOST_UNIT, 1, {CKB_PARAM_HOST_UNIT}}},
};
