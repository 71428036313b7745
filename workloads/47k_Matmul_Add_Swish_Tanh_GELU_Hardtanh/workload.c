/*
 * 47k_Matmul_Add_Swish_Tanh_GELU_Hardtanh — KernelBench level 2 #95
 * (JAXBench benchmark/47k_Matmul_Add_Swish_Tanh_GELU_Hardtanh):
 *     out = clip(gelu(tanh(swish(x @ weight + bias + add_value))), -1, 1)
 * x [B, IN], weight [IN, OUT] (x @ weight, as JAXBench stores it), gelu the
 * tanh approximation (jax.nn.gelu's default). bf16 in, f32 accumulation and
 * epilogue, bf16 out.
 *
 * The final clip never binds: swish >= -0.279, so tanh lies in (-0.272, 1)
 * and gelu of that in (-0.107, 0.842). It is kept, as in the original, and
 * left out of the chain (README).
 */
#include <math.h>
#include <stdlib.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/reference.h"
#include "workloads/ops.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

/* jnp.clip's bounds (CLIP_MIN, CLIP_MAX). */
#define MMACT_CLIP_MIN -1.0
#define MMACT_CLIP_MAX 1.0

enum { B, IN, OUT };
enum { T_X, T_WEIGHT, T_BIAS, T_ADD_VALUE, T_OUT };
/* The chain after the matmul, in order (workload.h: reference_without); the
 * clip, which never binds, is not part of it. */
enum { OP_BIAS, OP_ADD, OP_SWISH, OP_TANH, OP_GELU, OP_CLIP };

static void mmact__create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench until upstream cdb2234, which drew the zero weights at
     * random (README):
     * x ~ U[0, 1), weight = bias = add_value = 0: the answer is
     * 0 whatever a kernel computes. Here x ~ U[-s, s) times a per-seed
     * factor, weight ~ N(0, 2^2 * 3/IN) so x @ weight has std ~2s, and
     * both vectors ~ N(0, 1): the swish input spans its negative dip and
     * the region where tanh saturates, so each activation bends the
     * answer, and each vector shifts every column. */
    const float sx = ckb_seed_factor(seed, T_X, 0.75f, 1.5f);
    ckb_fill_uniform_bf16(t[T_X], d[B] * d[IN], seed, T_X, -sx, sx);
    ckb_fill_normal_bf16(t[T_WEIGHT], d[IN] * d[OUT], seed, T_WEIGHT, 0.0f,
                         2.0f * sqrtf(3.0f / (float)d[IN]));
    ckb_fill_normal_bf16(t[T_BIAS], d[OUT], seed, T_BIAS, 0.0f, 1.0f);
    ckb_fill_normal_bf16(t[T_ADD_VALUE], d[OUT], seed, T_ADD_VALUE, 0.0f, 1.0f);
}

/* One oneDNN matmul whose epilogue is the whole chain, on the f32
 * accumulator before the one rounding to bf16. The two column vectors are
 * summed first into one f32 bias ((z + b) + a and z + (b + a) differ by an
 * f32 rounding), then swish, tanh, gelu(tanh) and clip run as post-ops. */
static void mmact__baseline(const int64_t *d, void *const *t)
{
    const ckb_bf16 *bias = t[T_BIAS], *add_value = t[T_ADD_VALUE];
    float *b = ckb_scratch(0, (size_t)d[OUT] * sizeof *b);
    for (int64_t j = 0; j < d[OUT]; j++)
        b[j] = ckb_bf16_to_f32(bias[j]) + ckb_bf16_to_f32(add_value[j]);

    ckb_matmul_spec s = {0};
    s.M = d[B], s.K = d[IN], s.N = d[OUT];
    s.a_type = s.b_type = s.c_type = CKB_BF16;
    s.has_bias = 1;
    s.bias_type = CKB_F32;
    s.neltwise = 4;
    s.eltwise[0] = (ckb_eltwise){CKB_ACT_SWISH, 1.0f, 0.0f};
    s.eltwise[1] = (ckb_eltwise){CKB_ACT_TANH, 0.0f, 0.0f};
    s.eltwise[2] = (ckb_eltwise){CKB_ACT_GELU_TANH, 0.0f, 0.0f};
    s.eltwise[3] = (ckb_eltwise){CKB_ACT_CLIP, (float)MMACT_CLIP_MIN, (float)MMACT_CLIP_MAX};
    ckb_dnnl_matmul(&s, t[T_X], t[T_WEIGHT], b, t[T_OUT]);
}

