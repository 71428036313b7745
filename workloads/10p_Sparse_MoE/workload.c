/*
 * 10p_Sparse_MoE — the Mixtral-8x7B sparse MoE block with top-2 routing
 * (JAXBench benchmark/10p_Sparse_MoE, from MaxText): per token,
 *     logits = bf16(x @ router); the K best experts (ties: lower index);
 *     p = bf16(softmax of their K logits);
 *     out = sum over the chosen experts n of p_n * bf16(h_n @ down[n]),
 *     h_n = bf16(silu(x @ gate[n]) * (x @ up[n])),
 * bf16 weights and activations, f32 out (JAX promotes the final einsum with
 * the f32 one-hot weights).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

enum { B, S, E, M, N, K };
enum { T_X, T_ROUTER, T_GATE, T_UP, T_DOWN, T_OUT };

/* The smallest gap between the K-th and (K+1)-th router logit of a token
 * that create_inputs leaves: far above a bf16 rounding of the logits
 * (<= 0.016 for |logit| < 4), so no legitimate precision choice changes
 * the routing. */
#define MOE_MIN_GAP 0.1

enum { MOE_MAX_EXPERTS = 64 };

/* Indices of the k largest of l[0..n-1], largest first; ties go to the
 * lower index, as lax.top_k orders them. */
static void moe_top_k(const float *l, int64_t n, int64_t k, int64_t *idx)
{
    unsigned char taken[MOE_MAX_EXPERTS] = {0};
    for (int64_t r = 0; r < k; r++) {
        int64_t best = -1;
        for (int64_t j = 0; j < n; j++)
            if (!taken[j] && (best < 0 || l[j] > l[best]))
                best = j;
        taken[best] = 1;
        idx[r] = best;
    }
}

/* The routing weights of one token from its bf16 logits: softmax over the
 * top k in f32, rounded to bf16 (jax.nn.softmax of bf16 logits), written
 * into w[0..n-1] (zero for the experts not chosen). */
static void moe_route(const ckb_bf16 *logits, int64_t n, int64_t k, float *w)
{
    float l[MOE_MAX_EXPERTS];
    int64_t idx[MOE_MAX_EXPERTS];
    for (int64_t j = 0; j < n; j++) {
        l[j] = ckb_bf16_to_f32(logits[j]);
        w[j] = 0.0f;
    }
    moe_top_k(l, n, k, idx);
    float sum = 0.0f, e[MOE_MAX_EXPERTS];
    for (int64_t r = 0; r < k; r++) {
        e[r] = expf(l[idx[r]] - l[idx[0]]);
        sum += e[r];
    }
    for (int64_t r = 0; r < k; r++)
        w[idx[r]] = ckb_bf16_to_f32(ckb_f32_to_bf16(e[r] / sum));
}

/* Moves token row xr until the gap between its k-th and (k+1)-th logit
 * (exact, from the bf16 values) is at least MOE_MIN_GAP: each step adds a
 * multiple of router[:, kth] - router[:, next], which widens that gap by
 * about the wanted amount and moves the row by ~0.15% of its norm. */
static void moe_widen_gap(ckb_bf16 *xr, const ckb_bf16 *router, int64_t e, int64_t n, int64_t k)
{
    for (int step = 0; step < 32; step++) {
        double l[MOE_MAX_EXPERTS] = {0};
        for (int64_t c = 0; c < e; c++) {
            const double xv = ckb_bf16_to_f32(xr[c]);
            for (int64_t j = 0; j < n; j++)
                l[j] += xv * ckb_bf16_to_f32(router[c * n + j]);
        }
        float lf[MOE_MAX_EXPERTS];
        int64_t idx[MOE_MAX_EXPERTS];
        for (int64_t j = 0; j < n; j++)
            lf[j] = (float)l[j];
        moe_top_k(lf, n, k + 1, idx);
        const int64_t in = idx[k - 1], out = idx[k];
        const double gap = l[in] - l[out];
        if (gap >= MOE_MIN_GAP)
            return;
        double norm2 = 0.0;
        for (int64_t c = 0; c < e; c++) {
            const double dr = ckb_bf16_to_f32(router[c * n + in]) -
                              (double)ckb_bf16_to_f32(router[c * n + out]);
            norm2 += dr * dr;
        }
        /* bf16 rounding of the row eats part of a small step: grow it. */
        const double c = (1.5 * MOE_MIN_GAP - gap) / norm2 * ldexp(1.0, step / 2);
        for (int64_t q = 0; q < e; q++) {
            const double dr = ckb_bf16_to_f32(router[q * n + in]) -
                              (double)ckb_bf16_to_f32(router[q * n + out]);
            xr[q] = ckb_f32_to_bf16((float)(ckb_bf16_to_f32(xr[q]) + c * dr));
        }
    }
}

