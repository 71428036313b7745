/*
 * 18k_Conv2D_ReLU_BiasAdd — KernelBench level 2 #1 (JAXBench
 * benchmark/18k_Conv2D_ReLU_BiasAdd): out = relu(conv2d(x, weight) +
 * conv_bias) + bias, NCHW, VALID padding, stride 1; x [N, IC, H, W], weight
 * [OC, IC, KH, KW] (PyTorch layouts), conv_bias [OC], bias [OC] (the
 * original's [OC, 1, 1]: a per-channel add after the relu). bf16 in, f32
 * accumulation and epilogue, bf16 out.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

enum { N, IC, OC, H, W, KH, KW, OH, OW };
enum { T_X, T_WEIGHT, T_CONV_BIAS, T_BIAS, T_OUT };

static void convrelu_create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench until upstream cdb2234, which drew the zero weights at
     * random (README):
     * x ~ U[0, 1) and every weight and bias 0, so the answer is 0
     * whatever a kernel computes. Here x keeps U[0, 1) times a per-seed
     * factor (image-like, non-negative), weight ~ N(0, 3/(IC*KH*KW)) so the
     * convolution is O(1), and both biases ~ N(0, 0.5): relu clamps a part
     * of the outputs, conv_bias moves which ones, bias shifts them all. */
    const float sx = ckb_seed_factor(seed, T_X, 0.5f, 2.0f);
    const int64_t fan_in = d[IC] * d[KH] * d[KW];
    ckb_fill_uniform_bf16(t[T_X], d[N] * d[IC] * d[H] * d[W], seed, T_X, 0.0f, sx);
    ckb_fill_normal_bf16(t[T_WEIGHT], d[OC] * fan_in, seed, T_WEIGHT, 0.0f,
                         sqrtf(3.0f / (float)fan_in));
    ckb_fill_normal_bf16(t[T_CONV_BIAS], d[OC], seed, T_CONV_BIAS, 0.0f, 0.5f);
    ckb_fill_normal_bf16(t[T_BIAS], d[OC], seed, T_BIAS, 0.0f, 0.5f);
}

/* One oneDNN convolution per image, conv_bias and relu as its epilogue, into
 * an f32 plane stack that stays in cache, then the second bias added in an
 * OpenMP loop with one rounding to bf16: the chain stays in f32 (DESIGN §3).
 * The whole batch at once needs a 4-byte intermediate the size of out and
 * runs at half the speed; a bf16 intermediate rounds twice (README). The
 * per-channel add could ride on the convolution as a oneDNN binary post-op,
 * which dnnl_ops does not expose. */
static void convrelu_baseline(const int64_t *d, void *const *t)
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
    s.eltwise[0] = (ckb_eltwise){CKB_ACT_RELU, 0.0f, 0.0f};
    if (ckb_conv_out(&s, 1) != d[OH] || ckb_conv_out(&s, 2) != d[OW]) {
        fprintf(stderr, "ckbench: 18k_Conv2D_ReLU_BiasAdd: OH, OW must be H-KH+1, W-KW+1\n");
        abort();
    }
    const int64_t plane = d[OH] * d[OW], img_in = d[IC] * d[H] * d[W], img_out = d[OC] * plane;
    const size_t zsize = ((size_t)img_out * sizeof(float) + 63) & ~(size_t)63;
    /* Reused between calls, as XLA reuses its temporaries. */
    float *z = ckb_scratch(0, zsize);
    const ckb_bf16 *x = t[T_X], *bias = t[T_BIAS];
    ckb_bf16 *out = t[T_OUT];
    for (int64_t n = 0; n < d[N]; n++) {
        ckb_dnnl_conv(&s, x + n * img_in, t[T_WEIGHT], t[T_CONV_BIAS], z);
        ckb_bf16 *o = out + n * img_out;
#pragma omp parallel for schedule(static)
        for (int64_t c = 0; c < d[OC]; c++) {
            const float b = ckb_bf16_to_f32(bias[c]);
#pragma omp simd
            for (int64_t p = 0; p < plane; p++)
                o[c * plane + p] = ckb_f32_to_bf16(z[c * plane + p] + b);
        }
    }
}

static void convrelu_reference(const int64_t *d, void *const *t)
{
    const ckb_bf16 *x = t[T_X], *weight = t[T_WEIGHT], *conv_bias = t[T_CONV_BIAS],
                   *bias = t[T_BIAS];
    ckb_bf16 *out = t[T_OUT];
#pragma omp parallel for collapse(2)
    for (int64_t n = 0; n < d[N]; n++) {
        for (int64_t c = 0; c < d[OC]; c++) {
            for (int64_t oh = 0; oh < d[OH]; oh++) {
                for (int64_t ow = 0; ow < d[OW]; ow++) {
                    float acc = 0.0f;
                    for (int64_t ic = 0; ic < d[IC]; ic++)
                        for (int64_t kh = 0; kh < d[KH]; kh++)
                            for (int64_t kw = 0; kw < d[KW]; kw++)
                                acc += ckb_bf16_to_f32(
                                           x[((n * d[IC] + ic) * d[H] + oh + kh) * d[W] + ow + kw]) *
                                       ckb_bf16_to_f32(
                                           weight[((c * d[IC] + ic) * d[KH] + kh) * d[KW] + kw]);
                    float v = acc + ckb_bf16_to_f32(conv_bias[c]);
                    v = (v > 0.0f ? v : 0.0f) + ckb_bf16_to_f32(bias[c]);
                    out[((n * d[OC] + c) * d[OH] + oh) * d[OW] + ow] = ckb_f32_to_bf16(v);
                }
            }
        }
    }
}

/* The convolution, then conv_bias, relu and bias per output element. */
static double convrelu_flops(const int64_t *d)
{
    const double outs = (double)d[N] * d[OC] * d[OH] * d[OW];
    return 2.0 * outs * d[IC] * d[KH] * d[KW] + 3.0 * outs;
}

static double convrelu_bytes(const int64_t *d)
{
    return 2.0 * ((double)d[N] * d[IC] * d[H] * d[W] + (double)d[OC] * d[IC] * d[KH] * d[KW] +
                  2.0 * d[OC] + (double)d[N] * d[OC] * d[OH] * d[OW]);
}

const ckb_workload ckb_wl_18k_Conv2D_ReLU_BiasAdd = {
    .id = "18k_Conv2D_ReLU_BiasAdd",
    .model = "KernelBench level 2 #1",
    .op = "1_Conv2D_ReLU_BiasAdd",
    .tags = "conv,elementwise",
    .summary = "out = relu(conv2d(x, weight) + conv_bias) + bias, NCHW, VALID, stride 1, bf16 "
               "in, f32 accumulate, bf16 out",
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
    .ntensors = 5,
    .tensors = {{"x", CKB_BF16, CKB_IN, 4, {N, IC, H, W}},
                {"weight", CKB_BF16, CKB_IN, 4, {OC, IC, KH, KW}},
                {"conv_bias", CKB_BF16, CKB_IN, 1, {OC}},
                /* [OC, 1, 1] in the original: the same memory as [OC] */
                {"bias", CKB_BF16, CKB_IN, 1, {OC}},
                {"out", CKB_BF16, CKB_OUT, 4, {N, OC, OH, OW}}},
    .create_inputs = convrelu_create_inputs,
    .baseline = convrelu_baseline,
    .reference = convrelu_reference,
    .flops = convrelu_flops,
    .bytes = convrelu_bytes,
};
