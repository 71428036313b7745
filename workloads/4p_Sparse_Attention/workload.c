/*
 * 4p_Sparse_Attention — the vanilla baseline of splash (block-sparse)
 * attention, Llama-3.1-70B GQA with a causal mask (JAXBench
 * benchmark/4p_Sparse_Attention, from MaxText's splash_attention_kernel):
 * per batch row b and query head h, out[b, h] = softmax(mask(q[b, h] @
 * k[b, h / G]^T)) @ v[b, h / G] with G = HQ / HKV, no scale (q arrives
 * pre-scaled), masked scores -1e30. q/out bf16 [B, HQ, S, D], k/v bf16
 * [B, HKV, S, D] (the batch axis of upstream's 5d39d1a, a vmap over b).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/ops.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

enum { B, HQ, HKV, S, D };
enum { T_Q, T_K, T_V, T_OUT };

static void splash_create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench: q ~ N(0, 1) * D^-0.5, k, v ~ N(0, 1) * 0.02: scores ~
     * N(0, 0.02^2), a uniform softmax, and outputs (running means of v)
     * of ~0.02 / sqrt(i), all inside atol: a kernel that ignored the scores
     * or the mask would pass. Here q keeps its D^-0.5 pre-scaling with a
     * per-seed factor in [1.5, 2.5) (score std 1.5..2.5, as in 1p) and k,
     * v ~ N(0, 1): outputs O(0.1..1). */
    const int64_t nq = d[B] * d[HQ] * d[S] * d[D], nkv = d[B] * d[HKV] * d[S] * d[D];
    const float qs = ckb_seed_factor(seed, T_Q, 1.5f, 2.5f) / sqrtf((float)d[D]);
    ckb_fill_normal_bf16(t[T_Q], nq, seed, T_Q, 0.0f, qs);
    ckb_fill_normal_bf16(t[T_K], nkv, seed, T_K, 0.0f, 1.0f);
    ckb_fill_normal_bf16(t[T_V], nkv, seed, T_V, 0.0f, 1.0f);
}

/*
 * As XLA materialises it: one batched matmul writes every S x S score in
 * f32 (the masked blocks too, which splash attention skips), a row loop
 * masks and normalises, a second batched matmul multiplies P by v.
 * jnp.repeat is not copied: the G query heads of kv head g are consecutive
 * ([B, HQ, S, D] is [B*HKV, G*S, D]), so they are the G*S rows of one matmul
 * against k[b, g] (batch B*HKV), a free reshape that yields exactly JAX's
 * [B, HQ, S, S] scores.
 * Scores f32, P bf16, as in 1p.
 */
static void splash_baseline(const int64_t *d, void *const *t)
{
    const int64_t bhq = d[B] * d[HQ], bhkv = d[B] * d[HKV], s = d[S], hd = d[D];
    const int64_t g = d[HQ] / d[HKV];
    /* Reused between calls, as XLA's buffer assignment reuses temporaries. */
    float *scores = ckb_scratch(0, (size_t)(bhq * s * s) * sizeof(float));
    ckb_bf16 *p = ckb_scratch(1, (size_t)(bhq * s * s) * sizeof(ckb_bf16));

    ckb_matmul_spec qk = {0};
    qk.batch = bhkv, qk.M = g * s, qk.K = hd, qk.N = s;
    qk.a_type = qk.b_type = CKB_BF16, qk.c_type = CKB_F32;
    qk.b_transposed = 1;
    ckb_dnnl_matmul(&qk, t[T_Q], t[T_K], NULL, scores);

    /* Row r is query i = r % S. exp(-1e30 - max) is exactly 0, so only
     * j <= i goes through the softmax and the rest of the row of P is 0. */
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t r = 0; r < bhq * s; r++) {
        const int64_t i = r % s;
        float *srow = scores + r * s;
        ckb_bf16 *prow = p + r * s;
        ckb_op_softmax(srow, i + 1);
#pragma omp simd
        for (int64_t j = 0; j <= i; j++)
            prow[j] = ckb_f32_to_bf16(srow[j]);
        memset(prow + i + 1, 0, (size_t)(s - i - 1) * sizeof *prow);
    }

    ckb_matmul_spec pv = {0};
    pv.batch = bhkv, pv.M = g * s, pv.K = s, pv.N = hd;
    pv.a_type = pv.b_type = pv.c_type = CKB_BF16;
    ckb_dnnl_matmul(&pv, p, t[T_V], NULL, t[T_OUT]);
}

