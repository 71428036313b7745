/*
 * 28k_ConvTranspose3d_LayerNorm_GELU_Scaling — KernelBench level 2 #34
 * (JAXBench benchmark/28k_ConvTranspose3d_LayerNorm_GELU_Scaling):
 * z = conv_transpose3d(x, conv_weight, stride STRIDE, padding PAD) +
 * conv_bias, NCDHW, weight [IC, OC, KSIZE, KSIZE, KSIZE] (PyTorch's
 * ConvTranspose layout); LayerNorm over the LAST axis (ow: KernelBench's
 * nn.LayerNorm(out_channels) on an NCDHW tensor normalises its width, and
 * the sizes make OW == OC) with ln_weight and ln_bias of OW values; then
 * out = gelu_tanh(.) * SCALING_FACTOR. bf16 in, f32 accumulation and f32
 * math through the chain, bf16 out.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/ops.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

#define CTL_EPS 1e-5
#define CTL_SCALING_FACTOR 1.0

enum { N, IC, OC, D, H, W, KSIZE, STRIDE, PAD, OD, OH, OW };
enum { T_X, T_CONV_WEIGHT, T_CONV_BIAS, T_LN_WEIGHT, T_LN_BIAS, T_OUT };
/* The chain after the deconvolution; conv_bias and the scaling are not in
 * it (README: the norm removes the one, the other multiplies by 1). */
enum { OP_NORM, OP_AFFINE, OP_GELU };

static void ctl_create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench: x ~ U[0, 1), conv_weight ~ N(0, 1), conv_bias = 0,
     * ln_weight = 1, ln_bias = 0: a unit affine cannot be told from none.
     * Here x keeps U[0, s) with a per-seed s, conv_weight ~ N(0, 1/fan)
     * with fan = IC*(KSIZE/STRIDE)^3 taps per output (the norm would undo
     * any scale; this one keeps the f32 sums O(1)), conv_bias ~ N(0, 0.5)
     * as a layer would have it, ln_weight ~ N(1, 0.5) and ln_bias ~
     * N(0, 0.5) per position, so the affine moves gelu's input across its
     * bend. */
    const float sx = ckb_seed_factor(seed, T_X, 0.5f, 2.0f);
    const int64_t k3 = d[KSIZE] * d[KSIZE] * d[KSIZE];
    const float fan = (float)(d[IC] * k3) / (float)(d[STRIDE] * d[STRIDE] * d[STRIDE]);
    ckb_fill_uniform_bf16(t[T_X], d[N] * d[IC] * d[D] * d[H] * d[W], seed, T_X, 0.0f, sx);
    ckb_fill_normal_bf16(t[T_CONV_WEIGHT], d[IC] * d[OC] * k3, seed, T_CONV_WEIGHT, 0.0f,
                         1.0f / sqrtf(fan));
    ckb_fill_normal_bf16(t[T_CONV_BIAS], d[OC], seed, T_CONV_BIAS, 0.0f, 0.5f);
    ckb_fill_normal_bf16(t[T_LN_WEIGHT], d[OW], seed, T_LN_WEIGHT, 1.0f, 0.5f);
    ckb_fill_normal_bf16(t[T_LN_BIAS], d[OW], seed, T_LN_BIAS, 0.0f, 0.5f);
}

/* Per image: one oneDNN deconvolution with conv_bias as its epilogue into
 * an f32 volume (32 MB at default), the layer norm of each row of OW
 * values with its affine in place, then gelu and the scaling with the one
 * rounding to bf16. oneDNN's gelu post-op cannot be used: the norm sits
 * between the deconvolution and the gelu. */
