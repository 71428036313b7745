/*
 * 24k_Matmul_Scale_ResidualAdd_Clamp_LogSumExp_Mish — KernelBench level 2 #22
 * (JAXBench benchmark/24k_Matmul_Scale_ResidualAdd_Clamp_LogSumExp_Mish):
 *     z   = (x @ weight.T + bias) * SCALE_FACTOR
 *     z   = clamp(z + z, CLAMP_MIN, CLAMP_MAX)
 *     l   = logsumexp(z) over each row                 (keepdims: [B, 1])
 *     out = l * mish(l)
 * x [B, IN], weight [HIDDEN, IN] (nn.Linear's layout), bias [HIDDEN]; out
 * [B] (the original's [B, 1]). bf16 in, f32 accumulation and f32 math
 * through the chain, bf16 out.
 */
#include <math.h>
#include <stdlib.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/ops.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

/* The CONFIG values of the original, as a candidate sees them. */
#define MMLSE_SCALE 2.0
#define MMLSE_CLAMP_MIN -10.0
#define MMLSE_CLAMP_MAX 10.0

enum { B, IN, HIDDEN };
enum { T_X, T_WEIGHT, T_BIAS, T_OUT };
/* The chain after the matmul, in order (workload.h: reference_without). */
enum { OP_BIAS, OP_SCALE, OP_RESIDUAL_ADD, OP_CLAMP, OP_LOGSUMEXP, OP_MISH, OP_MULTIPLY };

static void mmlse__create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench until upstream 8fa8f3b, which drew the zero weights at
     * random (README):
     * x ~ U[0, 1), weight = bias = 0: every row is
     * logsumexp(0) = ln(HIDDEN), the same number for any kernel. Here the
     * logits v = 4 * (x @ weight.T + bias) are centred near the clamp
     * floor: bias ~ N(mu, 0.25) with mu a per-seed factor in [-2.7, -2.5),
     * so about half of each row sits below -10 and the clamp lifts it to
     * -10 (visible: that mass is a part of the sum), and l = logsumexp
     * lands in about [-3, 3], where mish is far from the identity. Each row
     * i of x is N(0, 1) times r_i * s (r_i in [0.3, 1.7) per row, s a
     * per-seed factor) and weight ~ N(0, 0.16/IN): the row's spread, and so
     * its l, differs from row to row. */
    const float sx = ckb_seed_factor(seed, T_X, 0.85f, 1.15f);
    const float mb = ckb_seed_factor(seed, T_BIAS, -2.7f, -2.5f);
    const uint64_t row_key = ckb_hash64(seed ^ 0x726f77ull, T_X);
    ckb_bf16 *x = t[T_X];
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < d[B]; i++) {
        const float r = sx * (0.3f + 1.4f * ckb_uniform(row_key, (uint64_t)i));
        ckb_normal_row_bf16(x + i * d[IN], d[IN], seed, T_X, (uint64_t)(i * d[IN]), r);
    }
    ckb_fill_normal_bf16(t[T_WEIGHT], d[HIDDEN] * d[IN], seed, T_WEIGHT, 0.0f,
                         0.4f / sqrtf((float)d[IN]));
    ckb_fill_normal_bf16(t[T_BIAS], d[HIDDEN], seed, T_BIAS, mb, 0.25f);
}

/* out = l * mish(l) for one row's logsumexp. */
static float mmlse__mish_times(float l) { return l * ckb_op_mish(l); }

/* One oneDNN matmul (weight read transposed) whose epilogue is the
 * elementwise part of the chain, on the f32 accumulator: the bias, the
 * scale (linear, * 2), the residual add z + z (linear, * 2: exact) and the
 * clamp (clip), into an f32 scratch [B, HIDDEN]; then per row the
 * logsumexp and l * mish(l) in OpenMP, one rounding to bf16. */
static void mmlse__baseline(const int64_t *d, void *const *t)
{
    const int64_t n = d[HIDDEN];
    float *z = ckb_scratch(0, (size_t)(d[B] * n) * sizeof(float));
    ckb_matmul_spec s = {0};
    s.M = d[B], s.K = d[IN], s.N = n;
    s.a_type = s.b_type = CKB_BF16;
    s.c_type = CKB_F32;
    s.b_transposed = 1;
    s.has_bias = 1;
    s.bias_type = CKB_BF16;
    s.neltwise = 3;
    s.eltwise[0] = (ckb_eltwise){CKB_ACT_LINEAR, (float)MMLSE_SCALE, 0.0f};
    s.eltwise[1] = (ckb_eltwise){CKB_ACT_LINEAR, 2.0f, 0.0f};
    s.eltwise[2] = (ckb_eltwise){CKB_ACT_CLIP, (float)MMLSE_CLAMP_MIN, (float)MMLSE_CLAMP_MAX};
    ckb_dnnl_matmul(&s, t[T_X], t[T_WEIGHT], t[T_BIAS], z);

    ckb_bf16 *out = t[T_OUT];
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < d[B]; i++)
        out[i] = ckb_f32_to_bf16(mmlse__mish_times(ckb_op_logsumexp(z + i * n, n)));
}

