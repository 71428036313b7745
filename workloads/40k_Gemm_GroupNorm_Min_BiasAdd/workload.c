/*
 * 40k_Gemm_GroupNorm_Min_BiasAdd — KernelBench level 2 #75 (JAXBench
 * benchmark/40k_Gemm_GroupNorm_Min_BiasAdd):
 *     z      = x @ weight.T + linear_bias        x [B, IN], weight [OUT, IN]
 *     g      = groupnorm(z) * gn_weight + gn_bias   G groups of OUT/G features
 *     m[n]   = min_j g[n, j]
 *     out[c, n] = m[n] + bias[c]
 * The original reshapes m [B, 1] to [1, 1, B, 1] and adds bias [1, OUT, 1,
 * 1]: the broadcast gives [1, OUT, B, 1], stored here as [OUT, B] (the same
 * memory). bf16 in, f32 accumulation and f32 math, bf16 out.
 */
#include <math.h>
#include <stdlib.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/ops.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

#define GEMMGNMIN_EPS 1e-5
/* std of x @ weight.T over x's per-seed factor; see create_inputs */
#define GEMMGNMIN_SPREAD 3.0f

enum { B, IN, OUT, G };
enum { T_X, T_WEIGHT, T_LINEAR_BIAS, T_GN_WEIGHT, T_GN_BIAS, T_BIAS, T_OUT };
/* the chain, in order; reference_without(skip) leaves one out */
enum { OP_LINEAR_BIAS, OP_GROUPNORM, OP_BIAS, OP_COUNT };

static void gemmgnmin__create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench until upstream cdb2234, which drew the zero weights at
     * random (README):
     * x ~ U[0, 1), weight = linear_bias = gn_bias = bias = 0,
     * gn_weight = 1: every group is constant, normalises to 0, and the
     * output is 0 for any kernel. Here x ~ U[-1, 1) times a per-seed
     * factor, weight ~ N(0, 3/IN) * 3 so x @ weight.T has std ~3 (the
     * norm's rescaling shows), linear_bias ~ N(0, 1) (its variation inside
     * a group survives the norm and moves the row minimum), gn_weight ~
     * N(1, 0.3), gn_bias ~ N(0, 0.5), bias ~ N(0, 1). */
    const float sx = ckb_seed_factor(seed, T_X, 0.75f, 1.5f);
    ckb_fill_uniform_bf16(t[T_X], d[B] * d[IN], seed, T_X, -sx, sx);
    ckb_fill_normal_bf16(t[T_WEIGHT], d[OUT] * d[IN], seed, T_WEIGHT, 0.0f,
                         GEMMGNMIN_SPREAD * sqrtf(3.0f / (float)d[IN]));
    ckb_fill_normal_bf16(t[T_LINEAR_BIAS], d[OUT], seed, T_LINEAR_BIAS, 0.0f, 1.0f);
    ckb_fill_normal_bf16(t[T_GN_WEIGHT], d[OUT], seed, T_GN_WEIGHT, 1.0f, 0.3f);
    ckb_fill_normal_bf16(t[T_GN_BIAS], d[OUT], seed, T_GN_BIAS, 0.0f, 0.5f);
    ckb_fill_normal_bf16(t[T_BIAS], d[OUT], seed, T_BIAS, 0.0f, 1.0f);
}

static void gemmgnmin__to_f32(const ckb_bf16 *src, float *dst, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = ckb_bf16_to_f32(src[i]);
}

/* out[c, n] = m[n] + bias[c], with or without the bias (the broadcast
 * stays either way: it is the output's shape). */
static void gemmgnmin__broadcast(const float *m, const ckb_bf16 *bias, int use_bias, int64_t rows,
                                int64_t n, ckb_bf16 *out)
{
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < n; c++) {
        const float b = use_bias ? ckb_bf16_to_f32(bias[c]) : 0.0f;
#pragma omp simd
        for (int64_t r = 0; r < rows; r++)
            out[c * rows + r] = ckb_f32_to_bf16(m[r] + b);
    }
}

/* One oneDNN matmul (weight read transposed) with linear_bias into an f32
 * scratch; then the group norm (ckb_op_groupnorm, in place), the row
 * minima and the broadcast add in OpenMP. */
static void gemmgnmin__baseline(const int64_t *d, void *const *t)
{
    const int64_t rows = d[B], n = d[OUT];
    float *z = ckb_scratch(0, (size_t)(rows * n) * sizeof(float));
    float *gamma = ckb_scratch(1, (size_t)n * sizeof(float));
    float *beta = ckb_scratch(2, (size_t)n * sizeof(float));
    float *m = ckb_scratch(3, (size_t)rows * sizeof(float));
    ckb_matmul_spec s = {0};
    s.M = rows, s.K = d[IN], s.N = n;
    s.a_type = s.b_type = CKB_BF16;
    s.c_type = CKB_F32;
    s.b_transposed = 1;
    s.has_bias = 1;
    s.bias_type = CKB_BF16;
    ckb_dnnl_matmul(&s, t[T_X], t[T_WEIGHT], t[T_LINEAR_BIAS], z);

    gemmgnmin__to_f32(t[T_GN_WEIGHT], gamma, n);
    gemmgnmin__to_f32(t[T_GN_BIAS], beta, n);
    ckb_op_groupnorm(z, rows, n, 1, d[G], gamma, beta, (float)GEMMGNMIN_EPS);
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; r++)
        m[r] = ckb_op_min(z + r * n, n);
    gemmgnmin__broadcast(m, t[T_BIAS], 1, rows, n, t[T_OUT]);
}

