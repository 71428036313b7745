/*
 * 3p_MLA_Attention — multi-head latent attention of DeepSeek-V3 (JAXBench
 * benchmark/3p_MLA_Attention, from MaxText), projections included:
 *   q      = (x @ q_down) @ q_up                  per head [NOPE | ROPE]
 *   kv     = x @ kv_down = [k_latent (KVL) | k_rope (ROPE)]
 *   k_nope = k_latent @ k_up,  v = k_latent @ v_up (the low-rank latent KV)
 *   RoPE (theta 10000, on split halves: x[:ROPE/2] with x[ROPE/2:]) on q's
 *   rope part and on k_rope, which every head shares
 *   out    = (softmax(causal(q_full @ k_full^T * QKD^-0.5)) @ v) @ o_proj
 * with q_full = [q_nope | rope(q_rope)], k_full = [k_nope | rope(k_rope)],
 * QKD = NOPE + ROPE. Every tensor bf16; f32 accumulation.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/ops.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

enum { B, S, E, H, QL, KVL, NOPE, ROPE, VD, QKD, KVR };
enum { T_X, T_Q_DOWN, T_Q_UP, T_KV_DOWN, T_K_UP, T_V_UP, T_O_PROJ, T_OUT };

/* DeepSeek-V3's rope_theta: a model constant, written into the source. */
#define MLA_ROPE_THETA 10000.0f

static void mla_create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench: x ~ N(0, 1), every weight ~ 0.02 N(0, 1): at its dims the
     * activations are O(1), but the 0.02 scale ties them to E = 7168 and
     * 128 heads; at smaller dims they shrink towards atol. Here each
     * weight is N(0, c^2 / fan_in), so the activations keep their scale at
     * every size: q ~ 1.5 sx, k and v ~ 1.2 sx for a per-seed x scale sx
     * in [0.8, 1.25) (score std 1.2..2.8, a sharp softmax as in 1p), and
     * o_proj's c = 2 brings the output to O(0.3..1). */
    const int64_t rows = d[B] * d[S];
    const float sx = ckb_seed_factor(seed, T_X, 0.9f, 1.1f);
    ckb_fill_normal_bf16(t[T_X], rows * d[E], seed, T_X, 0.0f, sx);
    ckb_fill_normal_bf16(t[T_Q_DOWN], d[E] * d[QL], seed, T_Q_DOWN, 0.0f,
                         1.0f / sqrtf((float)d[E]));
    ckb_fill_normal_bf16(t[T_Q_UP], d[QL] * d[H] * d[QKD], seed, T_Q_UP, 0.0f,
                         1.0f / sqrtf((float)d[QL]));
    ckb_fill_normal_bf16(t[T_KV_DOWN], d[E] * d[KVR], seed, T_KV_DOWN, 0.0f,
                         1.2f / sqrtf((float)d[E]));
    ckb_fill_normal_bf16(t[T_K_UP], d[KVL] * d[H] * d[NOPE], seed, T_K_UP, 0.0f,
                         1.0f / sqrtf((float)d[KVL]));
    ckb_fill_normal_bf16(t[T_V_UP], d[KVL] * d[H] * d[VD], seed, T_V_UP, 0.0f,
                         1.0f / sqrtf((float)d[KVL]));
    ckb_fill_normal_bf16(t[T_O_PROJ], d[H] * d[VD] * d[E], seed, T_O_PROJ, 0.0f,
                         0.4f / sqrtf((float)(d[H] * d[VD])));
}

/* JAX's _compute_rope: freq_i = theta^(-2i / ROPE) and angle = pos * freq_i
 * in f32, then cos and sin cast to bf16. cs holds [S, ROPE/2] cos, then sin. */
static void mla_rope_table(const int64_t *d, ckb_bf16 *cs)
{
    const int64_t half = d[ROPE] / 2, s = d[S];
    for (int64_t pos = 0; pos < s; pos++)
        for (int64_t i = 0; i < half; i++) {
            const float freq = 1.0f / powf(MLA_ROPE_THETA, (float)(2 * i) / (float)d[ROPE]);
            const float angle = (float)pos * freq;
            cs[pos * half + i] = ckb_f32_to_bf16(cosf(angle));
            cs[(s + pos) * half + i] = ckb_f32_to_bf16(sinf(angle));
        }
}

