/*
 * 42k_Gemm_Max_Subtract_GELU — KernelBench level 2 #80 (JAXBench
 * benchmark/42k_Gemm_Max_Subtract_GELU, as its aa6005e writes it):
 *     z   = x @ weight + bias                          [B, OUT]
 *     m   = max(z, axis=1, keepdims)                   [B, 1]: each row's max
 *     out = gelu(z - m)                                [B, OUT]
 * x [B, IN], weight [IN, OUT] (jnp.matmul(x, weight)), gelu the tanh
 * approximation (jax.nn.gelu's default). bf16 in, f32 accumulation and f32
 * math through the chain, bf16 out.
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
/* The chain after the matmul, in order (workload.h: reference_without).
 * "subtract" is the subtraction of the row max: leaving it out leaves the
 * max unused. */
enum { OP_BIAS, OP_SUBTRACT, OP_GELU };

static void gemmmax__create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* Every output is gelu(t) with t = z - (its row's max) <= 0, and
     * gelu(t) is within 0.01 of 0 for t below about -2.6 (and at t = 0): at
     * JAXBench's scale (x ~ U[0, 1), weight and bias 0.02 N(0, 1)) z has a
     * spread of ~1 and the row max sits ~4 of it above the rest, so ~90%
     * of the outputs are ~0 and a kernel that wrote zeros would pass them.
     * Here each row's max stands 0.8..3 above the row's mean, so t lies
     * mostly in [-3.5, 0], where gelu is visible (-0.17 at t = -0.75) and
     * not flat: with r = sqrt(2 ln OUT) (about the largest of OUT
     * standard normals), row i of x is N(0, 1) times c_i * s (c_i in
     * [0.5, 1.4) per row, s in [0.85, 1.15) per seed), weight ~ N(0,
     * (1.6 / r)^2 / IN) and bias ~ N(0, (0.8 / r)^2). Rows differ in
     * spread, so their maxima and the outputs' range differ from row to
     * row (a max over anything but the row moves them), and the bias moves
     * each column against its row's maximum. README: what leaving out each
     * op does. */
    const float r = sqrtf(2.0f * logf((float)d[OUT]));
    const float sx = ckb_seed_factor(seed, T_X, 0.85f, 1.15f);
    const uint64_t row_key = ckb_hash64(seed ^ 0x726f77ull, T_X);
    ckb_bf16 *x = t[T_X];
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < d[B]; i++) {
        const float c = sx * (0.5f + 0.9f * ckb_uniform(row_key, (uint64_t)i));
        ckb_normal_row_bf16(x + i * d[IN], d[IN], seed, T_X, (uint64_t)(i * d[IN]), c);
    }
    ckb_fill_normal_bf16(t[T_WEIGHT], d[IN] * d[OUT], seed, T_WEIGHT, 0.0f,
                         1.6f / r / sqrtf((float)d[IN]));
    ckb_fill_normal_bf16(t[T_BIAS], d[OUT], seed, T_BIAS, 0.0f, 0.8f / r);
}

/* One oneDNN matmul with the bias as its epilogue into an f32 scratch,
 * then per row (a parallel loop over rows) the max and gelu(z - max),
 * rounded to bf16: the reduction and the elementwise tail XLA fuses. */
static void gemmmax__baseline(const int64_t *d, void *const *t)
{
    const int64_t n = d[OUT];
    float *z = ckb_scratch(0, (size_t)(d[B] * n) * sizeof *z);
    ckb_matmul_spec s = {0};
    s.M = d[B], s.K = d[IN], s.N = n;
    s.a_type = s.b_type = CKB_BF16;
    s.c_type = CKB_F32;
    s.has_bias = 1;
    s.bias_type = CKB_BF16;
    ckb_dnnl_matmul(&s, t[T_X], t[T_WEIGHT], t[T_BIAS], z);

    ckb_bf16 *out = t[T_OUT];
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < d[B]; i++) {
        const float *zr = z + i * n;
        const float m = ckb_op_max(zr, n);
        ckb_bf16 *o = out + i * n;
#pragma omp simd
        for (int64_t j = 0; j < n; j++)
            o[j] = ckb_f32_to_bf16(ckb_op_gelu_tanh(zr[j] - m));
    }
}

