/*
 * 27k_Matmul_Mish_Mish — KernelBench level 2 #29 (JAXBench
 * benchmark/27k_Matmul_Mish_Mish): out = mish(mish(x @ weight + bias)),
 * mish(v) = v * tanh(softplus(v)). x [B, IN], weight [IN, OUT] (x @ weight,
 * as JAXBench stores it), bf16 in, f32 accumulation and epilogue, bf16 out.
 */
#include <math.h>
#include <stdlib.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/reference.h"
#include "workloads/ops.h"
#include "workloads/workload.h"

enum { B, IN, OUT };
enum { T_X, T_WEIGHT, T_BIAS, T_OUT };
/* The chain after the matmul, in order (workload.h: reference_without). */
enum { OP_BIAS, OP_MISH_1, OP_MISH_2 };

static void mmmish__create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench until upstream cdb2234, which drew the zero weights at
     * random (README):
     * x ~ U[0, 1), weight = bias = 0, so out = mish(mish(0)) = 0
     * for any kernel. Here x ~ U[-s, s) times a per-seed factor, weight ~
     * N(0, 2.25 * 3/IN) so x @ weight has std ~1.5s, bias ~ N(0, 0.5): most
     * values sit in (-3, 3), where mish is far from the identity and a
     * second mish still moves them (mish(1) = 0.87, mish(mish(1)) = 0.72). */
    const float sx = ckb_seed_factor(seed, T_X, 0.75f, 1.5f);
    ckb_fill_uniform_bf16(t[T_X], d[B] * d[IN], seed, T_X, -sx, sx);
    ckb_fill_normal_bf16(t[T_WEIGHT], d[IN] * d[OUT], seed, T_WEIGHT, 0.0f,
                         1.5f * sqrtf(3.0f / (float)d[IN]));
    ckb_fill_normal_bf16(t[T_BIAS], d[OUT], seed, T_BIAS, 0.0f, 0.5f);
}

/* One oneDNN matmul whose epilogue is the whole chain, on the f32
 * accumulator before the one rounding to bf16: the bias, then two mish
 * post-ops. */
static void mmmish__baseline(const int64_t *d, void *const *t)
{
    ckb_matmul_spec s = {0};
    s.M = d[B], s.K = d[IN], s.N = d[OUT];
    s.a_type = s.b_type = s.c_type = CKB_BF16;
    s.has_bias = 1;
    s.bias_type = CKB_BF16;
    s.neltwise = 2;
    s.eltwise[0] = (ckb_eltwise){CKB_ACT_MISH, 0.0f, 0.0f};
    s.eltwise[1] = (ckb_eltwise){CKB_ACT_MISH, 0.0f, 0.0f};
    ckb_dnnl_matmul(&s, t[T_X], t[T_WEIGHT], t[T_BIAS], t[T_OUT]);
}

/* Plain loops; op `skip` of the chain left out (-1: none). */
static void mmmish__reference_without(const int64_t *d, void *const *t, int skip)
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
            if (skip != OP_MISH_1)
                v = ckb_op_mish(v);
            if (skip != OP_MISH_2)
                v = ckb_op_mish(v);
            out[i * n + j] = ckb_f32_to_bf16(v);
        }
    }
    free(z);
}

static void mmmish__reference(const int64_t *d, void *const *t)
{
    mmmish__reference_without(d, t, -1);
}

/* The matmul, then per output element the bias and two mish (exp, log1p,
 * tanh, multiply: 4 each). */
static double mmmish__flops(const int64_t *d)
{
    return 2.0 * d[B] * d[IN] * d[OUT] + 9.0 * d[B] * d[OUT];
}

static double mmmish__bytes(const int64_t *d)
{
    return 2.0 * ((double)d[B] * d[IN] + (double)d[IN] * d[OUT] + d[OUT] + (double)d[B] * d[OUT]);
}

const ckb_workload ckb_wl_27k_Matmul_Mish_Mish = {
    .id = "27k_Matmul_Mish_Mish",
    .model = "KernelBench level 2 #29",
    .op = "29_Matmul_Mish_Mish",
    .tags = "matmul,elementwise",
    .summary = "out = mish(mish(x @ weight + bias)), bf16 in, f32 accumulate and epilogue, "
               "bf16 out",
    .ndims = 3,
    .scale_dim = "B",
    .dims = {{"B", {128, 2048, 4096}}, {"IN", {256, 4096, 8192}}, {"OUT", {512, 4096, 8192}}},
    .ntensors = 4,
    .tensors = {{"x", CKB_BF16, CKB_IN, 2, {B, IN}},
                {"weight", CKB_BF16, CKB_IN, 2, {IN, OUT}},
                {"bias", CKB_BF16, CKB_IN, 1, {OUT}},
                {"out", CKB_BF16, CKB_OUT, 2, {B, OUT}}},
    .create_inputs = mmmish__create_inputs,
    .baseline = mmmish__baseline,
    .reference = mmmish__reference,
    .flops = mmmish__flops,
    .bytes = mmmish__bytes,
    .nchain = 3,
    .chain = {"bias", "mish_1", "mish_2"},
    .reference_without = mmmish__reference_without,
};
