/*
 * 48k_Matmul_BatchNorm_BiasAdd_Divide_Swish — KernelBench level 2 #97
 * (JAXBench benchmark/48k_Matmul_BatchNorm_BiasAdd_Divide_Swish):
 *     z   = x @ weight + linear_bias
 *     n   = (z - bn_mean) / sqrt(bn_var + BN_EPS) * bn_scale + bn_bias
 *     out = swish((n + bias[0]) / DIVIDE_VALUE)
 * x [B, IN], weight [IN, OUT] (jnp.matmul(x, weight)); the batch norm in
 * inference mode with the given running statistics, as JAXBench writes it;
 * bias is a one-element learned parameter. DIVIDE_VALUE is 1, as in the
 * original, so the division is kept but cannot be observed (README). bf16
 * in, f32 accumulation and f32 math through the chain, bf16 out.
 */
#include <math.h>
#include <stdlib.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/ops.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

/* CONFIG's bn_eps and divide_value (BN_EPS, DIVIDE_VALUE). */
#define MMBNSW_EPS 1e-5
#define MMBNSW_DIVIDE 1.0

enum { B, IN, OUT, BIAS_LEN };
enum { T_X, T_WEIGHT, T_LINEAR_BIAS, T_BN_SCALE, T_BN_BIAS, T_BN_MEAN, T_BN_VAR, T_BIAS, T_OUT };
/* The chain after the matmul, in order (workload.h: reference_without);
 * the division by 1 is not part of it. */
enum { OP_LINEAR_BIAS, OP_BATCHNORM, OP_BIAS, OP_SWISH, OP_DIVIDE };

static void mmbnsw__create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench until upstream cdb2234, which drew the zero weights at
     * random (README):
     * x ~ U[0, 1), weight = linear_bias = bias = 0 and the
     * identity batch norm, so the answer is swish(0) = 0. Here x ~ U[-s, s)
     * times a per-seed factor, weight ~ N(0, 3/IN) and linear_bias ~
     * N(0, 1) (z has std ~1.4); the running statistics are those of another
     * batch (bn_mean ~ N(0, 0.5), bn_var ~ U[0.5, 1.5)), bn_scale ~
     * U[0.5, 1.5) and bn_bias ~ N(0, 0.5); the scalar bias ~ U[0.5, 1.5)
     * shifts every element by a visible amount. */
    const float sx = ckb_seed_factor(seed, T_X, 0.75f, 1.5f);
    ckb_fill_uniform_bf16(t[T_X], d[B] * d[IN], seed, T_X, -sx, sx);
    ckb_fill_normal_bf16(t[T_WEIGHT], d[IN] * d[OUT], seed, T_WEIGHT, 0.0f,
                         sqrtf(3.0f / (float)d[IN]));
    ckb_fill_normal_bf16(t[T_LINEAR_BIAS], d[OUT], seed, T_LINEAR_BIAS, 0.0f, 1.0f);
    ckb_fill_uniform_bf16(t[T_BN_SCALE], d[OUT], seed, T_BN_SCALE, 0.5f, 1.5f);
    ckb_fill_normal_bf16(t[T_BN_BIAS], d[OUT], seed, T_BN_BIAS, 0.0f, 0.5f);
    ckb_fill_normal_bf16(t[T_BN_MEAN], d[OUT], seed, T_BN_MEAN, 0.0f, 0.5f);
    ckb_fill_uniform_bf16(t[T_BN_VAR], d[OUT], seed, T_BN_VAR, 0.5f, 1.5f);
    ckb_fill_uniform_bf16(t[T_BIAS], d[BIAS_LEN], seed, T_BIAS, 0.5f, 1.5f);
}

/* The four per-column vectors of the batch norm as f32, as ckb_op_batchnorm
 * takes them: v[0..4*OUT) = mean, var, gamma, beta. */
static void mmbnsw__bn_vectors(const int64_t *d, void *const *t, float *v)
{
    const int64_t n = d[OUT];
    const ckb_bf16 *src[4] = {t[T_BN_MEAN], t[T_BN_VAR], t[T_BN_SCALE], t[T_BN_BIAS]};
    for (int k = 0; k < 4; k++)
        for (int64_t j = 0; j < n; j++)
            v[k * n + j] = ckb_bf16_to_f32(src[k][j]);
}

/* One oneDNN matmul with linear_bias as its epilogue into an f32 scratch
 * (the per-column batch norm is no eltwise post-op), then one OpenMP pass:
 * the batch norm as its per-column scale and shift (ckb_op_batchnorm walks
 * a [B, OUT] matrix column by column, at a third of this baseline's speed),
 * the scalar bias, the division, the swish and the one rounding to bf16. */
static void mmbnsw__baseline(const int64_t *d, void *const *t)
{
    const int64_t n = d[OUT];
    float *z = ckb_scratch(0, (size_t)(d[B] * n) * sizeof *z);
    float *v = ckb_scratch(1, (size_t)(2 * n) * sizeof *v);
    ckb_matmul_spec s = {0};
    s.M = d[B], s.K = d[IN], s.N = n;
    s.a_type = s.b_type = CKB_BF16;
    s.c_type = CKB_F32;
    s.has_bias = 1;
    s.bias_type = CKB_BF16;
    ckb_dnnl_matmul(&s, t[T_X], t[T_WEIGHT], t[T_LINEAR_BIAS], z);

    const float *a = v, *c = v + n;
    ckb_op_batchnorm_fold(t[T_BN_SCALE], t[T_BN_BIAS], t[T_BN_MEAN], t[T_BN_VAR], n,
                          MMBNSW_EPS, v, v + n);
    const float bias = ckb_bf16_to_f32(((const ckb_bf16 *)t[T_BIAS])[0]);
    ckb_bf16 *out = t[T_OUT];
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < d[B]; i++) {
#pragma omp simd
        for (int64_t j = 0; j < n; j++) {
            const float u = (z[i * n + j] * a[j] + c[j] + bias) / (float)MMBNSW_DIVIDE;
            out[i * n + j] = ckb_f32_to_bf16(ckb_op_swish(u));
        }
    }
}

