#include "workloads/dnnl_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <oneapi/dnnl/dnnl.h>

#include "core/error.h"

#define DNNL_CHECK(call)                                                                 \
    do {                                                                                 \
        dnnl_status_t st__ = (call);                                                     \
        if (st__ != dnnl_success)                                                        \
            ckb_fatal("oneDNN call failed (%d) at %s:%d: %s", (int)st__, __FILE__, __LINE__, \
                      #call);                                                            \
    } while (0)

/* ---- engine and stream, one per process ------------------------------ */

static dnnl_engine_t ops__engine;
static dnnl_stream_t ops__stream;

static void ops__init(void)
{
    if (ops__engine)
        return;
    DNNL_CHECK(dnnl_engine_create(&ops__engine, dnnl_cpu, 0));
    DNNL_CHECK(dnnl_stream_create(&ops__stream, ops__engine, dnnl_stream_default_flags));
}

static dnnl_data_type_t ops__dt(ckb_dtype t)
{
    switch (t) {
    case CKB_BF16: return dnnl_bf16;
    case CKB_F32: return dnnl_f32;
    case CKB_I32: return dnnl_s32;
    }
    return dnnl_f32;
}

/* The type a primitive computes in. oneDNN has no bf16 kernels below AVX-512
 * (2.6 on an AVX2-only CPU answers "unimplemented"); there the competent
 * engineer's move is to compute in f32, with the bf16 <-> f32 conversions
 * inside the call, so the baseline pays for them. The conversions are a
 * parallel loop of ours (ops__arg): oneDNN's own bf16 reorder on such a CPU
 * is its reference code, 30 M elements/s here (770 ms for a 4096 x 4096
 * weight beside a 60 ms f32 matmul), which no engineer would keep. */
static int ops__bf16_native = -1;

/* The same holds where oneDNN has bf16 kernels but the CPU no bf16 unit
 * (AVX-512 without AVX512_BF16, e.g. an Intel Xeon that hides it): 2.6 then
 * emulates vdpbf16ps, and its bf16 matmul ran at 59 GFLOP/s (16% of the f32
 * FMA roof) at 8p's host size where f32 reaches several times that. */
static int ops__probe_bf16(void)
{
    if ((dnnl_get_effective_cpu_isa() & dnnl_cpu_isa_avx512_core_bf16) !=
        dnnl_cpu_isa_avx512_core_bf16)
        return 0;
    dnnl_memory_desc_t a, b, c;
    dnnl_dims_t d = {16, 16};
    DNNL_CHECK(dnnl_memory_desc_init_by_tag(&a, 2, d, dnnl_bf16, dnnl_ab));
    DNNL_CHECK(dnnl_memory_desc_init_by_tag(&b, 2, d, dnnl_bf16, dnnl_format_tag_any));
    DNNL_CHECK(dnnl_memory_desc_init_by_tag(&c, 2, d, dnnl_bf16, dnnl_ab));
    dnnl_matmul_desc_t desc;
    DNNL_CHECK(dnnl_matmul_desc_init(&desc, &a, &b, NULL, &c));
    dnnl_primitive_desc_t pd;
    if (dnnl_primitive_desc_create(&pd, &desc, NULL, ops__engine, NULL) != dnnl_success)
        return 0;
    dnnl_primitive_desc_destroy(pd);
    return 1;
}

static dnnl_data_type_t ops__compute_dt(ckb_dtype t)
{
    if (ops__bf16_native < 0)
        ops__bf16_native = ops__probe_bf16();
    if (t == CKB_BF16 && !ops__bf16_native)
        return dnnl_f32;
    return ops__dt(t);
}

int ckb_dnnl_bf16_native(void)
{
    ops__init();
    if (ops__bf16_native < 0)
        ops__bf16_native = ops__probe_bf16();
    return ops__bf16_native;
}

static dnnl_alg_kind_t ops__alg(ckb_act a)
{
    switch (a) {
    case CKB_ACT_RELU: return dnnl_eltwise_relu;
    case CKB_ACT_GELU_TANH: return dnnl_eltwise_gelu_tanh;
    case CKB_ACT_GELU_ERF: return dnnl_eltwise_gelu_erf;
    case CKB_ACT_SWISH: return dnnl_eltwise_swish;
    case CKB_ACT_LOGISTIC: return dnnl_eltwise_logistic;
    case CKB_ACT_TANH: return dnnl_eltwise_tanh;
    case CKB_ACT_MISH: return dnnl_eltwise_mish;
    case CKB_ACT_CLIP: return dnnl_eltwise_clip;
    case CKB_ACT_LINEAR: return dnnl_eltwise_linear;
    }
    return dnnl_eltwise_linear;
}

static dnnl_primitive_attr_t ops__attr(float out_scale, int n, const ckb_eltwise *e)
{
    dnnl_primitive_attr_t attr;
    DNNL_CHECK(dnnl_primitive_attr_create(&attr));
    if (out_scale != 0.0f)
        DNNL_CHECK(dnnl_primitive_attr_set_output_scales(attr, 1, 0, &out_scale));
    if (n > 0) {
        dnnl_post_ops_t po;
        DNNL_CHECK(dnnl_post_ops_create(&po));
        for (int i = 0; i < n; i++)
            DNNL_CHECK(dnnl_post_ops_append_eltwise(po, 1.0f, ops__alg(e[i].act), e[i].alpha,
                                                    e[i].beta));
        DNNL_CHECK(dnnl_primitive_attr_set_post_ops(attr, po));
        dnnl_post_ops_destroy(po);
    }
    return attr;
}

/* ---- one argument of a primitive: the user's plain memory and, where the
 * primitive chose another layout, a private buffer and the reorder ------- */

typedef struct {
    int is_output;
    dnnl_memory_t user;   /* wraps the caller's pointer, set per call */
    dnnl_memory_t plain;  /* the user's layout in the primitive's type: == user, or a
                             private f32 copy of a bf16 argument (the bf16 fallback) */
    size_t nconvert;      /* elements converted between user and plain; 0: none */
    dnnl_memory_t prim;   /* == plain when no reorder is needed */
    dnnl_primitive_t reorder; /* between plain and prim: the layout only */
} ops__arg;

static void ops__arg_init(ops__arg *a, const dnnl_memory_desc_t *user_md,
                          const dnnl_memory_desc_t *prim_md, int is_output)
{
    memset(a, 0, sizeof *a);
    a->is_output = is_output;
    DNNL_CHECK(dnnl_memory_create(&a->user, user_md, ops__engine, DNNL_MEMORY_NONE));
    a->plain = a->user;
    dnnl_memory_desc_t plain_md = *user_md;
    if (user_md->data_type == dnnl_bf16 && prim_md->data_type == dnnl_f32) {
        plain_md.data_type = dnnl_f32;
        a->nconvert = dnnl_memory_desc_get_size(user_md) / sizeof(ckb_bf16);
        DNNL_CHECK(dnnl_memory_create(&a->plain, &plain_md, ops__engine, DNNL_MEMORY_ALLOCATE));
    }
    if (dnnl_memory_desc_equal(&plain_md, prim_md)) {
        a->prim = a->plain;
        return;
    }
    DNNL_CHECK(dnnl_memory_create(&a->prim, prim_md, ops__engine, DNNL_MEMORY_ALLOCATE));
    dnnl_primitive_desc_t rpd;
    if (is_output)
        DNNL_CHECK(dnnl_reorder_primitive_desc_create(&rpd, prim_md, ops__engine, &plain_md,
                                                      ops__engine, NULL));
    else
        DNNL_CHECK(dnnl_reorder_primitive_desc_create(&rpd, &plain_md, ops__engine, prim_md,
                                                      ops__engine, NULL));
    DNNL_CHECK(dnnl_primitive_create(&a->reorder, rpd));
    dnnl_primitive_desc_destroy(rpd);
}

/* bf16 <-> f32 between the user's buffer and the plain copy, rounding to
 * nearest even as oneDNN's reorder does. */
static void ops__arg_convert(ops__arg *a)
{
    if (!a->nconvert)
        return;
    void *u, *p;
    DNNL_CHECK(dnnl_memory_get_data_handle(a->user, &u));
    DNNL_CHECK(dnnl_memory_get_data_handle(a->plain, &p));
    const long n = (long)a->nconvert;
    if (a->is_output) {
        const float *src = p;
        ckb_bf16 *dst = u;
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++)
            dst[i] = ckb_f32_to_bf16(src[i]);
    } else {
        const ckb_bf16 *src = u;
        float *dst = p;
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++)
            dst[i] = ckb_bf16_to_f32(src[i]);
    }
}