static void gemmgnmin__reference_without(const int64_t *d, void *const *t, int skip)
{
    const ckb_bf16 *x = t[T_X], *weight = t[T_WEIGHT], *lbias = t[T_LINEAR_BIAS];
    const int64_t rows = d[B], n = d[OUT];
    float *z = malloc((size_t)(rows * n) * sizeof *z), *m = malloc((size_t)rows * sizeof *m);
    float *gamma = malloc((size_t)n * sizeof *gamma), *beta = malloc((size_t)n * sizeof *beta);
    if (!z || !m || !gamma || !beta)
        abort();
    gemmgnmin__to_f32(t[T_GN_WEIGHT], gamma, n);
    gemmgnmin__to_f32(t[T_GN_BIAS], beta, n);
#pragma omp parallel for
    for (int64_t i = 0; i < rows; i++) {
        for (int64_t j = 0; j < n; j++) {
            float v = 0.0f;
            for (int64_t k = 0; k < d[IN]; k++)
                v += ckb_bf16_to_f32(x[i * d[IN] + k]) * ckb_bf16_to_f32(weight[j * d[IN] + k]);
            if (skip != OP_LINEAR_BIAS)
                v += ckb_bf16_to_f32(lbias[j]);
            z[i * n + j] = v;
        }
    }
    if (skip != OP_GROUPNORM)
        ckb_op_groupnorm(z, rows, n, 1, d[G], gamma, beta, (float)GEMMGNMIN_EPS);
    for (int64_t r = 0; r < rows; r++)
        m[r] = ckb_op_min(z + r * n, n);
    gemmgnmin__broadcast(m, t[T_BIAS], skip != OP_BIAS, rows, n, t[T_OUT]);
    free(z);
    free(m);
    free(gamma);
    free(beta);
}

static void gemmgnmin__reference(const int64_t *d, void *const *t)
{
    gemmgnmin__reference_without(d, t, -1);
}

/* The matmul, then per element of z: bias 1, group norm 8 (mean 1,
 * variance 3, normalise 2, affine 2), min 1; per output element: the add. */
static double gemmgnmin__flops(const int64_t *d)
{
    return 2.0 * d[B] * d[IN] * d[OUT] + 11.0 * d[B] * d[OUT];
}

static double gemmgnmin__bytes(const int64_t *d)
{
    return 2.0 * ((double)d[B] * d[IN] + (double)d[OUT] * d[IN] + 4.0 * d[OUT] +
                  (double)d[OUT] * d[B]);
}

const ckb_workload ckb_wl_40k_Gemm_GroupNorm_Min_BiasAdd = {
    .id = "40k_Gemm_GroupNorm_Min_BiasAdd",
    .model = "KernelBench level 2 #75",
    .op = "75_Gemm_GroupNorm_Min_BiasAdd",
    .tags = "matmul,norm,reduction,elementwise",
    .summary = "out[c, n] = min_j groupnorm(x @ weight.T + linear_bias)[n, j] + bias[c], bf16 "
               "in, f32 accumulate and f32 math, bf16 out",
    .ndims = 4,
    .scale_dim = "B",
    /* G keeps the original's 16 features per group at every size */
    .dims = {{"B", {128, 2048, 4096}},
             {"IN", {256, 8192, 8192}},
             {"OUT", {512, 4096, 8192}},
             {"G", {32, 256, 512}}},
    .nconsts = 1,
    .consts = {{"EPS", GEMMGNMIN_EPS}},
    .ntensors = 7,
    .tensors = {{"x", CKB_BF16, CKB_IN, 2, {B, IN}},
                {"weight", CKB_BF16, CKB_IN, 2, {OUT, IN}},
                {"linear_bias", CKB_BF16, CKB_IN, 1, {OUT}},
                {"gn_weight", CKB_BF16, CKB_IN, 1, {OUT}},
                {"gn_bias", CKB_BF16, CKB_IN, 1, {OUT}},
                /* [1, OUT, 1, 1] in the original: the same memory as [OUT] */
                {"bias", CKB_BF16, CKB_IN, 1, {OUT}},
                /* [1, OUT, B, 1] in the original: the same memory */
                {"out", CKB_BF16, CKB_OUT, 2, {OUT, B}}},
    .create_inputs = gemmgnmin__create_inputs,
    .baseline = gemmgnmin__baseline,
    .reference = gemmgnmin__reference,
    .flops = gemmgnmin__flops,
    .bytes = gemmgnmin__bytes,
    .nchain = OP_COUNT,
    .chain = {"linear_bias", "groupnorm", "bias"},
    .reference_without = gemmgnmin__reference_without,
};
