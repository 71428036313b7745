/*
 * 21k_Gemm_Divide_Sum_Scaling — KernelBench level 2 #14 (JAXBench
 * benchmark/21k_Gemm_Divide_Sum_Scaling):
 *     out[i] = SCALING_FACTOR * sum_j ((x @ weight.T)[i, j] / 2)
 * x [B, IN], weight [HIDDEN, IN] (nn.Linear's layout, x @ weight.T), no
 * bias; out [B] (the original's [B, 1]). bf16 in, f32 accumulation and f32
 * math through the sum, bf16 out.
 */
#include <math.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/ops.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

/* The CONFIG value of the original, as a candidate sees it. */
#define GEMMSUM_SCALING 1.5
/* The original's literal divisor (x / 2.0). */
#define GEMMSUM_DIVISOR 2.0f

enum { B, IN, HIDDEN };
enum { T_X, T_WEIGHT, T_OUT };
/* The chain after the matmul, in order (workload.h: reference_without). */
enum { OP_DIVIDE, OP_SUM, OP_SCALING };

static void gemmsum__create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench: x ~ U[0, 1), weight ~ N(0, 1) (this one is not zero). Here
     * x ~ U[-s, s) times a per-seed factor (zero mean: each row's sum is its
     * own, not a shared offset) and weight ~ N(0, 16/(IN*HIDDEN)): the row
     * sum of x @ weight.T has std ~2.3s, so the outputs are O(1) at every
     * size while each product is small (~4/sqrt(HIDDEN)). */
    const float sx = ckb_seed_factor(seed, T_X, 0.75f, 1.5f);
    ckb_fill_uniform_bf16(t[T_X], d[B] * d[IN], seed, T_X, -sx, sx);
    ckb_fill_normal_bf16(t[T_WEIGHT], d[HIDDEN] * d[IN], seed, T_WEIGHT, 0.0f,
                         4.0f / sqrtf((float)d[IN] * (float)d[HIDDEN]));
}

/* One oneDNN matmul (weight read transposed) with the divide as its linear
 * post-op (v * 0.5, exact), into an f32 scratch [B, HIDDEN]; then the row
 * sums and the scaling in OpenMP, one rounding to bf16. The f32
 * intermediate keeps the sum free of HIDDEN bf16 roundings. */
static void gemmsum__baseline(const int64_t *d, void *const *t)
{
    const int64_t n = d[HIDDEN];
    float *z = ckb_scratch(0, (size_t)(d[B] * n) * sizeof(float));
    ckb_matmul_spec s = {0};
    s.M = d[B], s.K = d[IN], s.N = n;
    s.a_type = s.b_type = CKB_BF16;
    s.c_type = CKB_F32;
    s.b_transposed = 1;
    s.neltwise = 1;
    s.eltwise[0] = (ckb_eltwise){CKB_ACT_LINEAR, 1.0f / GEMMSUM_DIVISOR, 0.0f};
    ckb_dnnl_matmul(&s, t[T_X], t[T_WEIGHT], NULL, z);

    ckb_bf16 *out = t[T_OUT];
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < d[B]; i++)
        out[i] = ckb_f32_to_bf16(ckb_op_sum(z + i * n, n) * (float)GEMMSUM_SCALING);
}

/* Plain loops; op `skip` of the chain left out (-1: none). Leaving out the
 * sum keeps the row's first element, what an [B, 1] output holds when the
 * reduction never ran. */
static void gemmsum__reference_without(const int64_t *d, void *const *t, int skip)
{
    const ckb_bf16 *x = t[T_X], *weight = t[T_WEIGHT];
    ckb_bf16 *out = t[T_OUT];
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < d[B]; i++) {
        float total = 0.0f;
        for (int64_t j = 0; j < d[HIDDEN]; j++) {
            float acc = 0.0f;
            for (int64_t k = 0; k < d[IN]; k++)
                acc += ckb_bf16_to_f32(x[i * d[IN] + k]) * ckb_bf16_to_f32(weight[j * d[IN] + k]);
            if (skip != OP_DIVIDE)
                acc /= GEMMSUM_DIVISOR;
            if (skip == OP_SUM) {
                total = acc;
                break;
            }
            total += acc;
        }
        if (skip != OP_SCALING)
            total *= (float)GEMMSUM_SCALING;
        out[i] = ckb_f32_to_bf16(total);
    }
}

static void gemmsum__reference(const int64_t *d, void *const *t)
{
    gemmsum__reference_without(d, t, -1);
}

/* The matmul, then the divide and the sum's add per element of x @ weight.T,
 * and one scaling per row. */
static double gemmsum__flops(const int64_t *d)
{
    return 2.0 * d[B] * d[IN] * d[HIDDEN] + 2.0 * d[B] * d[HIDDEN] + d[B];
}

static double gemmsum__bytes(const int64_t *d)
{
    return 2.0 * ((double)d[B] * d[IN] + (double)d[HIDDEN] * d[IN] + d[B]);
}

const ckb_workload ckb_wl_21k_Gemm_Divide_Sum_Scaling = {
    .id = "21k_Gemm_Divide_Sum_Scaling",
    .model = "KernelBench level 2 #14",
    .op = "14_Gemm_Divide_Sum_Scaling",
    .tags = "matmul,elementwise,reduction",
    .summary = "out[i] = 1.5 * sum_j ((x @ weight.T)[i, j] / 2), bf16 in, f32 accumulate and "
               "f32 sum, bf16 out",
    .ndims = 3,
    .scale_dim = "B",
    .dims = {{"B", {128, 2048, 4096}},
             {"IN", {256, 4096, 8192}},
             {"HIDDEN", {512, 4096, 8192}}},
    .nconsts = 1,
    .consts = {{"SCALING_FACTOR", GEMMSUM_SCALING}},
    .ntensors = 3,
    .tensors = {{"x", CKB_BF16, CKB_IN, 2, {B, IN}},
                {"weight", CKB_BF16, CKB_IN, 2, {HIDDEN, IN}},
                /* [B, 1] in the original: the same memory as [B] */
                {"out", CKB_BF16, CKB_OUT, 1, {B}}},
    .create_inputs = gemmsum__create_inputs,
    .baseline = gemmsum__baseline,
    .reference = gemmsum__reference,
    .flops = gemmsum__flops,
    .bytes = gemmsum__bytes,
    .nchain = 3,
    .chain = {"divide", "sum", "scaling"},
    .reference_without = gemmsum__reference_without,
};