static void ops__arg_reorder(ops__arg *a)
{
    if (!a->reorder)
        return;
    dnnl_exec_arg_t args[2] = {
        {DNNL_ARG_FROM, a->is_output ? a->prim : a->plain},
        {DNNL_ARG_TO, a->is_output ? a->plain : a->prim},
    };
    DNNL_CHECK(dnnl_primitive_execute(a->reorder, ops__stream, 2, args));
    DNNL_CHECK(dnnl_stream_wait(ops__stream));
}

/* ---- a cached primitive with up to four arguments ----------------------- */

/* One entry per distinct spec in this process: the test runner holds every
 * workload's baselines at once. */
enum { OPS_MAX_ARGS = 4, OPS_CACHE = 1024 };

typedef struct {
    int kind; /* 1 matmul, 2 conv */
    union {
        ckb_matmul_spec mm;
        ckb_conv_spec conv;
    } spec;
    dnnl_primitive_t prim;
    int nargs;
    int arg_id[OPS_MAX_ARGS];
    ops__arg arg[OPS_MAX_ARGS];
} ops__entry;

static ops__entry ops__cache[OPS_CACHE];
static int ops__ncache;

static ops__entry *ops__lookup(int kind, const void *spec, size_t size)
{
    for (int i = 0; i < ops__ncache; i++)
        if (ops__cache[i].kind == kind && memcmp(&ops__cache[i].spec, spec, size) == 0)
            return &ops__cache[i];
    return NULL;
}