/* JAX's _apply_rope on one position (upstream 5d39d1a): split halves
 * x1 = x[:ROPE/2], x2 = x[ROPE/2:], rotated by angle i and concatenated:
 * y = [x1 cos - x2 sin, x2 cos + x1 sin]; f32 math, one bf16 rounding. */
static void mla_rope(const ckb_bf16 *x, ckb_bf16 *y, int64_t rope, const ckb_bf16 *cs,
                     int64_t pos, int64_t s)
{
    const int64_t half = rope / 2;
    for (int64_t i = 0; i < half; i++) {
        const float x1 = ckb_bf16_to_f32(x[i]), x2 = ckb_bf16_to_f32(x[half + i]);
        const float c = ckb_bf16_to_f32(cs[pos * half + i]);
        const float sn = ckb_bf16_to_f32(cs[(s + pos) * half + i]);
        y[i] = ckb_f32_to_bf16(x1 * c - x2 * sn);
        y[half + i] = ckb_f32_to_bf16(x2 * c + x1 * sn);
    }
}

/* One bf16 matmul C[M, N] = A[M, K] @ B[K, N]. */
static void mla_matmul(int64_t m, int64_t k, int64_t n, const void *a, const void *b, void *c)
{
    ckb_matmul_spec s = {0};
    s.M = m, s.K = k, s.N = n;
    s.a_type = s.b_type = s.c_type = CKB_BF16;
    ckb_dnnl_matmul(&s, a, b, NULL, c);
}

/*
 * As XLA materialises it: six oneDNN matmuls for the projections, each
 * rounding its output to bf16 as JAX's dots do (k_latent copied out of kv
 * first: oneDNN takes a dense operand); k_nope and v for every head, the
 * RoPE'd, concatenated, head-major q_full and k_full, and v head-major
 * (one copy loop each, the fusions XLA makes of slice, rope, broadcast,
 * concat and transpose); then attention as in 1p (every S x S score in
 * f32, a row loop for mask and softmax, bf16 P, P @ v) and the output
 * projection of the [B, S, H*VD] transpose.
 */
