/*
 * 29k_Matmul_Swish_Sum_GroupNorm — KernelBench level 2 #37 (JAXBench
 * benchmark/29k_Matmul_Swish_Sum_GroupNorm):
 *     out = groupnorm(swish(x @ weight) + bias) * gn_weight + gn_bias
 * x [B, IN], weight [IN, OUT] (jnp.matmul(x, weight), not nn.Linear's
 * [OUT, IN]), the bias added after the swish, GroupNorm over G groups of
 * OUT/G contiguous features of each row (biased variance, EPS). bf16 in,
 * f32 accumulation and f32 math through the chain, bf16 out.
 */
#include <math.h>
#include <stdlib.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/ops.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

#define MMSWGN_EPS 1e-5

enum { B, IN, OUT, G };
enum { T_X, T_WEIGHT, T_BIAS, T_GN_WEIGHT, T_GN_BIAS, T_OUT };
/* the chain, in order; reference_without(skip) leaves one out */
enum { OP_SWISH, OP_BIAS, OP_GROUPNORM, OP_COUNT };

static void mmswgn__create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench until upstream cdb2234, which drew the zero weights at
     * random (README):
     * x ~ U[0, 1), weight = bias = 0, gn_weight = 1, gn_bias = 0:
     * every group is constant, normalises to 0, and the output is 0 for any
     * kernel. Here x ~ U[-1, 1) times a per-seed factor, weight ~
     * N(0, 3/IN) so x @ weight is O(1) where swish is far from linear,
     * bias ~ N(0, 0.5) (its variation inside a group survives the
     * normalisation), gn_weight ~ N(1, 0.3), gn_bias ~ N(0, 0.5). */
    const float sx = ckb_seed_factor(seed, T_X, 0.75f, 1.5f);
    ckb_fill_uniform_bf16(t[T_X], d[B] * d[IN], seed, T_X, -sx, sx);
    ckb_fill_normal_bf16(t[T_WEIGHT], d[IN] * d[OUT], seed, T_WEIGHT, 0.0f,
                         sqrtf(3.0f / (float)d[IN]));
    ckb_fill_normal_bf16(t[T_BIAS], d[OUT], seed, T_BIAS, 0.0f, 0.5f);
    ckb_fill_normal_bf16(t[T_GN_WEIGHT], d[OUT], seed, T_GN_WEIGHT, 1.0f, 0.3f);
    ckb_fill_normal_bf16(t[T_GN_BIAS], d[OUT], seed, T_GN_BIAS, 0.0f, 0.5f);
}

static void mmswgn__to_f32(const ckb_bf16 *src, float *dst, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = ckb_bf16_to_f32(src[i]);
}

/* One oneDNN matmul with swish as its epilogue into an f32 scratch (the
 * bias comes after the swish, so it cannot ride as the matmul's bias), then
 * in OpenMP: the bias, the group norm (ckb_op_groupnorm, in place) and the
 * one rounding to bf16. */
static void mmswgn__baseline(const int64_t *d, void *const *t)
{
    const int64_t rows = d[B], n = d[OUT];
    float *z = ckb_scratch(0, (size_t)(rows * n) * sizeof(float));
    float *gamma = ckb_scratch(1, (size_t)n * sizeof(float));
    float *beta = ckb_scratch(2, (size_t)n * sizeof(float));
    ckb_matmul_spec s = {0};
    s.M = rows, s.K = d[IN], s.N = n;
    s.a_type = s.b_type = CKB_BF16;
    s.c_type = CKB_F32;
    s.neltwise = 1;
    s.eltwise[0] = (ckb_eltwise){CKB_ACT_SWISH, 1.0f, 0.0f};
    ckb_dnnl_matmul(&s, t[T_X], t[T_WEIGHT], NULL, z);

    float *bias = ckb_scratch(3, (size_t)n * sizeof(float));
    mmswgn__to_f32(t[T_BIAS], bias, n);
    mmswgn__to_f32(t[T_GN_WEIGHT], gamma, n);
    mmswgn__to_f32(t[T_GN_BIAS], beta, n);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < rows; i++) {
#pragma omp simd
        for (int64_t j = 0; j < n; j++)
            z[i * n + j] += bias[j];
    }
    ckb_op_groupnorm(z, rows, n, 1, d[G], gamma, beta, (float)MMSWGN_EPS);
    ckb_bf16 *out = t[T_OUT];
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < rows * n; i++)
        out[i] = ckb_f32_to_bf16(z[i]);
}