static ops__entry *ops__new_entry(int kind, const void *spec, size_t size)
{
    if (ops__ncache == OPS_CACHE)
        ckb_fatal("oneDNN primitive cache full (%d specs)", OPS_CACHE);
    ops__entry *e = &ops__cache[ops__ncache++];
    memset(e, 0, sizeof *e);
    e->kind = kind;
    memcpy(&e->spec, spec, size);
    return e;
}

/* Builds the primitive and its arguments from the op descriptor; user_md[i]
 * is the plain layout of argument arg_id[i]. */
static void ops__build(ops__entry *e, const_dnnl_op_desc_t desc, dnnl_primitive_attr_t attr,
                       int nargs, const int *arg_id, const dnnl_memory_desc_t *user_md)
{
    dnnl_primitive_desc_t pd;
    DNNL_CHECK(dnnl_primitive_desc_create(&pd, desc, attr, ops__engine, NULL));
    DNNL_CHECK(dnnl_primitive_create(&e->prim, pd));
    e->nargs = nargs;
    for (int i = 0; i < nargs; i++) {
        e->arg_id[i] = arg_id[i];
        const dnnl_memory_desc_t *prim_md = dnnl_primitive_desc_query_md(
            pd, dnnl_query_exec_arg_md, arg_id[i]);
        ops__arg_init(&e->arg[i], &user_md[i], prim_md, arg_id[i] == DNNL_ARG_DST);
    }
    dnnl_primitive_desc_destroy(pd);
    dnnl_primitive_attr_destroy(attr);
}

static void ops__run(ops__entry *e, void *const *ptrs)
{
    dnnl_exec_arg_t args[OPS_MAX_ARGS];
    for (int i = 0; i < e->nargs; i++) {
        DNNL_CHECK(dnnl_memory_set_data_handle(e->arg[i].user, ptrs[i]));
        if (!e->arg[i].is_output) {
            ops__arg_convert(&e->arg[i]);
            ops__arg_reorder(&e->arg[i]);
        }
        args[i].arg = e->arg_id[i];
        args[i].memory = e->arg[i].prim;
    }
    DNNL_CHECK(dnnl_primitive_execute(e->prim, ops__stream, e->nargs, args));
    DNNL_CHECK(dnnl_stream_wait(ops__stream));
    for (int i = 0; i < e->nargs; i++)
        if (e->arg[i].is_output) {
            ops__arg_reorder(&e->arg[i]);
            ops__arg_convert(&e->arg[i]);
        }
}

/* ---- matmul -------------------------------------------------------------- */

