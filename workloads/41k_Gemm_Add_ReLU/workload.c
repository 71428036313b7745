/*
 * 41k_Gemm_Add_ReLU — KernelBench level 2 #76 (JAXBench
 * benchmark/41k_Gemm_Add_ReLU): out = relu(x @ weight + bias), x [B, IN],
 * weight [IN, OUT] (jnp.matmul(x, weight), not nn.Linear's [OUT, IN]),
 * bf16 in, f32 accumulation and epilogue, bf16 out.
 */
#include <math.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/workload.h"

enum { B, IN, OUT };
enum { T_X, T_WEIGHT, T_BIAS, T_OUT };

static void gemmrelu_create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench until upstream cdb2234, which drew the zero weights at
     * random (README):
     * x ~ U[0, 1), weight = bias = 0, so relu(0) = 0 passes for
     * any kernel. Here x ~ U[-1, 1) (zero mean: each row's product is its
     * own, not a shared column offset) times a per-seed factor, weight ~
     * N(0, 3/IN) so x @ weight is O(1), bias ~ N(0, 0.5): about half the
     * outputs are clamped, and the bias moves which ones. */
    const float sx = ckb_seed_factor(seed, T_X, 0.75f, 1.5f);
    ckb_fill_uniform_bf16(t[T_X], d[B] * d[IN], seed, T_X, -sx, sx);
    ckb_fill_normal_bf16(t[T_WEIGHT], d[IN] * d[OUT], seed, T_WEIGHT, 0.0f,
                         sqrtf(3.0f / (float)d[IN]));
    ckb_fill_normal_bf16(t[T_BIAS], d[OUT], seed, T_BIAS, 0.0f, 0.5f);
}

/* One oneDNN matmul: bias and relu ride on it as its epilogue, applied to
 * the f32 accumulator before the one rounding to bf16. */
static void gemmrelu_baseline(const int64_t *d, void *const *t)
{
    ckb_matmul_spec s = {0};
    s.M = d[B], s.K = d[IN], s.N = d[OUT];
    s.a_type = s.b_type = s.c_type = CKB_BF16;
    s.has_bias = 1;
    s.bias_type = CKB_BF16;
    s.neltwise = 1;
    s.eltwise[0] = (ckb_eltwise){CKB_ACT_RELU, 0.0f, 0.0f};
    ckb_dnnl_matmul(&s, t[T_X], t[T_WEIGHT], t[T_BIAS], t[T_OUT]);
}

static void gemmrelu_reference(const int64_t *d, void *const *t)
{
    const ckb_bf16 *x = t[T_X], *weight = t[T_WEIGHT], *bias = t[T_BIAS];
    ckb_bf16 *out = t[T_OUT];
#pragma omp parallel for
    for (int64_t i = 0; i < d[B]; i++) {
        for (int64_t j = 0; j < d[OUT]; j++) {
            float acc = 0.0f;
            for (int64_t k = 0; k < d[IN]; k++)
                acc += ckb_bf16_to_f32(x[i * d[IN] + k]) * ckb_bf16_to_f32(weight[k * d[OUT] + j]);
            float v = acc + ckb_bf16_to_f32(bias[j]);
            out[i * d[OUT] + j] = ckb_f32_to_bf16(v > 0.0f ? v : 0.0f);
        }
    }
}

/* The matmul, then the add and the max per output element. */
static double gemmrelu_flops(const int64_t *d)
{
    return 2.0 * d[B] * d[IN] * d[OUT] + 2.0 * d[B] * d[OUT];
}

static double gemmrelu_bytes(const int64_t *d)
{
    return 2.0 * ((double)d[B] * d[IN] + (double)d[IN] * d[OUT] + d[OUT] + (double)d[B] * d[OUT]);
}

const ckb_workload ckb_wl_41k_Gemm_Add_ReLU = {
    .id = "41k_Gemm_Add_ReLU",
    .model = "KernelBench level 2 #76",
    .op = "76_Gemm_Add_ReLU",
    .tags = "matmul,elementwise",
    .summary = "out = relu(x @ weight + bias), bf16 in, f32 accumulate and epilogue, bf16 out",
    .ndims = 3,
    .scale_dim = "B",
    .dims = {{"B", {128, 2048, 4096}}, {"IN", {256, 4096, 8192}}, {"OUT", {512, 4096, 8192}}},
    .ntensors = 4,
    .tensors = {{"x", CKB_BF16, CKB_IN, 2, {B, IN}},
                {"weight", CKB_BF16, CKB_IN, 2, {IN, OUT}},
                {"bias", CKB_BF16, CKB_IN, 1, {OUT}},
                {"out", CKB_BF16, CKB_OUT, 2, {B, OUT}}},
    .create_inputs = gemmrelu_create_inputs,
    .baseline = gemmrelu_baseline,
    .reference = gemmrelu_reference,
    .flops = gemmrelu_flops,
    .bytes = gemmrelu_bytes,
    /* expert.c: a GEMM with bias + ReLU on the finished tile: micro-kernel
     * rows, rows/columns per packed block, the threading split, and the
     * matmul unit (the host's fastest, not searched). */
    .nparams = 5,
    .params = {{"MR", CKB_PARAM_HOST_MR, 2, {5, 6}},
               {"MC", CKB_PARAM_HOST_MC, 3, {256, 1024, 4096}, .multiple = 32},
               {"NC", CKB_PARAM_HOST_NC, 3, {64, 256, 512}, .multiple = 64},
               {"TN", 0, 2, {0, 1}},
               {"MMA", CKB_PARAM_HOST_UNIT, 1, {CKB_PARAM_HOST_UNIT}}},
};