static void mmswgn__reference_without(const int64_t *d, void *const *t, int skip)
{
    const ckb_bf16 *x = t[T_X], *weight = t[T_WEIGHT], *bias = t[T_BIAS];
    ckb_bf16 *out = t[T_OUT];
    const int64_t n = d[OUT];
    float *z = malloc((size_t)(d[B] * n) * sizeof *z);
    float *gamma = malloc((size_t)n * sizeof *gamma), *beta = malloc((size_t)n * sizeof *beta);
    if (!z || !gamma || !beta)
        abort();
    mmswgn__to_f32(t[T_GN_WEIGHT], gamma, n);
    mmswgn__to_f32(t[T_GN_BIAS], beta, n);
#pragma omp parallel for
    for (int64_t i = 0; i < d[B]; i++) {
        for (int64_t j = 0; j < n; j++) {
            float v = 0.0f;
            for (int64_t k = 0; k < d[IN]; k++)
                v += ckb_bf16_to_f32(x[i * d[IN] + k]) * ckb_bf16_to_f32(weight[k * n + j]);
            if (skip != OP_SWISH)
                v = ckb_op_swish(v);
            if (skip != OP_BIAS)
                v += ckb_bf16_to_f32(bias[j]);
            z[i * n + j] = v;
        }
    }
    if (skip != OP_GROUPNORM)
        ckb_op_groupnorm(z, d[B], n, 1, d[G], gamma, beta, (float)MMSWGN_EPS);
    for (int64_t i = 0; i < d[B] * n; i++)
        out[i] = ckb_f32_to_bf16(z[i]);
    free(z);
    free(gamma);
    free(beta);
}

static void mmswgn__reference(const int64_t *d, void *const *t)
{
    mmswgn__reference_without(d, t, -1);
}

/* The matmul, then per element: swish 4, bias 1, group norm 8 (mean 1,
 * variance 3, normalise 2, affine 2). */
static double mmswgn__flops(const int64_t *d)
{
    return 2.0 * d[B] * d[IN] * d[OUT] + 13.0 * d[B] * d[OUT];
}

static double mmswgn__bytes(const int64_t *d)
{
    return 2.0 * ((double)d[B] * d[IN] + (double)d[IN] * d[OUT] + 3.0 * d[OUT] +
                  (double)d[B] * d[OUT]);
}

const ckb_workload ckb_wl_29k_Matmul_Swish_Sum_GroupNorm = {
    .id = "29k_Matmul_Swish_Sum_GroupNorm",
    .model = "KernelBench level 2 #37",
    .op = "37_Matmul_Swish_Sum_GroupNorm",
    .tags = "matmul,elementwise,norm",
    .summary = "out = groupnorm(swish(x @ weight) + bias) * gn_weight + gn_bias, G groups per "
               "row, bf16 in, f32 accumulate and f32 math, bf16 out",
    .ndims = 4,
    .scale_dim = "B",
    /* G keeps the original's 64 features per group at every size */
    .dims = {{"B", {128, 2048, 8192}},
             {"IN", {256, 4096, 4096}},
             {"OUT", {512, 4096, 4096}},
             {"G", {8, 64, 64}}},
    .nconsts = 1,
    .consts = {{"EPS", MMSWGN_EPS}},
    .ntensors = 6,
    .tensors = {{"x", CKB_BF16, CKB_IN, 2, {B, IN}},
                {"weight", CKB_BF16, CKB_IN, 2, {IN, OUT}},
                {"bias", CKB_BF16, CKB_IN, 1, {OUT}},
                {"gn_weight", CKB_BF16, CKB_IN, 1, {OUT}},
                {"gn_bias", CKB_BF16, CKB_IN, 1, {OUT}},
                {"out", CKB_BF16, CKB_OUT, 2, {B, OUT}}},
    .create_inputs = mmswgn__create_inputs,
    .baseline = mmswgn__baseline,
    .reference = mmswgn__reference,
    .flops = mmswgn__flops,
    .bytes = mmswgn__bytes,
    .nchain = OP_COUNT,
    .chain = {"swish", "bias", "groupnorm"},
    .reference_without = mmswgn__reference_without,
    /* expert.c: MB x NB f32 accumulator block (NB whole groups), KC k per
     * accumulation pass (0: all; the kit's GEMM: 256); the norm is the
     * block's epilogue. TN threads split the columns (0: all), the matmul
     * unit is the host's fastest (not searched). */
    .nparams = 5,
    /* MB x NB is an f32 accumulator block, not BLIS's A and B panels, so the
     * host model's MC/NC do not fit it: on the Xeon with AVX-512 BF16 (2
     * threads, host size) the model's 128 x 512, KC 1024 ran at 1.73-1.82x
     * against 1.96-1.99x for these constants, same build, same run. */
    .params = {{"MB", 64, 3, {32, 64, 128}},
               {"NB", 256, 3, {128, 256, 512}},
               {"KC", 0, 2, {0, 1024}},
               {"TN", 0, 2, {0, 1}},
               {"MMA", CKB_PARAM_HOST_UNIT, 1, {CKB_PARAM_HOST_UNIT}}},
};
