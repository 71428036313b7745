/*
 * expert.c — hand-tuned fused GEMM + bias + gelu(tanh) + row softmax for
 * 50k_Matmul_GELU_Softmax: out[i,:] = softmax(gelu(x[i,:] @ weight + bias)),
 * bf16 in, f32 accumulation and f32 math through the softmax, bf16 out.
 *
 * A candidate file (DESIGN §3): B, IN, OUT come from the force-included
 * header (they are macros: no local may be named B); the tunables below are
 * macros that `ckbench tune` overrides with -D.
 *
 * Design: the 8p_GEMM expert's micro-kernel (weight packed into NR-column
 * panels in vdpbf16ps's pair layout, an MR x NR f32 tile in registers over
 * all of IN), with the whole chain fused around it:
 * - Rows go in blocks of MC. For one block, every panel of weight is packed
 *   and run, and the micro-kernel's epilogue adds the bias and applies gelu
 *   on the registers, storing f32 logits into a block buffer [MC][OUT]
 *   (MC * OUT * 4 bytes: sized to stay in L2/L3, never the whole matrix).
 * - The block's rows are then soft-maxed from that buffer (max, exp and
 *   sum, scale and the one rounding to bf16) while still in cache.
 * - Threads form a TM x TN grid: TM groups own disjoint row ranges, the TN
 *   threads of a group split a block's panels and then its rows, with a
 *   barrier between the two (TN = 1 needs no barrier at all; TN = 0, the
 *   default, puts every thread in one group: one buffer, half the repacking).
 * - exp is a vector one accurate to ~1 ulp (range reduction by ln 2 split
 *   in two, degree-7 polynomial, scalef), so the math is f32 as the
 *   baseline's expf; gelu is x / (1 + exp(-2u)) as src/workloads/ops.h.
 * - AMX (default where the compiler targets it and B, IN, OUT are multiples
 *   of 32): the same packed panels are what tdpbf16ps reads as weight tiles
 *   (16 pairs x 16 columns, rows NR pairs apart), x tiles load straight from
 *   x; a 2 x 2 grid of 16 x 16 f32 accumulator tiles covers 32 x 32 logits
 *   over all of IN, is stored into the block buffer and gets bias + gelu
 *   there while in L1. Each thread configures its tiles in the parallel
 *   region and releases them at its end. MR does not apply to this path (its
 *   rows step is 32). The harness grants the process AMX tile permission.
 * - MMA=1 (f32 FMA the host's fastest unit), or no AVX-512 BF16: the kit's
 *   f32 GEMM (ckb_kit_gemm.h) with the same fusion (see the comment over
 *   that path).
 * Repacking weight once per row block costs ~MR/MC of the matmul.
 * No state is kept between calls; buffers live for one call.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <immintrin.h>
#include <omp.h>

#include "ckbench.h"

/* ---- tunables (untuned defaults) --------------------------------------- */

/* The kit's (ckb_kit_blocks.h: MMA, MR, NR, MC, NC, KC, TN, AMX). The
 * path: the kit's resident driver (AMX tiles where targeted and the dims
 * allow, else vdpbf16ps) for MMA 2 or 0 where the target has AVX-512 BF16;
 * else its packed f32 FMA driver (zmm on AVX-512, ymm on AVX2: the faster
 * unit of a CPU whose bf16 dot runs at half the FMA rate, and the only one
 * below AVX-512 BF16); else portable C. */
#include "ckb_kit_unit.h"
#define CKB_KIT_BLOCKS_RESIDENT (MMA != 1)
#define CKB_KIT_BLOCKS_EPI ggs__epi
#define CKB_KIT_BLOCKS_EPI_AMX ggs__epi_amx
#define CKB_KIT_BLOCKS_TILES (B % 32 == 0 && IN % 32 == 0 && OUT % 32 == 0)
#ifndef MC /* rows per block: logits buffer MC x OUT f32 per thread group */
#define MC 768
#endif
#ifndef NC /* columns of weight packed per block (rounded up to whole panels of NR) */
#define NC 64
#endif
#include "ckb_kit_blocks.h"

