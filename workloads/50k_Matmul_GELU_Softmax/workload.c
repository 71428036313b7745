/*
 * 50k_Matmul_GELU_Softmax — KernelBench level 2 #99 (JAXBench
 * benchmark/50k_Matmul_GELU_Softmax): out = softmax(gelu(x @ weight + bias))
 * over each row, x [B, IN], weight [IN, OUT], gelu the tanh approximation
 * (jax.nn.gelu's default). bf16 in, f32 accumulation and f32 math through
 * the softmax, bf16 out.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

/* Logit spread in units of sqrt(2 ln OUT); see create_inputs. */
#define MMGELU_SPREAD 1.2f

enum { B, IN, OUT };
enum { T_X, T_WEIGHT, T_BIAS, T_OUT };

static void mmgelu_create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench until upstream 8fa8f3b, which drew the zero weights at
     * random (README):
     * x ~ U[0, 1), weight = bias = 0: every softmax row is the
     * uniform 1/OUT, which an all-constant output matches. Here x ~ U[-1, 1)
     * times a per-seed factor, weight ~ N(0, 3/IN) and bias ~ N(0, 1) both
     * scaled with sqrt(2 ln OUT), the expected largest of OUT normals: the
     * pre-gelu logits' spread grows with the row so that each row's largest
     * probability stays well above the 1e-2 tolerance at every size (see
     * README), and gelu's flat negative side carries much of the mass. */
    const float spread = MMGELU_SPREAD * sqrtf(2.0f * logf((float)d[OUT]));
    const float sx = ckb_seed_factor(seed, T_X, 0.85f, 1.15f);
    ckb_fill_uniform_bf16(t[T_X], d[B] * d[IN], seed, T_X, -sx, sx);
    ckb_fill_normal_bf16(t[T_WEIGHT], d[IN] * d[OUT], seed, T_WEIGHT, 0.0f,
                         0.9f * spread * sqrtf(3.0f / (float)d[IN]));
    ckb_fill_normal_bf16(t[T_BIAS], d[OUT], seed, T_BIAS, 0.0f, 0.45f * spread);
}

/* Softmax of one row of f32 logits z into bf16 out; z is overwritten. */
static void mmgelu_softmax_row(float *z, ckb_bf16 *out, int64_t n)
{
    float mx = -INFINITY;
#pragma omp simd reduction(max : mx)
    for (int64_t j = 0; j < n; j++)
        mx = z[j] > mx ? z[j] : mx;
    float sum = 0.0f;
    for (int64_t j = 0; j < n; j++) {
        z[j] = expf(z[j] - mx);
        sum += z[j];
    }
    const float inv = 1.0f / sum;
#pragma omp simd
    for (int64_t j = 0; j < n; j++)
        out[j] = ckb_f32_to_bf16(z[j] * inv);
}

/* One oneDNN matmul with bias and gelu(tanh) as its epilogue into an f32
 * intermediate (bf16 logits would move the largest probabilities by up to
 * |z| * 2^-9, a few percent at |z| ~ 10), then the row softmax in OpenMP. */
static void mmgelu_baseline(const int64_t *d, void *const *t)
{
    const size_t zsize = ((size_t)(d[B] * d[OUT]) * sizeof(float) + 63) & ~(size_t)63;
    /* Reused between calls, as XLA reuses its temporaries. */
    float *z = ckb_scratch(0, zsize);
    ckb_matmul_spec s = {0};
    s.M = d[B], s.K = d[IN], s.N = d[OUT];
    s.a_type = s.b_type = CKB_BF16;
    s.c_type = CKB_F32;
    s.has_bias = 1;
    s.bias_type = CKB_BF16;
    s.neltwise = 1;
    s.eltwise[0] = (ckb_eltwise){CKB_ACT_GELU_TANH, 0.0f, 0.0f};
    ckb_dnnl_matmul(&s, t[T_X], t[T_WEIGHT], t[T_BIAS], z);

    ckb_bf16 *out = t[T_OUT];
    const int64_t n = d[OUT];
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < d[B]; i++)
        mmgelu_softmax_row(z + i * n, out + i * n, n);
}

static float mmgelu_gelu_tanh(float v)
{
    const float c = 0.7978845608028654f; /* sqrt(2 / pi) */
    return 0.5f * v * (1.0f + tanhf(c * (v + 0.044715f * v * v * v)));
}

