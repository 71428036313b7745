/*
 * 49k_Matmul_AvgPool_GELU_Scale_Max — KernelBench level 2 #98 (JAXBench
 * benchmark/49k_Matmul_AvgPool_GELU_Scale_Max):
 *     z      = x @ weight + bias                                [B, OUT]
 *     p      = avgpool1d(z, POOL_KERNEL_SIZE) over each row     [B, OUT / K]
 *     out[i] = max_j (gelu(p[i, j]) * SCALE_FACTOR)             [B]
 * x [B, IN], weight [IN, OUT] (jnp.matmul(x, weight)), the pool with
 * stride K and no padding, gelu the tanh approximation. bf16 in, f32
 * accumulation and f32 math through the chain, bf16 out.
 */
#include <math.h>
#include <stdlib.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/ops.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

/* CONFIG's scale_factor (SCALE_FACTOR). */
#define MMPOOL_SCALE 2.0

enum { B, IN, OUT, POOL_KERNEL_SIZE };
enum { T_X, T_WEIGHT, T_BIAS, T_OUT };
/* The chain after the matmul, in order (workload.h: reference_without).
 * The max is the reduction that shapes the output, not part of it. */
enum { OP_BIAS, OP_AVGPOOL, OP_GELU, OP_SCALE };

static void mmpool__create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench until upstream cdb2234, which drew the zero weights at
     * random (README):
     * x ~ U[0, 1), weight = bias = 0, so the answer is 0. Here
     * x ~ U[-s, s) times a per-seed factor, weight ~ N(0, 2^2 * 3/IN) and
     * bias ~ N(0, 1): z has std ~2.2 and the pooled values (independent
     * columns averaged 16 at a time) ~0.56, so each row's largest pooled
     * value is ~1.5, where gelu is still ~10% below the identity; without
     * the pool the max would be over z itself, several times larger. */
    const float sx = ckb_seed_factor(seed, T_X, 0.75f, 1.5f);
    ckb_fill_uniform_bf16(t[T_X], d[B] * d[IN], seed, T_X, -sx, sx);
    ckb_fill_normal_bf16(t[T_WEIGHT], d[IN] * d[OUT], seed, T_WEIGHT, 0.0f,
                         2.0f * sqrtf(3.0f / (float)d[IN]));
    ckb_fill_normal_bf16(t[T_BIAS], d[OUT], seed, T_BIAS, 0.0f, 1.0f);
}

/* One oneDNN matmul with the bias as its epilogue into an f32 scratch, the
 * pool over it (ckb_op_avgpool1d), then per row in OpenMP the gelu, the
 * scale and the max, with one rounding to bf16. */
static void mmpool__baseline(const int64_t *d, void *const *t)
{
    const int64_t n = d[OUT], k = d[POOL_KERNEL_SIZE], np = n / k;
    float *z = ckb_scratch(0, (size_t)(d[B] * n) * sizeof *z);
    float *p = ckb_scratch(1, (size_t)(d[B] * np) * sizeof *p);
    ckb_matmul_spec s = {0};
    s.M = d[B], s.K = d[IN], s.N = n;
    s.a_type = s.b_type = CKB_BF16;
    s.c_type = CKB_F32;
    s.has_bias = 1;
    s.bias_type = CKB_BF16;
    ckb_dnnl_matmul(&s, t[T_X], t[T_WEIGHT], t[T_BIAS], z);

    ckb_op_avgpool1d(z, p, d[B], n, k);

    ckb_bf16 *out = t[T_OUT];
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < d[B]; i++) {
        float *pr = p + i * np;
        for (int64_t j = 0; j < np; j++)
            pr[j] = ckb_op_gelu_tanh(pr[j]) * (float)MMPOOL_SCALE;
        out[i] = ckb_f32_to_bf16(ckb_op_max(pr, np));
    }
}

/* Plain loops; op `skip` of the chain left out (-1: none). Without the
 * pool, the gelu, scale and max run over z itself. */
