/*
 * 31k_Gemm_BatchNorm_GELU_ReLU — KernelBench level 2 #41 (JAXBench
 * benchmark/31k_Gemm_BatchNorm_GELU_ReLU):
 *     z   = x @ gemm_weight.T + gemm_bias        x [B, IN], gemm_weight [OUT, IN]
 *     out = relu(gelu(batchnorm(z) * bn_weight + bn_bias))
 * BatchNorm1d in training mode, as the original: each feature normalised
 * by the mean and biased variance of this batch (over B), EPS; gelu the
 * tanh approximation (jax.nn.gelu's default). bf16 in, f32 accumulation and
 * f32 math through the chain, bf16 out.
 *
 * gemm_bias is mathematically invisible: the batch mean subtracts it
 * exactly (README); it stays, as in the original, and out of the chain.
 */
#include <math.h>
#include <stdlib.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/ops.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

#define GEMMBN_EPS 1e-5
/* the side of the tiles that transpose the result back to [B, OUT] */
#define GEMMBN_TILE 32

enum { B, IN, OUT };
enum { T_X, T_GEMM_WEIGHT, T_GEMM_BIAS, T_BN_WEIGHT, T_BN_BIAS, T_OUT };
/* the chain, in order; reference_without(skip) leaves one out */
enum { OP_BATCHNORM, OP_GELU, OP_RELU, OP_COUNT };

static void gemmbn__create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench: x ~ U[0, 1), gemm_weight and gemm_bias ~ N(0, 1),
     * bn_weight = 1, bn_bias = 0. Here x ~ U[-1, 1) times a per-seed
     * factor, gemm_weight ~ N(0, 3/IN) so z is O(1) before the norm,
     * gemm_bias ~ N(0, 1) as in JAXBench, bn_weight ~ N(1, 0.3) and
     * bn_bias ~ N(0, 0.5): the normalised values cover gelu's negative dip
     * (down to -0.17 near -0.75), which the relu then zeroes. */
    const float sx = ckb_seed_factor(seed, T_X, 0.75f, 1.5f);
    ckb_fill_uniform_bf16(t[T_X], d[B] * d[IN], seed, T_X, -sx, sx);
    ckb_fill_normal_bf16(t[T_GEMM_WEIGHT], d[OUT] * d[IN], seed, T_GEMM_WEIGHT, 0.0f,
                         sqrtf(3.0f / (float)d[IN]));
    ckb_fill_normal_bf16(t[T_GEMM_BIAS], d[OUT], seed, T_GEMM_BIAS, 0.0f, 1.0f);
    ckb_fill_normal_bf16(t[T_BN_WEIGHT], d[OUT], seed, T_BN_WEIGHT, 1.0f, 0.3f);
    ckb_fill_normal_bf16(t[T_BN_BIAS], d[OUT], seed, T_BN_BIAS, 0.0f, 0.5f);
}

static void gemmbn__to_f32(const ckb_bf16 *src, float *dst, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = ckb_bf16_to_f32(src[i]);
}

/* One oneDNN matmul into an f32 scratch, computed transposed: zt = gemm_weight
 * @ x.T, [OUT, B], so that each feature's batch is one contiguous row (the
 * batch statistics need every row before any output, so the norm cannot
 * ride on the matmul; down a column of a [B, OUT] matrix its passes would
 * stride by OUT floats, thrash the caches' sets and run several times
 * slower). Then in OpenMP: gemm_bias per feature row, the batch norm in
 * place (ckb_op_batchnorm, training mode, over the B values of each
 * feature), and gelu, relu and the one rounding to bf16 transposed back to
 * [B, OUT] by tiles. */
static void gemmbn__baseline(const int64_t *d, void *const *t)
{
    const int64_t rows = d[B], n = d[OUT];
    float *zt = ckb_scratch(0, (size_t)(rows * n) * sizeof(float));
    float *gamma = ckb_scratch(1, (size_t)n * sizeof(float));
    float *beta = ckb_scratch(2, (size_t)n * sizeof(float));
    ckb_matmul_spec s = {0};
    s.M = n, s.K = d[IN], s.N = rows;
    s.a_type = s.b_type = CKB_BF16;
    s.c_type = CKB_F32;
    s.b_transposed = 1; /* x [B, IN] is B^T of the product */
    ckb_dnnl_matmul(&s, t[T_GEMM_WEIGHT], t[T_X], NULL, zt);

    const ckb_bf16 *bias = t[T_GEMM_BIAS];
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < n; c++) {
        const float b = ckb_bf16_to_f32(bias[c]);
#pragma omp simd
        for (int64_t r = 0; r < rows; r++)
            zt[c * rows + r] += b;
    }
    gemmbn__to_f32(t[T_BN_WEIGHT], gamma, n);
    gemmbn__to_f32(t[T_BN_BIAS], beta, n);
    ckb_op_batchnorm(zt, 1, n, rows, NULL, NULL, gamma, beta, (float)GEMMBN_EPS);

    ckb_bf16 *out = t[T_OUT];
    const int64_t tile = GEMMBN_TILE;
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t r0 = 0; r0 < rows; r0 += tile) {
        for (int64_t c0 = 0; c0 < n; c0 += tile) {
            const int64_t r1 = r0 + tile < rows ? r0 + tile : rows;
            const int64_t c1 = c0 + tile < n ? c0 + tile : n;
            for (int64_t r = r0; r < r1; r++)
                for (int64_t c = c0; c < c1; c++)
                    out[r * n + c] =
                        ckb_f32_to_bf16(ckb_op_relu(ckb_op_gelu_tanh(zt[c * rows + r])));
        }
    }
}

