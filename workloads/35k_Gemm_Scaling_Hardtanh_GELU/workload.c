/*
 * 35k_Gemm_Scaling_Hardtanh_GELU — KernelBench level 2 #53 (JAXBench
 * benchmark/35k_Gemm_Scaling_Hardtanh_GELU): out = gelu(clip((x @ weight +
 * bias) * SCALING_FACTOR, HARDTANH_MIN, HARDTANH_MAX)), x [B, IN], weight
 * [IN, OUT] (jnp.matmul(x, weight), not nn.Linear's [OUT, IN]), gelu the tanh
 * form the original spells out. bf16 in, f32 accumulation and epilogue, bf16
 * out.
 */
#include <math.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/ops.h"
#include "workloads/workload.h"

#define GEMMHT_SCALING 0.5
#define GEMMHT_MIN -2.0
#define GEMMHT_MAX 2.0
/* std of x @ weight in units of x's per-seed factor; see create_inputs */
#define GEMMHT_SPREAD 2.5f

enum { B, IN, OUT };
enum { T_X, T_WEIGHT, T_BIAS, T_OUT };
/* the chain, in order; reference_without(skip) leaves one out */
enum { OP_BIAS, OP_SCALING, OP_HARDTANH, OP_GELU, OP_COUNT };

static void gemmht__create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench until upstream cdb2234, which drew the zero weights at
     * random (README):
     * x ~ U[0, 1), weight = bias = 0, so the output is 0 for any
     * kernel. Here x ~ U[-1, 1) times a per-seed factor, weight ~
     * N(0, 3/IN) * 2.5 and bias ~ N(0, 1): z = x @ weight + bias has std ~3,
     * so after the halving 5-30% of the values (by the seed's factor) lie
     * beyond the clip at +-2 (the hardtanh shows) and most of the rest are
     * where gelu is far from the identity (the gelu shows). */
    const float sx = ckb_seed_factor(seed, T_X, 0.75f, 1.5f);
    ckb_fill_uniform_bf16(t[T_X], d[B] * d[IN], seed, T_X, -sx, sx);
    ckb_fill_normal_bf16(t[T_WEIGHT], d[IN] * d[OUT], seed, T_WEIGHT, 0.0f,
                         GEMMHT_SPREAD * sqrtf(3.0f / (float)d[IN]));
    ckb_fill_normal_bf16(t[T_BIAS], d[OUT], seed, T_BIAS, 0.0f, 1.0f);
}

/* One oneDNN matmul: the whole chain is its epilogue (bias, then linear,
 * clip and gelu_tanh post-ops) on the f32 accumulator before the one
 * rounding to bf16. */
static void gemmht__baseline(const int64_t *d, void *const *t)
{
    ckb_matmul_spec s = {0};
    s.M = d[B], s.K = d[IN], s.N = d[OUT];
    s.a_type = s.b_type = s.c_type = CKB_BF16;
    s.has_bias = 1;
    s.bias_type = CKB_BF16;
    s.neltwise = 3;
    s.eltwise[0] = (ckb_eltwise){CKB_ACT_LINEAR, (float)GEMMHT_SCALING, 0.0f};
    s.eltwise[1] = (ckb_eltwise){CKB_ACT_CLIP, (float)GEMMHT_MIN, (float)GEMMHT_MAX};
    s.eltwise[2] = (ckb_eltwise){CKB_ACT_GELU_TANH, 0.0f, 0.0f};
    ckb_dnnl_matmul(&s, t[T_X], t[T_WEIGHT], t[T_BIAS], t[T_OUT]);
}

static void gemmht__reference_without(const int64_t *d, void *const *t, int skip)
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
            if (skip != OP_SCALING)
                v *= (float)GEMMHT_SCALING;
            if (skip != OP_HARDTANH)
                v = ckb_op_clamp(v, (float)GEMMHT_MIN, (float)GEMMHT_MAX);
            if (skip != OP_GELU)
                v = ckb_op_gelu_tanh(v);
            out[i * d[OUT] + j] = ckb_f32_to_bf16(v);
        }
    }
}

static void gemmht__reference(const int64_t *d, void *const *t)
{
    gemmht__reference_without(d, t, -1);
}

/* The matmul, then per element: bias 1, scaling 1, clip 2, gelu 8. */
static double gemmht__flops(const int64_t *d)
{
    return 2.0 * d[B] * d[IN] * d[OUT] + 12.0 * d[B] * d[OUT];
}

static double gemmht__bytes(const int64_t *d)
{
    return 2.0 * ((double)d[B] * d[IN] + (double)d[IN] * d[OUT] + d[OUT] + (double)d[B] * d[OUT]);
}

const ckb_workload ckb_wl_35k_Gemm_Scaling_Hardtanh_GELU = {
    .id = "35k_Gemm_Scaling_Hardtanh_GELU",
    .model = "KernelBench level 2 #53",
    .op = "53_Gemm_Scaling_Hardtanh_GELU",
    .tags = "matmul,elementwise",
    .summary = "out = gelu_tanh(clip((x @ weight + bias) * SCALING_FACTOR, HARDTANH_MIN, "
               "HARDTANH_MAX)), bf16 in, f32 accumulate and epilogue, bf16 out",
    .ndims = 3,
    .scale_dim = "B",
    .dims = {{"B", {128, 2048, 4096}}, {"IN", {256, 4096, 8192}}, {"OUT", {512, 4096, 8192}}},
    .nconsts = 3,
    .consts = {{"SCALING_FACTOR", GEMMHT_SCALING},
               {"HARDTANH_MIN", GEMMHT_MIN},
               {"HARDTANH_MAX", GEMMHT_MAX}},
    .ntensors = 4,
    .tensors = {{"x", CKB_BF16, CKB_IN, 2, {B, IN}},
                {"weight", CKB_BF16, CKB_IN, 2, {IN, OUT}},
                {"bias", CKB_BF16, CKB_IN, 1, {OUT}},
                {"out", CKB_BF16, CKB_OUT, 2, {B, OUT}}},
    .create_inputs = gemmht__create_inputs,
    .baseline = gemmht__baseline,
    .reference = gemmht__reference,
    .flops = gemmht__flops,
    .bytes = gemmht__bytes,
    .nchain = OP_COUNT,
    .chain = {"bias", "scaling", "hardtanh", "gelu"},
    .reference_without = gemmht__reference_without,
};
