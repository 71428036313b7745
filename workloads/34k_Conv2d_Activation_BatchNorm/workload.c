/*
 * 34k_Conv2d_Activation_BatchNorm — KernelBench level 2 #52 (JAXBench
 * benchmark/34k_Conv2d_Activation_BatchNorm): y = mish(conv2d(x,
 * conv_weight) + conv_bias), then BatchNorm2d in training mode (the mean
 * and biased variance of this batch per channel, over N, OH and OW) with
 * bn_weight and bn_bias; NCHW, VALID padding, stride 1. bf16 in, f32
 * accumulation and f32 math through the chain, bf16 out.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/ops.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

#define CBN_EPS 1e-5

enum { N, IC, OC, H, W, KH, KW, OH, OW };
enum { T_X, T_CONV_WEIGHT, T_CONV_BIAS, T_BN_WEIGHT, T_BN_BIAS, T_OUT };
enum { OP_BIAS, OP_MISH, OP_NORM, OP_AFFINE };

static void cbn_create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench: x ~ U[0, 1), conv_weight and conv_bias ~ N(0, 1), bn_weight
     * = 1, bn_bias = 0. Its convolution (fan-in 576) is ~N(0, 14): mish is
     * then the identity or zero almost everywhere, and a unit affine
     * cannot be told from none. Here weight ~ N(0, 3/(IC*KH*KW)) (an O(1)
     * convolution, where mish bends), conv_bias ~ N(0, 0.5) (which part of
     * each channel mish flattens), bn_weight ~ N(1, 0.5) and bn_bias ~
     * N(0, 0.5); x keeps U[0, s) with a per-seed s. */
    const float sx = ckb_seed_factor(seed, T_X, 0.5f, 2.0f);
    const int64_t fan_in = d[IC] * d[KH] * d[KW];
    ckb_fill_uniform_bf16(t[T_X], d[N] * d[IC] * d[H] * d[W], seed, T_X, 0.0f, sx);
    ckb_fill_normal_bf16(t[T_CONV_WEIGHT], d[OC] * fan_in, seed, T_CONV_WEIGHT, 0.0f,
                         sqrtf(3.0f / (float)fan_in));
    ckb_fill_normal_bf16(t[T_CONV_BIAS], d[OC], seed, T_CONV_BIAS, 0.0f, 0.5f);
    ckb_fill_normal_bf16(t[T_BN_WEIGHT], d[OC], seed, T_BN_WEIGHT, 1.0f, 0.5f);
    ckb_fill_normal_bf16(t[T_BN_BIAS], d[OC], seed, T_BN_BIAS, 0.0f, 0.5f);
}

/* One oneDNN convolution per image with conv_bias and mish as its epilogue,
 * into an f32 buffer of the whole batch (the statistics span every image,
 * so nothing can be written before the last one is done); then the batch
 * norm in place and one rounding to bf16. f32 keeps the chain exact: a
 * bf16 intermediate would be rounded once more and then scaled by 1/std. */
static void cbn_baseline(const int64_t *d, void *const *t)
{
    ckb_conv_spec s = {0};
    s.spatial = 2;
    s.N = 1, s.IC = d[IC], s.OC = d[OC];
    s.in[1] = d[H], s.in[2] = d[W];
    s.kernel[0] = 1, s.kernel[1] = d[KH], s.kernel[2] = d[KW];
    s.stride[0] = s.stride[1] = s.stride[2] = 1;
    s.src_type = s.wei_type = s.bias_type = CKB_BF16;
    s.dst_type = CKB_F32;
    s.has_bias = 1;
    s.neltwise = 1;
    s.eltwise[0] = (ckb_eltwise){CKB_ACT_MISH, 0.0f, 0.0f};
    if (ckb_conv_out(&s, 1) != d[OH] || ckb_conv_out(&s, 2) != d[OW]) {
        fprintf(stderr, "ckbench: 34k_Conv2d_Activation_BatchNorm: OH, OW must be H-KH+1, "
                        "W-KW+1\n");
        abort();
    }
    const int64_t plane = d[OH] * d[OW], img_in = d[IC] * d[H] * d[W], img_out = d[OC] * plane;
    const int64_t total = d[N] * img_out;
    float *z = ckb_scratch(0, (size_t)total * sizeof(float));
    float *gamma = ckb_scratch(1, 2 * (size_t)d[OC] * sizeof(float)), *beta = gamma + d[OC];
    const ckb_bf16 *x = t[T_X], *bn_weight = t[T_BN_WEIGHT], *bn_bias = t[T_BN_BIAS];
    for (int64_t c = 0; c < d[OC]; c++) {
        gamma[c] = ckb_bf16_to_f32(bn_weight[c]);
        beta[c] = ckb_bf16_to_f32(bn_bias[c]);
    }
    for (int64_t n = 0; n < d[N]; n++)
        ckb_dnnl_conv(&s, x + n * img_in, t[T_CONV_WEIGHT], t[T_CONV_BIAS], z + n * img_out);
    ckb_op_batchnorm(z, d[N], d[OC], plane, NULL, NULL, gamma, beta, (float)CBN_EPS);
    ckb_bf16 *out = t[T_OUT];
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < total; i++)
        out[i] = ckb_f32_to_bf16(z[i]);
}