static void gemmbn__reference_without(const int64_t *d, void *const *t, int skip)
{
    const ckb_bf16 *x = t[T_X], *weight = t[T_GEMM_WEIGHT], *bias = t[T_GEMM_BIAS];
    ckb_bf16 *out = t[T_OUT];
    const int64_t n = d[OUT];
    float *z = malloc((size_t)(d[B] * n) * sizeof *z);
    float *gamma = malloc((size_t)n * sizeof *gamma), *beta = malloc((size_t)n * sizeof *beta);
    if (!z || !gamma || !beta)
        abort();
    gemmbn__to_f32(t[T_BN_WEIGHT], gamma, n);
    gemmbn__to_f32(t[T_BN_BIAS], beta, n);
#pragma omp parallel for
    for (int64_t i = 0; i < d[B]; i++) {
        for (int64_t j = 0; j < n; j++) {
            float v = 0.0f;
            for (int64_t k = 0; k < d[IN]; k++)
                v += ckb_bf16_to_f32(x[i * d[IN] + k]) * ckb_bf16_to_f32(weight[j * d[IN] + k]);
            z[i * n + j] = v + ckb_bf16_to_f32(bias[j]);
        }
    }
    if (skip != OP_BATCHNORM)
        ckb_op_batchnorm(z, d[B], n, 1, NULL, NULL, gamma, beta, (float)GEMMBN_EPS);
    for (int64_t i = 0; i < d[B] * n; i++) {
        float v = z[i];
        if (skip != OP_GELU)
            v = ckb_op_gelu_tanh(v);
        if (skip != OP_RELU)
            v = ckb_op_relu(v);
        out[i] = ckb_f32_to_bf16(v);
    }
    free(z);
    free(gamma);
    free(beta);
}

static void gemmbn__reference(const int64_t *d, void *const *t)
{
    gemmbn__reference_without(d, t, -1);
}

/* The matmul, then per element: bias 1, batch norm 8 (mean 1, variance 3,
 * normalise 2, affine 2), gelu 8, relu 1. */
static double gemmbn__flops(const int64_t *d)
{
    return 2.0 * d[B] * d[IN] * d[OUT] + 18.0 * d[B] * d[OUT];
}

static double gemmbn__bytes(const int64_t *d)
{
    return 2.0 * ((double)d[B] * d[IN] + (double)d[OUT] * d[IN] + 3.0 * d[OUT] +
                  (double)d[B] * d[OUT]);
}

const ckb_workload ckb_wl_31k_Gemm_BatchNorm_GELU_ReLU = {
    .id = "31k_Gemm_BatchNorm_GELU_ReLU",
    .model = "KernelBench level 2 #41",
    .op = "41_Gemm_BatchNorm_GELU_ReLU",
    .tags = "matmul,norm,elementwise",
    .summary = "out = relu(gelu_tanh(batchnorm_train(x @ gemm_weight.T + gemm_bias))), batch "
               "statistics over B, bf16 in, f32 accumulate and f32 math, bf16 out",
    .ndims = 3,
    .scale_dim = "B",
    .dims = {{"B", {128, 2048, 16384}}, {"IN", {256, 8192, 8192}}, {"OUT", {512, 4096, 8192}}},
    .nconsts = 1,
    .consts = {{"EPS", GEMMBN_EPS}},
    .ntensors = 6,
    .tensors = {{"x", CKB_BF16, CKB_IN, 2, {B, IN}},
                {"gemm_weight", CKB_BF16, CKB_IN, 2, {OUT, IN}},
                {"gemm_bias", CKB_BF16, CKB_IN, 1, {OUT}, .cancelled = 1},
                {"bn_weight", CKB_BF16, CKB_IN, 1, {OUT}},
                {"bn_bias", CKB_BF16, CKB_IN, 1, {OUT}},
                {"out", CKB_BF16, CKB_OUT, 2, {B, OUT}}},
    .create_inputs = gemmbn__create_inputs,
    .baseline = gemmbn__baseline,
    .reference = gemmbn__reference,
    .flops = gemmbn__flops,
    .bytes = gemmbn__bytes,
    .nchain = OP_COUNT,
    .chain = {"batchnorm", "gelu", "relu"},
    .reference_without = gemmbn__reference_without,
};