static void moe_create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench: x ~ N(0, 1), every weight ~ 0.02 N(0, 1). Two problems:
     * the output std is ~2 at the paper size, where the bf16 roundings of
     * the hidden layer alone exceed atol (see 9p_SwiGLU_MLP); and the
     * router logits are bf16, so the 2nd and 3rd best expert of some tokens
     * tie or sit a rounding apart, and any other summation order or
     * precision picks another expert. Here the weights are drawn per fan-in
     * (router N(0, 1.5^2/E): logits ~N(0, 1.5^2); gate, up N(0, 1/E); down
     * N(0, 0.25/M)), x ~ N(0, s^2) with a per-seed s, and each token whose
     * K-th and (K+1)-th logit are closer than MOE_MIN_GAP is moved until
     * they are not (moe_widen_gap). The output std is then ~0.2..0.3. */
    const int64_t tokens = d[B] * d[S], e = d[E], m = d[M], n = d[N], k = d[K];
    const float sx = ckb_seed_factor(seed, T_X, 0.9f, 1.1f);
    ckb_fill_normal_bf16(t[T_X], tokens * e, seed, T_X, 0.0f, sx);
    ckb_fill_normal_bf16(t[T_ROUTER], e * n, seed, T_ROUTER, 0.0f, 1.5f / sqrtf((float)e));
    ckb_fill_normal_bf16(t[T_GATE], n * e * m, seed, T_GATE, 0.0f, 1.0f / sqrtf((float)e));
    ckb_fill_normal_bf16(t[T_UP], n * e * m, seed, T_UP, 0.0f, 1.0f / sqrtf((float)e));
    ckb_fill_normal_bf16(t[T_DOWN], n * m * e, seed, T_DOWN, 0.0f, 0.35f / sqrtf((float)m));
    ckb_bf16 *x = t[T_X];
    const ckb_bf16 *router = t[T_ROUTER];
#pragma omp parallel for schedule(dynamic, 16)
    for (int64_t i = 0; i < tokens; i++)
        moe_widen_gap(x + i * e, router, e, n, k);
}

/*
 * As XLA materialises it: dense dispatch. The router is one oneDNN matmul
 * (bf16 logits); a loop picks each token's top K and writes the dense
 * [tokens, N] weight matrix (zeros for the experts not chosen); then EVERY
 * expert runs on EVERY token, three oneDNN matmuls each (silu as a swish
 * post-op on the gate matmul, rounded once), and a last loop combines the
 * N expert outputs with the weights in f32. N/K times the useful work.
 */
static void moe_baseline(const int64_t *d, void *const *t)
{
    const int64_t tokens = d[B] * d[S], e = d[E], m = d[M], n = d[N], k = d[K];
    const ckb_bf16 *x = t[T_X], *gate = t[T_GATE], *up = t[T_UP], *down = t[T_DOWN];
    float *out = t[T_OUT];
    /* Reused between calls, as XLA's buffer assignment reuses temporaries. */
    ckb_bf16 *logits = ckb_scratch(0, (size_t)(tokens * n) * sizeof(ckb_bf16));
    float *weights = ckb_scratch(1, (size_t)(tokens * n) * sizeof(float));
    ckb_bf16 *g = ckb_scratch(2, (size_t)(tokens * m) * sizeof(ckb_bf16));
    ckb_bf16 *u = ckb_scratch(3, (size_t)(tokens * m) * sizeof(ckb_bf16));
    ckb_bf16 *y = ckb_scratch(4, (size_t)(n * tokens * e) * sizeof(ckb_bf16));

    ckb_matmul_spec rs = {0};
    rs.M = tokens, rs.K = e, rs.N = n;
    rs.a_type = rs.b_type = rs.c_type = CKB_BF16;
    ckb_dnnl_matmul(&rs, x, t[T_ROUTER], NULL, logits);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < tokens; i++)
        moe_route(logits + i * n, n, k, weights + i * n);

    ckb_matmul_spec up_s = {0};
    up_s.M = tokens, up_s.K = e, up_s.N = m;
    up_s.a_type = up_s.b_type = up_s.c_type = CKB_BF16;
    ckb_matmul_spec gate_s = up_s;
    gate_s.neltwise = 1;
    gate_s.eltwise[0] = (ckb_eltwise){CKB_ACT_SWISH, 1.0f, 0.0f};
    ckb_matmul_spec down_s = {0};
    down_s.M = tokens, down_s.K = m, down_s.N = e;
    down_s.a_type = down_s.b_type = down_s.c_type = CKB_BF16;
    for (int64_t j = 0; j < n; j++) {
        ckb_dnnl_matmul(&gate_s, x, gate + j * e * m, NULL, g);
        ckb_dnnl_matmul(&up_s, x, up + j * e * m, NULL, u);
        const int64_t hn = tokens * m;
#pragma omp parallel for simd schedule(static)
        for (int64_t i = 0; i < hn; i++)
            g[i] = ckb_f32_to_bf16(ckb_bf16_to_f32(g[i]) * ckb_bf16_to_f32(u[i]));
        ckb_dnnl_matmul(&down_s, g, down + j * m * e, NULL, y + j * tokens * e);
    }

#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < tokens; i++) {
        float *o = out + i * e;
        memset(o, 0, (size_t)e * sizeof *o);
        for (int64_t j = 0; j < n; j++) {
            const float wj = weights[i * n + j];
            const ckb_bf16 *yj = y + (j * tokens + i) * e;
#pragma omp simd
            for (int64_t c = 0; c < e; c++)
                o[c] += ckb_bf16_to_f32(yj[c]) * wj;
        }
    }
}