static void mmpool__reference_without(const int64_t *d, void *const *t, int skip)
{
    const ckb_bf16 *x = t[T_X], *weight = t[T_WEIGHT], *bias = t[T_BIAS];
    ckb_bf16 *out = t[T_OUT];
    const int64_t n = d[OUT], k = d[POOL_KERNEL_SIZE];
    const int64_t np = skip == OP_AVGPOOL ? n : n / k;
    float *z = malloc((size_t)(d[B] * n) * sizeof *z);
    float *p = malloc((size_t)(d[B] * np) * sizeof *p);
    if (!z || !p)
        abort();
#pragma omp parallel for
    for (int64_t i = 0; i < d[B]; i++) {
        float *zr = z + i * n;
        for (int64_t j = 0; j < n; j++)
            zr[j] = 0.0f;
        for (int64_t q = 0; q < d[IN]; q++) {
            const float a = ckb_bf16_to_f32(x[i * d[IN] + q]);
            for (int64_t j = 0; j < n; j++)
                zr[j] += a * ckb_bf16_to_f32(weight[q * n + j]);
        }
        if (skip != OP_BIAS)
            for (int64_t j = 0; j < n; j++)
                zr[j] += ckb_bf16_to_f32(bias[j]);
    }
    if (skip != OP_AVGPOOL)
        ckb_op_avgpool1d(z, p, d[B], n, k);
    else
        for (int64_t i = 0; i < d[B] * n; i++)
            p[i] = z[i];
    for (int64_t i = 0; i < d[B]; i++) {
        float *pr = p + i * np;
        for (int64_t j = 0; j < np; j++) {
            if (skip != OP_GELU)
                pr[j] = ckb_op_gelu_tanh(pr[j]);
            if (skip != OP_SCALE)
                pr[j] = pr[j] * (float)MMPOOL_SCALE;
        }
        out[i] = ckb_f32_to_bf16(ckb_op_max(pr, np));
    }
    free(p);
    free(z);
}

static void mmpool__reference(const int64_t *d, void *const *t)
{
    mmpool__reference_without(d, t, -1);
}

/* The matmul, then per element bias 1 and pool sum 1; per pooled value
 * divide 1, gelu(tanh) 8, scale 1, max 1. */
static double mmpool__flops(const int64_t *d)
{
    return 2.0 * d[B] * d[IN] * d[OUT] + 2.0 * d[B] * d[OUT] +
           11.0 * d[B] * (double)(d[OUT] / d[POOL_KERNEL_SIZE]);
}

static double mmpool__bytes(const int64_t *d)
{
    return 2.0 * ((double)d[B] * d[IN] + (double)d[IN] * d[OUT] + d[OUT] + d[B]);
}

const ckb_workload ckb_wl_49k_Matmul_AvgPool_GELU_Scale_Max = {
    .id = "49k_Matmul_AvgPool_GELU_Scale_Max",
    .model = "KernelBench level 2 #98",
    .op = "98_Matmul_AvgPool_GELU_Scale_Max",
    .tags = "matmul,pool,elementwise,reduction",
    .summary = "out[i] = max_j 2 * gelu_tanh(avgpool16(x @ weight + bias)[i, j]), bf16 in, f32 "
               "accumulate and f32 math, bf16 out",
    .ndims = 4,
    .scale_dim = "B",
    .dims = {{"B", {128, 2048, 4096}},
             {"IN", {256, 4096, 8192}},
             {"OUT", {512, 4096, 8192}},
             {"POOL_KERNEL_SIZE", {16, 16, 16}}},
    .nconsts = 1,
    .consts = {{"SCALE_FACTOR", MMPOOL_SCALE}},
    .ntensors = 4,
    .tensors = {{"x", CKB_BF16, CKB_IN, 2, {B, IN}},
                {"weight", CKB_BF16, CKB_IN, 2, {IN, OUT}},
                {"bias", CKB_BF16, CKB_IN, 1, {OUT}},
                {"out", CKB_BF16, CKB_OUT, 1, {B}}},
    .create_inputs = mmpool__create_inputs,
    .baseline = mmpool__baseline,
    .reference = mmpool__reference,
    .flops = mmpool__flops,
    .bytes = mmpool__bytes,
    .nchain = 4,
    .chain = {"bias", "avgpool", "gelu", "scale"},
    .reference_without = mmpool__reference_without,
};