/* Both paths' thread grid: the kit's, tn threads sharing a row block's
 * panels (TN; 0: all) and tm groups owning row ranges in whole steps of rb
 * rows (no more groups than steps). Every group runs nstep blocks of
 * GGS_MC(rb) rows, so that the barriers pair up; its logits buffer holds
 * zrows. */
#if CKB_KIT_BLOCKS_PATH
/* MC in whole steps of rb rows: a compile-time constant. */
#define GGS_MC(rb) (MC < (rb) ? (rb) : MC / (rb) * (rb))

typedef struct {
    ckb_kit_gemm_grid grid;
    int64_t nstep, zrows;
} ggs__plan;

static inline ggs__plan ggs__plan_make(int64_t rb)
{
    const int64_t npanel = (OUT + NR - 1) / NR;
    ggs__plan p = {ckb_kit_gemm_grid_make(omp_get_max_threads(), TN, npanel), 0, 0};
    if (p.grid.tm > (B + rb - 1) / rb)
        p.grid.tm = (int)((B + rb - 1) / rb);
    int64_t rmax = 0; /* the largest group's rows */
    for (int ti = 0; ti < p.grid.tm; ti++) {
        int64_t m0, m1, n0, n1;
        ckb_kit_gemm_grid_share(p.grid, ti * p.grid.tn, B, rb, OUT, NR, &m0, &m1, &n0, &n1);
        rmax = m1 - m0 > rmax ? m1 - m0 : rmax;
    }
    p.nstep = (rmax + GGS_MC(rb) - 1) / GGS_MC(rb);
    p.zrows = GGS_MC(rb) < rmax ? GGS_MC(rb) : rmax;
    return p;
}
#endif

#if CKB_KIT_BLOCKS_PATH == 16

/* The epilogues' context: a row block's f32 logits z (row i0 first, rows
 * OUT apart). */
struct ggs__epi {
    const ckb_bf16 *bias;
    float *z;
    int64_t i0;
};

/* The micro-kernel's epilogue on its registers: gelu(acc + bias) into z. */
static inline __attribute__((always_inline)) void
ggs__epi(void *ctx, __m512 acc[][CKB_KIT_GEMM16_NV], int64_t i, int64_t j, int mr, int nr)
{
    const struct ggs__epi *e = ctx;
    float *z = e->z + (i - e->i0) * OUT + j;
    __m512 bv[CKB_KIT_GEMM16_NV];
    CKB_KIT_GEMM16_ROW(bv, e->bias + j, nr);
#pragma GCC unroll 16
    CKB_KIT_GEMM_ROWS(r, MR, mr)
#pragma GCC unroll 4
        for (int v = 0; v < CKB_KIT_GEMM16_NV; v++)
            _mm512_mask_storeu_ps(z + r * OUT + 16 * v, ckb_kit_mask16(nr - 16 * v),
                                  ckb_kit_gelu16(_mm512_add_ps(acc[r][v], bv[v])));
}

/* The AMX block's epilogue: the same on a stored 32 x 32 f32 block. */
static inline __attribute__((always_inline)) void ggs__epi_amx(void *ctx, const float *tile,
                                                               int64_t i, int64_t j)
{
    const struct ggs__epi *e = ctx;
    float *z = e->z + (i - e->i0) * OUT + j;
    const __m512 bv0 = ckb_kit_load16_n(e->bias + j, 16);
    const __m512 bv1 = ckb_kit_load16_n(e->bias + j + 16, 16);
    for (int r = 0; r < 32; r++) {
        _mm512_storeu_ps(z + r * OUT,
                         ckb_kit_gelu16(_mm512_add_ps(_mm512_load_ps(tile + r * 32), bv0)));
        _mm512_storeu_ps(z + r * OUT + 16,
                         ckb_kit_gelu16(_mm512_add_ps(_mm512_load_ps(tile + r * 32 + 16), bv1)));
    }
}

/* Softmax of one row of f32 logits z (overwritten) into bf16 o. The row is
 * 4 * OUT bytes, small enough that its three sweeps hit L1/L2. */
