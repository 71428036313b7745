/*
 * 26k_BMM_InstanceNorm_Sum_ResidualAdd_Multiply — KernelBench level 2 #28
 * (JAXBench benchmark/26k_BMM_InstanceNorm_Sum_ResidualAdd_Multiply):
 *     z   = x @ bmm_weight.T + bmm_bias
 *     n   = instancenorm(z) * in_weight + in_bias
 *     out = (n + y) * y
 * x [B, IN], bmm_weight [OUT, IN] (nn.Linear's layout), y [B, OUT]. The
 * instance norm normalises each row over its OUT values, as KernelBench's
 * x.unsqueeze(1).unsqueeze(1) ([B, 1, 1, OUT]) does; JAXBench's
 * [B, OUT, 1, 1] normalises single values, which makes n = in_bias and the
 * matmul invisible (README). bf16 in, f32 accumulation and f32 math
 * through the chain, bf16 out.
 */
#include <math.h>
#include <stdlib.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/ops.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

/* InstanceNorm2d's eps (EPS). */
#define BMMIN_EPS 1e-5

enum { B, IN, OUT };
enum { T_X, T_Y, T_BMM_WEIGHT, T_BMM_BIAS, T_IN_WEIGHT, T_IN_BIAS, T_OUT };
/* The chain after the matmul, in order (workload.h: reference_without);
 * "instancenorm" is the normalisation with its affine. */
enum { OP_BIAS, OP_INSTANCENORM, OP_RESIDUAL_ADD, OP_MULTIPLY };

static void bmmin__create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench until upstream 8fa8f3b, which drew the zero weights at
     * random (README):
     * x, y ~ U[0, 1), bmm_weight = bmm_bias = in_bias = 0 and
     * in_weight = 1. Here x ~ U[-s, s) and y ~ U[-r, r) with per-seed
     * factors, bmm_weight ~ N(0, 3/IN) so x @ bmm_weight.T is O(1), and
     * bmm_bias ~ N(0, 1): a per-column shift the row normalisation keeps
     * (it is not constant along a row). in_weight ~ U[0.5, 1.5) and
     * in_bias ~ N(0, 0.5) make the affine visible; y spans both signs so
     * that both the add and the multiply move every element. */
    const float sx = ckb_seed_factor(seed, T_X, 0.75f, 1.5f);
    const float sy = ckb_seed_factor(seed, T_Y, 0.75f, 1.5f);
    ckb_fill_uniform_bf16(t[T_X], d[B] * d[IN], seed, T_X, -sx, sx);
    ckb_fill_uniform_bf16(t[T_Y], d[B] * d[OUT], seed, T_Y, -sy, sy);
    ckb_fill_normal_bf16(t[T_BMM_WEIGHT], d[OUT] * d[IN], seed, T_BMM_WEIGHT, 0.0f,
                         sqrtf(3.0f / (float)d[IN]));
    ckb_fill_normal_bf16(t[T_BMM_BIAS], d[OUT], seed, T_BMM_BIAS, 0.0f, 1.0f);
    ckb_fill_uniform_bf16(t[T_IN_WEIGHT], d[OUT], seed, T_IN_WEIGHT, 0.5f, 1.5f);
    ckb_fill_normal_bf16(t[T_IN_BIAS], d[OUT], seed, T_IN_BIAS, 0.0f, 0.5f);
}

/* One oneDNN matmul (weight read transposed) with the bias as its epilogue
 * into an f32 scratch, the instance norm over each row (ckb_op_instancenorm
 * on [B, 1, OUT]), then the affine, the residual add and the multiply in
 * one OpenMP pass with one rounding to bf16. */
static void bmmin__baseline(const int64_t *d, void *const *t)
{
    const int64_t n = d[OUT];
    float *z = ckb_scratch(0, (size_t)(d[B] * n) * sizeof *z);
    ckb_matmul_spec s = {0};
    s.M = d[B], s.K = d[IN], s.N = n;
    s.a_type = s.b_type = CKB_BF16;
    s.c_type = CKB_F32;
    s.b_transposed = 1;
    s.has_bias = 1;
    s.bias_type = CKB_BF16;
    ckb_dnnl_matmul(&s, t[T_X], t[T_BMM_WEIGHT], t[T_BMM_BIAS], z);

    ckb_op_instancenorm(z, d[B], 1, n, NULL, NULL, (float)BMMIN_EPS);

    const ckb_bf16 *y = t[T_Y], *g = t[T_IN_WEIGHT], *be = t[T_IN_BIAS];
    ckb_bf16 *out = t[T_OUT];
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < d[B]; i++) {
#pragma omp simd
        for (int64_t j = 0; j < n; j++) {
            const float yv = ckb_bf16_to_f32(y[i * n + j]);
            const float v = z[i * n + j] * ckb_bf16_to_f32(g[j]) + ckb_bf16_to_f32(be[j]);
            out[i * n + j] = ckb_f32_to_bf16((v + yv) * yv);
        }
    }
}