/* Plain loops; op `skip` of the chain left out (-1: none). */
static void gemmmax__reference_without(const int64_t *d, void *const *t, int skip)
{
    const ckb_bf16 *x = t[T_X], *weight = t[T_WEIGHT], *bias = t[T_BIAS];
    ckb_bf16 *out = t[T_OUT];
    const int64_t n = d[OUT];
#pragma omp parallel for
    for (int64_t i = 0; i < d[B]; i++) {
        float *z = malloc((size_t)n * sizeof *z);
        if (!z)
            abort();
        float m = -INFINITY;
        for (int64_t j = 0; j < n; j++) {
            float acc = 0.0f;
            for (int64_t k = 0; k < d[IN]; k++)
                acc += ckb_bf16_to_f32(x[i * d[IN] + k]) * ckb_bf16_to_f32(weight[k * n + j]);
            if (skip != OP_BIAS)
                acc += ckb_bf16_to_f32(bias[j]);
            z[j] = acc;
            m = fmaxf(m, acc);
        }
        for (int64_t j = 0; j < n; j++) {
            float v = z[j];
            if (skip != OP_SUBTRACT)
                v -= m;
            if (skip != OP_GELU)
                v = ckb_op_gelu_tanh(v);
            out[i * n + j] = ckb_f32_to_bf16(v);
        }
        free(z);
    }
}

static void gemmmax__reference(const int64_t *d, void *const *t)
{
    gemmmax__reference_without(d, t, -1);
}

/* The matmul, then per element bias 1, max 1, subtract 1, gelu(tanh) 8. */
static double gemmmax__flops(const int64_t *d)
{
    return 2.0 * d[B] * d[IN] * d[OUT] + 11.0 * d[B] * d[OUT];
}

/* x, weight, bias and out once, bf16. */
static double gemmmax__bytes(const int64_t *d)
{
    return 2.0 * ((double)d[B] * d[IN] + (double)d[IN] * d[OUT] + d[OUT] + (double)d[B] * d[OUT]);
}

const ckb_workload ckb_wl_42k_Gemm_Max_Subtract_GELU = {
    .id = "42k_Gemm_Max_Subtract_GELU",
    .model = "KernelBench level 2 #80",
    .op = "80_Gemm_Max_Subtract_GELU",
    .tags = "matmul,reduction,elementwise",
    .summary = "z = x @ weight + bias; out = gelu_tanh(z - max over its row of z) [B, OUT], "
               "bf16 in, f32 accumulate and f32 math, bf16 out",
    .ndims = 3,
    .scale_dim = "B",
    .dims = {{"B", {128, 2048, 4096}}, {"IN", {256, 4096, 8192}}, {"OUT", {512, 4096, 8192}}},
    .ntensors = 4,
    .tensors = {{"x", CKB_BF16, CKB_IN, 2, {B, IN}},
                {"weight", CKB_BF16, CKB_IN, 2, {IN, OUT}},
                {"bias", CKB_BF16, CKB_IN, 1, {OUT}},
                {"out", CKB_BF16, CKB_OUT, 2, {B, OUT}}},
    .create_inputs = gemmmax__create_inputs,
    .baseline = gemmmax__baseline,
    .reference = gemmmax__reference,
    .flops = gemmmax__flops,
    .bytes = gemmmax__bytes,
    /* Every output is gelu(t) with t <= 0, so |out| <= 0.17: the default
     * atol of 1e-2 would let any element be 6% off. Legitimate kernels
     * differ by a bf16 ulp at most (~0.001 at 0.17), inside 1e-3 + 1e-2 *
     * |want| (README). */
    .atol = 1e-3,
    .rtol = 1e-2,
    .nchain = 3,
    .chain = {"bias", "subtract", "gelu"},
    .reference_without = gemmmax__reference_without,
};
