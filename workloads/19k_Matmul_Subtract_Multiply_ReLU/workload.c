/*
 * 19k_Matmul_Subtract_Multiply_ReLU — KernelBench level 2 #9 (JAXBench
 * benchmark/19k_Matmul_Subtract_Multiply_ReLU):
 *     out = relu((x @ weight + bias - SUBTRACT_VALUE) * MULTIPLY_VALUE)
 * x [B, IN], weight [IN, OUT] (jnp.matmul(x, weight), as JAXBench stores it),
 * bf16 in, f32 accumulation and epilogue, bf16 out.
 */
#include <math.h>
#include <stdlib.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/reference.h"
#include "workloads/ops.h"
#include "workloads/workload.h"

/* The CONFIG values of the original, as a candidate sees them. */
#define MMSUB_SUBTRACT 2.0
#define MMSUB_MULTIPLY 1.5

enum { B, IN, OUT };
enum { T_X, T_WEIGHT, T_BIAS, T_OUT };
/* The chain after the matmul, in order (workload.h: reference_without). */
enum { OP_BIAS, OP_SUBTRACT, OP_MULTIPLY, OP_RELU };

static void mmsub__create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench until upstream cdb2234, which drew the zero weights at
     * random (README):
     * x ~ U[0, 1), weight = bias = 0, so the answer is relu(-3)
     * = 0 whatever a kernel computes. Here x ~ U[-s, s) times a per-seed
     * factor, weight ~ N(0, 4 * 3/IN) so x @ weight has std ~2s, bias ~
     * N(0, 1): the subtraction of 2 decides which fifth or so of the
     * outputs survive the relu, and the bias moves which ones. */
    const float sx = ckb_seed_factor(seed, T_X, 0.75f, 1.5f);
    ckb_fill_uniform_bf16(t[T_X], d[B] * d[IN], seed, T_X, -sx, sx);
    ckb_fill_normal_bf16(t[T_WEIGHT], d[IN] * d[OUT], seed, T_WEIGHT, 0.0f,
                         2.0f * sqrtf(3.0f / (float)d[IN]));
    ckb_fill_normal_bf16(t[T_BIAS], d[OUT], seed, T_BIAS, 0.0f, 1.0f);
}

/* One oneDNN matmul whose epilogue is the whole chain, on the f32
 * accumulator before the one rounding to bf16: the bias, then
 * (z - 2) * 1.5 as the linear post-op 1.5 * z - 3, then relu. */
static void mmsub__baseline(const int64_t *d, void *const *t)
{
    ckb_matmul_spec s = {0};
    s.M = d[B], s.K = d[IN], s.N = d[OUT];
    s.a_type = s.b_type = s.c_type = CKB_BF16;
    s.has_bias = 1;
    s.bias_type = CKB_BF16;
    s.neltwise = 2;
    s.eltwise[0] = (ckb_eltwise){CKB_ACT_LINEAR, (float)MMSUB_MULTIPLY,
                                 (float)(-MMSUB_SUBTRACT * MMSUB_MULTIPLY)};
    s.eltwise[1] = (ckb_eltwise){CKB_ACT_RELU, 0.0f, 0.0f};
    ckb_dnnl_matmul(&s, t[T_X], t[T_WEIGHT], t[T_BIAS], t[T_OUT]);
}

/* Plain loops; op `skip` of the chain left out (-1: none). */
static void mmsub__reference_without(const int64_t *d, void *const *t, int skip)
{
    const ckb_bf16 *x = t[T_X], *weight = t[T_WEIGHT], *bias = t[T_BIAS];
    ckb_bf16 *out = t[T_OUT];
    const int64_t n = d[OUT];
    float *z = ckb_ref_matmul(x, weight, d[B], d[IN], n, 0);
#pragma omp parallel for
    for (int64_t i = 0; i < d[B]; i++) {
        const float *acc = z + i * n;
        for (int64_t j = 0; j < n; j++) {
            float v = acc[j];
            if (skip != OP_BIAS)
                v += ckb_bf16_to_f32(bias[j]);
            if (skip != OP_SUBTRACT)
                v -= (float)MMSUB_SUBTRACT;
            if (skip != OP_MULTIPLY)
                v *= (float)MMSUB_MULTIPLY;
            if (skip != OP_RELU)
                v = ckb_op_relu(v);
            out[i * n + j] = ckb_f32_to_bf16(v);
        }
    }
    free(z);
}

static void mmsub__reference(const int64_t *d, void *const *t)
{
    mmsub__reference_without(d, t, -1);
}

/* The matmul, then bias, subtract, multiply and relu per output element. */
static double mmsub__flops(const int64_t *d)
{
    return 2.0 * d[B] * d[IN] * d[OUT] + 4.0 * d[B] * d[OUT];
}

static double mmsub__bytes(const int64_t *d)
{
    return 2.0 * ((double)d[B] * d[IN] + (double)d[IN] * d[OUT] + d[OUT] + (double)d[B] * d[OUT]);
}

const ckb_workload ckb_wl_19k_Matmul_Subtract_Multiply_ReLU = {
    .id = "19k_Matmul_Subtract_Multiply_ReLU",
    .model = "KernelBench level 2 #9",
    .op = "9_Matmul_Subtract_Multiply_ReLU",
    .tags = "matmul,elementwise",
    .summary = "out = relu((x @ weight + bias - 2) * 1.5), bf16 in, f32 accumulate and "
               "epilogue, bf16 out",
    .ndims = 3,
    .scale_dim = "B",
    .dims = {{"B", {128, 2048, 4096}}, {"IN", {256, 4096, 8192}}, {"OUT", {512, 4096, 8192}}},
    .nconsts = 2,
    .consts = {{"SUBTRACT_VALUE", MMSUB_SUBTRACT}, {"MULTIPLY_VALUE", MMSUB_MULTIPLY}},
    .ntensors = 4,
    .tensors = {{"x", CKB_BF16, CKB_IN, 2, {B, IN}},
                {"weight", CKB_BF16, CKB_IN, 2, {IN, OUT}},
                {"bias", CKB_BF16, CKB_IN, 1, {OUT}},
                {"out", CKB_BF16, CKB_OUT, 2, {B, OUT}}},
    .create_inputs = mmsub__create_inputs,
    .baseline = mmsub__baseline,
    .reference = mmsub__reference,
    .flops = mmsub__flops,
    .bytes = mmsub__bytes,
    .nchain = 4,
    .chain = {"bias", "subtract", "multiply", "relu"},
    .reference_without = mmsub__reference_without,
};
