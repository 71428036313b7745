/*
 * 9p_SwiGLU_MLP — the Llama-3.1-70B feed-forward block (JAXBench
 * benchmark/9p_SwiGLU_MLP, from MaxText): out = (silu(x @ gate) * (x @ up)) @ down,
 * bf16 operands, f32 accumulation, every intermediate in bf16 as JAX keeps it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

enum { B, S, E, F };
enum { T_X, T_GATE, T_UP, T_DOWN, T_OUT };

static void swiglu_create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench: x ~ N(0, 1), weights ~ N(0, 1) * 0.02 (1.8/sqrt(E) for gate
     * and up, 3.4/sqrt(F) for down at E = 8192, F = 28672): an output std
     * of ~5. The bf16 rounding of the intermediate (JAX's, the baseline's,
     * or none in a fused kernel) moves each output by ~0.4% of the output
     * std, with tails to 2%; at std 5 that is far outside atol. Here gate
     * and up are N(0, 1/E), so silu sees N(0, ~1) at every size, and down is
     * N(0, 0.16/F): the output std is 0.15..0.35 and every legitimate
     * rounding choice stays within 60% of the tolerance. */
    const int64_t rows = d[B] * d[S];
    const float sx = ckb_seed_factor(seed, T_X, 0.8f, 1.25f);
    ckb_fill_normal_bf16(t[T_X], rows * d[E], seed, T_X, 0.0f, sx);
    ckb_fill_normal_bf16(t[T_GATE], d[E] * d[F], seed, T_GATE, 0.0f, 1.0f / sqrtf((float)d[E]));
    ckb_fill_normal_bf16(t[T_UP], d[E] * d[F], seed, T_UP, 0.0f, 1.0f / sqrtf((float)d[E]));
    ckb_fill_normal_bf16(t[T_DOWN], d[F] * d[E], seed, T_DOWN, 0.0f, 0.4f / sqrtf((float)d[F]));
}

/* Three oneDNN matmuls; silu rides on the gate matmul as a swish post-op
 * (applied to the f32 accumulator, then one rounding to bf16, where JAX
 * rounds before and after silu: at most one bf16 ulp apart). */
static void swiglu_baseline(const int64_t *d, void *const *t)
{
    const int64_t rows = d[B] * d[S];
    /* Reused between calls, as XLA's buffer assignment reuses temporaries. */
    const size_t hsize = (size_t)(rows * d[F]) * sizeof(ckb_bf16);
    ckb_bf16 *g = ckb_scratch(0, hsize), *u = ckb_scratch(1, hsize);

    ckb_matmul_spec s = {0};
    s.M = rows, s.K = d[E], s.N = d[F];
    s.a_type = s.b_type = s.c_type = CKB_BF16;
    ckb_dnnl_matmul(&s, t[T_X], t[T_UP], NULL, u);
    s.neltwise = 1;
    s.eltwise[0] = (ckb_eltwise){CKB_ACT_SWISH, 1.0f, 0.0f};
    ckb_dnnl_matmul(&s, t[T_X], t[T_GATE], NULL, g);

    const int64_t n = rows * d[F];
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < n; i++)
        g[i] = ckb_f32_to_bf16(ckb_bf16_to_f32(g[i]) * ckb_bf16_to_f32(u[i]));

    ckb_matmul_spec s2 = {0};
    s2.M = rows, s2.K = d[F], s2.N = d[E];
    s2.a_type = s2.b_type = s2.c_type = CKB_BF16;
    ckb_dnnl_matmul(&s2, g, t[T_DOWN], NULL, t[T_OUT]);
}

/* Mirrors JAX's casts: each dot rounds to bf16, silu rounds, the product rounds. */
static void swiglu_reference(const int64_t *d, void *const *t)
{
    const ckb_bf16 *x = t[T_X], *gate = t[T_GATE], *up = t[T_UP], *down = t[T_DOWN];
    ckb_bf16 *out = t[T_OUT];
    const int64_t rows = d[B] * d[S];
    ckb_bf16 *h = malloc((size_t)(rows * d[F]) * sizeof *h);
    if (!h)
        abort();
#pragma omp parallel for
    for (int64_t i = 0; i < rows; i++) {
        for (int64_t f = 0; f < d[F]; f++) {
            float ag = 0.0f, au = 0.0f;
            for (int64_t e = 0; e < d[E]; e++) {
                float xv = ckb_bf16_to_f32(x[i * d[E] + e]);
                ag += xv * ckb_bf16_to_f32(gate[e * d[F] + f]);
                au += xv * ckb_bf16_to_f32(up[e * d[F] + f]);
            }
            float gv = ckb_bf16_to_f32(ckb_f32_to_bf16(ag));
            float sg = ckb_bf16_to_f32(ckb_f32_to_bf16(gv / (1.0f + expf(-gv))));
            float uv = ckb_bf16_to_f32(ckb_f32_to_bf16(au));
            h[i * d[F] + f] = ckb_f32_to_bf16(sg * uv);
        }
    }
#pragma omp parallel for
    for (int64_t i = 0; i < rows; i++) {
        for (int64_t e = 0; e < d[E]; e++) {
            float acc = 0.0f;
            for (int64_t f = 0; f < d[F]; f++)
                acc += ckb_bf16_to_f32(h[i * d[F] + f]) * ckb_bf16_to_f32(down[f * d[E] + e]);
            out[i * d[E] + e] = ckb_f32_to_bf16(acc);
        }
    }
    free(h);
}

static double swiglu_flops(const int64_t *d) { return 6.0 * d[B] * d[S] * d[E] * d[F]; }

static double swiglu_bytes(const int64_t *d)
{
    return 2.0 * (2.0 * d[B] * d[S] * d[E] + 3.0 * d[E] * d[F]);
}

const ckb_workload ckb_wl_9p_SwiGLU_MLP = {
    .id = "9p_SwiGLU_MLP",
    .model = "Llama-3.1-70B",
    .op = "swiglu_mlp",
    .tags = "matmul,mlp",
    .summary = "out = (silu(x @ gate) * (x @ up)) @ down, bf16 in, f32 accumulate, bf16 "
               "intermediates and out",
    .ndims = 4,
    .scale_dim = "S",
    .dims = {{"B", {1, 1, 2}},
             {"S", {64, 2048, 4096}},
             {"E", {256, 2048, 8192}},
             {"F", {512, 7168, 28672}}},
    .ntensors = 5,
    .tensors = {{"x", CKB_BF16, CKB_IN, 3, {B, S, E}},
                {"gate", CKB_BF16, CKB_IN, 2, {E, F}},
                {"up", CKB_BF16, CKB_IN, 2, {E, F}},
                {"down", CKB_BF16, CKB_IN, 2, {F, E}},
                {"out", CKB_BF16, CKB_OUT, 3, {B, S, E}}},
    .create_inputs = swiglu_create_inputs,
    .baseline = swiglu_baseline,
    .reference = swiglu_reference,
    .flops = swiglu_flops,
    .bytes = swiglu_bytes,
};
