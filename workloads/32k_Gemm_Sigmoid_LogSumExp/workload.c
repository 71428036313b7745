/*
 * 32k_Gemm_Sigmoid_LogSumExp — KernelBench level 2 #45 (JAXBench
 * benchmark/32k_Gemm_Sigmoid_LogSumExp): two linear layers,
 *     h   = sigmoid(x @ w1.T + b1)        x [B, IN], w1 [HID, IN]
 *     out = logsumexp(h @ w2.T + b2, axis 1)        w2 [OUT, HID], out [B]
 * weights as nn.Linear stores them. bf16 in, f32 accumulation and f32
 * math; h is rounded to bf16 once, as the second bf16 matmul takes it;
 * bf16 out.
 */
#include <math.h>
#include <stdlib.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/ops.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

/* std of the first layer's logits and of the second's, over x's per-seed
 * factor; see create_inputs */
#define GEMMLSE_Z_SPREAD 2.0f
#define GEMMLSE_Y_SPREAD 3.0f

enum { B, IN, HID, OUT };
enum { T_X, T_W1, T_B1, T_W2, T_B2, T_OUT };
/* the chain, in order; reference_without(skip) leaves one out */
enum { OP_B1, OP_SIGMOID, OP_B2, OP_COUNT };

static void gemmlse__create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench until upstream 8fa8f3b, which drew the zero weights at
     * random (README):
     * x ~ U[0, 1), weights and biases 0, so every row is
     * log(OUT) for any kernel. Here x ~ U[-1, 1) times a per-seed factor,
     * w1 ~ N(0, 3/IN) * 2 and b1 ~ N(0, 1): the first logits have std ~2,
     * so h spreads over (0, 1) rather than sitting at 1/2. w2 ~ N(0, 1/HID)
     * * 6 gives the second logits a spread of ~3 (h's mean ~1/2 makes half
     * of it a per-column offset shared by all rows, half its own per row),
     * b2 ~ N(0, 1): the logsumexp is then led by a row's few largest
     * logits, so it varies from row to row well beyond the tolerance
     * rather than settling at log(OUT) + const (see README). */
    const float sx = ckb_seed_factor(seed, T_X, 0.75f, 1.5f);
    ckb_fill_uniform_bf16(t[T_X], d[B] * d[IN], seed, T_X, -sx, sx);
    ckb_fill_normal_bf16(t[T_W1], d[HID] * d[IN], seed, T_W1, 0.0f,
                         GEMMLSE_Z_SPREAD * sqrtf(3.0f / (float)d[IN]));
    ckb_fill_normal_bf16(t[T_B1], d[HID], seed, T_B1, 0.0f, 1.0f);
    ckb_fill_normal_bf16(t[T_W2], d[OUT] * d[HID], seed, T_W2, 0.0f,
                         2.0f * GEMMLSE_Y_SPREAD / sqrtf((float)d[HID]));
    ckb_fill_normal_bf16(t[T_B2], d[OUT], seed, T_B2, 0.0f, 1.0f);
}

/* Two oneDNN matmuls (weights read transposed): the first with b1 and
 * sigmoid as its epilogue into a bf16 scratch h (the second matmul's bf16
 * input), the second with b2 into an f32 scratch; then logsumexp per row
 * in OpenMP. */
static void gemmlse__baseline(const int64_t *d, void *const *t)
{
    ckb_bf16 *h = ckb_scratch(0, (size_t)(d[B] * d[HID]) * sizeof(ckb_bf16));
    float *y = ckb_scratch(1, (size_t)(d[B] * d[OUT]) * sizeof(float));

    ckb_matmul_spec s1 = {0};
    s1.M = d[B], s1.K = d[IN], s1.N = d[HID];
    s1.a_type = s1.b_type = s1.c_type = CKB_BF16;
    s1.b_transposed = 1;
    s1.has_bias = 1;
    s1.bias_type = CKB_BF16;
    s1.neltwise = 1;
    s1.eltwise[0] = (ckb_eltwise){CKB_ACT_LOGISTIC, 0.0f, 0.0f};
    ckb_dnnl_matmul(&s1, t[T_X], t[T_W1], t[T_B1], h);

    ckb_matmul_spec s2 = {0};
    s2.M = d[B], s2.K = d[HID], s2.N = d[OUT];
    s2.a_type = s2.b_type = CKB_BF16;
    s2.c_type = CKB_F32;
    s2.b_transposed = 1;
    s2.has_bias = 1;
    s2.bias_type = CKB_BF16;
    ckb_dnnl_matmul(&s2, h, t[T_W2], t[T_B2], y);

    ckb_bf16 *out = t[T_OUT];
    const int64_t n = d[OUT];
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < d[B]; i++)
        out[i] = ckb_f32_to_bf16(ckb_op_logsumexp(y + i * n, n));
}

