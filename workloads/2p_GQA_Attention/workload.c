/*
 * 2p_GQA_Attention — causal grouped-query attention of Llama-3.1-405B
 * (JAXBench benchmark/2p_GQA_Attention, from MaxText): HQ query heads share
 * HKV key/value heads (query head h reads kv head h / (HQ / HKV)); per batch
 * and query head out = softmax(mask(q @ k^T * D^-0.5)) @ v, masked scores
 * -1e9. query/out bf16 [B, S, HQ, D], key/value bf16 [B, S, HKV, D].
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/ops.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

enum { B, S, HQ, HKV, D };
enum { T_QUERY, T_KEY, T_VALUE, T_OUT };

static void gqa_create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench: query, key, value ~ N(0, 1): scores ~ N(0, 1), and late
     * rows average v over ~i/3 keys, shrinking to ~0.03 at S = 4096, inside
     * atol. As in 1p, a per-seed query scale in [1.5, 2.5) sharpens the
     * softmax (score std 1.5..2.5) and keeps the outputs O(0.1..1). */
    const int64_t nq = d[B] * d[S] * d[HQ] * d[D], nkv = d[B] * d[S] * d[HKV] * d[D];
    ckb_fill_normal_bf16(t[T_QUERY], nq, seed, T_QUERY, 0.0f,
                         ckb_seed_factor(seed, T_QUERY, 1.5f, 2.5f));
    ckb_fill_normal_bf16(t[T_KEY], nkv, seed, T_KEY, 0.0f, 1.0f);
    ckb_fill_normal_bf16(t[T_VALUE], nkv, seed, T_VALUE, 0.0f, 1.0f);
}

/*
 * As XLA materialises it: the transposes to head-major copies, one batched
 * matmul writing every S x S score in f32 (the masked half too), a row loop
 * for mask and softmax, a batched P @ v and the transpose back. jnp.repeat
 * is not copied: the G = HQ / HKV query heads of a group are consecutive in
 * the head-major copy, so they are the G*S rows of one matmul against their
 * shared kv head, a free reshape that yields exactly JAX's [B, HQ, S, S]
 * scores. Scores f32, P bf16, as in 1p.
 */
static void gqa_baseline(const int64_t *d, void *const *t)
{
    const int64_t b_ = d[B], s = d[S], hq = d[HQ], hkv = d[HKV], hd = d[D], g = hq / hkv;
    const ckb_bf16 *query = t[T_QUERY], *key = t[T_KEY], *value = t[T_VALUE];
    ckb_bf16 *out = t[T_OUT];
    /* Reused between calls, as XLA's buffer assignment reuses temporaries. */
    float *scores = ckb_scratch(0, (size_t)(b_ * hq * s * s) * sizeof(float));
    ckb_bf16 *p = ckb_scratch(1, (size_t)(b_ * hq * s * s) * sizeof(ckb_bf16));
    ckb_bf16 *qt = ckb_scratch(2, (size_t)(b_ * hq * s * hd) * sizeof(ckb_bf16));
    ckb_bf16 *kt = ckb_scratch(3, (size_t)(b_ * hkv * s * hd) * sizeof(ckb_bf16));
    ckb_bf16 *vt = ckb_scratch(4, (size_t)(b_ * hkv * s * hd) * sizeof(ckb_bf16));
    ckb_bf16 *ot = ckb_scratch(5, (size_t)(b_ * hq * s * hd) * sizeof(ckb_bf16));
    const size_t row = (size_t)hd * sizeof(ckb_bf16);

    /* [B, S, H, D] -> [B, H, S, D] */
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t bi = 0; bi < b_; bi++)
        for (int64_t i = 0; i < s; i++) {
            for (int64_t h = 0; h < hq; h++)
                memcpy(qt + ((bi * hq + h) * s + i) * hd, query + ((bi * s + i) * hq + h) * hd,
                       row);
            for (int64_t h = 0; h < hkv; h++) {
                memcpy(kt + ((bi * hkv + h) * s + i) * hd, key + ((bi * s + i) * hkv + h) * hd,
                       row);
                memcpy(vt + ((bi * hkv + h) * s + i) * hd, value + ((bi * s + i) * hkv + h) * hd,
                       row);
            }
        }

    ckb_matmul_spec qk = {0};
    qk.batch = b_ * hkv, qk.M = g * s, qk.K = hd, qk.N = s;
    qk.a_type = qk.b_type = CKB_BF16, qk.c_type = CKB_F32;
    qk.b_transposed = 1;
    qk.out_scale = (float)(1.0 / sqrt((double)hd));
    ckb_dnnl_matmul(&qk, qt, kt, NULL, scores);

    /* Row r is query i = r % S. Its masked scores are -1e9, whose exp
     * underflows to exactly 0 beside the unmasked diagonal, so only j <= i
     * goes through the softmax and the rest of the row of P is 0. */
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t r = 0; r < b_ * hq * s; r++) {
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
    pv.batch = b_ * hkv, pv.M = g * s, pv.K = s, pv.N = hd;
    pv.a_type = pv.b_type = pv.c_type = CKB_BF16;
    ckb_dnnl_matmul(&pv, p, vt, NULL, ot);

    /* [B, H, S, D] -> [B, S, H, D] */
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t bi = 0; bi < b_; bi++)
        for (int64_t i = 0; i < s; i++)
            for (int64_t h = 0; h < hq; h++)
                memcpy(out + ((bi * s + i) * hq + h) * hd, ot + ((bi * hq + h) * s + i) * hd, row);
}