/* Plain loops; op `skip` of the chain left out (-1: none). */
static void bmmin__reference_without(const int64_t *d, void *const *t, int skip)
{
    const ckb_bf16 *x = t[T_X], *y = t[T_Y], *w = t[T_BMM_WEIGHT], *bias = t[T_BMM_BIAS],
                   *g = t[T_IN_WEIGHT], *be = t[T_IN_BIAS];
    ckb_bf16 *out = t[T_OUT];
    const int64_t n = d[OUT], k = d[IN];
    float *z = malloc((size_t)(d[B] * n) * sizeof *z);
    if (!z)
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
    if (skip != OP_INSTANCENORM) {
        /* InstanceNorm2d on [B, 1, 1, OUT]: one channel of OUT values per sample. */
        ckb_op_instancenorm(z, d[B], 1, n, NULL, NULL, (float)BMMIN_EPS);
        for (int64_t i = 0; i < d[B]; i++)
            for (int64_t j = 0; j < n; j++)
                z[i * n + j] = z[i * n + j] * ckb_bf16_to_f32(g[j]) + ckb_bf16_to_f32(be[j]);
    }
    for (int64_t i = 0; i < d[B] * n; i++) {
        const float yv = ckb_bf16_to_f32(y[i]);
        float v = z[i];
        if (skip != OP_RESIDUAL_ADD)
            v = v + yv;
        if (skip != OP_MULTIPLY)
            v = v * yv;
        out[i] = ckb_f32_to_bf16(v);
    }
    free(z);
}

static void bmmin__reference(const int64_t *d, void *const *t)
{
    bmmin__reference_without(d, t, -1);
}

/* The matmul, then per element: bias 1, instance norm 5 (mean, subtract,
 * square-accumulate 2, scale), affine 2, add 1, multiply 1. */
static double bmmin__flops(const int64_t *d)
{
    return 2.0 * d[B] * d[IN] * d[OUT] + 10.0 * d[B] * d[OUT];
}

static double bmmin__bytes(const int64_t *d)
{
    return 2.0 * ((double)d[B] * d[IN] + (double)d[OUT] * d[IN] + 3.0 * d[OUT] +
                  2.0 * d[B] * d[OUT]);
}

const ckb_workload ckb_wl_26k_BMM_InstanceNorm_Sum_ResidualAdd_Multiply = {
    .id = "26k_BMM_InstanceNorm_Sum_ResidualAdd_Multiply",
    .model = "KernelBench level 2 #28",
    .op = "28_BMM_InstanceNorm_Sum_ResidualAdd_Multiply",
    .tags = "matmul,norm,elementwise",
    .summary = "out = (instancenorm_rows(x @ bmm_weight.T + bmm_bias) * in_weight + in_bias + y) "
               "* y, bf16 in, f32 accumulate and f32 math, bf16 out",
    .ndims = 3,
    .scale_dim = "B",
    .dims = {{"B", {128, 2048, 4096}}, {"IN", {256, 4096, 8192}}, {"OUT", {512, 4096, 8192}}},
    .nconsts = 1,
    .consts = {{"EPS", BMMIN_EPS}},
    .ntensors = 7,
    .tensors = {{"x", CKB_BF16, CKB_IN, 2, {B, IN}},
                {"y", CKB_BF16, CKB_IN, 2, {B, OUT}},
                {"bmm_weight", CKB_BF16, CKB_IN, 2, {OUT, IN}},
                {"bmm_bias", CKB_BF16, CKB_IN, 1, {OUT}},
                {"in_weight", CKB_BF16, CKB_IN, 1, {OUT}},
                {"in_bias", CKB_BF16, CKB_IN, 1, {OUT}},
                {"out", CKB_BF16, CKB_OUT, 2, {B, OUT}}},
    .create_inputs = bmmin__create_inputs,
    .baseline = bmmin__baseline,
    .reference = bmmin__reference,
    .flops = bmmin__flops,
    .bytes = bmmin__bytes,
    .nchain = 4,
    .chain = {"bias", "instancenorm", "residual_add", "multiply"},
    .reference_without = bmmin__reference_without,
};
