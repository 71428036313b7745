/*
 * 25k_Conv3d_GroupNorm_Mean — KernelBench level 2 #23 (JAXBench
 * benchmark/25k_Conv3d_GroupNorm_Mean): z = conv3d(x, weight) + conv_bias
 * (NCDHW, VALID, stride 1), g = groupnorm(z) * gamma + beta with G groups
 * of OC/G channels, out[n] = the mean of g[n] over (c, od, oh, ow). bf16
 * in, f32 accumulation and f32 math through the mean, bf16 out.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/ops.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

#define CGM_EPS 1e-5
/* Images per convolution call: one call per image leaves the 3-channel
 * convolution too little to spread over the threads, the whole batch at
 * once writes an f32 intermediate of 240 MB at default. */
#define CGM_CHUNK 8

enum { N, IC, OC, D, H, W, KD, KH, KW, OD, OH, OW, G };
enum { T_X, T_WEIGHT, T_CONV_BIAS, T_GAMMA, T_BETA, T_OUT };
/* The chain after the convolution; the mean makes the output. */
enum { OP_BIAS, OP_NORM, OP_AFFINE };

/* Stream of the contrast factor of input plane p = n * IC + ic: clear of
 * the tensors' streams. */
#define CGM_STREAM_PLANE(p) (1000 + (uint64_t)(p))

static void cgm_create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench until upstream 8fa8f3b, which drew the zero weights at
     * random (README):
     * x ~ U[0, 1), weight = conv_bias = 0, gamma = 1, beta = 0:
     * every output is 0. The output is one number per image, the mean of
     * a group-normalised tensor: beta[c] + gamma[c] * (the normalised mean
     * of channel c), averaged over c, where the normalised channel means
     * of a group sum to 0. So: gamma ~ N(1, 0.75) and conv_bias ~ N(0, 1)
     * (channel means that differ inside a group, which gamma then weighs
     * unevenly), beta ~ N(0.5, 0.5) (its mean is in every output), and
     * each input plane (image n, input channel ic) its own contrast,
     * x[n, ic] ~ U[0, s) with s in [0.2, 2): each image has its own colour
     * balance, which moves its channel means against each other, so the
     * answers differ between images (i.i.d. pixels would make them nearly
     * equal: a kernel could compute one image and copy it). weight ~ N(0,
     * 3/(IC*KD*KH*KW)): an O(1) convolution. */
    const int64_t vol = d[D] * d[H] * d[W], fan_in = d[IC] * d[KD] * d[KH] * d[KW];
    ckb_bf16 *x = t[T_X];
    for (int64_t p = 0; p < d[N] * d[IC]; p++)
        ckb_fill_uniform_bf16(x + p * vol, vol, seed, CGM_STREAM_PLANE(p), 0.0f,
                              ckb_seed_factor(seed, CGM_STREAM_PLANE(p), 0.2f, 2.0f));
    ckb_fill_normal_bf16(t[T_WEIGHT], d[OC] * fan_in, seed, T_WEIGHT, 0.0f,
                         sqrtf(3.0f / (float)fan_in));
    ckb_fill_normal_bf16(t[T_CONV_BIAS], d[OC], seed, T_CONV_BIAS, 0.0f, 1.0f);
    ckb_fill_normal_bf16(t[T_GAMMA], d[OC], seed, T_GAMMA, 1.0f, 0.75f);
    ckb_fill_normal_bf16(t[T_BETA], d[OC], seed, T_BETA, 0.5f, 0.5f);
}

/* Per chunk of CGM_CHUNK images: one oneDNN convolution with conv_bias as
 * its epilogue into an f32 buffer, the group norm with its affine in
 * place, then each image's mean. */