/* The JAX program literally (repeat, every score, the -1e9 mask, softmax
 * over the whole row) with the baseline's precision (f32 scores, bf16 P). */
static void gqa_reference(const int64_t *d, void *const *t)
{
    const ckb_bf16 *query = t[T_QUERY], *key = t[T_KEY], *value = t[T_VALUE];
    ckb_bf16 *out = t[T_OUT];
    const int64_t s = d[S], hq = d[HQ], hkv = d[HKV], hd = d[D], g = hq / hkv;
    const float scale = (float)(1.0 / sqrt((double)hd));
#pragma omp parallel for collapse(2)
    for (int64_t bi = 0; bi < d[B]; bi++)
        for (int64_t h = 0; h < hq; h++) {
            const int64_t kh = h / g; /* jnp.repeat(..., G, axis=3): head h = kh * G + j */
            float *row = malloc((size_t)s * sizeof *row);
            if (!row)
                abort();
            for (int64_t i = 0; i < s; i++) {
                const ckb_bf16 *qi = query + ((bi * s + i) * hq + h) * hd;
                float mx = -INFINITY, sum = 0.0f;
                for (int64_t j = 0; j < s; j++) {
                    const ckb_bf16 *kj = key + ((bi * s + j) * hkv + kh) * hd;
                    float acc = 0.0f;
                    for (int64_t c = 0; c < hd; c++)
                        acc += ckb_bf16_to_f32(qi[c]) * ckb_bf16_to_f32(kj[c]);
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
                        acc += row[j] * ckb_bf16_to_f32(value[((bi * s + j) * hkv + kh) * hd + c]);
                    out[((bi * s + i) * hq + h) * hd + c] = ckb_f32_to_bf16(acc);
                }
            }
            free(row);
        }
}

/* Useful flops: QK^T and PV at 2*S*S*D each per query head, halved by the
 * causal mask (JAXBench counts the full 4*B*HQ*S*S*D). */
static double gqa_flops(const int64_t *d) { return 2.0 * d[B] * d[HQ] * d[S] * d[S] * d[D]; }

static double gqa_bytes(const int64_t *d)
{
    return 2.0 * d[B] * d[S] * d[D] * (2.0 * d[HQ] + 2.0 * d[HKV]);
}

const ckb_workload ckb_wl_2p_GQA_Attention = {
    .id = "2p_GQA_Attention",
    .model = "Llama-3.1-405B",
    .op = "gqa_attention",
    .tags = "attention",
    .summary = "out = softmax(causal_mask(q @ k^T * D^-0.5)) @ v with HQ/HKV query heads per "
               "kv head, [B, S, H, D] layout, bf16 in/out, f32 scores and softmax, bf16 P",
    .ndims = 5,
    .scale_dim = "HQ",
    .dims = {{"B", {2, 2, 4}},
             {"S", {128, 1024, 4096}},
             {"HQ", {4, 32, 128}},
             {"HKV", {2, 2, 8}},
             {"D", {128, 128, 128}}},
    .ntensors = 4,
    .tensors = {{"query", CKB_BF16, CKB_IN, 4, {B, S, HQ, D}},
                {"key", CKB_BF16, CKB_IN, 4, {B, S, HKV, D}},
                {"value", CKB_BF16, CKB_IN, 4, {B, S, HKV, D}},
                {"out", CKB_BF16, CKB_OUT, 4, {B, S, HQ, D}}},
    .create_inputs = gqa_create_inputs,
    .baseline = gqa_baseline,
    .reference = gqa_reference,
    .flops = gqa_flops,
    .bytes = gqa_bytes,
    /* expert.c: query and key block sizes, and the schedule of the (query
     * block, query head) work items (0 dynamic heaviest-first, 1 the same
     * order static cyclic), and the matmul unit (the kit's MMA: the host's
     * fastest, not searched). */
    .nparams = 4,
    .params = {{"BQ", CKB_PARAM_HOST_BQ, 3, {64, 128, 256}, .multiple = 4, .head = 256},
               {"BK", CKB_PARAM_HOST_BK, 2, {64, 256}, .multiple = 16, .head = 256},
               {"SCHED", 0, 2, {0, 1}},
               {"MMA", CKB_PARAM_HOST_UNIT, 1, {CKB_PARAM_HOST_UNIT}}},
};
