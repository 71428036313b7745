/*
 * 43k_Gemm_BatchNorm_Scaling_Softmax — KernelBench level 2 #84 (JAXBench
 * benchmark/43k_Gemm_BatchNorm_Scaling_Softmax):
 *     z   = x @ weight + bias
 *     n   = (z - bn_mean) / sqrt(bn_var + BN_EPS) * bn_scale + bn_bias
 *     out = softmax(scale[0] * n) over each row
 * x [B, IN], weight [IN, OUT] (jnp.matmul(x, weight)); the batch norm in
 * inference mode with the given running statistics, as JAXBench writes it;
 * scale is a one-element learned parameter. bf16 in, f32 accumulation and
 * f32 math through the softmax, bf16 out.
 */
#include <math.h>
#include <stdlib.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/ops.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

/* CONFIG's bn_eps (BN_EPS). */
#define GEMMBNSM_EPS 1e-5
/* Logit spread in units of sqrt(2 ln OUT); see create_inputs. */
#define GEMMBNSM_SPREAD 1.2f

enum { B, IN, OUT, SCALE_LEN };
enum { T_X, T_WEIGHT, T_BIAS, T_BN_SCALE, T_BN_BIAS, T_BN_MEAN, T_BN_VAR, T_SCALE, T_OUT };
/* The chain after the matmul, in order (workload.h: reference_without). */
enum { OP_BIAS, OP_BATCHNORM, OP_SCALE, OP_SOFTMAX };

static void gemmbnsm__create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench until upstream 8fa8f3b, which drew the zero weights at
     * random (README):
     * x ~ U[0, 1), weight = bias = 0 and the identity batch norm
     * (ones, zeros): every softmax row is the uniform 1/OUT. Here z = x @
     * weight + bias has std ~1.4 (x ~ U[-s, s), weight ~ N(0, 3/IN), bias
     * ~ N(0, 1)); the running statistics are those of another batch
     * (bn_mean ~ N(0, 0.5), bn_var ~ U[0.5, 1.5)); bn_scale ~ U[0.5, 1.5)
     * and bn_bias ~ N(0, 1) are both scaled with r = 1.2 sqrt(2 ln OUT)
     * (about the largest of OUT normals) and scale ~ U[1.5, 2.5), far from
     * 1: the logits have std ~r, so each row keeps a clear peak at every
     * size (README), and leaving out the scale or the norm shows. */
    const float r = GEMMBNSM_SPREAD * sqrtf(2.0f * logf((float)d[OUT]));
    const float sx = ckb_seed_factor(seed, T_X, 0.75f, 1.25f);
    ckb_fill_uniform_bf16(t[T_X], d[B] * d[IN], seed, T_X, -sx, sx);
    ckb_fill_normal_bf16(t[T_WEIGHT], d[IN] * d[OUT], seed, T_WEIGHT, 0.0f,
                         sqrtf(3.0f / (float)d[IN]));
    ckb_fill_normal_bf16(t[T_BIAS], d[OUT], seed, T_BIAS, 0.0f, 1.0f);
    ckb_fill_uniform_bf16(t[T_BN_SCALE], d[OUT], seed, T_BN_SCALE, 0.5f * r / 3.0f,
                          1.5f * r / 3.0f);
    ckb_fill_normal_bf16(t[T_BN_BIAS], d[OUT], seed, T_BN_BIAS, 0.0f, 0.25f * r);
    ckb_fill_normal_bf16(t[T_BN_MEAN], d[OUT], seed, T_BN_MEAN, 0.0f, 0.5f);
    ckb_fill_uniform_bf16(t[T_BN_VAR], d[OUT], seed, T_BN_VAR, 0.5f, 1.5f);
    ckb_fill_uniform_bf16(t[T_SCALE], d[SCALE_LEN], seed, T_SCALE, 1.5f, 2.5f);
}

/* The four per-column vectors of the batch norm as f32, as ckb_op_batchnorm
 * takes them: v[0..4*OUT) = mean, var, gamma, beta. */
static void gemmbnsm__bn_vectors(const int64_t *d, void *const *t, float *v)
{
    const int64_t n = d[OUT];
    const ckb_bf16 *src[4] = {t[T_BN_MEAN], t[T_BN_VAR], t[T_BN_SCALE], t[T_BN_BIAS]};
    for (int k = 0; k < 4; k++)
        for (int64_t j = 0; j < n; j++)
            v[k * n + j] = ckb_bf16_to_f32(src[k][j]);
}

/* One oneDNN matmul with the bias as its epilogue into an f32 scratch (the
 * per-column batch norm is no eltwise post-op), then per row in OpenMP the
 * batch norm as its per-column scale and shift (ckb_op_batchnorm walks a
 * [B, OUT] matrix column by column, at a third of this baseline's speed),
 * the scale, ckb_op_softmax and the one rounding to bf16. */
