/*
 * dnnl_ops.h — the baselines' oneDNN calls, one function per heavy op.
 *
 * This is the "competent engineer with the standard library" of DESIGN §3:
 * tensors stay in the workload's plain row-major layouts; oneDNN chooses its
 * own blocked layouts (format `any`) and the reorders into and out of them
 * run inside the call, so the baseline pays for them as a candidate would.
 * Primitive creation is cached by spec (the analogue of XLA's compile), so
 * only the first call of a size pays for it; warm-up absorbs that call.
 *
 * Specs must be zero-initialised before filling (they are compared bytewise).
 */
#ifndef CKB_DNNL_OPS_H
#define CKB_DNNL_OPS_H

#include <stdint.h>

#include "workloads/workload.h"

enum { CKB_MAX_ELTWISE = 4 };

typedef enum {
    CKB_ACT_RELU,       /* max(x, 0); alpha != 0 makes it leaky: x < 0 -> alpha*x */
    CKB_ACT_GELU_TANH,  /* jax.nn.gelu's default (approximate=True) */
    CKB_ACT_GELU_ERF,   /* exact gelu */
    CKB_ACT_SWISH,      /* x * sigmoid(alpha * x) */
    CKB_ACT_LOGISTIC,   /* sigmoid */
    CKB_ACT_TANH,
    CKB_ACT_MISH,
    CKB_ACT_CLIP,       /* clamp to [alpha, beta] */
    CKB_ACT_LINEAR,     /* alpha * x + beta */
} ckb_act;

typedef struct {
    ckb_act act;
    float alpha, beta;
} ckb_eltwise;

typedef struct {
    int64_t batch;        /* 0 or 1: one matmul; > 1: A, B, C batched along dim 0 */
    int64_t M, K, N;
    ckb_dtype a_type, b_type, c_type; /* c_type may differ: bf16 in, f32 out */
    int b_transposed;     /* B stored [N, K], as in x @ W.T */
    int b_broadcast;      /* with batch > 1: one B shared by every batch */
    int has_bias;         /* bias[N] added before the eltwise post-ops */
    ckb_dtype bias_type;
    float out_scale;      /* 0: none; else C = out_scale * (A @ B) before bias */
    int neltwise;
    ckb_eltwise eltwise[CKB_MAX_ELTWISE];
} ckb_matmul_spec;

/* C = post_ops(out_scale * A @ B + bias). Aborts with a message on a
 * oneDNN error: a baseline that cannot run is a broken harness. */
void ckb_dnnl_matmul(const ckb_matmul_spec *s, const void *A, const void *B, const void *bias,
                     void *C);

typedef struct {
    int spatial;           /* 2 (NCHW) or 3 (NCDHW) */
    int64_t N, IC, OC;
    int64_t in[3];         /* D, H, W (D unused when spatial == 2: put H, W in in[1], in[2]) */
    int64_t kernel[3];
    int64_t stride[3];
    int64_t pad[3];        /* symmetric zero padding */
    int transposed;        /* deconvolution (ConvTranspose); weights IOHW/IODHW */
    ckb_dtype src_type, wei_type, dst_type, bias_type;
    int has_bias;          /* bias[OC] */
    int neltwise;
    ckb_eltwise eltwise[CKB_MAX_ELTWISE];
} ckb_conv_spec;

/* Output spatial extent of dim i (0..2) for the spec. */
int64_t ckb_conv_out(const ckb_conv_spec *s, int i);

/* dst = post_ops(conv(src, wei) + bias); weights OIHW (OIDHW), or IOHW
 * (IODHW) when transposed, as PyTorch stores them. */
void ckb_dnnl_conv(const ckb_conv_spec *s, const void *src, const void *wei, const void *bias,
                   void *dst);

/* 1 when oneDNN computes bf16 on a bf16 unit of this CPU (AVX512_BF16 or
 * AMX); 0 when the baselines' bf16 matmuls and convolutions run in f32 with
 * the conversions inside the call (AVX2 hosts, AVX-512 without BF16). */
int ckb_dnnl_bf16_native(void);

/* oneDNN's version string, e.g. "2.6.3", for result metadata. */
const char *ckb_dnnl_version(void);
/* The CPU ISA oneDNN dispatches to, e.g. "avx512_core_bf16". */
const char *ckb_dnnl_isa(void);

#endif /* CKB_DNNL_OPS_H */