/* Plain loops, token by token, through the chosen experts only (the others
 * have weight exactly 0), with JAX's roundings: the dots, silu, the
 * product and each expert's output to bf16. */
static void moe_reference(const int64_t *d, void *const *t)
{
    const int64_t tokens = d[B] * d[S], e = d[E], m = d[M], n = d[N], k = d[K];
    const ckb_bf16 *x = t[T_X], *router = t[T_ROUTER], *gate = t[T_GATE], *up = t[T_UP],
                   *down = t[T_DOWN];
    float *out = t[T_OUT];
#pragma omp parallel for
    for (int64_t i = 0; i < tokens; i++) {
        const ckb_bf16 *xr = x + i * e;
        ckb_bf16 logits[MOE_MAX_EXPERTS];
        float w[MOE_MAX_EXPERTS];
        for (int64_t j = 0; j < n; j++) {
            float acc = 0.0f;
            for (int64_t c = 0; c < e; c++)
                acc += ckb_bf16_to_f32(xr[c]) * ckb_bf16_to_f32(router[c * n + j]);
            logits[j] = ckb_f32_to_bf16(acc);
        }
        moe_route(logits, n, k, w);
        float *h = malloc((size_t)m * sizeof *h);
        if (!h)
            abort();
        for (int64_t c = 0; c < e; c++)
            out[i * e + c] = 0.0f;
        for (int64_t j = 0; j < n; j++) {
            if (w[j] == 0.0f)
                continue;
            for (int64_t f = 0; f < m; f++) {
                float ag = 0.0f, au = 0.0f;
                for (int64_t c = 0; c < e; c++) {
                    const float xv = ckb_bf16_to_f32(xr[c]);
                    ag += xv * ckb_bf16_to_f32(gate[(j * e + c) * m + f]);
                    au += xv * ckb_bf16_to_f32(up[(j * e + c) * m + f]);
                }
                const float gv = ckb_bf16_to_f32(ckb_f32_to_bf16(ag));
                const float sg = ckb_bf16_to_f32(ckb_f32_to_bf16(gv / (1.0f + expf(-gv))));
                const float uv = ckb_bf16_to_f32(ckb_f32_to_bf16(au));
                h[f] = ckb_bf16_to_f32(ckb_f32_to_bf16(sg * uv));
            }
            for (int64_t c = 0; c < e; c++) {
                float acc = 0.0f;
                for (int64_t f = 0; f < m; f++)
                    acc += h[f] * ckb_bf16_to_f32(down[(j * m + f) * e + c]);
                out[i * e + c] += ckb_bf16_to_f32(ckb_f32_to_bf16(acc)) * w[j];
            }
        }
        free(h);
    }
}

/* JAXBench's count (benchmark()): the router and the K chosen experts per
 * token, 2*T*E*N + 6*T*K*E*M. The dense program XLA runs does N/K times
 * the expert work (its cost analysis reports that). */
static double moe_flops(const int64_t *d)
{
    const double tokens = (double)d[B] * d[S];
    return 2.0 * tokens * d[E] * d[N] + 6.0 * tokens * d[K] * d[E] * d[M];
}

static double moe_bytes(const int64_t *d)
{
    const double tokens = (double)d[B] * d[S];
    return 2.0 * (tokens * d[E] + (double)d[E] * d[N] + 3.0 * d[N] * d[E] * d[M]) +
           4.0 * tokens * d[E];
}

const ckb_workload ckb_wl_10p_Sparse_MoE = {
    .id = "10p_Sparse_MoE",
    .model = "Mixtral-8x7B",
    .op = "sparse_moe",
    .tags = "matmul,moe,mlp",
    .summary = "top-K routed SwiGLU experts: out = sum over the K best experts of "
               "softmax(top-K router logits) * (silu(x @ gate) * (x @ up)) @ down; bf16 in, "
               "f32 out",
    .ndims = 6,
    .scale_dim = "S",
    .dims = {{"B", {1, 1, 2}},
             {"S", {128, 1024, 4096}},
             {"E", {128, 1024, 4096}},
             {"M", {256, 3584, 14336}},
             {"N", {8, 8, 8}},
             {"K", {2, 2, 2}}},
    .ntensors = 6,
    .tensors = {{"x", CKB_BF16, CKB_IN, 3, {B, S, E}},
                {"router", CKB_BF16, CKB_IN, 2, {E, N}},
                {"gate", CKB_BF16, CKB_IN, 3, {N, E, M}},
                {"up", CKB_BF16, CKB_IN, 3, {N, E, M}},
                {"down", CKB_BF16, CKB_IN, 3, {N, M, E}},
                {"out", CKB_F32, CKB_OUT, 3, {B, S, E}}},
    .create_inputs = moe_create_inputs,
    .baseline = moe_baseline,
    .reference = moe_reference,
    .flops = moe_flops,
    .bytes = moe_bytes,
};