static void ctl_baseline(const int64_t *d, void *const *t)
{
    ckb_conv_spec s = {0};
    s.spatial = 3;
    s.N = 1, s.IC = d[IC], s.OC = d[OC];
    s.in[0] = d[D], s.in[1] = d[H], s.in[2] = d[W];
    s.kernel[0] = s.kernel[1] = s.kernel[2] = d[KSIZE];
    s.stride[0] = s.stride[1] = s.stride[2] = d[STRIDE];
    s.pad[0] = s.pad[1] = s.pad[2] = d[PAD];
    s.transposed = 1;
    s.src_type = s.wei_type = s.bias_type = CKB_BF16;
    s.dst_type = CKB_F32;
    s.has_bias = 1;
    if (ckb_conv_out(&s, 0) != d[OD] || ckb_conv_out(&s, 1) != d[OH] ||
        ckb_conv_out(&s, 2) != d[OW]) {
        fprintf(stderr, "ckbench: 28k_ConvTranspose3d_LayerNorm_GELU_Scaling: OD, OH, OW must "
                        "be (D-1)*STRIDE-2*PAD+KSIZE and likewise\n");
        abort();
    }
    const int64_t img_in = d[IC] * d[D] * d[H] * d[W];
    const int64_t rows = d[OC] * d[OD] * d[OH], img_out = rows * d[OW];
    float *z = ckb_scratch(0, (size_t)img_out * sizeof(float));
    float *gamma = ckb_scratch(1, 2 * (size_t)d[OW] * sizeof(float)), *beta = gamma + d[OW];
    const ckb_bf16 *x = t[T_X], *ln_weight = t[T_LN_WEIGHT], *ln_bias = t[T_LN_BIAS];
    for (int64_t i = 0; i < d[OW]; i++) {
        gamma[i] = ckb_bf16_to_f32(ln_weight[i]);
        beta[i] = ckb_bf16_to_f32(ln_bias[i]);
    }
    ckb_bf16 *out = t[T_OUT];
    const float scale = (float)CTL_SCALING_FACTOR;
    for (int64_t n = 0; n < d[N]; n++) {
        ckb_dnnl_conv(&s, x + n * img_in, t[T_CONV_WEIGHT], t[T_CONV_BIAS], z);
        ckb_op_layernorm(z, rows, d[OW], gamma, beta, (float)CTL_EPS);
        ckb_bf16 *o = out + n * img_out;
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < img_out; i++)
            o[i] = ckb_f32_to_bf16(ckb_op_gelu_tanh(z[i]) * scale);
    }
}

static void ctl_reference_without(const int64_t *d, void *const *t, int skip)
{
    const ckb_bf16 *x = t[T_X], *weight = t[T_CONV_WEIGHT], *bias = t[T_CONV_BIAS];
    const int64_t k = d[KSIZE], st = d[STRIDE], pad = d[PAD];
    const int64_t rows = d[N] * d[OC] * d[OD] * d[OH], total = rows * d[OW];
    float *z = malloc((size_t)total * sizeof *z);
    float *gamma = malloc(2 * (size_t)d[OW] * sizeof *gamma);
    if (!z || !gamma)
        abort();
    float *beta = gamma + d[OW];
    for (int64_t i = 0; i < d[OW]; i++) {
        gamma[i] = ckb_bf16_to_f32(((const ckb_bf16 *)t[T_LN_WEIGHT])[i]);
        beta[i] = ckb_bf16_to_f32(((const ckb_bf16 *)t[T_LN_BIAS])[i]);
    }
    /* The transposed convolution as a gather: input position i reaches
     * output o = i*STRIDE - PAD + k, so o takes the taps k with
     * (o + PAD - k) a multiple of STRIDE inside the input. */
#pragma omp parallel for collapse(2)
    for (int64_t n = 0; n < d[N]; n++)
        for (int64_t c = 0; c < d[OC]; c++)
            for (int64_t od = 0; od < d[OD]; od++)
                for (int64_t oh = 0; oh < d[OH]; oh++)
                    for (int64_t ow = 0; ow < d[OW]; ow++) {
                        float acc = 0.0f;
                        for (int64_t kd = 0; kd < k; kd++) {
                            const int64_t td = od + pad - kd, id = td / st;
                            if (td < 0 || td % st || id >= d[D])
                                continue;
                            for (int64_t kh = 0; kh < k; kh++) {
                                const int64_t th = oh + pad - kh, ih = th / st;
                                if (th < 0 || th % st || ih >= d[H])
                                    continue;
                                for (int64_t kw = 0; kw < k; kw++) {
                                    const int64_t tw = ow + pad - kw, iw = tw / st;
                                    if (tw < 0 || tw % st || iw >= d[W])
                                        continue;
                                    for (int64_t ic = 0; ic < d[IC]; ic++)
                                        acc += ckb_bf16_to_f32(
                                                   x[(((n * d[IC] + ic) * d[D] + id) * d[H] + ih) *
                                                         d[W] + iw]) *
                                               ckb_bf16_to_f32(
                                                   weight[(((ic * d[OC] + c) * k + kd) * k + kh) *
                                                              k + kw]);
                                }
                            }
                        }
                        z[(((n * d[OC] + c) * d[OD] + od) * d[OH] + oh) * d[OW] + ow] =
                            acc + ckb_bf16_to_f32(bias[c]);
                    }
    if (skip != OP_NORM) {
        ckb_op_layernorm(z, rows, d[OW], skip == OP_AFFINE ? NULL : gamma,
                         skip == OP_AFFINE ? NULL : beta, (float)CTL_EPS);
    } else { /* the affine alone */
        for (int64_t i = 0; i < total; i++)
            z[i] = z[i] * gamma[i % d[OW]] + beta[i % d[OW]];
    }
    ckb_bf16 *out = t[T_OUT];
    for (int64_t i = 0; i < total; i++) {
        const float v = skip == OP_GELU ? z[i] : ckb_op_gelu_tanh(z[i]);
        out[i] = ckb_f32_to_bf16(v * (float)CTL_SCALING_FACTOR);
    }
    free(z);
    free(gamma);
}

