/*
 * ops.h — the vocabulary the fused workloads chain (KernelBench level 2),
 * each op written once, exact in f32 (libm's expf/tanhf/erff, no fast
 * approximations), and tested once against its formula in double
 * (tests/test_ops.c). Baselines and references both use these, so a
 * workload's chain reads like its JAXBench source.
 *
 * Elementwise ops are static inline (they sit in the baselines' OpenMP
 * loops); the row, norm and pool ops work on f32 buffers.
 */
#ifndef CKB_OPS_H
#define CKB_OPS_H

#include <math.h>
#include <stdint.h>

#include "ckbench.h"

/* ---- activations, as jax.nn defines them ----------------------------- */

/* fmaxf, not a ternary: gcc turns the ternary into a branch that
 * mispredicts on random signs. NaN gives 0 either way. */
static inline float ckb_op_relu(float x) { return fmaxf(x, 0.0f); }
static inline float ckb_op_leaky_relu(float x, float slope) { return x >= 0.0f ? x : slope * x; }
static inline float ckb_op_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
static inline float ckb_op_swish(float x) { return x * ckb_op_sigmoid(x); } /* = silu */
static inline float ckb_op_tanh(float x) { return tanhf(x); }

/* jax.nn.gelu(approximate=True), JAX's default:
 * 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3);
 * the same maths with one expf instead of libm's tanhf (about 7x slower). */
static inline float ckb_op_gelu_tanh(float x)
{
    const float c2 = 1.5957691216057308f; /* 2 sqrt(2/pi) */
    return x / (1.0f + expf(-c2 * (x + 0.044715f * x * x * x)));
}

/* jax.nn.gelu(approximate=False) and torch's default GELU. */
static inline float ckb_op_gelu_erf(float x)
{
    return 0.5f * x * (1.0f + erff(x * 0.7071067811865476f));
}

/* softplus with the overflow guard jax.nn.softplus has (log1p(exp(x))). */
static inline float ckb_op_softplus(float x)
{
    return x > 20.0f ? x : log1pf(expf(x));
}

static inline float ckb_op_mish(float x) { return x * tanhf(ckb_op_softplus(x)); }

static inline float ckb_op_clamp(float x, float lo, float hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

static inline float ckb_op_hardtanh(float x) { return ckb_op_clamp(x, -1.0f, 1.0f); }

/* x * relu6(x + 3) / 6 */
static inline float ckb_op_hardswish(float x) { return x * ckb_op_clamp(x + 3.0f, 0.0f, 6.0f) / 6.0f; }

/* Dropout, training mode, made deterministic: element `index` is kept iff
 * ckb_uniform(key, index) >= p, and kept values are scaled by 1/(1-p). */
float ckb_op_dropout(float x, uint64_t key, uint64_t index, float p);

/* ---- reductions over a row of n contiguous floats ---------------------- */

float ckb_op_sum(const float *x, int64_t n);
float ckb_op_mean(const float *x, int64_t n);
float ckb_op_max(const float *x, int64_t n);
float ckb_op_min(const float *x, int64_t n);
/* log(sum(exp(x))), stable (max subtracted first). */
float ckb_op_logsumexp(const float *x, int64_t n);
/* In place: x = softmax(x), stable. */
void ckb_op_softmax(float *x, int64_t n);

/* ---- normalisations --------------------------------------------------- */
/* Each normalises groups of `count` values and applies an optional affine
 * (gamma/beta may be NULL): y = (x - mean) / sqrt(var + eps) * gamma + beta,
 * var the biased (population) variance, as jax/torch use in forward passes. */

/* LayerNorm over the last n values of each of `rows` rows; gamma/beta [n]. */
void ckb_op_layernorm(float *x, int64_t rows, int64_t n, const float *gamma, const float *beta,
                      float eps);

/* GroupNorm of x [N, C, L] (L = spatial size, 1 for a [N, C] matrix) with
 * `groups` groups of C/groups channels; gamma/beta [C]. */
void ckb_op_groupnorm(float *x, int64_t n, int64_t c, int64_t l, int64_t groups,
                      const float *gamma, const float *beta, float eps);

/* InstanceNorm of x [N, C, L]: each (sample, channel) over its L values;
 * gamma/beta [C] or NULL (torch's default affine=False). */
void ckb_op_instancenorm(float *x, int64_t n, int64_t c, int64_t l, const float *gamma,
                         const float *beta, float eps);

/* BatchNorm of x [N, C, L] per channel. Training mode (the statistics of
 * this batch over N and L) when mean/var are NULL; otherwise inference with
 * the given running statistics [C]. */
void ckb_op_batchnorm(float *x, int64_t n, int64_t c, int64_t l, const float *mean,
                      const float *var, const float *gamma, const float *beta, float eps);

/* Inference BatchNorm folded into one scale and shift per channel, so a
 * baseline can apply it in its row pass: y = x * a + c with
 * a = gamma / sqrt(var + eps), c = beta - mean * a (in double). The four
 * vectors [n] are bf16, as the workloads' inputs are. */
void ckb_op_batchnorm_fold(const ckb_bf16 *gamma, const ckb_bf16 *beta, const ckb_bf16 *mean,
                           const ckb_bf16 *var, int64_t n, double eps, float *a, float *c);

/* ---- pools ----------------------------------------------------------- */

/* AvgPool1d over the last axis: x [rows, n] -> y [rows, n / k], stride k,
 * no padding (the floor of n / k windows, as torch and jax do). */
void ckb_op_avgpool1d(const float *x, float *y, int64_t rows, int64_t n, int64_t k);

/* AvgPool over k x k (x k) windows with stride k of x [N, C, (D,) H, W];
 * dims is {D, H, W} with D = 1 for 2-D. */
void ckb_op_avgpool(const float *x, float *y, int64_t nc, const int64_t dims[3], int64_t k);

/* Global average over the L values of each of nc rows: y [nc]. */
void ckb_op_global_avgpool(const float *x, float *y, int64_t nc, int64_t l);

#endif /* CKB_OPS_H */