static void mla_baseline(const int64_t *d, void *const *t)
{
    const int64_t b_ = d[B], s = d[S], h_ = d[H], rows = b_ * s;
    const int64_t nope = d[NOPE], rope = d[ROPE], vd = d[VD], qkd = d[QKD], kvl = d[KVL];
    const int64_t kvr = d[KVR], ql = d[QL];

    /* The projections' temporaries, carved from one scratch slot. */
    const int64_t n_cq = rows * ql, n_q = rows * h_ * qkd, n_kv = rows * kvr, n_kl = rows * kvl;
    const int64_t n_kn = rows * h_ * nope, n_v = rows * h_ * vd, n_cs = s * rope;
    const int64_t n_kr = rows * rope, n_full = rows * h_ * qkd;
    ckb_bf16 *arena = ckb_scratch(
        2, (size_t)(n_cq + n_q + n_kv + n_kl + n_kn + 3 * n_v + n_cs + n_kr + 2 * n_full) *
               sizeof(ckb_bf16));
    ckb_bf16 *cq = arena, *q = cq + n_cq, *kv = q + n_q, *kl = kv + n_kv, *kn = kl + n_kl;
    ckb_bf16 *v = kn + n_kn, *vt = v + n_v, *ao = vt + n_v, *cs = ao + n_v, *kr = cs + n_cs;
    ckb_bf16 *qf = kr + n_kr, *kf = qf + n_full;
    /* Reused between calls, as XLA's buffer assignment reuses temporaries. */
    float *scores = ckb_scratch(0, (size_t)(b_ * h_ * s * s) * sizeof(float));
    ckb_bf16 *p = ckb_scratch(1, (size_t)(b_ * h_ * s * s) * sizeof(ckb_bf16));
    ckb_bf16 *ot = ckb_scratch(3, (size_t)n_v * sizeof(ckb_bf16));

    mla_matmul(rows, d[E], ql, t[T_X], t[T_Q_DOWN], cq);
    mla_matmul(rows, ql, h_ * qkd, cq, t[T_Q_UP], q);
    mla_matmul(rows, d[E], kvr, t[T_X], t[T_KV_DOWN], kv);
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; r++)
        memcpy(kl + r * kvl, kv + r * kvr, (size_t)kvl * sizeof(ckb_bf16));
    mla_matmul(rows, kvl, h_ * nope, kl, t[T_K_UP], kn);
    mla_matmul(rows, kvl, h_ * vd, kl, t[T_V_UP], v);

    mla_rope_table(d, cs);
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; r++)
        mla_rope(kv + r * kvr + kvl, kr + r * rope, rope, cs, r % s, s);

    /* [B, S, H, .] -> [B, H, S, .]: q_full (rope applied on the way),
     * k_full (k_rope broadcast to every head), v. */
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t r = 0; r < rows; r++)
        for (int64_t h = 0; h < h_; h++) {
            const int64_t bi = r / s, i = r % s, dst = (bi * h_ + h) * s + i;
            const ckb_bf16 *qsrc = q + (r * h_ + h) * qkd;
            memcpy(qf + dst * qkd, qsrc, (size_t)nope * sizeof(ckb_bf16));
            mla_rope(qsrc + nope, qf + dst * qkd + nope, rope, cs, i, s);
            memcpy(kf + dst * qkd, kn + (r * h_ + h) * nope, (size_t)nope * sizeof(ckb_bf16));
            memcpy(kf + dst * qkd + nope, kr + r * rope, (size_t)rope * sizeof(ckb_bf16));
            memcpy(vt + dst * vd, v + (r * h_ + h) * vd, (size_t)vd * sizeof(ckb_bf16));
        }

    ckb_matmul_spec qk = {0};
    qk.batch = b_ * h_, qk.M = s, qk.K = qkd, qk.N = s;
    qk.a_type = qk.b_type = CKB_BF16, qk.c_type = CKB_F32;
    qk.b_transposed = 1;
    qk.out_scale = (float)(1.0 / sqrt((double)qkd));
    ckb_dnnl_matmul(&qk, qf, kf, NULL, scores);

    /* Row r is query i = r % S; exp(-1e9 - max) is exactly 0, so only
     * j <= i goes through the softmax and the rest of the row of P is 0. */
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t r = 0; r < b_ * h_ * s; r++) {
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
    pv.batch = b_ * h_, pv.M = s, pv.K = s, pv.N = vd;
    pv.a_type = pv.b_type = pv.c_type = CKB_BF16;
    ckb_dnnl_matmul(&pv, p, vt, NULL, ot);

#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t r = 0; r < rows; r++)
        for (int64_t h = 0; h < h_; h++)
            memcpy(ao + (r * h_ + h) * vd, ot + ((r / s * h_ + h) * s + r % s) * vd,
                   (size_t)vd * sizeof(ckb_bf16));
    mla_matmul(rows, h_ * vd, d[E], ao, t[T_O_PROJ], t[T_OUT]);
}

/* C = bf16(A @ B), plain loops (the reference's matmul). */
static void mla_ref_matmul(int64_t m, int64_t k, int64_t n, const ckb_bf16 *a, int64_t lda,
                           const ckb_bf16 *b, ckb_bf16 *c)
{
#pragma omp parallel for
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            float acc = 0.0f;
            for (int64_t l = 0; l < k; l++)
                acc += ckb_bf16_to_f32(a[i * lda + l]) * ckb_bf16_to_f32(b[l * n + j]);
            c[i * n + j] = ckb_f32_to_bf16(acc);
        }
}

/* The JAX program step by step in plain loops, with the baseline's
 * precision: bf16 after every dot and after RoPE, f32 scores with the
 * -1e9 mask and softmax over the whole row, bf16 P. */
