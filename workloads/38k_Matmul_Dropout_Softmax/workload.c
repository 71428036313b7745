/*
 * 38k_Matmul_Dropout_Softmax — KernelBench level 2 #66 (JAXBench
 * benchmark/38k_Matmul_Dropout_Softmax): out = softmax(dropout(x @ weight.T +
 * bias)) over each row, x [B, IN], weight [OUT, IN] as nn.Linear stores it.
 * bf16 in, f32 accumulation and f32 math through the softmax, bf16 out.
 *
 * JAXBench skips the dropout (inference); KernelBench's model runs it in
 * training mode. Here it runs, deterministically, so it can be checked: the
 * int32 pair `seed` keys a counter-based mask,
 *     key  = (uint64_t)(uint32_t)seed[0] << 32 | (uint32_t)seed[1]
 *     keep element (i, j) iff ckb_uniform(key, i * OUT + j) >= DROPOUT_P
 * kept logits are scaled by 1 / (1 - DROPOUT_P), dropped ones become 0.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

/* DROPOUT_P, as a candidate sees it */
#define MMDROP_P 0.2
/* Logit spread in units of sqrt(2 ln OUT); see create_inputs. */
#define MMDROP_SPREAD 1.0f

enum { B, IN, OUT, SEED_WORDS };
enum { T_X, T_WEIGHT, T_BIAS, T_SEED, T_OUT };

static void mmdrop_create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench until upstream 8fa8f3b, which drew the zero weights at
     * random (README):
     * x ~ U[0, 1), weight = bias = 0: every softmax row is the
     * uniform 1/OUT. Here x ~ U[-1, 1) times a per-seed factor, weight ~
     * N(0, 3/IN) and bias ~ N(0, 1) both scaled with sqrt(2 ln OUT), the
     * expected largest of OUT normals: the logits' spread grows with the row
     * so that each row's largest probability stays well above the 1e-2
     * tolerance at every size (see README), and dropping it shows. */
    const float spread = MMDROP_SPREAD * sqrtf(2.0f * logf((float)d[OUT]));
    const float sx = ckb_seed_factor(seed, T_X, 0.85f, 1.15f);
    ckb_fill_uniform_bf16(t[T_X], d[B] * d[IN], seed, T_X, -sx, sx);
    ckb_fill_normal_bf16(t[T_WEIGHT], d[OUT] * d[IN], seed, T_WEIGHT, 0.0f,
                         0.9f * spread * sqrtf(3.0f / (float)d[IN]));
    ckb_fill_normal_bf16(t[T_BIAS], d[OUT], seed, T_BIAS, 0.0f, 0.45f * spread);
    /* Two non-zero words of different parity, so that zeroing or swapping
     * them changes the mask. */
    int32_t *words = t[T_SEED];
    const uint64_t h = ckb_hash64(seed, T_SEED);
    words[0] = (int32_t)((uint32_t)(h >> 32) | 1u);
    words[1] = (int32_t)(((uint32_t)h & ~1u) | 2u);
}

static uint64_t mmdrop_key(const int32_t *seed)
{
    return (uint64_t)(uint32_t)seed[0] << 32 | (uint32_t)seed[1];
}

/* Dropout and softmax of row i of f32 logits z into bf16 out; z is
 * overwritten. */
static void mmdrop_softmax_row(float *z, ckb_bf16 *out, int64_t i, int64_t n, uint64_t key)
{
    const float p = (float)MMDROP_P, scale = 1.0f / (1.0f - (float)MMDROP_P);
    float mx = -INFINITY;
#pragma omp simd reduction(max : mx)
    for (int64_t j = 0; j < n; j++) {
        float v = ckb_uniform(key, (uint64_t)(i * n + j)) >= p ? z[j] * scale : 0.0f;
        z[j] = v;
        mx = v > mx ? v : mx;
    }
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

/* One oneDNN matmul (weight read transposed) with the bias as its epilogue
 * into an f32 intermediate (bf16 logits would move the largest
 * probabilities by up to |z| * 2^-9), then dropout and softmax per row in
 * OpenMP. */
static void mmdrop_baseline(const int64_t *d, void *const *t)
{
    const size_t zsize = ((size_t)(d[B] * d[OUT]) * sizeof(float) + 63) & ~(size_t)63;
    /* Reused between calls, as XLA reuses its temporaries. */
    float *z = ckb_scratch(0, zsize);
    ckb_matmul_spec s = {0};
    s.M = d[B], s.K = d[IN], s.N = d[OUT];
    s.a_type = s.b_type = CKB_BF16;
    s.c_type = CKB_F32;
    s.b_transposed = 1;
    s.has_bias = 1;
    s.bias_type = CKB_BF16;
    ckb_dnnl_matmul(&s, t[T_X], t[T_WEIGHT], t[T_BIAS], z);

    const uint64_t key = mmdrop_key(t[T_SEED]);
    ckb_bf16 *out = t[T_OUT];
    const int64_t n = d[OUT];
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < d[B]; i++)
        mmdrop_softmax_row(z + i * n, out + i * n, i, n, key);
}

