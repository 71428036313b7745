/*
 * 45k_Gemm_GroupNorm_Swish_Multiply_Swish — KernelBench level 2 #88
 * (JAXBench benchmark/45k_Gemm_GroupNorm_Swish_Multiply_Swish):
 *     z   = x @ gemm_weight.T + gemm_bias
 *     g   = groupnorm(z, NUM_GROUPS) * gn_weight + gn_bias
 *     out = swish(swish(g) * multiply_weight)
 * x [B, IN], gemm_weight [OUT, IN] (nn.Linear's layout); the group norm
 * over groups of OUT / NUM_GROUPS consecutive features of each row, eps
 * EPS. bf16 in, f32 accumulation and f32 math through the chain, bf16 out.
 */
#include <math.h>
#include <stdlib.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/ops.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

/* The group norm's eps, 1e-5 in JAXBench (EPS). */
#define GEMMGN_EPS 1e-5

enum { B, IN, OUT, NUM_GROUPS };
enum { T_X, T_GEMM_WEIGHT, T_GEMM_BIAS, T_GN_WEIGHT, T_GN_BIAS, T_MULTIPLY_WEIGHT, T_OUT };
/* The chain after the matmul, in order (workload.h: reference_without). */
enum { OP_BIAS, OP_GROUPNORM, OP_SWISH, OP_MULTIPLY, OP_SWISH_2 };

static void gemmgn__create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench until upstream cdb2234 (and 8fa8f3b), which drew these at
     * random (README):
     * x ~ U[0, 1), gemm_weight = gemm_bias = multiply_weight = 0
     * (the answer is swish(0) = 0 whatever a kernel computes), gn_weight =
     * 1, gn_bias = 0. Here x ~ U[-s, s) times a per-seed factor,
     * gemm_weight ~ N(0, 2^2 * 3/IN) so z has std ~2s (the norm must undo
     * it), gemm_bias ~ N(0, 1) (it varies inside a group, so the norm keeps
     * it), gn_weight ~ U[0.5, 1.5), gn_bias ~ N(0, 0.5) and multiply_weight
     * ~ N(0, 1): the swishes see values of both signs, O(1). */
    const float sx = ckb_seed_factor(seed, T_X, 0.75f, 1.5f);
    ckb_fill_uniform_bf16(t[T_X], d[B] * d[IN], seed, T_X, -sx, sx);
    ckb_fill_normal_bf16(t[T_GEMM_WEIGHT], d[OUT] * d[IN], seed, T_GEMM_WEIGHT, 0.0f,
                         2.0f * sqrtf(3.0f / (float)d[IN]));
    ckb_fill_normal_bf16(t[T_GEMM_BIAS], d[OUT], seed, T_GEMM_BIAS, 0.0f, 1.0f);
    ckb_fill_uniform_bf16(t[T_GN_WEIGHT], d[OUT], seed, T_GN_WEIGHT, 0.5f, 1.5f);
    ckb_fill_normal_bf16(t[T_GN_BIAS], d[OUT], seed, T_GN_BIAS, 0.0f, 0.5f);
    ckb_fill_normal_bf16(t[T_MULTIPLY_WEIGHT], d[OUT], seed, T_MULTIPLY_WEIGHT, 0.0f, 1.0f);
}

/* gn_weight and gn_bias as f32, as ckb_op_groupnorm takes them. */
static void gemmgn__gn_vectors(const int64_t *d, void *const *t, float *gamma, float *beta)
{
    const ckb_bf16 *g = t[T_GN_WEIGHT], *b = t[T_GN_BIAS];
    for (int64_t j = 0; j < d[OUT]; j++) {
        gamma[j] = ckb_bf16_to_f32(g[j]);
        beta[j] = ckb_bf16_to_f32(b[j]);
    }
}

/* One oneDNN matmul (weight read transposed) with the bias as its epilogue
 * into an f32 scratch, the group norm over it (ckb_op_groupnorm on
 * [B, OUT, 1]), then swish, multiply and swish in one OpenMP pass with one
 * rounding to bf16. */
static void gemmgn__baseline(const int64_t *d, void *const *t)
{
    const int64_t n = d[OUT];
    float *z = ckb_scratch(0, (size_t)(d[B] * n) * sizeof *z);
    float *v = ckb_scratch(1, (size_t)(2 * n) * sizeof *v);
    ckb_matmul_spec s = {0};
    s.M = d[B], s.K = d[IN], s.N = n;
    s.a_type = s.b_type = CKB_BF16;
    s.c_type = CKB_F32;
    s.b_transposed = 1;
    s.has_bias = 1;
    s.bias_type = CKB_BF16;
    ckb_dnnl_matmul(&s, t[T_X], t[T_GEMM_WEIGHT], t[T_GEMM_BIAS], z);

    gemmgn__gn_vectors(d, t, v, v + n);
    ckb_op_groupnorm(z, d[B], n, 1, d[NUM_GROUPS], v, v + n, (float)GEMMGN_EPS);

    const ckb_bf16 *mw = t[T_MULTIPLY_WEIGHT];
    ckb_bf16 *out = t[T_OUT];
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < d[B]; i++) {
#pragma omp simd
        for (int64_t j = 0; j < n; j++) {
            const float a = ckb_op_swish(z[i * n + j]) * ckb_bf16_to_f32(mw[j]);
            out[i * n + j] = ckb_f32_to_bf16(ckb_op_swish(a));
        }
    }
}