static ops__entry *ops__matmul_build(const ckb_matmul_spec *s)
{
    ops__entry *e = ops__new_entry(1, s, sizeof *s);
    int batched = s->batch > 1;
    int nd = batched ? 3 : 2;
    dnnl_memory_desc_t md[4], any_a, any_b, any_c, bias_md;
    dnnl_dims_t da = {s->batch, s->M, s->K}, dc = {s->batch, s->M, s->N};
    dnnl_dims_t db = {s->b_broadcast ? 1 : s->batch, s->K, s->N};
    if (!batched) {
        dnnl_dims_t a2 = {s->M, s->K}, b2 = {s->K, s->N}, c2 = {s->M, s->N};
        memcpy(da, a2, sizeof a2);
        memcpy(db, b2, sizeof b2);
        memcpy(dc, c2, sizeof c2);
    }
    dnnl_format_tag_t plain = batched ? dnnl_abc : dnnl_ab;
    dnnl_format_tag_t b_tag = s->b_transposed ? (batched ? dnnl_acb : dnnl_ba) : plain;

    DNNL_CHECK(dnnl_memory_desc_init_by_tag(&md[0], nd, da, ops__dt(s->a_type), plain));
    DNNL_CHECK(dnnl_memory_desc_init_by_tag(&md[1], nd, db, ops__dt(s->b_type), b_tag));
    DNNL_CHECK(dnnl_memory_desc_init_by_tag(&md[2], nd, dc, ops__dt(s->c_type), plain));
    /* Activations keep their plain layout (a row-major A is what the matmul
     * kernels want); weights are free to be packed. */
    DNNL_CHECK(dnnl_memory_desc_init_by_tag(&any_a, nd, da, ops__compute_dt(s->a_type), plain));
    DNNL_CHECK(dnnl_memory_desc_init_by_tag(&any_b, nd, db, ops__compute_dt(s->b_type),
                                            dnnl_format_tag_any));
    DNNL_CHECK(dnnl_memory_desc_init_by_tag(&any_c, nd, dc, ops__compute_dt(s->c_type), plain));
    int nargs = 3;
    int ids[4] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST, DNNL_ARG_BIAS};
    if (s->has_bias) {
        dnnl_dims_t dbias = {1, 1, s->N};
        if (!batched) {
            dbias[0] = 1;
            dbias[1] = s->N;
        }
        DNNL_CHECK(dnnl_memory_desc_init_by_tag(&md[3], nd, dbias, ops__dt(s->bias_type), plain));
        DNNL_CHECK(dnnl_memory_desc_init_by_tag(&bias_md, nd, dbias,
                                                ops__compute_dt(s->bias_type), plain));
        nargs = 4;
    }
    dnnl_matmul_desc_t desc;
    DNNL_CHECK(dnnl_matmul_desc_init(&desc, &any_a, &any_b, s->has_bias ? &bias_md : NULL,
                                     &any_c));
    ops__build(e, &desc, ops__attr(s->out_scale, s->neltwise, s->eltwise), nargs, ids, md);
    return e;
}

void ckb_dnnl_matmul(const ckb_matmul_spec *s, const void *A, const void *B, const void *bias,
                     void *C)
{
    ops__init();
    ops__entry *e = ops__lookup(1, s, sizeof *s);
    if (!e)
        e = ops__matmul_build(s);
    void *ptrs[4] = {(void *)A, (void *)B, C, (void *)bias};
    ops__run(e, ptrs);
}

/* ---- convolution and deconvolution -------------------------------------- */

int64_t ckb_conv_out(const ckb_conv_spec *s, int i)
{
    /* An unused spatial dim (D of a 2-D spec) may be left zero. */
    if (s->stride[i] == 0)
        return s->in[i];
    if (s->transposed)
        return (s->in[i] - 1) * s->stride[i] - 2 * s->pad[i] + s->kernel[i];
    return (s->in[i] + 2 * s->pad[i] - s->kernel[i]) / s->stride[i] + 1;
}

