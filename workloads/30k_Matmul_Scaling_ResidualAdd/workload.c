/*
 * 30k_Matmul_Scaling_ResidualAdd — KernelBench level 2 #40 (JAXBench
 * benchmark/30k_Matmul_Scaling_ResidualAdd):
 *     z = x @ weight + bias;  out = z * SCALING_FACTOR + z
 * x [B, IN], weight [IN, OUT] (jnp.matmul(x, weight), as JAXBench stores
 * it), bf16 in, f32 accumulation and epilogue, bf16 out.
 */
#include <math.h>
#include <stdlib.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/reference.h"
#include "workloads/workload.h"

/* The CONFIG value of the original, as a candidate sees it. */
#define MMRES_SCALING 0.5

enum { B, IN, OUT };
enum { T_X, T_WEIGHT, T_BIAS, T_OUT };
/* The chain after the matmul, in order (workload.h: reference_without). */
enum { OP_BIAS, OP_SCALING, OP_RESIDUAL_ADD };

static void mmres__create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench until upstream cdb2234, which drew the zero weights at
     * random (README):
     * x ~ U[0, 1), weight = bias = 0, so out = 0 for any kernel.
     * Here x ~ U[-s, s) times a per-seed factor, weight ~ N(0, 3/IN) so x @
     * weight is O(1) with zero mean, bias ~ N(0, 0.5). */
    const float sx = ckb_seed_factor(seed, T_X, 0.75f, 1.5f);
    ckb_fill_uniform_bf16(t[T_X], d[B] * d[IN], seed, T_X, -sx, sx);
    ckb_fill_normal_bf16(t[T_WEIGHT], d[IN] * d[OUT], seed, T_WEIGHT, 0.0f,
                         sqrtf(3.0f / (float)d[IN]));
    ckb_fill_normal_bf16(t[T_BIAS], d[OUT], seed, T_BIAS, 0.0f, 0.5f);
}

/* One oneDNN matmul with the bias and the rest as one linear post-op on the
 * f32 accumulator: z * 0.5 + z is 1.5 * z, bit for bit in f32 (z * 0.5 is
 * exact, so both round the same real number once). */
static void mmres__baseline(const int64_t *d, void *const *t)
{
    ckb_matmul_spec s = {0};
    s.M = d[B], s.K = d[IN], s.N = d[OUT];
    s.a_type = s.b_type = s.c_type = CKB_BF16;
    s.has_bias = 1;
    s.bias_type = CKB_BF16;
    s.neltwise = 1;
    s.eltwise[0] = (ckb_eltwise){CKB_ACT_LINEAR, (float)(MMRES_SCALING + 1.0), 0.0f};
    ckb_dnnl_matmul(&s, t[T_X], t[T_WEIGHT], t[T_BIAS], t[T_OUT]);
}

/* Plain loops; op `skip` of the chain left out (-1: none). */
static void mmres__reference_without(const int64_t *d, void *const *t, int skip)
{
    const ckb_bf16 *x = t[T_X], *weight = t[T_WEIGHT], *bias = t[T_BIAS];
    ckb_bf16 *out = t[T_OUT];
    const int64_t n = d[OUT];
    float *z = ckb_ref_matmul(x, weight, d[B], d[IN], n, 0);
#pragma omp parallel for
    for (int64_t i = 0; i < d[B]; i++) {
        const float *acc = z + i * n;
        for (int64_t j = 0; j < n; j++) {
            float z = acc[j];
            if (skip != OP_BIAS)
                z += ckb_bf16_to_f32(bias[j]);
            const float original = z;
            if (skip != OP_SCALING)
                z *= (float)MMRES_SCALING;
            if (skip != OP_RESIDUAL_ADD)
                z += original;
            out[i * n + j] = ckb_f32_to_bf16(z);
        }
    }
    free(z);
}

static void mmres__reference(const int64_t *d, void *const *t)
{
    mmres__reference_without(d, t, -1);
}

/* The matmul, then bias, scale and add per output element. */
static double mmres__flops(const int64_t *d)
{
    return 2.0 * d[B] * d[IN] * d[OUT] + 3.0 * d[B] * d[OUT];
}

static double mmres__bytes(const int64_t *d)
{
    return 2.0 * ((double)d[B] * d[IN] + (double)d[IN] * d[OUT] + d[OUT] + (double)d[B] * d[OUT]);
}

const ckb_workload ckb_wl_30k_Matmul_Scaling_ResidualAdd = {
    .id = "30k_Matmul_Scaling_ResidualAdd",
    .model = "KernelBench level 2 #40",
    .op = "40_Matmul_Scaling_ResidualAdd",
    .tags = "matmul,elementwise",
    .summary = "z = x @ weight + bias, out = z * 0.5 + z, bf16 in, f32 accumulate and "
               "epilogue, bf16 out",
    .ndims = 3,
    .scale_dim = "B",
    .dims = {{"B", {512, 8192, 16384}}, {"IN", {256, 2048, 4096}}, {"OUT", {256, 2048, 4096}}},
    .nconsts = 1,
    .consts = {{"SCALING_FACTOR", MMRES_SCALING}},
    .ntensors = 4,
    .tensors = {{"x", CKB_BF16, CKB_IN, 2, {B, IN}},
                {"weight", CKB_BF16, CKB_IN, 2, {IN, OUT}},
                {"bias", CKB_BF16, CKB_IN, 1, {OUT}},
                {"out", CKB_BF16, CKB_OUT, 2, {B, OUT}}},
    .create_inputs = mmres__create_inputs,
    .baseline = mmres__baseline,
    .reference = mmres__reference,
    .flops = mmres__flops,
    .bytes = mmres__bytes,
    .nchain = 3,
    .chain = {"bias", "scaling", "residual_add"},
    .reference_without = mmres__reference_without,
};