/* The JAX program literally (per batch row, repeat, every score, the -1e30
 * mask, softmax over the whole row) with the baseline's precision (f32
 * scores, bf16 P). */
static void splash_reference(const int64_t *d, void *const *t)
{
    const ckb_bf16 *q = t[T_Q], *k = t[T_K], *v = t[T_V];
    ckb_bf16 *out = t[T_OUT];
    const int64_t s = d[S], hd = d[D], g = d[HQ] / d[HKV];
#pragma omp parallel for
    for (int64_t r = 0; r < d[B] * d[HQ] * s; r++) {
        const int64_t b = r / (d[HQ] * s), h = r / s % d[HQ], i = r % s;
        const int64_t kh = b * d[HKV] + h / g; /* jnp.repeat(k[b], G, axis=0) */
        const ckb_bf16 *qi = q + r * hd, *kb = k + kh * s * hd, *vb = v + kh * s * hd;
        float *row = malloc((size_t)s * sizeof *row);
        if (!row)
            abort();
        float mx = -INFINITY, sum = 0.0f;
        for (int64_t j = 0; j < s; j++) {
            float acc = 0.0f;
            for (int64_t c = 0; c < hd; c++)
                acc += ckb_bf16_to_f32(qi[c]) * ckb_bf16_to_f32(kb[j * hd + c]);
            row[j] = j <= i ? acc : -1e30f;
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
                acc += row[j] * ckb_bf16_to_f32(vb[j * hd + c]);
            out[r * hd + c] = ckb_f32_to_bf16(acc);
        }
        free(row);
    }
}

/* Useful flops: QK^T and PV at 2*S*S*D each per (batch row, query head),
 * halved by the causal mask (JAXBench counts the full 4*B*HQ*S*S*D). */
static double splash_flops(const int64_t *d)
{
    return 2.0 * d[B] * d[HQ] * d[S] * d[S] * d[D];
}

/* q, k, v and out once, bf16. */
static double splash_bytes(const int64_t *d)
{
    return 2.0 * d[B] * d[S] * d[D] * (2.0 * d[HQ] + 2.0 * d[HKV]);
}

const ckb_workload ckb_wl_4p_Sparse_Attention = {
    .id = "4p_Sparse_Attention",
    .model = "Llama-3.1-70B",
    .op = "sparse_attention",
    .tags = "attention",
    .summary = "out = softmax(causal_mask(q @ k^T)) @ v, GQA (HQ/HKV query heads per kv head), "
               "pre-scaled q, [B, H, S, D] layout, bf16 in/out, f32 scores and softmax, "
               "bf16 P",
    .ndims = 5,
    .scale_dim = "HQ",
    /* default keeps B = 1: the size choice's work (16 heads of 2048^2
     * scores, as 1p's default); small has B = 2 so the tests see the batch
     * axis; paper is upstream's B = 4 (README). */
    .dims = {{"B", {2, 1, 4}},
             {"HQ", {8, 16, 64}},
             {"HKV", {2, 2, 8}},
             {"S", {128, 2048, 4096}},
             {"D", {128, 128, 128}}},
    .ntensors = 4,
    .tensors = {{"q", CKB_BF16, CKB_IN, 4, {B, HQ, S, D}},
                {"k", CKB_BF16, CKB_IN, 4, {B, HKV, S, D}},
                {"v", CKB_BF16, CKB_IN, 4, {B, HKV, S, D}},
                {"out", CKB_BF16, CKB_OUT, 4, {B, HQ, S, D}}},
    .create_inputs = splash_create_inputs,
    .baseline = splash_baseline,
    .reference = splash_reference,
    .flops = splash_flops,
    .bytes = splash_bytes,
    /* expert.c: query and key block sizes (the key block is the block
     * mask's granularity), and the schedule of the (query block, query head)
     * work items (0 dynamic heaviest-first, 1 the same order static
     * cyclic), and the matmul unit (the kit's MMA: the host's fastest, not
     * searched). */
    .nparams = 4,
    .params = {{"BQ", CKB_PARAM_HOST_BQ, 3, {64, 128, 256}, .multiple = 4, .head = 256},
               {"BK", CKB_PARAM_HOST_BK, 2, {64, 256}, .multiple = 16, .head = 256},
               {"SCHED", 0, 2, {0, 1}},
               {"MMA", CKB_PARAM_HOST_UNIT, 1, {CKB_PARAM_HOST_UNIT}}},
};