static void ggs__softmax_row(float *z, ckb_bf16 *o)
{
    __m512 mx = _mm512_set1_ps(-INFINITY);
    for (int64_t j = 0; j < OUT; j += 16)
        mx = _mm512_max_ps(mx, _mm512_mask_loadu_ps(mx, ckb_kit_mask16(OUT - j), z + j));
    const __m512 m = _mm512_set1_ps(_mm512_reduce_max_ps(mx));
    __m512 s = _mm512_setzero_ps();
    for (int64_t j = 0; j < OUT; j += 16) {
        __mmask16 k = ckb_kit_mask16(OUT - j);
        __m512 e = ckb_kit_exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, z + j), m));
        s = _mm512_mask_add_ps(s, k, s, e);
        _mm512_mask_storeu_ps(z + j, k, e);
    }
    const __m512 inv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(s));
    for (int64_t j = 0; j < OUT; j += 16) {
        __mmask16 k = ckb_kit_mask16(OUT - j);
        __m512 y = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, z + j), inv);
        _mm256_mask_storeu_epi16((void *)(o + j), k, (__m256i)_mm512_cvtneps_pbh(y));
    }
}

/* One thread's share: its group's rows [m0, m1) in blocks of mc, panels
 * [q0, q1) of each (the kit's driver, ncp panels packed at a time into
 * bp), then rows of the block by thread tj of tn. All threads run nstep
 * blocks so that the barriers (tn > 1 only) pair up. */
static void ggs__share(const ckb_kit_gemm16_job *g, struct ggs__epi *e, ckb_bf16 *out, int64_t m0,
                       int64_t m1, int64_t mc, int64_t nstep, int tj, int tn, int64_t q0,
                       int64_t q1, int64_t ncp, uint32_t *bp)
{
    for (int64_t s = 0; s < nstep; s++) {
        int64_t i0 = m0 + s * mc, i1 = i0 + mc < m1 ? i0 + mc : m1;
        e->i0 = i0;
        if (i0 < i1 && q0 < q1)
            ckb_kit_gemm16_panels(g, i0, i1, q0, q1, ncp, bp);
        if (tn > 1) {
#pragma omp barrier
        }
        int64_t rows = i1 > i0 ? i1 - i0 : 0;
        for (int64_t i = rows * tj / tn; i < rows * (tj + 1) / tn; i++)
            ggs__softmax_row(e->z + i * OUT, out + (i0 + i) * OUT);
        if (tn > 1) {
#pragma omp barrier
        }
    }
}

void workload(const ckb_bf16 *x, const ckb_bf16 *weight, const ckb_bf16 *bias, ckb_bf16 *out)
{
    const ggs__plan p = ggs__plan_make(CKB_KIT_GEMM16_RB);
    /* the plan in locals, as the parallel region was tuned on */
    const int64_t npanel = (OUT + NR - 1) / NR;
    int tn = p.grid.tn, tm = p.grid.tm;
    const int64_t mc = GGS_MC(CKB_KIT_GEMM16_RB), nstep = p.nstep, zrows = p.zrows;
    float *zall = ckb_kit_alloc64((size_t)(tm * zrows * OUT) * sizeof(float) + 64);
    if (!zall) /* out of memory: no way to report, out stays unwritten */
        return;

#pragma omp parallel num_threads(tm * tn)
    {
        const int t = omp_get_thread_num(), ti = t / tn, tj = t % tn;
        /* row ranges start on multiples of the kernel's rows so that only
         * the last is ragged (the grid's shares, written out) */
        int64_t m0 = B * ti / tm / CKB_KIT_GEMM16_RB * CKB_KIT_GEMM16_RB;
        int64_t m1 = ti == tm - 1 ? B : B * (ti + 1) / tm / CKB_KIT_GEMM16_RB * CKB_KIT_GEMM16_RB;
        int64_t q0 = npanel * tj / tn, q1 = npanel * (tj + 1) / tn;
        int64_t ncp = (NC + NR - 1) / NR; /* panels per packed block */
        if (ncp > q1 - q0)
            ncp = q1 - q0;
        if (ncp < 1)
            ncp = 1;
        struct ggs__epi e = {bias, zall + ti * zrows * OUT, 0};
        /* a block's rows run past each packed block whole (mc = the block) */
        const ckb_kit_gemm16_job g = {.a = x, .lda = IN, .b = weight, .ldb = OUT, .m = B, .n = OUT,
                                      .k = IN, .mc = mc, .ctx = &e};
        const int64_t block_bytes = ncp * ckb_kit_gemm16_panel_words(&g) * 4;
        ckb_kit_gemm16_tiles_on();
        if (block_bytes <= CKB_KIT_GEMM16_STACK_MAX) {
            /* the stack's pages stay mapped from one call to the next */
            uint32_t buf[block_bytes / 4 + 16];
            uint32_t *bp = (uint32_t *)(((uintptr_t)buf + 63) & ~(uintptr_t)63);
            ggs__share(&g, &e, out, m0, m1, mc, nstep, tj, tn, q0, q1, ncp, bp);
        } else {
            /* every thread must still reach the barriers, buffer or not */
            uint32_t *bp = ckb_kit_alloc64((size_t)block_bytes);
            ggs__share(&g, &e, out, m0, m1, mc, nstep, tj, tn, bp ? q0 : 0, bp ? q1 : 0, ncp, bp);
            free(bp);
        }
        ckb_kit_gemm16_tiles_off();
    }
    free(zall);
}