static void mmgelu_reference(const int64_t *d, void *const *t)
{
    const ckb_bf16 *x = t[T_X], *weight = t[T_WEIGHT], *bias = t[T_BIAS];
    ckb_bf16 *out = t[T_OUT];
    float *z = malloc((size_t)(d[B] * d[OUT]) * sizeof *z);
    if (!z)
        abort();
#pragma omp parallel for
    for (int64_t i = 0; i < d[B]; i++) {
        float *zr = z + i * d[OUT];
        for (int64_t j = 0; j < d[OUT]; j++) {
            float acc = 0.0f;
            for (int64_t k = 0; k < d[IN]; k++)
                acc += ckb_bf16_to_f32(x[i * d[IN] + k]) * ckb_bf16_to_f32(weight[k * d[OUT] + j]);
            zr[j] = mmgelu_gelu_tanh(acc + ckb_bf16_to_f32(bias[j]));
        }
        float mx = zr[0], sum = 0.0f;
        for (int64_t j = 1; j < d[OUT]; j++)
            mx = fmaxf(mx, zr[j]);
        for (int64_t j = 0; j < d[OUT]; j++)
            sum += expf(zr[j] - mx);
        for (int64_t j = 0; j < d[OUT]; j++)
            out[i * d[OUT] + j] = ckb_f32_to_bf16(expf(zr[j] - mx) / sum);
    }
    free(z);
}

/* The matmul, then per element: bias 1, gelu(tanh) 8, softmax 5 (max,
 * subtract, exp, sum, scale). */
static double mmgelu_flops(const int64_t *d)
{
    return 2.0 * d[B] * d[IN] * d[OUT] + 14.0 * d[B] * d[OUT];
}

static double mmgelu_bytes(const int64_t *d)
{
    return 2.0 * ((double)d[B] * d[IN] + (double)d[IN] * d[OUT] + d[OUT] + (double)d[B] * d[OUT]);
}

const ckb_workload ckb_wl_50k_Matmul_GELU_Softmax = {
    .id = "50k_Matmul_GELU_Softmax",
    .model = "KernelBench level 2 #99",
    .op = "99_Matmul_GELU_Softmax",
    .tags = "matmul,elementwise,softmax",
    .summary = "out = softmax(gelu_tanh(x @ weight + bias)) per row, bf16 in, f32 accumulate "
               "and f32 math, bf16 out",
    .ndims = 3,
    .scale_dim = "B",
    .dims = {{"B", {128, 2048, 4096}}, {"IN", {256, 4096, 8192}}, {"OUT", {512, 4096, 8192}}},
    .ntensors = 4,
    .tensors = {{"x", CKB_BF16, CKB_IN, 2, {B, IN}},
                {"weight", CKB_BF16, CKB_IN, 2, {IN, OUT}},
                {"bias", CKB_BF16, CKB_IN, 1, {OUT}},
                {"out", CKB_BF16, CKB_OUT, 2, {B, OUT}}},
    .create_inputs = mmgelu_create_inputs,
    .baseline = mmgelu_baseline,
    .reference = mmgelu_reference,
    .flops = mmgelu_flops,
    .bytes = mmgelu_bytes,
    /* expert.c: MC rows per block (the f32 logit buffer is MC x OUT per group);
     * TN 0: all threads share a block, 1: rows split, no barrier. The grid
     * keeps the values that won for the same micro-kernel in 8p and 41k
     * (MR 6, NC 64) and their neighbours, with NC 1024: the kit's 6 x 64
     * f32 tile, untuned, ran 0.94 of NC 256's time (its weight rows are
     * read in longer runs); 36 configurations, not 54. The matmul unit is
     * the host's fastest (not searched). */
    .nparams = 5,
    .params = {{"MR", CKB_PARAM_HOST_MR, 2, {5, 6}},
               {"MC", CKB_PARAM_HOST_MC, 3, {384, 768, 1536}},
               {"NC", CKB_PARAM_HOST_NC, 3, {64, 256, 1024}, .multiple = 64},
               {"TN", 0, 2, {0, 1}},
               {"MMA", CKB_PARAM_HOST_UNIT, 1, {CKB_PARAM_HOST_UNIT}}},
};