/* Plain loops; op `skip` of the chain left out (-1: none). */
static void mmbnsw__reference_without(const int64_t *d, void *const *t, int skip)
{
    const ckb_bf16 *x = t[T_X], *weight = t[T_WEIGHT], *lb = t[T_LINEAR_BIAS];
    ckb_bf16 *out = t[T_OUT];
    const int64_t n = d[OUT];
    float *z = malloc((size_t)(d[B] * n) * sizeof *z);
    float *v = malloc((size_t)(4 * n) * sizeof *v);
    if (!z || !v)
        abort();
#pragma omp parallel for
    for (int64_t i = 0; i < d[B]; i++) {
        float *zr = z + i * n;
        for (int64_t j = 0; j < n; j++)
            zr[j] = 0.0f;
        for (int64_t k = 0; k < d[IN]; k++) {
            const float a = ckb_bf16_to_f32(x[i * d[IN] + k]);
            for (int64_t j = 0; j < n; j++)
                zr[j] += a * ckb_bf16_to_f32(weight[k * n + j]);
        }
        if (skip != OP_LINEAR_BIAS)
            for (int64_t j = 0; j < n; j++)
                zr[j] += ckb_bf16_to_f32(lb[j]);
    }
    mmbnsw__bn_vectors(d, t, v);
    if (skip != OP_BATCHNORM)
        ckb_op_batchnorm(z, d[B], n, 1, v, v + n, v + 2 * n, v + 3 * n, (float)MMBNSW_EPS);
    const float bias = ckb_bf16_to_f32(((const ckb_bf16 *)t[T_BIAS])[0]);
    for (int64_t i = 0; i < d[B] * n; i++) {
        float a = z[i];
        if (skip != OP_BIAS)
            a += bias;
        if (skip != OP_DIVIDE)
            a /= (float)MMBNSW_DIVIDE;
        if (skip != OP_SWISH)
            a = ckb_op_swish(a);
        out[i] = ckb_f32_to_bf16(a);
    }
    free(v);
    free(z);
}

static void mmbnsw__reference(const int64_t *d, void *const *t)
{
    mmbnsw__reference_without(d, t, -1);
}

/* The matmul, then per element: linear_bias 1, batch norm 4 (subtract,
 * divide, multiply, add), bias 1, divide 1, swish 4 (exp, add, divide,
 * multiply). */
static double mmbnsw__flops(const int64_t *d)
{
    return 2.0 * d[B] * d[IN] * d[OUT] + 11.0 * d[B] * d[OUT];
}

static double mmbnsw__bytes(const int64_t *d)
{
    return 2.0 * ((double)d[B] * d[IN] + (double)d[IN] * d[OUT] + 5.0 * d[OUT] + d[BIAS_LEN] +
                  (double)d[B] * d[OUT]);
}

const ckb_workload ckb_wl_48k_Matmul_BatchNorm_BiasAdd_Divide_Swish = {
    .id = "48k_Matmul_BatchNorm_BiasAdd_Divide_Swish",
    .model = "KernelBench level 2 #97",
    .op = "97_Matmul_BatchNorm_BiasAdd_Divide_Swish",
    .tags = "matmul,norm,elementwise",
    .summary = "out = swish((batchnorm_running(x @ weight + linear_bias) + bias) / 1), bf16 in, "
               "f32 accumulate and f32 math, bf16 out",
    .ndims = 4,
    .scale_dim = "B",
    .dims = {{"B", {128, 2048, 4096}},
             {"IN", {256, 4096, 8192}},
             {"OUT", {512, 4096, 8192}},
             {"BIAS_LEN", {1, 1, 1}}},
    .nconsts = 2,
    .consts = {{"BN_EPS", MMBNSW_EPS}, {"DIVIDE_VALUE", MMBNSW_DIVIDE}},
    .ntensors = 9,
    .tensors = {{"x", CKB_BF16, CKB_IN, 2, {B, IN}},
                {"weight", CKB_BF16, CKB_IN, 2, {IN, OUT}},
                {"linear_bias", CKB_BF16, CKB_IN, 1, {OUT}},
                {"bn_scale", CKB_BF16, CKB_IN, 1, {OUT}},
                {"bn_bias", CKB_BF16, CKB_IN, 1, {OUT}},
                {"bn_mean", CKB_BF16, CKB_IN, 1, {OUT}},
                {"bn_var", CKB_BF16, CKB_IN, 1, {OUT}},
                {"bias", CKB_BF16, CKB_IN, 1, {BIAS_LEN}},
                {"out", CKB_BF16, CKB_OUT, 2, {B, OUT}}},
    .create_inputs = mmbnsw__create_inputs,
    .baseline = mmbnsw__baseline,
    .reference = mmbnsw__reference,
    .flops = mmbnsw__flops,
    .bytes = mmbnsw__bytes,
    .nchain = 4,
    .chain = {"linear_bias", "batchnorm", "bias", "swish"},
    .reference_without = mmbnsw__reference_without,
};