static void cgm_baseline(const int64_t *d, void *const *t)
{
    ckb_conv_spec s = {0};
    s.spatial = 3;
    s.IC = d[IC], s.OC = d[OC];
    s.in[0] = d[D], s.in[1] = d[H], s.in[2] = d[W];
    s.kernel[0] = d[KD], s.kernel[1] = d[KH], s.kernel[2] = d[KW];
    s.stride[0] = s.stride[1] = s.stride[2] = 1;
    s.src_type = s.wei_type = s.bias_type = CKB_BF16;
    s.dst_type = CKB_F32;
    s.has_bias = 1;
    if (ckb_conv_out(&s, 0) != d[OD] || ckb_conv_out(&s, 1) != d[OH] ||
        ckb_conv_out(&s, 2) != d[OW] || d[OC] % d[G] != 0) {
        fprintf(stderr, "ckbench: 25k_Conv3d_GroupNorm_Mean: OD, OH, OW must be D-KD+1, "
                        "H-KH+1, W-KW+1 and G must divide OC\n");
        abort();
    }
    const int64_t vol = d[OD] * d[OH] * d[OW], img_in = d[IC] * d[D] * d[H] * d[W];
    const int64_t img_out = d[OC] * vol;
    const int64_t chunk = d[N] < CGM_CHUNK ? d[N] : CGM_CHUNK;
    float *z = ckb_scratch(0, (size_t)(chunk * img_out) * sizeof(float));
    float *gamma = ckb_scratch(1, 2 * (size_t)d[OC] * sizeof(float)), *beta = gamma + d[OC];
    const ckb_bf16 *x = t[T_X], *gm = t[T_GAMMA], *bt = t[T_BETA];
    for (int64_t c = 0; c < d[OC]; c++) {
        gamma[c] = ckb_bf16_to_f32(gm[c]);
        beta[c] = ckb_bf16_to_f32(bt[c]);
    }
    ckb_bf16 *out = t[T_OUT];
    for (int64_t n0 = 0; n0 < d[N]; n0 += chunk) {
        const int64_t nb = d[N] - n0 < chunk ? d[N] - n0 : chunk;
        s.N = nb;
        ckb_dnnl_conv(&s, x + n0 * img_in, t[T_WEIGHT], t[T_CONV_BIAS], z);
        ckb_op_groupnorm(z, nb, d[OC], vol, d[G], gamma, beta, (float)CGM_EPS);
#pragma omp parallel for schedule(static)
        for (int64_t n = 0; n < nb; n++)
            out[n0 + n] = ckb_f32_to_bf16(ckb_op_mean(z + n * img_out, img_out));
    }
}

static void cgm_reference_without(const int64_t *d, void *const *t, int skip)
{
    const ckb_bf16 *x = t[T_X], *weight = t[T_WEIGHT], *bias = t[T_CONV_BIAS];
    const int64_t vol = d[OD] * d[OH] * d[OW], img_out = d[OC] * vol;
    float *z = malloc((size_t)(d[N] * img_out) * sizeof *z);
    float *gamma = malloc(2 * (size_t)d[OC] * sizeof *gamma);
    if (!z || !gamma)
        abort();
    float *beta = gamma + d[OC];
    for (int64_t c = 0; c < d[OC]; c++) {
        gamma[c] = ckb_bf16_to_f32(((const ckb_bf16 *)t[T_GAMMA])[c]);
        beta[c] = ckb_bf16_to_f32(((const ckb_bf16 *)t[T_BETA])[c]);
    }
#pragma omp parallel for collapse(2)
    for (int64_t n = 0; n < d[N]; n++)
        for (int64_t c = 0; c < d[OC]; c++)
            for (int64_t od = 0; od < d[OD]; od++)
                for (int64_t oh = 0; oh < d[OH]; oh++)
                    for (int64_t ow = 0; ow < d[OW]; ow++) {
                        float acc = 0.0f;
                        for (int64_t ic = 0; ic < d[IC]; ic++)
                            for (int64_t kd = 0; kd < d[KD]; kd++)
                                for (int64_t kh = 0; kh < d[KH]; kh++)
                                    for (int64_t kw = 0; kw < d[KW]; kw++)
                                        acc += ckb_bf16_to_f32(
                                                   x[(((n * d[IC] + ic) * d[D] + od + kd) * d[H] +
                                                      oh + kh) * d[W] + ow + kw]) *
                                               ckb_bf16_to_f32(
                                                   weight[(((c * d[IC] + ic) * d[KD] + kd) * d[KH] +
                                                           kh) * d[KW] + kw]);
                        if (skip != OP_BIAS)
                            acc += ckb_bf16_to_f32(bias[c]);
                        z[(n * d[OC] + c) * vol + (od * d[OH] + oh) * d[OW] + ow] = acc;
                    }
    if (skip != OP_NORM) {
        ckb_op_groupnorm(z, d[N], d[OC], vol, d[G], skip == OP_AFFINE ? NULL : gamma,
                         skip == OP_AFFINE ? NULL : beta, (float)CGM_EPS);
    } else { /* the affine alone */
        for (int64_t i = 0; i < d[N] * img_out; i++) {
            const int64_t c = i / vol % d[OC];
            z[i] = z[i] * gamma[c] + beta[c];
        }
    }
    ckb_bf16 *out = t[T_OUT];
    for (int64_t n = 0; n < d[N]; n++)
        out[n] = ckb_f32_to_bf16(ckb_op_mean(z + n * img_out, img_out));
    free(z);
    free(gamma);
}

