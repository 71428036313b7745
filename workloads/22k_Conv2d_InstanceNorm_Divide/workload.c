/*
 * 22k_Conv2d_InstanceNorm_Divide — KernelBench level 2 #17 (JAXBench
 * benchmark/22k_Conv2d_InstanceNorm_Divide): out = instancenorm(conv2d(x,
 * weight) + conv_bias) * in_weight + in_bias, then / DIVIDE_BY; NCHW, VALID
 * padding, stride 1, the norm over each (image, channel) plane with the
 * biased variance. bf16 in, f32 accumulation and f32 math through the
 * chain, bf16 out.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/ops.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

#define CIN_EPS 1e-5
#define CIN_DIVIDE_BY 2.0

enum { N, IC, OC, H, W, KH, KW, OH, OW };
enum { T_X, T_WEIGHT, T_CONV_BIAS, T_IN_WEIGHT, T_IN_BIAS, T_OUT };
/* The chain after the convolution; conv_bias is not in it (see README:
 * the norm subtracts every per-channel constant, so it cannot be seen). */
enum { OP_NORM, OP_AFFINE, OP_DIVIDE };

static void cin_create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench until upstream cdb2234, which drew the zero weights at
     * random (README):
     * x ~ U[0, 1), weight = conv_bias = 0, in_weight = 1,
     * in_bias = 0: the normalised planes are 0 / sqrt(eps) = 0 and the
     * answer is 0 whatever a kernel computes. Here x keeps U[0, s) with a
     * per-seed s, weight ~ N(0, 3/(IC*KH*KW)) (an O(1) convolution with its
     * own texture per channel), conv_bias ~ N(0, 0.5) as a layer would have
     * it, and the affine ~ N(1, 0.5) and N(0, 0.5) per channel, so that
     * leaving it out, or the norm, or the divide, shows. */
    const float sx = ckb_seed_factor(seed, T_X, 0.5f, 2.0f);
    const int64_t fan_in = d[IC] * d[KH] * d[KW];
    ckb_fill_uniform_bf16(t[T_X], d[N] * d[IC] * d[H] * d[W], seed, T_X, 0.0f, sx);
    ckb_fill_normal_bf16(t[T_WEIGHT], d[OC] * fan_in, seed, T_WEIGHT, 0.0f,
                         sqrtf(3.0f / (float)fan_in));
    ckb_fill_normal_bf16(t[T_CONV_BIAS], d[OC], seed, T_CONV_BIAS, 0.0f, 0.5f);
    ckb_fill_normal_bf16(t[T_IN_WEIGHT], d[OC], seed, T_IN_WEIGHT, 1.0f, 0.5f);
    ckb_fill_normal_bf16(t[T_IN_BIAS], d[OC], seed, T_IN_BIAS, 0.0f, 0.5f);
}

/* Per image: one oneDNN convolution with conv_bias as its epilogue into an
 * f32 plane stack (8 MB at default: it stays near the core, where the
 * whole batch at once would go through memory twice), the instance norm
 * with its affine in place, then the divide with the one rounding to bf16.
 * The norm needs every value of a plane before it can write one, so it
 * cannot ride on the convolution as a post-op. */
static void cin_baseline(const int64_t *d, void *const *t)
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
    if (ckb_conv_out(&s, 1) != d[OH] || ckb_conv_out(&s, 2) != d[OW]) {
        fprintf(stderr, "ckbench: 22k_Conv2d_InstanceNorm_Divide: OH, OW must be H-KH+1, "
                        "W-KW+1\n");
        abort();
    }
    const int64_t plane = d[OH] * d[OW], img_in = d[IC] * d[H] * d[W], img_out = d[OC] * plane;
    float *z = ckb_scratch(0, (size_t)img_out * sizeof(float));
    float *gamma = ckb_scratch(1, 2 * (size_t)d[OC] * sizeof(float)), *beta = gamma + d[OC];
    const ckb_bf16 *x = t[T_X], *in_weight = t[T_IN_WEIGHT], *in_bias = t[T_IN_BIAS];
    for (int64_t c = 0; c < d[OC]; c++) {
        gamma[c] = ckb_bf16_to_f32(in_weight[c]);
        beta[c] = ckb_bf16_to_f32(in_bias[c]);
    }
    ckb_bf16 *out = t[T_OUT];
    const float div = (float)CIN_DIVIDE_BY;
    for (int64_t n = 0; n < d[N]; n++) {
        ckb_dnnl_conv(&s, x + n * img_in, t[T_WEIGHT], t[T_CONV_BIAS], z);
        ckb_op_instancenorm(z, 1, d[OC], plane, gamma, beta, (float)CIN_EPS);
        ckb_bf16 *o = out + n * img_out;
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < img_out; i++)
            o[i] = ckb_f32_to_bf16(z[i] / div);
    }
}