static void gemmbnsm__baseline(const int64_t *d, void *const *t)
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
    ckb_dnnl_matmul(&s, t[T_X], t[T_WEIGHT], t[T_BIAS], z);

    const float *a = v, *c = v + n;
    ckb_op_batchnorm_fold(t[T_BN_SCALE], t[T_BN_BIAS], t[T_BN_MEAN], t[T_BN_VAR], n,
                          GEMMBNSM_EPS, v, v + n);
    const float scale = ckb_bf16_to_f32(((const ckb_bf16 *)t[T_SCALE])[0]);
    ckb_bf16 *out = t[T_OUT];
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < d[B]; i++) {
        float *zr = z + i * n;
#pragma omp simd
        for (int64_t j = 0; j < n; j++)
            zr[j] = scale * (zr[j] * a[j] + c[j]);
        ckb_op_softmax(zr, n);
#pragma omp simd
        for (int64_t j = 0; j < n; j++)
            out[i * n + j] = ckb_f32_to_bf16(zr[j]);
    }
}

/* Plain loops; op `skip` of the chain left out (-1: none). */
static void gemmbnsm__reference_without(const int64_t *d, void *const *t, int skip)
{
    const ckb_bf16 *x = t[T_X], *weight = t[T_WEIGHT], *bias = t[T_BIAS];
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
        if (skip != OP_BIAS)
            for (int64_t j = 0; j < n; j++)
                zr[j] += ckb_bf16_to_f32(bias[j]);
    }
    gemmbnsm__bn_vectors(d, t, v);
    if (skip != OP_BATCHNORM)
        ckb_op_batchnorm(z, d[B], n, 1, v, v + n, v + 2 * n, v + 3 * n, (float)GEMMBNSM_EPS);
    const float scale = ckb_bf16_to_f32(((const ckb_bf16 *)t[T_SCALE])[0]);
    for (int64_t i = 0; i < d[B]; i++) {
        float *zr = z + i * n;
        if (skip != OP_SCALE)
            for (int64_t j = 0; j < n; j++)
                zr[j] = scale * zr[j];
        if (skip != OP_SOFTMAX)
            ckb_op_softmax(zr, n);
        for (int64_t j = 0; j < n; j++)
            out[i * n + j] = ckb_f32_to_bf16(zr[j]);
    }
    free(v);
    free(z);
}

static void gemmbnsm__reference(const int64_t *d, void *const *t)
{
    gemmbnsm__reference_without(d, t, -1);
}

/* The matmul, then per element: bias 1, batch norm 4 (subtract, divide,
 * multiply, add), scale 1, softmax 5 (max, subtract, exp, sum, divide). */
static double gemmbnsm__flops(const int64_t *d)
{
    return 2.0 * d[B] * d[IN] * d[OUT] + 11.0 * d[B] * d[OUT];
}

static double gemmbnsm__bytes(const int64_t *d)
{
    return 2.0 * ((double)d[B] * d[IN] + (double)d[IN] * d[OUT] + 5.0 * d[OUT] + d[SCALE_LEN] +
                  (double)d[B] * d[OUT]);
}

const ckb_workload ckb_wl_43k_Gemm_BatchNorm_Scaling_Softmax = {
    .id = "43k_Gemm_BatchNorm_Scaling_Softmax",
    .model = "KernelBench level 2 #84",
    .op = "84_Gemm_BatchNorm_Scaling_Softmax",
    .tags = "matmul,norm,elementwise,softmax",
    .summary = "out = softmax(scale * batchnorm_running(x @ weight + bias)) per row, bf16 in, "
               "f32 accumulate and f32 math, bf16 out",
    .ndims = 4,
    .scale_dim = "B",
    .dims = {{"B", {128, 2048, 4096}},
             {"IN", {256, 4096, 8192}},
             {"OUT", {512, 4096, 8192}},
             {"SCALE_LEN", {1, 1, 1}}},
    .nconsts = 1,
    .consts = {{"BN_EPS", GEMMBNSM_EPS}},
    .ntensors = 9,
    .tensors = {{"x", CKB_BF16, CKB_IN, 2, {B, IN}},
                {"weight", CKB_BF16, CKB_IN, 2, {IN, OUT}},
                {"bias", CKB_BF16, CKB_IN, 1, {OUT}},
                {"bn_scale", CKB_BF16, CKB_IN, 1, {OUT}},
                {"bn_bias", CKB_BF16, CKB_IN, 1, {OUT}},
                {"bn_mean", CKB_BF16, CKB_IN, 1, {OUT}},
                {"bn_var", CKB_BF16, CKB_IN, 1, {OUT}},
                {"scale", CKB_BF16, CKB_IN, 1, {SCALE_LEN}},
                {"out", CKB_BF16, CKB_OUT, 2, {B, OUT}}},
    .create_inputs = gemmbnsm__create_inputs,
    .baseline = gemmbnsm__baseline,
    .reference = gemmbnsm__reference,
    .flops = gemmbnsm__flops,
    .bytes = gemmbnsm__bytes,
    .nchain = 4,
    .chain = {"bias", "batchnorm", "scale", "softmax"},
    .reference_without = gemmbnsm__reference_without,
};