static void gemmlse__reference_without(const int64_t *d, void *const *t, int skip)
{
    const ckb_bf16 *x = t[T_X], *w1 = t[T_W1], *b1 = t[T_B1], *w2 = t[T_W2], *b2 = t[T_B2];
    ckb_bf16 *out = t[T_OUT];
    ckb_bf16 *h = malloc((size_t)(d[B] * d[HID]) * sizeof *h);
    float *y = malloc((size_t)(d[B] * d[OUT]) * sizeof *y);
    if (!h || !y)
        abort();
#pragma omp parallel for
    for (int64_t i = 0; i < d[B]; i++) {
        ckb_bf16 *hr = h + i * d[HID];
        for (int64_t j = 0; j < d[HID]; j++) {
            float v = 0.0f;
            for (int64_t k = 0; k < d[IN]; k++)
                v += ckb_bf16_to_f32(x[i * d[IN] + k]) * ckb_bf16_to_f32(w1[j * d[IN] + k]);
            if (skip != OP_B1)
                v += ckb_bf16_to_f32(b1[j]);
            if (skip != OP_SIGMOID)
                v = ckb_op_sigmoid(v);
            hr[j] = ckb_f32_to_bf16(v);
        }
        float *yr = y + i * d[OUT];
        for (int64_t j = 0; j < d[OUT]; j++) {
            float v = 0.0f;
            for (int64_t k = 0; k < d[HID]; k++)
                v += ckb_bf16_to_f32(hr[k]) * ckb_bf16_to_f32(w2[j * d[HID] + k]);
            if (skip != OP_B2)
                v += ckb_bf16_to_f32(b2[j]);
            yr[j] = v;
        }
        out[i] = ckb_f32_to_bf16(ckb_op_logsumexp(yr, d[OUT]));
    }
    free(h);
    free(y);
}

static void gemmlse__reference(const int64_t *d, void *const *t)
{
    gemmlse__reference_without(d, t, -1);
}

/* The two matmuls; per hidden element: bias 1, sigmoid 3; per logit: bias
 * 1, logsumexp 4 (max, subtract, exp, sum). */
static double gemmlse__flops(const int64_t *d)
{
    return 2.0 * d[B] * d[IN] * d[HID] + 2.0 * d[B] * d[HID] * d[OUT] + 4.0 * d[B] * d[HID] +
           5.0 * d[B] * d[OUT];
}

static double gemmlse__bytes(const int64_t *d)
{
    return 2.0 * ((double)d[B] * d[IN] + (double)d[HID] * d[IN] + d[HID] +
                  (double)d[OUT] * d[HID] + d[OUT] + d[B]);
}

const ckb_workload ckb_wl_32k_Gemm_Sigmoid_LogSumExp = {
    .id = "32k_Gemm_Sigmoid_LogSumExp",
    .model = "KernelBench level 2 #45",
    .op = "45_Gemm_Sigmoid_LogSumExp",
    .tags = "matmul,elementwise,reduction",
    .summary = "out = logsumexp(sigmoid(x @ w1.T + b1) @ w2.T + b2) per row, bf16 in, f32 "
               "accumulate and f32 math (h rounded to bf16 between the matmuls), bf16 out",
    .ndims = 4,
    .scale_dim = "B",
    .dims = {{"B", {128, 2048, 16384}},
             {"IN", {256, 2048, 2048}},
             {"HID", {512, 4096, 4096}},
             {"OUT", {128, 1024, 1024}}},
    .ntensors = 6,
    .tensors = {{"x", CKB_BF16, CKB_IN, 2, {B, IN}},
                {"w1", CKB_BF16, CKB_IN, 2, {HID, IN}},
                {"b1", CKB_BF16, CKB_IN, 1, {HID}},
                {"w2", CKB_BF16, CKB_IN, 2, {OUT, HID}},
                {"b2", CKB_BF16, CKB_IN, 1, {OUT}},
                {"out", CKB_BF16, CKB_OUT, 1, {B}}},
    .create_inputs = gemmlse__create_inputs,
    .baseline = gemmlse__baseline,
    .reference = gemmlse__reference,
    .flops = gemmlse__flops,
    .bytes = gemmlse__bytes,
    .nchain = OP_COUNT,
    .chain = {"b1", "sigmoid", "b2"},
    .reference_without = gemmlse__reference_without,
    /* expert.c: MB rows carried through both layers (the f32 FMA path's
     * blocks, shared by all threads, are at least 256 rows), NB hidden columns per
     * layer-1 accumulator block, KC k per accumulation pass (0: all), the
     * matmul unit (the host's fastest, not searched). */
    .nparams = 4,
    .params = {{"MB", CKB_PARAM_HOST_MC, 4, {32, 64, 128, 512}},
               {"NB", CKB_PARAM_HOST_NC, 2, {256, 512}},
               {"KC", CKB_PARAM_HOST_KC, 2, {0, 1024}},
               {"MMA", CKB_PARAM_HOST_UNIT, 1, {CKB_PARAM_HOST_UNIT}}},
};
