/*
 * 46k_Conv2d_GroupNorm_Tanh_HardSwish_ResidualAdd_LogSumExp — KernelBench
 * level 2 #92 (JAXBench benchmark/46k_...): z = conv2d(x, conv_weight) +
 * conv_bias (NCHW, VALID, stride 1); g = groupnorm(z) * gn_weight + gn_bias
 * (G groups); r = z + hardswish(tanh(g)); out[n, oh, ow] = logsumexp over
 * the channels of r. bf16 in, f32 accumulation and f32 math through the
 * chain, bf16 out.
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/ops.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

#define CGL_EPS 1e-5

enum { N, IC, OC, H, W, KH, KW, OH, OW, G };
enum { T_X, T_CONV_WEIGHT, T_CONV_BIAS, T_GN_WEIGHT, T_GN_BIAS, T_OUT };
/* The chain after the convolution; the logsumexp makes the output. */
enum { OP_BIAS, OP_NORM, OP_AFFINE, OP_TANH, OP_HARDSWISH, OP_RESIDUAL };

static void cgl_create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench until upstream 8fa8f3b, which drew the zero weights at
     * random (README):
     * x ~ U[0, 1), conv weight and bias 0, gn_weight 1, gn_bias
     * 0: every output is log(OC) whatever a kernel computes. Here the
     * tanh-hardswish branch adds at most 1 to a channel, so the logsumexp
     * must stay small and spread over several channels for it to show
     * through the 1% relative tolerance (README): conv_bias ~ N(-ln OC, 1)
     * takes the log(OC) of the sum back out (outputs ~0.5..4), weight ~
     * N(0, 3/(IC*KH*KW)) keeps the convolution at std ~s with x ~ U[0, s),
     * s a per-seed factor in [0.5, 1.5), and the norm's affine is gn_weight
     * ~ N(1, 0.5), gn_bias ~ N(0.5, 1): off-centre, so that leaving it out
     * moves every channel the same way instead of cancelling out. */
    const float sx = ckb_seed_factor(seed, T_X, 0.5f, 1.5f);
    const int64_t fan_in = d[IC] * d[KH] * d[KW];
    ckb_fill_uniform_bf16(t[T_X], d[N] * d[IC] * d[H] * d[W], seed, T_X, 0.0f, sx);
    ckb_fill_normal_bf16(t[T_CONV_WEIGHT], d[OC] * fan_in, seed, T_CONV_WEIGHT, 0.0f,
                         sqrtf(3.0f / (float)fan_in));
    ckb_fill_normal_bf16(t[T_CONV_BIAS], d[OC], seed, T_CONV_BIAS, -logf((float)d[OC]), 1.0f);
    ckb_fill_normal_bf16(t[T_GN_WEIGHT], d[OC], seed, T_GN_WEIGHT, 1.0f, 0.5f);
    ckb_fill_normal_bf16(t[T_GN_BIAS], d[OC], seed, T_GN_BIAS, 0.5f, 1.0f);
}

/* Positions per tile of the logsumexp pass. */
#define CGL_TILE 64

/* Per image: one oneDNN convolution with conv_bias as its epilogue into an
 * f32 plane stack z (4 MB at default), a copy normalised in place (the
 * residual needs z itself), then per tile of positions the channel columns
 * through tanh, hardswish and the residual into rows of OC values, and each
 * row's logsumexp. The tile reads every plane contiguously: a column per
 * position would touch OC pages per value. */