static void cgm_reference(const int64_t *d, void *const *t) { cgm_reference_without(d, t, -1); }

/* The convolution, then per conv output: conv_bias 1, the norm 5 (mean,
 * variance 2, subtract and scale 2), the affine 2, the mean's sum 1. */
static double cgm_flops(const int64_t *d)
{
    const double outs = (double)d[N] * d[OC] * d[OD] * d[OH] * d[OW];
    return 2.0 * outs * d[IC] * d[KD] * d[KH] * d[KW] + 9.0 * outs;
}

static double cgm_bytes(const int64_t *d)
{
    return 2.0 * ((double)d[N] * d[IC] * d[D] * d[H] * d[W] +
                  (double)d[OC] * d[IC] * d[KD] * d[KH] * d[KW] + 3.0 * d[OC] + d[N]);
}

const ckb_workload ckb_wl_25k_Conv3d_GroupNorm_Mean = {
    .id = "25k_Conv3d_GroupNorm_Mean",
    .model = "KernelBench level 2 #23",
    .op = "23_Conv3d_GroupNorm_Mean",
    .tags = "conv,norm,reduction",
    .summary = "out[n] = mean over (c, d, h, w) of groupnorm(conv3d(x, weight) + conv_bias) * "
               "gamma + beta, NCDHW, VALID, stride 1, bf16 in, f32 chain, bf16 out",
    .ndims = 13,
    .scale_dim = "N",
    .dims = {{"N", {8, 128, 128}},
             {"IC", {3, 3, 3}},
             {"OC", {24, 24, 24}},
             {"D", {8, 24, 24}},
             {"H", {12, 32, 32}},
             {"W", {12, 32, 32}},
             {"KD", {3, 3, 3}},
             {"KH", {3, 3, 3}},
             {"KW", {3, 3, 3}},
             {"OD", {6, 22, 22}},
             {"OH", {10, 30, 30}},
             {"OW", {10, 30, 30}},
             {"G", {8, 8, 8}}},
    .nconsts = 1,
    .consts = {{"EPS", CGM_EPS}},
    .ntensors = 6,
    .tensors = {{"x", CKB_BF16, CKB_IN, 5, {N, IC, D, H, W}},
                {"weight", CKB_BF16, CKB_IN, 5, {OC, IC, KD, KH, KW}},
                {"conv_bias", CKB_BF16, CKB_IN, 1, {OC}},
                {"gamma", CKB_BF16, CKB_IN, 1, {OC}},
                {"beta", CKB_BF16, CKB_IN, 1, {OC}, .order_free = 1},
                {"out", CKB_BF16, CKB_OUT, 1, {N}}},
    .create_inputs = cgm_create_inputs,
    .baseline = cgm_baseline,
    .reference = cgm_reference,
    .flops = cgm_flops,
    .bytes = cgm_bytes,
    .nchain = 3,
    .chain = {"conv_bias", "groupnorm", "affine"},
    .reference_without = cgm_reference_without,
};