static void mla_reference(const int64_t *d, void *const *t)
{
    const int64_t b_ = d[B], s = d[S], h_ = d[H], rows = b_ * s, e = d[E];
    const int64_t nope = d[NOPE], rope = d[ROPE], vd = d[VD], qkd = d[QKD], kvl = d[KVL];
    const int64_t kvr = d[KVR], ql = d[QL];
    ckb_bf16 *cq = malloc((size_t)(rows * ql) * sizeof *cq);
    ckb_bf16 *q = malloc((size_t)(rows * h_ * qkd) * sizeof *q);
    ckb_bf16 *kv = malloc((size_t)(rows * kvr) * sizeof *kv);
    ckb_bf16 *kn = malloc((size_t)(rows * h_ * nope) * sizeof *kn);
    ckb_bf16 *v = malloc((size_t)(rows * h_ * vd) * sizeof *v);
    ckb_bf16 *kr = malloc((size_t)(rows * rope) * sizeof *kr);
    ckb_bf16 *ao = malloc((size_t)(rows * h_ * vd) * sizeof *ao);
    ckb_bf16 *cs = malloc((size_t)(s * rope) * sizeof *cs);
    if (!cq || !q || !kv || !kn || !v || !kr || !ao || !cs)
        abort();

    mla_ref_matmul(rows, e, ql, t[T_X], e, t[T_Q_DOWN], cq);
    mla_ref_matmul(rows, ql, h_ * qkd, cq, ql, t[T_Q_UP], q);
    mla_ref_matmul(rows, e, kvr, t[T_X], e, t[T_KV_DOWN], kv);
    mla_ref_matmul(rows, kvl, h_ * nope, kv, kvr, t[T_K_UP], kn); /* k_latent = kv[:, :KVL] */
    mla_ref_matmul(rows, kvl, h_ * vd, kv, kvr, t[T_V_UP], v);
    mla_rope_table(d, cs);
    for (int64_t r = 0; r < rows; r++) {
        mla_rope(kv + r * kvr + kvl, kr + r * rope, rope, cs, r % s, s);
        for (int64_t h = 0; h < h_; h++) /* q_rope in place */
            mla_rope(q + (r * h_ + h) * qkd + nope, q + (r * h_ + h) * qkd + nope, rope, cs,
                     r % s, s);
    }

    const float scale = (float)(1.0 / sqrt((double)qkd));
#pragma omp parallel for
    for (int64_t r = 0; r < rows * h_; r++) {
        const int64_t tok = r / h_, h = r % h_, bi = tok / s, i = tok % s;
        const ckb_bf16 *qi = q + r * qkd;
        float *row = malloc((size_t)s * sizeof *row);
        if (!row)
            abort();
        float mx = -INFINITY, sum = 0.0f;
        for (int64_t j = 0; j < s; j++) {
            const int64_t kt = bi * s + j;
            float acc = 0.0f;
            for (int64_t c = 0; c < nope; c++)
                acc += ckb_bf16_to_f32(qi[c]) * ckb_bf16_to_f32(kn[(kt * h_ + h) * nope + c]);
            for (int64_t c = 0; c < rope; c++)
                acc += ckb_bf16_to_f32(qi[nope + c]) * ckb_bf16_to_f32(kr[kt * rope + c]);
            row[j] = j <= i ? acc * scale : -1e9f;
            mx = fmaxf(mx, row[j]);
        }
        for (int64_t j = 0; j < s; j++) {
            row[j] = expf(row[j] - mx);
            sum += row[j];
        }
        for (int64_t j = 0; j < s; j++)
            row[j] = ckb_bf16_to_f32(ckb_f32_to_bf16(row[j] / sum));
        for (int64_t c = 0; c < vd; c++) {
            float acc = 0.0f;
            for (int64_t j = 0; j < s; j++)
                acc += row[j] * ckb_bf16_to_f32(v[((bi * s + j) * h_ + h) * vd + c]);
            ao[r * vd + c] = ckb_f32_to_bf16(acc);
        }
        free(row);
    }
    mla_ref_matmul(rows, h_ * vd, e, ao, h_ * vd, t[T_O_PROJ], t[T_OUT]);
    free(cq), free(q), free(kv), free(kn), free(v), free(kr), free(ao), free(cs);
}

