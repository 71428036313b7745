/*
 * 42k_Gemm_Max_Subtract_GELU — KernelBench level 2 #80 (JAXBench
 * benchmark/42k_Gemm_Max_Subtract_GELU), with max_dim = 0:
 *     z   = x @ weight + bias                         [B, OUT]
 *     m   = max(z, axis=0, keepdims)                   [1, OUT]
 *     out = gelu(m - mean(m, axis=1, keepdims))        [1, OUT]
 * x [B, IN], weight [IN, OUT] (jnp.matmul(x, weight)), gelu the tanh
 * approximation. With the original max_dim = 1, m is [B, 1] and the mean
 * over its one column is m itself, so out = gelu(0) = 0 for any input; the
 * config's max_dim = 0 keeps every op of the code (README). bf16 in, f32
 * accumulation and f32 math through the chain, bf16 out.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/ops.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

enum { B, IN, OUT };
enum { T_X, T_WEIGHT, T_BIAS, T_OUT };
/* The chain after the matmul, in order (workload.h: reference_without).
 * The max is the reduction that shapes the output, not part of it. */
enum { OP_BIAS, OP_SUBTRACT, OP_GELU };

static void gemmmax__create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench: x ~ U[0, 1), weight = bias = 0. Here x ~ U[-s, s) times a
     * per-seed factor and weight ~ N(0, 2^2 * 3/IN), so z has std ~2s and
     * each column's max over the batch sits near 2s * sqrt(2 ln B) with a
     * spread of ~s/1.5 between columns; bias ~ N(0, 1) moves the columns
     * apart further. After the mean is subtracted the gelu sees O(1)
     * values of both signs. */
    const float sx = ckb_seed_factor(seed, T_X, 0.75f, 1.5f);
    ckb_fill_uniform_bf16(t[T_X], d[B] * d[IN], seed, T_X, -sx, sx);
    ckb_fill_normal_bf16(t[T_WEIGHT], d[IN] * d[OUT], seed, T_WEIGHT, 0.0f,
                         2.0f * sqrtf(3.0f / (float)d[IN]));
    ckb_fill_normal_bf16(t[T_BIAS], d[OUT], seed, T_BIAS, 0.0f, 1.0f);
}

/* One oneDNN matmul with the bias as its epilogue into an f32 scratch,
 * then the column max over the batch (each thread a band of columns,
 * reading rows in order so the loop vectorises), the mean of the OUT
 * maxima and the gelu. */
static void gemmmax__baseline(const int64_t *d, void *const *t)
{
    const int64_t n = d[OUT];
    float *z = ckb_scratch(0, (size_t)(d[B] * n) * sizeof *z);
    float *m = ckb_scratch(1, (size_t)n * sizeof *m);
    ckb_matmul_spec s = {0};
    s.M = d[B], s.K = d[IN], s.N = n;
    s.a_type = s.b_type = CKB_BF16;
    s.c_type = CKB_F32;
    s.has_bias = 1;
    s.bias_type = CKB_BF16;
    ckb_dnnl_matmul(&s, t[T_X], t[T_WEIGHT], t[T_BIAS], z);

#pragma omp parallel
    {
        const int nt = omp_get_num_threads(), id = omp_get_thread_num();
        const int64_t j0 = n * id / nt, j1 = n * (id + 1) / nt;
        for (int64_t j = j0; j < j1; j++)
            m[j] = z[j];
        for (int64_t i = 1; i < d[B]; i++) {
            const float *zr = z + i * n;
#pragma omp simd
            for (int64_t j = j0; j < j1; j++)
                m[j] = zr[j] > m[j] ? zr[j] : m[j];
        }
    }
    const float mean = ckb_op_mean(m, n);
    ckb_bf16 *out = t[T_OUT];
    for (int64_t j = 0; j < n; j++)
        out[j] = ckb_f32_to_bf16(ckb_op_gelu_tanh(m[j] - mean));
}

/* Plain loops; op `skip` of the chain left out (-1: none). */
static void gemmmax__reference_without(const int64_t *d, void *const *t, int skip)
{
    const ckb_bf16 *x = t[T_X], *weight = t[T_WEIGHT], *bias = t[T_BIAS];
    ckb_bf16 *out = t[T_OUT];
    const int64_t n = d[OUT];
    float *m = malloc((size_t)n * sizeof *m);
    if (!m)
        abort();
#pragma omp parallel for
    for (int64_t j = 0; j < n; j++) {
        float mx = -INFINITY;
        for (int64_t i = 0; i < d[B]; i++) {
            float acc = 0.0f;
            for (int64_t k = 0; k < d[IN]; k++)
                acc += ckb_bf16_to_f32(x[i * d[IN] + k]) * ckb_bf16_to_f32(weight[k * n + j]);
            if (skip != OP_BIAS)
                acc += ckb_bf16_to_f32(bias[j]);
            mx = fmaxf(mx, acc);
        }
        m[j] = mx;
    }
    const float mean = ckb_op_mean(m, n);
    for (int64_t j = 0; j < n; j++) {
        float v = m[j];
        if (skip != OP_SUBTRACT)
            v -= mean;
        if (skip != OP_GELU)
            v = ckb_op_gelu_tanh(v);
        out[j] = ckb_f32_to_bf16(v);
    }
    free(m);
}

static void gemmmax__reference(const int64_t *d, void *const *t)
{
    gemmmax__reference_without(d, t, -1);
}

/* The matmul, then per element bias 1 and max 1; per column mean 1,
 * subtract 1, gelu(tanh) 8. */
static double gemmmax__flops(const int64_t *d)
{
    return 2.0 * d[B] * d[IN] * d[OUT] + 2.0 * d[B] * d[OUT] + 10.0 * d[OUT];
}

static double gemmmax__bytes(const int64_t *d)
{
    return 2.0 * ((double)d[B] * d[IN] + (double)d[IN] * d[OUT] + 2.0 * d[OUT]);
}

const ckb_workload ckb_wl_42k_Gemm_Max_Subtract_GELU = {
    .id = "42k_Gemm_Max_Subtract_GELU",
    .model = "KernelBench level 2 #80",
    .op = "80_Gemm_Max_Subtract_GELU",
    .tags = "matmul,reduction,elementwise",
    .summary = "m = max over the batch of (x @ weight + bias); out = gelu_tanh(m - mean(m)) "
               "[1, OUT] (max_dim = 0), bf16 in, f32 accumulate and f32 math, bf16 out",
    .ndims = 3,
    .scale_dim = "B",
    .dims = {{"B", {128, 2048, 4096}}, {"IN", {256, 4096, 8192}}, {"OUT", {512, 4096, 8192}}},
    .ntensors = 4,
    .tensors = {{"x", CKB_BF16, CKB_IN, 2, {B, IN}},
                {"weight", CKB_BF16, CKB_IN, 2, {IN, OUT}},
                {"bias", CKB_BF16, CKB_IN, 1, {OUT}},
                /* [1, OUT] in the original (keepdims): the same memory as [OUT] */
                {"out", CKB_BF16, CKB_OUT, 1, {OUT}}},
    .create_inputs = gemmmax__create_inputs,
    .baseline = gemmmax__baseline,
    .reference = gemmmax__reference,
    .flops = gemmmax__flops,
    .bytes = gemmmax__bytes,
    .nchain = 3,
    .chain = {"bias", "subtract", "gelu"},
    .reference_without = gemmmax__reference_without,
};