/* conv2d(x, weight) + bias into z [N, OC, OH, OW], plain loops. */
static void cin_conv_ref(const int64_t *d, const ckb_bf16 *x, const ckb_bf16 *weight,
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
                        acc + ckb_bf16_to_f32(bias[c]);
                }
}

static void cin_reference_without(const int64_t *d, void *const *t, int skip)
{
    const int64_t plane = d[OH] * d[OW], total = d[N] * d[OC] * plane;
    float *z = malloc((size_t)total * sizeof *z);
    float *gamma = malloc(2 * (size_t)d[OC] * sizeof *gamma);
    if (!z || !gamma)
        abort();
    float *beta = gamma + d[OC];
    for (int64_t c = 0; c < d[OC]; c++) {
        gamma[c] = ckb_bf16_to_f32(((const ckb_bf16 *)t[T_IN_WEIGHT])[c]);
        beta[c] = ckb_bf16_to_f32(((const ckb_bf16 *)t[T_IN_BIAS])[c]);
    }
    cin_conv_ref(d, t[T_X], t[T_WEIGHT], t[T_CONV_BIAS], z);
    if (skip != OP_NORM) {
        ckb_op_instancenorm(z, d[N], d[OC], plane, skip == OP_AFFINE ? NULL : gamma,
                            skip == OP_AFFINE ? NULL : beta, (float)CIN_EPS);
    } else { /* the affine alone on the raw convolution */
        for (int64_t i = 0; i < total; i++) {
            const int64_t c = i / plane % d[OC];
            z[i] = z[i] * gamma[c] + beta[c];
        }
    }
    ckb_bf16 *out = t[T_OUT];
    for (int64_t i = 0; i < total; i++)
        out[i] = ckb_f32_to_bf16(skip == OP_DIVIDE ? z[i] : z[i] / (float)CIN_DIVIDE_BY);
    free(z);
    free(gamma);
}

static void cin_reference(const int64_t *d, void *const *t) { cin_reference_without(d, t, -1); }

/* The convolution, then per output element: conv_bias 1, the norm 5 (its
 * mean, variance 2, subtract and scale 2), the affine 2, the divide 1. */
static double cin_flops(const int64_t *d)
{
    const double outs = (double)d[N] * d[OC] * d[OH] * d[OW];
    return 2.0 * outs * d[IC] * d[KH] * d[KW] + 9.0 * outs;
}

static double cin_bytes(const int64_t *d)
{
    return 2.0 * ((double)d[N] * d[IC] * d[H] * d[W] + (double)d[OC] * d[IC] * d[KH] * d[KW] +
                  3.0 * d[OC] + (double)d[N] * d[OC] * d[OH] * d[OW]);
}

const ckb_workload ckb_wl_22k_Conv2d_InstanceNorm_Divide = {
    .id = "22k_Conv2d_InstanceNorm_Divide",
    .model = "KernelBench level 2 #17",
    .op = "17_Conv2d_InstanceNorm_Divide",
    .tags = "conv,norm,elementwise",
    .summary = "out = (instancenorm(conv2d(x, weight) + conv_bias) * in_weight + in_bias) / "
               "DIVIDE_BY, NCHW, VALID, stride 1, bf16 in, f32 accumulate and chain, bf16 out",
    .ndims = 9,
    .scale_dim = "N",
    .dims = {{"N", {2, 16, 128}},
             {"IC", {16, 64, 64}},
             {"OC", {32, 128, 128}},
             {"H", {34, 128, 128}},
             {"W", {34, 128, 128}},
             {"KH", {3, 3, 3}},
             {"KW", {3, 3, 3}},
             {"OH", {32, 126, 126}},
             {"OW", {32, 126, 126}}},
    .nconsts = 2,
    .consts = {{"EPS", CIN_EPS}, {"DIVIDE_BY", CIN_DIVIDE_BY}},
    .ntensors = 6,
    .tensors = {{"x", CKB_BF16, CKB_IN, 4, {N, IC, H, W}},
                {"weight", CKB_BF16, CKB_IN, 4, {OC, IC, KH, KW}},
                {"conv_bias", CKB_BF16, CKB_IN, 1, {OC}, .cancelled = 1},
                {"in_weight", CKB_BF16, CKB_IN, 1, {OC}},
                {"in_bias", CKB_BF16, CKB_IN, 1, {OC}},
                {"out", CKB_BF16, CKB_OUT, 4, {N, OC, OH, OW}}},
    .create_inputs = cin_create_inputs,
    .baseline = cin_baseline,
    .reference = cin_reference,
    .flops = cin_flops,
    .bytes = cin_bytes,
    .nchain = 3,
    .chain = {"instancenorm", "affine", "divide"},
    .reference_without = cin_reference_without,
};