static void ctl_reference(const int64_t *d, void *const *t) { ctl_reference_without(d, t, -1); }

/* The deconvolution (every input value meets every weight of its input
 * channel: 2*N*IC*D*H*W*OC*KSIZE^3), then per output element: conv_bias 1,
 * the norm 5 (mean, variance 2, subtract and scale 2), the affine 2, gelu
 * (tanh) 8, the scaling 1. */
static double ctl_flops(const int64_t *d)
{
    const double ins = (double)d[N] * d[IC] * d[D] * d[H] * d[W];
    const double outs = (double)d[N] * d[OC] * d[OD] * d[OH] * d[OW];
    return 2.0 * ins * d[OC] * d[KSIZE] * d[KSIZE] * d[KSIZE] + 17.0 * outs;
}

static double ctl_bytes(const int64_t *d)
{
    return 2.0 * ((double)d[N] * d[IC] * d[D] * d[H] * d[W] +
                  (double)d[IC] * d[OC] * d[KSIZE] * d[KSIZE] * d[KSIZE] + d[OC] + 2.0 * d[OW] +
                  (double)d[N] * d[OC] * d[OD] * d[OH] * d[OW]);
}

const ckb_workload ckb_wl_28k_ConvTranspose3d_LayerNorm_GELU_Scaling = {
    .id = "28k_ConvTranspose3d_LayerNorm_GELU_Scaling",
    .model = "KernelBench level 2 #34",
    .op = "34_ConvTranspose3d_LayerNorm_GELU_Scaling",
    .tags = "conv,norm,elementwise",
    .summary = "out = gelu_tanh(layernorm_over_ow(conv_transpose3d(x, conv_weight) + conv_bias) "
               "* ln_weight + ln_bias) * SCALING_FACTOR, NCDHW, stride 2, pad 1, bf16 in, f32 "
               "chain, bf16 out",
    .ndims = 12,
    .dims = {{"N", {2, 2, 32}},
             {"IC", {8, 32, 32}},
             {"OC", {16, 64, 64}},
             {"D", {4, 16, 16}},
             {"H", {8, 32, 32}},
             {"W", {8, 32, 32}},
             {"KSIZE", {4, 4, 4}},
             {"STRIDE", {2, 2, 2}},
             {"PAD", {1, 1, 1}},
             {"OD", {8, 32, 32}},
             {"OH", {16, 64, 64}},
             {"OW", {16, 64, 64}}},
    .nconsts = 2,
    .consts = {{"EPS", CTL_EPS}, {"SCALING_FACTOR", CTL_SCALING_FACTOR}},
    .ntensors = 6,
    .tensors = {{"x", CKB_BF16, CKB_IN, 5, {N, IC, D, H, W}},
                {"conv_weight", CKB_BF16, CKB_IN, 5, {IC, OC, KSIZE, KSIZE, KSIZE}},
                {"conv_bias", CKB_BF16, CKB_IN, 1, {OC}, .cancelled = 1},
                /* [out_channels] in the original, which is OW there and here */
                {"ln_weight", CKB_BF16, CKB_IN, 1, {OW}},
                {"ln_bias", CKB_BF16, CKB_IN, 1, {OW}},
                {"out", CKB_BF16, CKB_OUT, 5, {N, OC, OD, OH, OW}}},
    .create_inputs = ctl_create_inputs,
    .baseline = ctl_baseline,
    .reference = ctl_reference,
    .flops = ctl_flops,
    .bytes = ctl_bytes,
    .nchain = 3,
    .chain = {"layernorm", "ln_affine", "gelu"},
    .reference_without = ctl_reference_without,
};