#elif CKB_KIT_BLOCKS_PATH == 8
/*
 * The f32 FMA path (MMA=1, or no AVX-512 BF16): the kit's f32 GEMM
 * (ckb_kit_gemm.h: both operands widened to f32 while packed, BLIS's
 * loops, an MR x NR micro-kernel of zmm or ymm accumulators) leaves a block's f32 logits in its
 * buffer z [MC][OUT rounded up to NR] (which also holds the partial sums
 * between KC blocks); the row pass then adds the bias, applies gelu and
 * soft-maxes each row while it is in cache. The threads split as the
 * AVX-512 path's (a TM x TN grid, a barrier between the two phases when
 * TN > 1).
 */

#define GGS_LDZ ((OUT + NR - 1) / NR * NR)

/* softmax(gelu(z + bias)) of one row of f32 sums z (overwritten) into bf16
 * o; lanes past OUT are loaded as zero and left out of the max and sum. */
static void ggs__softmax_row8(float *z, const ckb_bf16 *bias, ckb_bf16 *o)
{
    __m256 mx = _mm256_set1_ps(-INFINITY);
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (int64_t j = 0; j < OUT; j += 8) {
        __m256 v = ckb_kit_gelu8(
            _mm256_add_ps(_mm256_loadu_ps(z + j), ckb_kit_load8_n(bias + j, OUT - j)));
        if (j + 8 > OUT) /* the tail: lanes past OUT out of the max */
            v = _mm256_blendv_ps(_mm256_set1_ps(-INFINITY), v,
                                 _mm256_castsi256_ps(_mm256_cmpgt_epi32(
                                     _mm256_set1_epi32((int)(OUT - j)), lane)));
        _mm256_storeu_ps(z + j, v);
        mx = _mm256_max_ps(mx, v);
    }
    const __m256 m = _mm256_set1_ps(ckb_kit_hmax8(mx));
    __m256 s = _mm256_setzero_ps();
    for (int64_t j = 0; j < OUT; j += 8) {
        __m256 v = _mm256_loadu_ps(z + j);
        __m256 e = _mm256_and_ps(ckb_kit_exp8(_mm256_sub_ps(v, m)),
                                 _mm256_cmp_ps(v, _mm256_set1_ps(-INFINITY), _CMP_NEQ_OQ));
        s = _mm256_add_ps(s, e);
        _mm256_storeu_ps(z + j, e);
    }
    const __m256 inv = _mm256_set1_ps(1.0f / ckb_kit_hsum8(s));
    for (int64_t j = 0; j < OUT; j += 8)
        ckb_kit_store8_n(o + j, _mm256_mul_ps(_mm256_loadu_ps(z + j), inv), OUT - j);
}