/* The six projections as JAXBench counts them, plus the useful attention
 * flops: QK^T (2*S*S*QKD) and PV (2*S*S*VD) per head, halved by the causal
 * mask. JAXBench counts 4*B*H*S*S*QKD for the attention (PV at QKD, not
 * VD, and the masked half). */
static double mla_flops(const int64_t *d)
{
    const double rows = (double)d[B] * d[S];
    const double proj = 2.0 * rows *
                        ((double)d[E] * d[QL] + (double)d[QL] * d[H] * d[QKD] +
                         (double)d[E] * d[KVR] + (double)d[KVL] * d[H] * d[NOPE] +
                         (double)d[KVL] * d[H] * d[VD] + (double)d[H] * d[VD] * d[E]);
    return proj + (double)d[B] * d[H] * d[S] * d[S] * (d[QKD] + d[VD]);
}

static double mla_bytes(const int64_t *d)
{
    return 2.0 * (2.0 * d[B] * d[S] * d[E] + (double)d[E] * d[QL] +
                  (double)d[QL] * d[H] * d[QKD] + (double)d[E] * d[KVR] +
                  (double)d[KVL] * d[H] * d[NOPE] + (double)d[KVL] * d[H] * d[VD] +
                  (double)d[H] * d[VD] * d[E]);
}

const ckb_workload ckb_wl_3p_MLA_Attention = {
    .id = "3p_MLA_Attention",
    .model = "DeepSeek-V3-671B",
    .op = "mla_attention",
    .tags = "attention,matmul",
    .summary = "multi-head latent attention with its projections: low-rank q and kv "
               "(k_nope, v expanded from a KVL latent), RoPE on a shared k_rope, causal "
               "softmax attention, output projection; bf16 in/out, f32 scores, bf16 P",
    .ndims = 11,
    .scale_dim = "H",
    .dims = {{"B", {2, 2, 4}},
             {"S", {32, 1024, 2048}},
             {"E", {256, 2048, 7168}},
             {"H", {2, 16, 128}},
             {"QL", {64, 768, 1536}},
             {"KVL", {64, 512, 512}},
             {"NOPE", {128, 128, 128}},
             {"ROPE", {64, 64, 64}},
             {"VD", {128, 128, 128}},
             {"QKD", {192, 192, 192}},
             {"KVR", {128, 576, 576}}},
    .ntensors = 8,
    .tensors = {{"x", CKB_BF16, CKB_IN, 3, {B, S, E}},
                {"q_down", CKB_BF16, CKB_IN, 2, {E, QL}},
                {"q_up", CKB_BF16, CKB_IN, 3, {QL, H, QKD}},
                {"kv_down", CKB_BF16, CKB_IN, 2, {E, KVR}},
                {"k_up", CKB_BF16, CKB_IN, 3, {KVL, H, NOPE}},
                {"v_up", CKB_BF16, CKB_IN, 3, {KVL, H, VD}},
                {"o_proj", CKB_BF16, CKB_IN, 3, {H, VD, E}},
                {"out", CKB_BF16, CKB_OUT, 3, {B, S, E}}},
    .create_inputs = mla_create_inputs,
    .baseline = mla_baseline,
    .reference = mla_reference,
    .flops = mla_flops,
    .bytes = mla_bytes,
    /* expert.c: the attention's query and key block sizes, the columns of
     * B its projection GEMM packs per block, the k depth of its AMX slices
     * and the matmul unit. */
    .nparams = 5,
    .params = {{"BQ", CKB_PARAM_HOST_BQ, 2, {64, 128}, .multiple = 4, .head = 320},
               {"BK", CKB_PARAM_HOST_BK, 2, {128, 256}, .multiple = 16, .head = 320},
               {"GNC", CKB_PARAM_HOST_NC, 2, {128, 256}, .multiple = 64},
               {"GKC", CKB_PARAM_HOST_KC, 2, {128, 256}, .multiple = 32},
               {"MMA", CKB_PARAM_HOST_UNIT, 1, {CKB_PARAM_HOST_UNIT}}},
};