/* Plain loops; op `skip` of the chain left out (-1: none). Leaving out the
 * logsumexp keeps the row's first element, what an [B, 1] output holds
 * when the reduction never ran; leaving out mish makes out = l * l,
 * leaving out the multiply out = mish(l). */
static void mmlse__reference_without(const int64_t *d, void *const *t, int skip)
{
    const ckb_bf16 *x = t[T_X], *weight = t[T_WEIGHT], *bias = t[T_BIAS];
    ckb_bf16 *out = t[T_OUT];
    const int64_t n = d[HIDDEN];
    float *z = malloc((size_t)(d[B] * n) * sizeof *z);
    if (!z)
        abort();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < d[B]; i++) {
        float *row = z + i * n;
        for (int64_t j = 0; j < n; j++) {
            float v = 0.0f;
            for (int64_t k = 0; k < d[IN]; k++)
                v += ckb_bf16_to_f32(x[i * d[IN] + k]) * ckb_bf16_to_f32(weight[j * d[IN] + k]);
            if (skip != OP_BIAS)
                v += ckb_bf16_to_f32(bias[j]);
            if (skip != OP_SCALE)
                v *= (float)MMLSE_SCALE;
            if (skip != OP_RESIDUAL_ADD)
                v = v + v;
            if (skip != OP_CLAMP)
                v = ckb_op_clamp(v, (float)MMLSE_CLAMP_MIN, (float)MMLSE_CLAMP_MAX);
            row[j] = v;
        }
        const float l = skip == OP_LOGSUMEXP ? row[0] : ckb_op_logsumexp(row, n);
        const float m = skip == OP_MISH ? l : ckb_op_mish(l);
        out[i] = ckb_f32_to_bf16(skip == OP_MULTIPLY ? m : l * m);
    }
    free(z);
}

static void mmlse__reference(const int64_t *d, void *const *t)
{
    mmlse__reference_without(d, t, -1);
}

/* The matmul; per element of the product bias, scale, add, clamp (2) and
 * the logsumexp (max, subtract, exp, add: 4); per row mish and the
 * multiply (a handful, counted as 6). */
static double mmlse__flops(const int64_t *d)
{
    return 2.0 * d[B] * d[IN] * d[HIDDEN] + 9.0 * d[B] * d[HIDDEN] + 6.0 * d[B];
}

static double mmlse__bytes(const int64_t *d)
{
    return 2.0 * ((double)d[B] * d[IN] + (double)d[HIDDEN] * d[IN] + d[HIDDEN] + d[B]);
}

const ckb_workload ckb_wl_24k_Matmul_Scale_ResidualAdd_Clamp_LogSumExp_Mish = {
    .id = "24k_Matmul_Scale_ResidualAdd_Clamp_LogSumExp_Mish",
    .model = "KernelBench level 2 #22",
    .op = "22_Matmul_Scale_ResidualAdd_Clamp_LogSumExp_Mish",
    .tags = "matmul,elementwise,reduction",
    .summary = "z = clamp(2 * 2 * (x @ weight.T + bias), -10, 10), l = logsumexp(z) per row, "
               "out = l * mish(l), bf16 in, f32 accumulate and f32 math, bf16 out",
    .ndims = 3,
    .scale_dim = "B",
    .dims = {{"B", {128, 2048, 4096}},
             {"IN", {256, 6144, 8192}},
             {"HIDDEN", {1024, 4096, 8192}}},
    .nconsts = 3,
    .consts = {{"SCALE_FACTOR", MMLSE_SCALE},
               {"CLAMP_MIN", MMLSE_CLAMP_MIN},
               {"CLAMP_MAX", MMLSE_CLAMP_MAX}},
    .ntensors = 4,
    .tensors = {{"x", CKB_BF16, CKB_IN, 2, {B, IN}},
                {"weight", CKB_BF16, CKB_IN, 2, {HIDDEN, IN}},
                {"bias", CKB_BF16, CKB_IN, 1, {HIDDEN}},
                /* [B, 1] in the original: the same memory as [B] */
                {"out", CKB_BF16, CKB_OUT, 1, {B}}},
    .create_inputs = mmlse__create_inputs,
    .baseline = mmlse__baseline,
    .reference = mmlse__reference,
    .flops = mmlse__flops,
    .bytes = mmlse__bytes,
    .nchain = 7,
    .chain = {"bias", "scale", "residual_add", "clamp", "logsumexp", "mish", "multiply"},
    .reference_without = mmlse__reference_without,
};
