/*
 * 39k_Conv2d_GELU_GlobalAvgPool — KernelBench level 2 #67 (JAXBench
 * benchmark/39k_Conv2d_GELU_GlobalAvgPool): out[n, c] = the mean over
 * (oh, ow) of gelu(conv2d(x, weight) + bias), gelu the tanh approximation
 * (jax.nn.gelu's default); NCHW, VALID padding, stride 1. bf16 in, f32
 * accumulation and f32 math through the pool, bf16 out.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/ops.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

enum { N, IC, OC, H, W, KH, KW, OH, OW };
enum { T_X, T_WEIGHT, T_BIAS, T_OUT };
/* The chain after the convolution; the pool makes the output (see README). */
enum { OP_BIAS, OP_GELU };

/* Stream of image n's contrast factor: clear of the tensors' streams. */
#define CGP_STREAM_IMAGE(n) (1000 + (uint64_t)(n))

static void cgp_create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench until upstream cdb2234, which drew the zero weights at
     * random (README):
     * x ~ U[0, 1), weight = bias = 0: every mean is gelu(0) = 0.
     * Here weight ~ N(0, 3/(IC*KH*KW)) (an O(1) convolution) and bias ~
     * N(0, 0.5) (where gelu bends), and each image n gets its own contrast,
     * x[n] ~ U[0, s_n) with s_n in [0.3, 2): a mean over 60 000 positions
     * of i.i.d. pixels is otherwise nearly the same for every image, and a
     * kernel that computed one image and copied it would pass. */
    const int64_t img = d[IC] * d[H] * d[W], fan_in = d[IC] * d[KH] * d[KW];
    ckb_bf16 *x = t[T_X];
    for (int64_t n = 0; n < d[N]; n++)
        ckb_fill_uniform_bf16(x + n * img, img, seed, CGP_STREAM_IMAGE(n), 0.0f,
                              ckb_seed_factor(seed, CGP_STREAM_IMAGE(n), 0.3f, 2.0f));
    ckb_fill_normal_bf16(t[T_WEIGHT], d[OC] * fan_in, seed, T_WEIGHT, 0.0f,
                         sqrtf(3.0f / (float)fan_in));
    ckb_fill_normal_bf16(t[T_BIAS], d[OC], seed, T_BIAS, 0.0f, 0.5f);
}

/* Per image: one oneDNN convolution with the bias and gelu(tanh) as its
 * epilogue into an f32 plane stack (16 MB at default), then the mean of
 * each plane. The pool could be a oneDNN pooling or reduction primitive,
 * which dnnl_ops does not expose. */
static void cgp_baseline(const int64_t *d, void *const *t)
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
    s.eltwise[0] = (ckb_eltwise){CKB_ACT_GELU_TANH, 0.0f, 0.0f};
    if (ckb_conv_out(&s, 1) != d[OH] || ckb_conv_out(&s, 2) != d[OW]) {
        fprintf(stderr, "ckbench: 39k_Conv2d_GELU_GlobalAvgPool: OH, OW must be H-KH+1, "
                        "W-KW+1\n");
        abort();
    }
    const int64_t plane = d[OH] * d[OW], img_in = d[IC] * d[H] * d[W];
    float *z = ckb_scratch(0, (size_t)(d[OC] * plane) * sizeof(float));
    float *mean = ckb_scratch(1, (size_t)d[OC] * sizeof(float));
    const ckb_bf16 *x = t[T_X];
    ckb_bf16 *out = t[T_OUT];
    for (int64_t n = 0; n < d[N]; n++) {
        ckb_dnnl_conv(&s, x + n * img_in, t[T_WEIGHT], t[T_BIAS], z);
        ckb_op_global_avgpool(z, mean, d[OC], plane);
        for (int64_t c = 0; c < d[OC]; c++)
            out[n * d[OC] + c] = ckb_f32_to_bf16(mean[c]);
    }
}

static void cgp_reference_without(const int64_t *d, void *const *t, int skip)
{
    const ckb_bf16 *x = t[T_X], *weight = t[T_WEIGHT], *bias = t[T_BIAS];
    ckb_bf16 *out = t[T_OUT];
    const int64_t plane = d[OH] * d[OW];
    float *z = malloc((size_t)(d[N] * d[OC] * plane) * sizeof *z);
    if (!z)
        abort();
#pragma omp parallel for collapse(2)
    for (int64_t n = 0; n < d[N]; n++)
        for (int64_t c = 0; c < d[OC]; c++) {
            float *zc = z + (n * d[OC] + c) * plane;
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
                    zc[oh * d[OW] + ow] = skip == OP_GELU ? acc : ckb_op_gelu_tanh(acc);
                }
            out[n * d[OC] + c] = ckb_f32_to_bf16(ckb_op_mean(zc, plane));
        }
    free(z);
}

static void cgp_reference(const int64_t *d, void *const *t) { cgp_reference_without(d, t, -1); }

/* The convolution, then per conv output: bias 1, gelu(tanh) 8, the sum 1;
 * and one divide per output. */
static double cgp_flops(const int64_t *d)
{
    const double outs = (double)d[N] * d[OC] * d[OH] * d[OW];
    return 2.0 * outs * d[IC] * d[KH] * d[KW] + 10.0 * outs + (double)d[N] * d[OC];
}

static double cgp_bytes(const int64_t *d)
{
    return 2.0 * ((double)d[N] * d[IC] * d[H] * d[W] + (double)d[OC] * d[IC] * d[KH] * d[KW] +
                  d[OC] + (double)d[N] * d[OC]);
}

const ckb_workload ckb_wl_39k_Conv2d_GELU_GlobalAvgPool = {
    .id = "39k_Conv2d_GELU_GlobalAvgPool",
    .model = "KernelBench level 2 #67",
    .op = "67_Conv2d_GELU_GlobalAvgPool",
    .tags = "conv,elementwise,pool",
    .summary = "out[n, c] = mean over (oh, ow) of gelu_tanh(conv2d(x, weight) + bias), NCHW, "
               "VALID, stride 1, bf16 in, f32 accumulate and chain, bf16 out",
    .ndims = 9,
    .scale_dim = "N",
    .dims = {{"N", {4, 16, 128}},
             {"IC", {8, 8, 8}},
             {"OC", {32, 64, 64}},
             {"H", {34, 256, 256}},
             {"W", {34, 256, 256}},
             {"KH", {3, 3, 3}},
             {"KW", {3, 3, 3}},
             {"OH", {32, 254, 254}},
             {"OW", {32, 254, 254}}},
    .ntensors = 4,
    .tensors = {{"x", CKB_BF16, CKB_IN, 4, {N, IC, H, W}},
                {"weight", CKB_BF16, CKB_IN, 4, {OC, IC, KH, KW}},
                {"bias", CKB_BF16, CKB_IN, 1, {OC}},
                {"out", CKB_BF16, CKB_OUT, 2, {N, OC}}},
    .create_inputs = cgp_create_inputs,
    .baseline = cgp_baseline,
    .reference = cgp_reference,
    .flops = cgp_flops,
    .bytes = cgp_bytes,
    .nchain = 2,
    .chain = {"bias", "gelu"},
    .reference_without = cgp_reference_without,
};
