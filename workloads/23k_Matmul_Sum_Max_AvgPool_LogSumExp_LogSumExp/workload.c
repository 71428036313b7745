/*
 * 23k_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp — KernelBench level 2 #18
 * (JAXBench benchmark/23k_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp):
 *     s   = sum_j (x @ weight.T + bias)[i, j]        (keepdims: [B, 1])
 *     out = logsumexp(logsumexp(mean(max(s))))       each over axis 1
 * x [B, IN], weight [OUT, IN] (nn.Linear's layout), bias [OUT]; out [B] (the
 * original's [B, 1]). After the sum, axis 1 has one element, so max, mean
 * and both logsumexps are the identity: they are kept, as the original has
 * them, and are not in the chain (README). bf16 in, f32 accumulation and
 * f32 math through the reductions, bf16 out.
 */
#include <math.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/ops.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

enum { B, IN, OUT };
enum { T_X, T_WEIGHT, T_BIAS, T_OUT };
/* The chain after the matmul, in order (workload.h: reference_without). */
enum { OP_BIAS, OP_SUM };

static void mmsum__create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench until upstream cdb2234, which drew the zero weights at
     * random (README):
     * x ~ U[0, 1), weight = bias = 0, so out = 0 for any kernel.
     * Here x ~ U[-s, s) times a per-seed factor (zero mean: each row's sum
     * is its own), weight ~ N(0, 16/(IN*OUT)) so the row sum of x @ weight.T
     * has std ~2.3s at every size, and bias ~ N(m, m) with m = f/OUT, f a
     * per-seed factor in [1, 2): only sum(bias) ~ f reaches the output (an
     * offset of every row), so its mean, not its spread, must carry it. */
    const float sx = ckb_seed_factor(seed, T_X, 0.75f, 1.5f);
    const float mb = ckb_seed_factor(seed, T_BIAS, 1.0f, 2.0f) / (float)d[OUT];
    ckb_fill_uniform_bf16(t[T_X], d[B] * d[IN], seed, T_X, -sx, sx);
    ckb_fill_normal_bf16(t[T_WEIGHT], d[OUT] * d[IN], seed, T_WEIGHT, 0.0f,
                         4.0f / sqrtf((float)d[IN] * (float)d[OUT]));
    ckb_fill_normal_bf16(t[T_BIAS], d[OUT], seed, T_BIAS, mb, mb);
}

/* The reductions after the sum, each over an axis of one element, as the
 * original runs them: max, mean (its AvgPool), logsumexp, logsumexp. */
static float mmsum__tail(float s)
{
    s = ckb_op_max(&s, 1);
    s = ckb_op_mean(&s, 1);
    s = ckb_op_logsumexp(&s, 1);
    return ckb_op_logsumexp(&s, 1);
}

/* One oneDNN matmul (weight read transposed) with the bias, into an f32
 * scratch [B, OUT]; then per row the sum and the size-1 reductions in
 * OpenMP, one rounding to bf16. The f32 intermediate keeps the sum free of
 * OUT bf16 roundings. */
static void mmsum__baseline(const int64_t *d, void *const *t)
{
    const int64_t n = d[OUT];
    float *z = ckb_scratch(0, (size_t)(d[B] * n) * sizeof(float));
    ckb_matmul_spec s = {0};
    s.M = d[B], s.K = d[IN], s.N = n;
    s.a_type = s.b_type = CKB_BF16;
    s.c_type = CKB_F32;
    s.b_transposed = 1;
    s.has_bias = 1;
    s.bias_type = CKB_BF16;
    ckb_dnnl_matmul(&s, t[T_X], t[T_WEIGHT], t[T_BIAS], z);

    ckb_bf16 *out = t[T_OUT];
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < d[B]; i++)
        out[i] = ckb_f32_to_bf16(mmsum__tail(ckb_op_sum(z + i * n, n)));
}

/* Plain loops; op `skip` of the chain left out (-1: none). Leaving out the
 * sum keeps the row's first element, what an [B, 1] output holds when the
 * reduction never ran. */
static void mmsum__reference_without(const int64_t *d, void *const *t, int skip)
{
    const ckb_bf16 *x = t[T_X], *weight = t[T_WEIGHT], *bias = t[T_BIAS];
    ckb_bf16 *out = t[T_OUT];
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < d[B]; i++) {
        float total = 0.0f;
        for (int64_t j = 0; j < d[OUT]; j++) {
            float acc = 0.0f;
            for (int64_t k = 0; k < d[IN]; k++)
                acc += ckb_bf16_to_f32(x[i * d[IN] + k]) * ckb_bf16_to_f32(weight[j * d[IN] + k]);
            if (skip != OP_BIAS)
                acc += ckb_bf16_to_f32(bias[j]);
            if (skip == OP_SUM) {
                total = acc;
                break;
            }
            total += acc;
        }
        out[i] = ckb_f32_to_bf16(mmsum__tail(total));
    }
}

static void mmsum__reference(const int64_t *d, void *const *t)
{
    mmsum__reference_without(d, t, -1);
}

/* The matmul, then the bias and the sum's add per element of the product;
 * the size-1 reductions are a handful of flops per row (counted as 4). */
static double mmsum__flops(const int64_t *d)
{
    return 2.0 * d[B] * d[IN] * d[OUT] + 2.0 * d[B] * d[OUT] + 4.0 * d[B];
}

static double mmsum__bytes(const int64_t *d)
{
    return 2.0 * ((double)d[B] * d[IN] + (double)d[OUT] * d[IN] + d[OUT] + d[B]);
}

const ckb_workload ckb_wl_23k_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp = {
    .id = "23k_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp",
    .model = "KernelBench level 2 #18",
    .op = "18_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp",
    .tags = "matmul,reduction",
    .summary = "out[i] = lse(lse(mean(max(sum_j (x @ weight.T + bias)[i, j])))), the last "
               "four over one element, bf16 in, f32 accumulate and f32 sum, bf16 out",
    .ndims = 3,
    .scale_dim = "B",
    .dims = {{"B", {128, 2048, 4096}}, {"IN", {256, 4096, 8192}}, {"OUT", {512, 4096, 8192}}},
    .ntensors = 4,
    .tensors = {{"x", CKB_BF16, CKB_IN, 2, {B, IN}},
                {"weight", CKB_BF16, CKB_IN, 2, {OUT, IN}},
                {"bias", CKB_BF16, CKB_IN, 1, {OUT}, .order_free = 1},
                /* [B, 1] in the original: the same memory as [B] */
                {"out", CKB_BF16, CKB_OUT, 1, {B}}},
    .create_inputs = mmsum__create_inputs,
    .baseline = mmsum__baseline,
    .reference = mmsum__reference,
    .flops = mmsum__flops,
    .bytes = mmsum__bytes,
    .nchain = 2,
    .chain = {"bias", "sum"},
    .reference_without = mmsum__reference_without,
};