static void cgl_baseline(const int64_t *d, void *const *t)
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
    if (ckb_conv_out(&s, 1) != d[OH] || ckb_conv_out(&s, 2) != d[OW] || d[OC] % d[G] != 0) {
        fprintf(stderr, "ckbench: 46k_Conv2d_GroupNorm_Tanh_HardSwish_ResidualAdd_LogSumExp: "
                        "OH, OW must be H-KH+1, W-KW+1 and G must divide OC\n");
        abort();
    }
    const int64_t plane = d[OH] * d[OW], img_in = d[IC] * d[H] * d[W], img_out = d[OC] * plane;
    const int64_t oc = d[OC], ntiles = (plane + CGL_TILE - 1) / CGL_TILE;
    float *z = ckb_scratch(0, (size_t)img_out * sizeof(float));
    float *g = ckb_scratch(1, (size_t)img_out * sizeof(float));
    float *gamma = ckb_scratch(2, 2 * (size_t)oc * sizeof(float)), *beta = gamma + oc;
    float *tiles = ckb_scratch(3, (size_t)(omp_get_max_threads() * CGL_TILE * oc) * sizeof(float));
    const ckb_bf16 *x = t[T_X], *gn_weight = t[T_GN_WEIGHT], *gn_bias = t[T_GN_BIAS];
    for (int64_t c = 0; c < oc; c++) {
        gamma[c] = ckb_bf16_to_f32(gn_weight[c]);
        beta[c] = ckb_bf16_to_f32(gn_bias[c]);
    }
    ckb_bf16 *out = t[T_OUT];
    for (int64_t n = 0; n < d[N]; n++) {
        ckb_dnnl_conv(&s, x + n * img_in, t[T_CONV_WEIGHT], t[T_CONV_BIAS], z);
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < img_out; i++)
            g[i] = z[i];
        ckb_op_groupnorm(g, 1, oc, plane, d[G], gamma, beta, (float)CGL_EPS);
#pragma omp parallel
        {
            float *tile = tiles + omp_get_thread_num() * CGL_TILE * oc; /* [CGL_TILE][oc] */
#pragma omp for schedule(static)
            for (int64_t b = 0; b < ntiles; b++) {
                const int64_t p0 = b * CGL_TILE;
                const int64_t np = plane - p0 < CGL_TILE ? plane - p0 : CGL_TILE;
                for (int64_t c = 0; c < oc; c++) {
                    const float *zc = z + c * plane + p0, *gc = g + c * plane + p0;
                    for (int64_t p = 0; p < np; p++)
                        tile[p * oc + c] = zc[p] + ckb_op_hardswish(ckb_op_tanh(gc[p]));
                }
                for (int64_t p = 0; p < np; p++)
                    out[n * plane + p0 + p] = ckb_f32_to_bf16(ckb_op_logsumexp(tile + p * oc, oc));
            }
        }
    }
}

static void cgl_reference_without(const int64_t *d, void *const *t, int skip)
{
    const ckb_bf16 *x = t[T_X], *weight = t[T_CONV_WEIGHT], *bias = t[T_CONV_BIAS];
    const int64_t plane = d[OH] * d[OW], oc = d[OC], total = d[N] * oc * plane;
    float *z = malloc((size_t)total * sizeof *z), *g = malloc((size_t)total * sizeof *g);
    float *gamma = malloc(2 * (size_t)oc * sizeof *gamma);
    if (!z || !g || !gamma)
        abort();
    float *beta = gamma + oc;
    for (int64_t c = 0; c < oc; c++) {
        gamma[c] = ckb_bf16_to_f32(((const ckb_bf16 *)t[T_GN_WEIGHT])[c]);
        beta[c] = ckb_bf16_to_f32(((const ckb_bf16 *)t[T_GN_BIAS])[c]);
    }
#pragma omp parallel for collapse(2)
    for (int64_t n = 0; n < d[N]; n++)
        for (int64_t c = 0; c < oc; c++)
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
                    if (skip != OP_BIAS)
                        acc += ckb_bf16_to_f32(bias[c]);
                    z[(n * oc + c) * plane + oh * d[OW] + ow] = acc;
                }
    for (int64_t i = 0; i < total; i++)
        g[i] = z[i];
    if (skip != OP_NORM) {
        ckb_op_groupnorm(g, d[N], oc, plane, d[G], skip == OP_AFFINE ? NULL : gamma,
                         skip == OP_AFFINE ? NULL : beta, (float)CGL_EPS);
    } else { /* the affine alone */
        for (int64_t i = 0; i < total; i++) {
            const int64_t c = i / plane % oc;
            g[i] = g[i] * gamma[c] + beta[c];
        }
    }
    ckb_bf16 *out = t[T_OUT];
    float *row = gamma; /* oc floats, no longer needed */
    for (int64_t n = 0; n < d[N]; n++)
        for (int64_t p = 0; p < plane; p++) {
            for (int64_t c = 0; c < oc; c++) {
                const int64_t i = (n * oc + c) * plane + p;
                float v = g[i];
                if (skip != OP_TANH)
                    v = ckb_op_tanh(v);
                if (skip != OP_HARDSWISH)
                    v = ckb_op_hardswish(v);
                row[c] = skip == OP_RESIDUAL ? v : z[i] + v;
            }
            out[n * plane + p] = ckb_f32_to_bf16(ckb_op_logsumexp(row, oc));
        }
    free(z);
    free(g);
    free(gamma);
}