/* conv2d(x, weight) (+ bias unless NULL) into z [N, OC, OH, OW], plain loops. */
static void cbn_conv_ref(const int64_t *d, const ckb_bf16 *x, const ckb_bf16 *weight,
                         const ckb_bf16 *bias, float *z)
{
#pragma omp parallel for collapse(2)
    for (int64_t n = 0; n < d[N]; n++)
        for (int64_t c = 0; c < d[OC]; c++)
            for (int64_t oh = 0; oh < d[OH]; oh++)
                for (int64_t ow = 0; ow < d[OW]; ow++) {
                    float acc = 0.0f;
                    for (int64_t ic = 0; ic < d[IC]; ic++)
                        for (int64_t kh = 0; kh < d[KH]; kh++)
                            for (int64_t kw = 0; kw < d[KW]; kw++)
                                acc += ckb_bf16_to_f32(
                                           x[((n * d[IC] + ic) * d[H] + oh + kh) * d[W] + ow + kw]) *
                                       ckb_bf16_to_f32(
                                           weight[((c * d[IC] + ic) * d[KH] + kh) * d[KW] + kw]);
                    z[((n * d[OC] + c) * d[OH] + oh) * d[OW] + ow] =
                        acc + (bias ? ckb_bf16_to_f32(bias[c]) : 0.0f);
                }
}

static void cbn_reference_without(const int64_t *d, void *const *t, int skip)
{
    const int64_t plane = d[OH] * d[OW], total = d[N] * d[OC] * plane;
    float *z = malloc((size_t)total * sizeof *z);
    float *gamma = malloc(2 * (size_t)d[OC] * sizeof *gamma);
    if (!z || !gamma)
        abort();
    float *beta = gamma + d[OC];
    for (int64_t c = 0; c < d[OC]; c++) {
        gamma[c] = ckb_bf16_to_f32(((const ckb_bf16 *)t[T_BN_WEIGHT])[c]);
        beta[c] = ckb_bf16_to_f32(((const ckb_bf16 *)t[T_BN_BIAS])[c]);
    }
    cbn_conv_ref(d, t[T_X], t[T_CONV_WEIGHT], skip == OP_BIAS ? NULL : t[T_CONV_BIAS], z);
    if (skip != OP_MISH)
        for (int64_t i = 0; i < total; i++)
            z[i] = ckb_op_mish(z[i]);
    if (skip != OP_NORM) {
        ckb_op_batchnorm(z, d[N], d[OC], plane, NULL, NULL, skip == OP_AFFINE ? NULL : gamma,
                         skip == OP_AFFINE ? NULL : beta, (float)CBN_EPS);
    } else { /* the affine alone */
        for (int64_t i = 0; i < total; i++) {
            const int64_t c = i / plane % d[OC];
            z[i] = z[i] * gamma[c] + beta[c];
        }
    }
    ckb_bf16 *out = t[T_OUT];
    for (int64_t i = 0; i < total; i++)
        out[i] = ckb_f32_to_bf16(z[i]);
    free(z);
    free(gamma);
}

static void cbn_reference(const int64_t *d, void *const *t) { cbn_reference_without(d, t, -1); }

/* The convolution, then per output element: conv_bias 1, mish 5 (exp,
 * log1p, tanh, multiply and the guard), the norm 5 (mean, variance 2,
 * subtract and scale 2), the affine 2. */
static double cbn_flops(const int64_t *d)
{
    const double outs = (double)d[N] * d[OC] * d[OH] * d[OW];
    return 2.0 * outs * d[IC] * d[KH] * d[KW] + 13.0 * outs;
}

static double cbn_bytes(const int64_t *d)
{
    return 2.0 * ((double)d[N] * d[IC] * d[H] * d[W] + (double)d[OC] * d[IC] * d[KH] * d[KW] +
                  3.0 * d[OC] + (double)d[N] * d[OC] * d[OH] * d[OW]);
}

const ckb_workload ckb_wl_34k_Conv2d_Activation_BatchNorm = {
    .id = "34k_Conv2d_Activation_BatchNorm",
    .model = "KernelBench level 2 #52",
    .op = "52_Conv2d_Activation_BatchNorm",
    .tags = "conv,elementwise,norm",
    .summary = "out = batchnorm_train(mish(conv2d(x, conv_weight) + conv_bias)) * bn_weight + "
               "bn_bias, NCHW, VALID, stride 1, batch statistics, bf16 in, f32 chain, bf16 out",
    .ndims = 9,
    .scale_dim = "N",
    .dims = {{"N", {2, 16, 64}},
             {"IC", {16, 64, 64}},
             {"OC", {32, 128, 128}},
             {"H", {34, 128, 128}},
             {"W", {34, 128, 128}},
             {"KH", {3, 3, 3}},
             {"KW", {3, 3, 3}},
             {"OH", {32, 126, 126}},
             {"OW", {32, 126, 126}}},
    .nconsts = 1,
    .consts = {{"EPS", CBN_EPS}},
    .ntensors = 6,
    .tensors = {{"x", CKB_BF16, CKB_IN, 4, {N, IC, H, W}},
                {"conv_weight", CKB_BF16, CKB_IN, 4, {OC, IC, KH, KW}},
                {"conv_bias", CKB_BF16, CKB_IN, 1, {OC}},
                {"bn_weight", CKB_BF16, CKB_IN, 1, {OC}},
                {"bn_bias", CKB_BF16, CKB_IN, 1, {OC}},
                {"out", CKB_BF16, CKB_OUT, 4, {N, OC, OH, OW}}},
    .create_inputs = cbn_create_inputs,
    .baseline = cbn_baseline,
    .reference = cbn_reference,
    .flops = cbn_flops,
    .bytes = cbn_bytes,
    .nchain = 4,
    .chain = {"conv_bias", "mish", "batchnorm", "bn_affine"},
    .reference_without = cbn_reference_without,
};