/* Plain loops; op `skip` of the chain left out (-1: none). */
static void gemmgn__reference_without(const int64_t *d, void *const *t, int skip)
{
    const ckb_bf16 *x = t[T_X], *w = t[T_GEMM_WEIGHT], *bias = t[T_GEMM_BIAS],
                   *mw = t[T_MULTIPLY_WEIGHT];
    ckb_bf16 *out = t[T_OUT];
    const int64_t n = d[OUT], k = d[IN];
    float *z = malloc((size_t)(d[B] * n) * sizeof *z);
    float *v = malloc((size_t)(2 * n) * sizeof *v);
    if (!z || !v)
        abort();
#pragma omp parallel for
    for (int64_t i = 0; i < d[B]; i++) {
        for (int64_t j = 0; j < n; j++) {
            float acc = 0.0f;
            for (int64_t p = 0; p < k; p++)
                acc += ckb_bf16_to_f32(x[i * k + p]) * ckb_bf16_to_f32(w[j * k + p]);
            if (skip != OP_BIAS)
                acc += ckb_bf16_to_f32(bias[j]);
            z[i * n + j] = acc;
        }
    }
    gemmgn__gn_vectors(d, t, v, v + n);
    if (skip != OP_GROUPNORM)
        ckb_op_groupnorm(z, d[B], n, 1, d[NUM_GROUPS], v, v + n, (float)GEMMGN_EPS);
    for (int64_t i = 0; i < d[B]; i++) {
        for (int64_t j = 0; j < n; j++) {
            float a = z[i * n + j];
            if (skip != OP_SWISH)
                a = ckb_op_swish(a);
            if (skip != OP_MULTIPLY)
                a *= ckb_bf16_to_f32(mw[j]);
            if (skip != OP_SWISH_2)
                a = ckb_op_swish(a);
            out[i * n + j] = ckb_f32_to_bf16(a);
        }
    }
    free(v);
    free(z);
}

static void gemmgn__reference(const int64_t *d, void *const *t)
{
    gemmgn__reference_without(d, t, -1);
}

/* The matmul, then per element: bias 1, group norm 7 (mean 1, variance 2,
 * normalise 2, affine 2), swish 4 (exp, add, divide, multiply), multiply 1,
 * swish 4. */
static double gemmgn__flops(const int64_t *d)
{
    return 2.0 * d[B] * d[IN] * d[OUT] + 17.0 * d[B] * d[OUT];
}

static double gemmgn__bytes(const int64_t *d)
{
    return 2.0 * ((double)d[B] * d[IN] + (double)d[OUT] * d[IN] + 4.0 * d[OUT] +
                  (double)d[B] * d[OUT]);
}

const ckb_workload ckb_wl_45k_Gemm_GroupNorm_Swish_Multiply_Swish = {
    .id = "45k_Gemm_GroupNorm_Swish_Multiply_Swish",
    .model = "KernelBench level 2 #88",
    .op = "88_Gemm_GroupNorm_Swish_Multiply_Swish",
    .tags = "matmul,norm,elementwise",
    .summary = "out = swish(swish(groupnorm(x @ gemm_weight.T + gemm_bias) * gn_weight + "
               "gn_bias) * multiply_weight), bf16 in, f32 accumulate and f32 math, bf16 out",
    .ndims = 4,
    .scale_dim = "B",
    .dims = {{"B", {128, 2048, 4096}},
             /* default IN 12288: the chain (two expf per element) costs ~33 ms per
              * 2048 x 4096 outputs, a third of a 4096-deep matmul (README) */
             {"IN", {256, 12288, 8192}},
             {"OUT", {512, 2048, 8192}},
             /* groups of 32 features at every size, as JAXBench's 8192 / 256 */
             {"NUM_GROUPS", {16, 64, 256}}},
    .nconsts = 1,
    .consts = {{"EPS", GEMMGN_EPS}},
    .ntensors = 7,
    .tensors = {{"x", CKB_BF16, CKB_IN, 2, {B, IN}},
                {"gemm_weight", CKB_BF16, CKB_IN, 2, {OUT, IN}},
                {"gemm_bias", CKB_BF16, CKB_IN, 1, {OUT}},
                {"gn_weight", CKB_BF16, CKB_IN, 1, {OUT}},
                {"gn_bias", CKB_BF16, CKB_IN, 1, {OUT}},
                {"multiply_weight", CKB_BF16, CKB_IN, 1, {OUT}},
                {"out", CKB_BF16, CKB_OUT, 2, {B, OUT}}},
    .create_inputs = gemmgn__create_inputs,
    .baseline = gemmgn__baseline,
    .reference = gemmgn__reference,
    .flops = gemmgn__flops,
    .bytes = gemmgn__bytes,
    .nchain = 5,
    .chain = {"bias", "groupnorm", "swish", "multiply", "swish_2"},
    .reference_without = gemmgn__reference_without,
};