static void mmdrop_reference(const int64_t *d, void *const *t)
{
    const ckb_bf16 *x = t[T_X], *weight = t[T_WEIGHT], *bias = t[T_BIAS];
    ckb_bf16 *out = t[T_OUT];
    const uint64_t key = mmdrop_key(t[T_SEED]);
    float *z = malloc((size_t)(d[B] * d[OUT]) * sizeof *z);
    if (!z)
        abort();
#pragma omp parallel for
    for (int64_t i = 0; i < d[B]; i++) {
        float *zr = z + i * d[OUT];
        for (int64_t j = 0; j < d[OUT]; j++) {
            float acc = 0.0f;
            for (int64_t k = 0; k < d[IN]; k++)
                acc += ckb_bf16_to_f32(x[i * d[IN] + k]) * ckb_bf16_to_f32(weight[j * d[IN] + k]);
            acc += ckb_bf16_to_f32(bias[j]);
            int keep = ckb_uniform(key, (uint64_t)(i * d[OUT] + j)) >= (float)MMDROP_P;
            zr[j] = keep ? acc / (1.0f - (float)MMDROP_P) : 0.0f;
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

/* The matmul, then per element: bias 1, dropout 1 (the scale; the mask's
 * hash is not counted), softmax 5 (max, subtract, exp, sum, scale). */
static double mmdrop_flops(const int64_t *d)
{
    return 2.0 * d[B] * d[IN] * d[OUT] + 7.0 * d[B] * d[OUT];
}

static double mmdrop_bytes(const int64_t *d)
{
    return 2.0 * ((double)d[B] * d[IN] + (double)d[OUT] * d[IN] + d[OUT] + (double)d[B] * d[OUT]) +
           4.0 * d[SEED_WORDS];
}

const ckb_workload ckb_wl_38k_Matmul_Dropout_Softmax = {
    .id = "38k_Matmul_Dropout_Softmax",
    .model = "KernelBench level 2 #66",
    .op = "66_Matmul_Dropout_Softmax",
    .tags = "matmul,dropout,softmax",
    .summary = "out = softmax(dropout(x @ weight.T + bias)) per row, the dropout mask from "
               "ckb_uniform keyed by seed, bf16 in, f32 accumulate and f32 math, bf16 out",
    .ndims = 4,
    .scale_dim = "B",
    .dims = {{"B", {128, 2048, 4096}},
             {"IN", {256, 4096, 8192}},
             {"OUT", {512, 4096, 8192}},
             {"SEED_WORDS", {2, 2, 2}}},
    .nconsts = 1,
    .consts = {{"DROPOUT_P", MMDROP_P}},
    .ntensors = 5,
    .tensors = {{"x", CKB_BF16, CKB_IN, 2, {B, IN}},
                {"weight", CKB_BF16, CKB_IN, 2, {OUT, IN}},
                {"bias", CKB_BF16, CKB_IN, 1, {OUT}},
                {"seed", CKB_I32, CKB_IN, 1, {SEED_WORDS}},
                {"out", CKB_BF16, CKB_OUT, 2, {B, OUT}}},
    .create_inputs = mmdrop_create_inputs,
    .baseline = mmdrop_baseline,
    .reference = mmdrop_reference,
    .flops = mmdrop_flops,
    .bytes = mmdrop_bytes,
};
