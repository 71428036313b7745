/*
 * 37k_Matmul_Swish_Scaling — KernelBench level 2 #59 (JAXBench
 * benchmark/37k_Matmul_Swish_Scaling): out = swish(x @ weight + bias) *
 * SCALING_FACTOR, x [B, IN], weight [IN, OUT] (jnp.matmul(x, weight), not
 * nn.Linear's [OUT, IN]), swish(z) = z * sigmoid(z). bf16 in, f32
 * accumulation and epilogue, bf16 out.
 */
#include <math.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/ops.h"
#include "workloads/workload.h"

#define MMSWSC_SCALING 2.0

enum { B, IN, OUT };
enum { T_X, T_WEIGHT, T_BIAS, T_OUT };
/* the chain, in order; reference_without(skip) leaves one out */
enum { OP_BIAS, OP_SWISH, OP_SCALING, OP_COUNT };

static void mmswsc__create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench until upstream cdb2234, which drew the zero weights at
     * random (README):
     * x ~ U[0, 1), weight = bias = 0, so the output is 0 for any
     * kernel. Here x ~ U[-1, 1) times a per-seed factor (zero mean: each
     * row's product is its own), weight ~ N(0, 3/IN) so x @ weight is O(1)
     * where swish is far from both linear and zero, bias ~ N(0, 0.5). */
    const float sx = ckb_seed_factor(seed, T_X, 0.75f, 1.5f);
    ckb_fill_uniform_bf16(t[T_X], d[B] * d[IN], seed, T_X, -sx, sx);
    ckb_fill_normal_bf16(t[T_WEIGHT], d[IN] * d[OUT], seed, T_WEIGHT, 0.0f,
                         sqrtf(3.0f / (float)d[IN]));
    ckb_fill_normal_bf16(t[T_BIAS], d[OUT], seed, T_BIAS, 0.0f, 0.5f);
}

/* One oneDNN matmul: bias, swish and the scaling (a linear post-op) ride on
 * it as its epilogue, on the f32 accumulator before the one rounding. */
static void mmswsc__baseline(const int64_t *d, void *const *t)
{
    ckb_matmul_spec s = {0};
    s.M = d[B], s.K = d[IN], s.N = d[OUT];
    s.a_type = s.b_type = s.c_type = CKB_BF16;
    s.has_bias = 1;
    s.bias_type = CKB_BF16;
    s.neltwise = 2;
    s.eltwise[0] = (ckb_eltwise){CKB_ACT_SWISH, 1.0f, 0.0f};
    s.eltwise[1] = (ckb_eltwise){CKB_ACT_LINEAR, (float)MMSWSC_SCALING, 0.0f};
    ckb_dnnl_matmul(&s, t[T_X], t[T_WEIGHT], t[T_BIAS], t[T_OUT]);
}

static void mmswsc__reference_without(const int64_t *d, void *const *t, int skip)
{
    const ckb_bf16 *x = t[T_X], *weight = t[T_WEIGHT], *bias = t[T_BIAS];
    ckb_bf16 *out = t[T_OUT];
#pragma omp parallel for
    for (int64_t i = 0; i < d[B]; i++) {
        for (int64_t j = 0; j < d[OUT]; j++) {
            float v = 0.0f;
            for (int64_t k = 0; k < d[IN]; k++)
                v += ckb_bf16_to_f32(x[i * d[IN] + k]) * ckb_bf16_to_f32(weight[k * d[OUT] + j]);
            if (skip != OP_BIAS)
                v += ckb_bf16_to_f32(bias[j]);
            if (skip != OP_SWISH)
                v = ckb_op_swish(v);
            if (skip != OP_SCALING)
                v *= (float)MMSWSC_SCALING;
            out[i * d[OUT] + j] = ckb_f32_to_bf16(v);
        }
    }
}

static void mmswsc__reference(const int64_t *d, void *const *t)
{
    mmswsc__reference_without(d, t, -1);
}

/* The matmul, then per element: bias 1, swish 4 (exp, add, divide,
 * multiply), scaling 1. */
static double mmswsc__flops(const int64_t *d)
{
    return 2.0 * d[B] * d[IN] * d[OUT] + 6.0 * d[B] * d[OUT];
}

static double mmswsc__bytes(const int64_t *d)
{
    return 2.0 * ((double)d[B] * d[IN] + (double)d[IN] * d[OUT] + d[OUT] + (double)d[B] * d[OUT]);
}

const ckb_workload ckb_wl_37k_Matmul_Swish_Scaling = {
    .id = "37k_Matmul_Swish_Scaling",
    .model = "KernelBench level 2 #59",
    .op = "59_Matmul_Swish_Scaling",
    .tags = "matmul,elementwise",
    .summary = "out = swish(x @ weight + bias) * SCALING_FACTOR, bf16 in, f32 accumulate and "
               "epilogue, bf16 out",
    .ndims = 3,
    .scale_dim = "B",
    .dims = {{"B", {128, 2048, 4096}}, {"IN", {256, 4096, 8192}}, {"OUT", {512, 4096, 8192}}},
    .nconsts = 1,
    .consts = {{"SCALING_FACTOR", MMSWSC_SCALING}},
    .ntensors = 4,
    .tensors = {{"x", CKB_BF16, CKB_IN, 2, {B, IN}},
                {"weight", CKB_BF16, CKB_IN, 2, {IN, OUT}},
                {"bias", CKB_BF16, CKB_IN, 1, {OUT}},
                {"out", CKB_BF16, CKB_OUT, 2, {B, OUT}}},
    .create_inputs = mmswsc__create_inputs,
    .baseline = mmswsc__baseline,
    .reference = mmswsc__reference,
    .flops = mmswsc__flops,
    .bytes = mmswsc__bytes,
    .nchain = OP_COUNT,
    .chain = {"bias", "swish", "scaling"},
    .reference_without = mmswsc__reference_without,
};