void workload(const ckb_bf16 *x, const ckb_bf16 *weight, const ckb_bf16 *bias, ckb_bf16 *out)
{
    const ggs__plan p = ggs__plan_make(MR);
    /* the plan in locals, as the parallel region was tuned on */
    const int64_t npanel = (OUT + NR - 1) / NR;
    int tn = p.grid.tn, tm = p.grid.tm;
    const int64_t mc = GGS_MC(MR), nstep = p.nstep, zrows = p.zrows;
    float *zall = ckb_kit_alloc64((size_t)(tm * zrows * GGS_LDZ) * sizeof(float) + 64);
    if (!zall) /* out of memory: no way to report, out stays unwritten */
        return;

#pragma omp parallel num_threads(tm * tn)
    {
        const int t = omp_get_thread_num(), ti = t / tn, tj = t % tn;
        /* row ranges start on multiples of MR, column ranges on panels (the
         * grid's shares, written out) */
        const int64_t m0 = B * ti / tm / MR * MR;
        const int64_t m1 = ti == tm - 1 ? B : B * (ti + 1) / tm / MR * MR;
        int64_t n0 = npanel * tj / tn * NR, n1 = npanel * (tj + 1) / tn * NR;
        if (n1 > OUT)
            n1 = OUT;
        float *z = zall + ti * zrows * GGS_LDZ;
        ckb_kit_gemm8_job g = {.a = x, .lda = IN, .b = weight, .ldb = OUT, .k = IN, .n = OUT,
                               .mc = MC, .nc = NC, .kc = KC, .t = z, .ldt = GGS_LDZ, .t_whole = 1};
        /* one allocation per thread per call, freed below; every thread
         * must still reach the barriers, buffer or not */
        const size_t a_n = ckb_kit_gemm8_ap_floats(&g) + 64, b_n = ckb_kit_gemm8_bp_floats(&g);
        float *buf = ckb_kit_alloc64(((a_n + b_n) * sizeof(float) + 63) / 64 * 64);
        for (int64_t s = 0; s < nstep; s++) {
            const int64_t i0 = m0 + s * mc, i1 = i0 + mc < m1 ? i0 + mc : m1;
            if (buf && i0 < i1 && n0 < n1)
                ckb_kit_gemm8_run(&g, i0, i1, n0, n1, buf, buf + a_n);
            if (tn > 1) {
#pragma omp barrier
            }
            const int64_t rows = i1 > i0 ? i1 - i0 : 0;
            for (int64_t i = rows * tj / tn; i < rows * (tj + 1) / tn; i++)
                ggs__softmax_row8(z + i * GGS_LDZ, bias, out + (i0 + i) * OUT);
            if (tn > 1) {
#pragma omp barrier
            }
        }
        free(buf);
    }
    free(zall);
}

#else /* portable path: neither AVX-512 BF16 nor AVX2 + FMA */

/* The kit's row-at-a-time GEMM from the bias; gelu and the softmax on each
 * finished row, rounded into out. */
static void ggs__row(void *ctx, int64_t i, float *acc)
{
    ckb_bf16 *o = (ckb_bf16 *)ctx + i * OUT;
    float mx = -INFINITY, s = 0.0f;
    for (int64_t j = 0; j < OUT; j++) {
        float v = acc[j];
        acc[j] = v / (1.0f + expf(-1.5957691216057308f * (v + 0.044715f * v * v * v)));
        mx = acc[j] > mx ? acc[j] : mx;
    }
    for (int64_t j = 0; j < OUT; j++)
        s += acc[j] = expf(acc[j] - mx);
    for (int64_t j = 0; j < OUT; j++)
        o[j] = ckb_f32_to_bf16(acc[j] / s);
}

void workload(const ckb_bf16 *x, const ckb_bf16 *weight, const ckb_bf16 *bias, ckb_bf16 *out)
{
    ckb_kit_gemm_rows(x, B, IN, weight, OUT, bias, ggs__row, out);
}

#endif