static void cgl_reference(const int64_t *d, void *const *t) { cgl_reference_without(d, t, -1); }

/* The convolution, then per conv output: conv_bias 1, the norm 5 (mean,
 * variance 2, subtract and scale 2), the affine 2, tanh 1, hardswish 4,
 * the residual 1, the logsumexp 3 (max, exp, sum); and a log per output. */
static double cgl_flops(const int64_t *d)
{
    const double outs = (double)d[N] * d[OC] * d[OH] * d[OW];
    return 2.0 * outs * d[IC] * d[KH] * d[KW] + 17.0 * outs + (double)d[N] * d[OH] * d[OW];
}

static double cgl_bytes(const int64_t *d)
{
    return 2.0 * ((double)d[N] * d[IC] * d[H] * d[W] + (double)d[OC] * d[IC] * d[KH] * d[KW] +
                  3.0 * d[OC] + (double)d[N] * d[OH] * d[OW]);
}

const ckb_workload ckb_wl_46k_Conv2d_GroupNorm_Tanh_HardSwish_ResidualAdd_LogSumExp = {
    .id = "46k_Conv2d_GroupNorm_Tanh_HardSwish_ResidualAdd_LogSumExp",
    .model = "KernelBench level 2 #92",
    .op = "92_Conv2d_GroupNorm_Tanh_HardSwish_ResidualAdd_LogSumExp",
    .tags = "conv,norm,elementwise,reduction",
    .summary = "z = conv2d(x, conv_weight) + conv_bias; out = logsumexp over channels of z + "
               "hardswish(tanh(groupnorm(z) * gn_weight + gn_bias)), NCHW, VALID, bf16 in, f32 "
               "chain, bf16 out",
    .ndims = 10,
    .scale_dim = "N",
    .dims = {{"N", {2, 16, 128}},
             {"IC", {8, 8, 8}},
             {"OC", {64, 64, 64}},
             {"H", {34, 128, 128}},
             {"W", {34, 128, 128}},
             {"KH", {3, 3, 3}},
             {"KW", {3, 3, 3}},
             {"OH", {32, 126, 126}},
             {"OW", {32, 126, 126}},
             {"G", {16, 16, 16}}},
    .nconsts = 1,
    .consts = {{"EPS", CGL_EPS}},
    .ntensors = 6,
    .tensors = {{"x", CKB_BF16, CKB_IN, 4, {N, IC, H, W}},
                {"conv_weight", CKB_BF16, CKB_IN, 4, {OC, IC, KH, KW}},
                {"conv_bias", CKB_BF16, CKB_IN, 1, {OC}},
                {"gn_weight", CKB_BF16, CKB_IN, 1, {OC}},
                {"gn_bias", CKB_BF16, CKB_IN, 1, {OC}},
                /* [N, 1, OH, OW] in the original (keepdims): the same memory */
                {"out", CKB_BF16, CKB_OUT, 3, {N, OH, OW}}},
    .create_inputs = cgl_create_inputs,
    .baseline = cgl_baseline,
    .reference = cgl_reference,
    .flops = cgl_flops,
    .bytes = cgl_bytes,
    .nchain = 6,
    .chain = {"conv_bias", "groupnorm", "gn_affine", "tanh", "hardswish", "residual"},
    .reference_without = cgl_reference_without,
};