/* Plain loops; op `skip` of the chain left out (-1: none). */
static void mmact__reference_without(const int64_t *d, void *const *t, int skip)
{
    const ckb_bf16 *x = t[T_X], *weight = t[T_WEIGHT], *bias = t[T_BIAS],
                   *add_value = t[T_ADD_VALUE];
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
            if (skip != OP_ADD)
                v += ckb_bf16_to_f32(add_value[j]);
            if (skip != OP_SWISH)
                v = ckb_op_swish(v);
            if (skip != OP_TANH)
                v = ckb_op_tanh(v);
            if (skip != OP_GELU)
                v = ckb_op_gelu_tanh(v);
            if (skip != OP_CLIP)
                v = ckb_op_clamp(v, (float)MMACT_CLIP_MIN, (float)MMACT_CLIP_MAX);
            out[i * n + j] = ckb_f32_to_bf16(v);
        }
    }
    free(z);
}

static void mmact__reference(const int64_t *d, void *const *t)
{
    mmact__reference_without(d, t, -1);
}

/* The matmul, then per element: bias 1, add 1, swish 4 (exp, add, divide,
 * multiply), tanh 1, gelu(tanh) 8, clip 2. */
static double mmact__flops(const int64_t *d)
{
    return 2.0 * d[B] * d[IN] * d[OUT] + 17.0 * d[B] * d[OUT];
}

static double mmact__bytes(const int64_t *d)
{
    return 2.0 * ((double)d[B] * d[IN] + (double)d[IN] * d[OUT] + 2.0 * d[OUT] +
                  (double)d[B] * d[OUT]);
}

const ckb_workload ckb_wl_47k_Matmul_Add_Swish_Tanh_GELU_Hardtanh = {
    .id = "47k_Matmul_Add_Swish_Tanh_GELU_Hardtanh",
    .model = "KernelBench level 2 #95",
    .op = "95_Matmul_Add_Swish_Tanh_GELU_Hardtanh",
    .tags = "matmul,elementwise",
    .summary = "out = clip(gelu_tanh(tanh(swish(x @ weight + bias + add_value))), -1, 1), bf16 "
               "in, f32 accumulate and epilogue, bf16 out",
    .ndims = 3,
    .scale_dim = "B",
    .dims = {{"B", {128, 2048, 4096}}, {"IN", {256, 4096, 8192}}, {"OUT", {512, 4096, 8192}}},
    .nconsts = 2,
    .consts = {{"CLIP_MIN", MMACT_CLIP_MIN}, {"CLIP_MAX", MMACT_CLIP_MAX}},
    .ntensors = 5,
    .tensors = {{"x", CKB_BF16, CKB_IN, 2, {B, IN}},
                {"weight", CKB_BF16, CKB_IN, 2, {IN, OUT}},
                {"bias", CKB_BF16, CKB_IN, 1, {OUT}},
                {"add_value", CKB_BF16, CKB_IN, 1, {OUT}},
                {"out", CKB_BF16, CKB_OUT, 2, {B, OUT}}},
    .create_inputs = mmact__create_inputs,
    .baseline = mmact__baseline,
    .reference = mmact__reference,
    .flops = mmact__flops,
    .bytes = mmact__bytes,
    .nchain = 5,
    .chain = {"bias", "add", "swish", "tanh", "gelu"},
    .reference_without = mmact__reference_without,
};
