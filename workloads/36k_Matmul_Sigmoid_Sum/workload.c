/*
 * 36k_Matmul_Sigmoid_Sum — KernelBench level 2 #56 (JAXBench
 * benchmark/36k_Matmul_Sigmoid_Sum): out[i] = sum_j sigmoid(x @ weight +
 * bias)[i, j], x [B, IN], weight [IN, OUT] (jnp.matmul(x, weight); OUT is the
 * original's hidden_size), out [B] (the original's [B, 1]: the same memory).
 * bf16 in, f32 accumulation, f32 sigmoid and sum, bf16 out.
 */
#include <math.h>
#include <stdlib.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/ops.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

enum { B, IN, OUT };
enum { T_X, T_WEIGHT, T_BIAS, T_OUT };
/* the chain, in order; reference_without(skip) leaves one out */
enum { OP_BIAS, OP_SIGMOID, OP_COUNT };

static void mmsigsum__create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench until upstream 8fa8f3b, which drew the zero weights at
     * random (README):
     * x ~ U[0, 1), weight = bias = 0: every row sums to OUT/2
     * for any kernel. A row sum averages its OUT sigmoids, so zero-mean
     * inputs would leave every row near OUT/2 too. Here weight ~
     * N(mu, 3/IN) with mu = sqrt(3/IN) times a per-seed factor: x @ weight
     * then carries a row offset mu * sum_k x[i, k] of std ~1 that moves
     * each row's sum between ~OUT/4 and ~3*OUT/4, on top of O(1) noise per
     * element; x ~ U[-1, 1) times a per-seed factor, bias ~ N(0, 1). */
    const float sx = ckb_seed_factor(seed, T_X, 0.75f, 1.5f);
    const float mu = ckb_seed_factor(seed, T_WEIGHT, 0.8f, 1.25f) * sqrtf(3.0f / (float)d[IN]);
    ckb_fill_uniform_bf16(t[T_X], d[B] * d[IN], seed, T_X, -sx, sx);
    ckb_fill_normal_bf16(t[T_WEIGHT], d[IN] * d[OUT], seed, T_WEIGHT, mu,
                         sqrtf(3.0f / (float)d[IN]));
    ckb_fill_normal_bf16(t[T_BIAS], d[OUT], seed, T_BIAS, 0.0f, 1.0f);
}

/* One oneDNN matmul with bias and sigmoid as its epilogue into an f32
 * scratch (the chain stays in f32), then the row sums in OpenMP. */
static void mmsigsum__baseline(const int64_t *d, void *const *t)
{
    const int64_t n = d[OUT];
    float *z = ckb_scratch(0, (size_t)(d[B] * n) * sizeof(float));
    ckb_matmul_spec s = {0};
    s.M = d[B], s.K = d[IN], s.N = n;
    s.a_type = s.b_type = CKB_BF16;
    s.c_type = CKB_F32;
    s.has_bias = 1;
    s.bias_type = CKB_BF16;
    s.neltwise = 1;
    s.eltwise[0] = (ckb_eltwise){CKB_ACT_LOGISTIC, 0.0f, 0.0f};
    ckb_dnnl_matmul(&s, t[T_X], t[T_WEIGHT], t[T_BIAS], z);

    ckb_bf16 *out = t[T_OUT];
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < d[B]; i++)
        out[i] = ckb_f32_to_bf16(ckb_op_sum(z + i * n, n));
}

static void mmsigsum__reference_without(const int64_t *d, void *const *t, int skip)
{
    const ckb_bf16 *x = t[T_X], *weight = t[T_WEIGHT], *bias = t[T_BIAS];
    ckb_bf16 *out = t[T_OUT];
    const int64_t n = d[OUT];
    float *z = malloc((size_t)(d[B] * n) * sizeof *z);
    if (!z)
        abort();
#pragma omp parallel for
    for (int64_t i = 0; i < d[B]; i++) {
        float *zr = z + i * n;
        for (int64_t j = 0; j < n; j++) {
            float v = 0.0f;
            for (int64_t k = 0; k < d[IN]; k++)
                v += ckb_bf16_to_f32(x[i * d[IN] + k]) * ckb_bf16_to_f32(weight[k * n + j]);
            if (skip != OP_BIAS)
                v += ckb_bf16_to_f32(bias[j]);
            if (skip != OP_SIGMOID)
                v = ckb_op_sigmoid(v);
            zr[j] = v;
        }
        out[i] = ckb_f32_to_bf16(ckb_op_sum(zr, n));
    }
    free(z);
}

static void mmsigsum__reference(const int64_t *d, void *const *t)
{
    mmsigsum__reference_without(d, t, -1);
}

/* The matmul, then per element: bias 1, sigmoid 3 (exp, add, divide),
 * sum 1. */
static double mmsigsum__flops(const int64_t *d)
{
    return 2.0 * d[B] * d[IN] * d[OUT] + 5.0 * d[B] * d[OUT];
}

static double mmsigsum__bytes(const int64_t *d)
{
    return 2.0 * ((double)d[B] * d[IN] + (double)d[IN] * d[OUT] + d[OUT] + d[B]);
}

const ckb_workload ckb_wl_36k_Matmul_Sigmoid_Sum = {
    .id = "36k_Matmul_Sigmoid_Sum",
    .model = "KernelBench level 2 #56",
    .op = "56_Matmul_Sigmoid_Sum",
    .tags = "matmul,elementwise,reduction",
    .summary = "out[i] = sum_j sigmoid(x @ weight + bias)[i, j], bf16 in, f32 accumulate and "
               "f32 math, bf16 out",
    .ndims = 3,
    .scale_dim = "B",
    .dims = {{"B", {128, 2048, 4096}}, {"IN", {256, 4096, 8192}}, {"OUT", {512, 4096, 8192}}},
    .ntensors = 4,
    .tensors = {{"x", CKB_BF16, CKB_IN, 2, {B, IN}},
                {"weight", CKB_BF16, CKB_IN, 2, {IN, OUT}},
                {"bias", CKB_BF16, CKB_IN, 1, {OUT}},
                /* [B, 1] in the original: the same memory as [B] */
                {"out", CKB_BF16, CKB_OUT, 1, {B}}},
    .create_inputs = mmsigsum__create_inputs,
    .baseline = mmsigsum__baseline,
    .reference = mmsigsum__reference,
    .flops = mmsigsum__flops,
    .bytes = mmsigsum__bytes,
    .nchain = OP_COUNT,
    .chain = {"bias", "sigmoid"},
    .reference_without = mmsigsum__reference_without,
};