static ops__entry *ops__conv_build(const ckb_conv_spec *s)
{
    ops__entry *e = ops__new_entry(2, s, sizeof *s);
    int first = s->spatial == 3 ? 0 : 1; /* the spatial dims in use: in[first..2] */
    int ns = 3 - first, nd = 2 + ns;
    dnnl_dims_t dsrc = {s->N, s->IC}, ddst = {s->N, s->OC}, dwei = {s->OC, s->IC};
    dnnl_dims_t strides = {0}, pad = {0};
    for (int i = 0; i < ns; i++) {
        dsrc[2 + i] = s->in[first + i];
        ddst[2 + i] = ckb_conv_out(s, first + i);
        dwei[2 + i] = s->kernel[first + i];
        strides[i] = s->stride[first + i];
        pad[i] = s->pad[first + i];
    }
    dnnl_format_tag_t plain = nd == 5 ? dnnl_abcde : dnnl_abcd;
    dnnl_memory_desc_t md[4], any_src, any_wei, any_dst, bias_md;
    DNNL_CHECK(dnnl_memory_desc_init_by_tag(&md[0], nd, dsrc, ops__dt(s->src_type), plain));
    if (s->transposed) {
        /* PyTorch stores ConvTranspose weights [IC, OC, k...]; oneDNN's
         * logical order is [OC, IC, k...]: describe the user layout by strides. */
        dnnl_dims_t st;
        int64_t ksz = 1;
        for (int i = 0; i < ns; i++)
            ksz *= dwei[2 + i];
        st[0] = ksz;
        st[1] = s->OC * ksz;
        int64_t acc = 1;
        for (int i = nd - 1; i >= 2; i--) {
            st[i] = acc;
            acc *= dwei[i];
        }
        DNNL_CHECK(dnnl_memory_desc_init_by_strides(&md[1], nd, dwei, ops__dt(s->wei_type), st));
    } else {
        DNNL_CHECK(dnnl_memory_desc_init_by_tag(&md[1], nd, dwei, ops__dt(s->wei_type), plain));
    }
    DNNL_CHECK(dnnl_memory_desc_init_by_tag(&md[2], nd, ddst, ops__dt(s->dst_type), plain));
    DNNL_CHECK(dnnl_memory_desc_init_by_tag(&any_src, nd, dsrc, ops__compute_dt(s->src_type),
                                            dnnl_format_tag_any));
    DNNL_CHECK(dnnl_memory_desc_init_by_tag(&any_wei, nd, dwei, ops__compute_dt(s->wei_type),
                                            dnnl_format_tag_any));
    DNNL_CHECK(dnnl_memory_desc_init_by_tag(&any_dst, nd, ddst, ops__compute_dt(s->dst_type),
                                            dnnl_format_tag_any));
    int nargs = 3;
    int ids[4] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST, DNNL_ARG_BIAS};
    if (s->has_bias) {
        dnnl_dims_t db = {s->OC};
        DNNL_CHECK(dnnl_memory_desc_init_by_tag(&md[3], 1, db, ops__dt(s->bias_type), dnnl_a));
        DNNL_CHECK(dnnl_memory_desc_init_by_tag(&bias_md, 1, db, ops__compute_dt(s->bias_type),
                                                dnnl_a));
        nargs = 4;
    }
    const dnnl_memory_desc_t *pbias = s->has_bias ? &bias_md : NULL;
    dnnl_primitive_attr_t attr = ops__attr(0.0f, s->neltwise, s->eltwise);
    if (s->transposed) {
        dnnl_deconvolution_desc_t desc;
        DNNL_CHECK(dnnl_deconvolution_forward_desc_init(
            &desc, dnnl_forward_inference, dnnl_deconvolution_direct, &any_src, &any_wei, pbias,
            &any_dst, strides, pad, pad));
        ops__build(e, &desc, attr, nargs, ids, md);
    } else {
        dnnl_convolution_desc_t desc;
        DNNL_CHECK(dnnl_convolution_forward_desc_init(
            &desc, dnnl_forward_inference, dnnl_convolution_direct, &any_src, &any_wei, pbias,
            &any_dst, strides, pad, pad));
        ops__build(e, &desc, attr, nargs, ids, md);
    }
    return e;
}

void ckb_dnnl_conv(const ckb_conv_spec *s, const void *src, const void *wei, const void *bias,
                   void *dst)
{
    ops__init();
    ops__entry *e = ops__lookup(2, s, sizeof *s);
    if (!e)
        e = ops__conv_build(s);
    void *ptrs[4] = {(void *)src, (void *)wei, dst, (void *)bias};
    ops__run(e, ptrs);
}

/* ---- versions ------------------------------------------------------------ */

const char *ckb_dnnl_version(void)
{
    static char buf[32];
    const dnnl_version_t *v = dnnl_version();
    snprintf(buf, sizeof buf, "%d.%d.%d", v->major, v->minor, v->patch);
    return buf;
}

const char *ckb_dnnl_isa(void)
{
    switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_sse41: return "sse41";
    default: return "other";
    }
}
