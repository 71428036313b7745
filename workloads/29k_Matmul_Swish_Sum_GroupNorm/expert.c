/*
 * expert.c — hand-tuned fused GEMM + swish + bias + GroupNorm for
 * 29k_Matmul_Swish_Sum_GroupNorm:
 *     out = groupnorm(swish(x @ weight) + bias) * gn_weight + gn_bias
 * x [B, IN], weight [IN, OUT], GroupNorm over G groups of OUT/G contiguous
 * features of each row (biased variance, EPS). bf16 in, f32 accumulation
 * and f32 math through the chain, bf16 out.
 *
 * A candidate file (DESIGN §3): B, IN, OUT, G and EPS come from the
 * force-included header (they are macros: no local may be named B); the
 * tunables below are macros that `ckbench tune` overrides with -D.
 *
 * Design: a group is OUT/G = 64 contiguous columns of one row, so it lies
 * inside one column block of the GEMM and the whole norm is the GEMM's
 * epilogue; the f32 matrix the baseline writes, rereads for the bias, the
 * statistics, the normalisation and the rounding never exists:
 * - weight is packed once per call, by all threads, into 16-column panels
 *   in the pair ("VNNI") layout that AMX's tdpbf16ps and AVX-512's
 *   vdpbf16ps read (lane j of pair p: weight[2p][j] low, weight[2p+1][j]
 *   high); x needs no packing (two consecutive k of a row form a pair).
 * - Rows go in blocks of MB and columns in blocks of NB (whole groups). The
 *   GEMM accumulates an MB x NB f32 block (L1/L2 resident, in KC-deep
 *   passes); the epilogue then takes each row's groups from it: swish and
 *   bias, the group's mean and variance (two passes over 4 registers), the
 *   normalisation and affine, one rounding to bf16.
 * - The GEMM block (MMA=2, where AMX is targeted and the dims are
 *   multiples of 32): the kit's panel GEMM (ckb_kit_gemm.h), a 2 x 2 grid
 *   of 16 x 16 f32 accumulator tiles, A tiles straight from x, B tiles from
 *   the panels; threads split the row blocks once the packing is done.
 *   Otherwise the kit's blocked GEMM
 *   (ckb_kit_gemm.h) on the unit MMA names (0 vdpbf16ps, 1 f32 FMA) with
 *   the same epilogue (see its comment); a portable OpenMP path below AVX2.
 * - exp is a vector one within ~1 ulp of expf.
 * AMX needs the process's permission to use tile data (arch_prctl); the
 * sandbox asks for it before it loads the kernel (src/eval/child.c).
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

#ifndef MB /* rows per block (multiple of 32) */
#define MB 64
#endif
#ifndef NB /* columns per accumulator block (a multiple of 32 and of OUT/G) */
#define NB 256
#endif
#ifndef KC /* k per accumulation pass (multiple of 32); 0: all of K in one pass */
#define KC 0
#endif
#include "ckb_kit_unit.h" /* MMA: the matmul unit (bench: the host's fastest) */
#ifndef TN /* threads that split the columns (0: all of them; rows split among the rest) */
#define TN 0
#endif
/* the kit's unit: its dot (0 runs as 1 without AVX-512 BF16), or f32 FMA */
#define CKB_KIT_GEMM_UNIT (MMA == 1 ? 1 : 0)
#define CKB_KIT_PANEL_UNIT 2 /* the panel GEMM where AMX is targeted (MMA=2) */

#if MB % 32 != 0 || NB % 32 != 0 || KC % 32 != 0
#error "MB, NB and KC must be multiples of 32"
#endif

#define MSG_CG (OUT / G) /* features per group */

#include "ckb_kit_gemm.h"

#if MMA == 2 && CKB_KIT_AMX && B % 32 == 0 &&           \
    IN % 32 == 0 && OUT % 32 == 0 && OUT % G == 0 && (OUT / G) % 16 == 0

#define MSG_NB (NB < OUT ? NB : OUT)
#define MSG_MB (MB < B ? MB : B)
#if OUT % MSG_NB != 0 || B % MSG_MB != 0 || MSG_NB % MSG_CG != 0
#error "NB must divide OUT and hold whole groups, MB must divide B"
#endif

/* The epilogue of one block: out[0:MSG_MB, 0:MSG_NB] (rows OUT apart) from
 * the f32 products acc; bias, gamma, beta point at the block's column 0. */
static void msg__norm_block(const float *acc, const ckb_bf16 *bias, const ckb_bf16 *gamma,
                            const ckb_bf16 *beta, ckb_bf16 *out)
{
    enum { NV = MSG_CG / 16 };
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512 inv_n = _mm512_set1_ps(1.0f / (float)MSG_CG);
    for (int64_t i = 0; i < MSG_MB; i++)
        for (int64_t g = 0; g < MSG_NB; g += MSG_CG) {
            __m512 v[NV], s = _mm512_setzero_ps();
#pragma GCC unroll 8
            for (int u = 0; u < NV; u++) { /* swish(a) + bias = a / (1 + exp(-a)) + bias */
                __m512 a = _mm512_loadu_ps(acc + i * MSG_NB + g + 16 * u);
                __m512 e = ckb_kit_exp16(_mm512_sub_ps(_mm512_setzero_ps(), a));
                v[u] = _mm512_add_ps(_mm512_div_ps(a, _mm512_add_ps(one, e)),
                                     ckb_kit_load16_n(bias + g + 16 * u, 16));
                s = _mm512_add_ps(s, v[u]);
            }
            const __m512 mean = _mm512_mul_ps(_mm512_set1_ps(_mm512_reduce_add_ps(s)), inv_n);
            __m512 ss = _mm512_setzero_ps();
#pragma GCC unroll 8
            for (int u = 0; u < NV; u++) {
                v[u] = _mm512_sub_ps(v[u], mean);
                ss = _mm512_fmadd_ps(v[u], v[u], ss);
            }
            const float var = _mm512_reduce_add_ps(ss) / (float)MSG_CG;
            const __m512 rstd = _mm512_set1_ps(1.0f / sqrtf(var + EPS));
#pragma GCC unroll 8
            for (int u = 0; u < NV; u++) {
                __m512 y = _mm512_fmadd_ps(_mm512_mul_ps(v[u], rstd),
                                           ckb_kit_load16_n(gamma + g + 16 * u, 16),
                                           ckb_kit_load16_n(beta + g + 16 * u, 16));
                _mm256_storeu_si256((__m256i *)(out + i * OUT + g + 16 * u),
                                    (__m256i)_mm512_cvtneps_pbh(y));
            }
        }
}

struct msg__call {
    const ckb_bf16 *x, *bias, *gamma, *beta;
    const uint32_t *wp;
    ckb_bf16 *out;
};

/* Rows [i0, i0 + MSG_MB): each column block's sums in acc, then its norm. */
static void msg__rows(void *ctx, int64_t i0, void *acc)
{
    const struct msg__call *c = ctx;
    for (int64_t j0 = 0; j0 < OUT; j0 += MSG_NB) {
        ckb_kit_panel_gemm_f32(c->x + i0 * IN, IN, c->wp + j0 * IN / 2, IN, KC, acc, MSG_NB,
                               MSG_MB, MSG_NB / 16);
        msg__norm_block(acc, c->bias + j0, c->gamma + j0, c->beta + j0, c->out + i0 * OUT + j0);
    }
}

void workload(const ckb_bf16 *x, const ckb_bf16 *weight, const ckb_bf16 *bias,
              const ckb_bf16 *gn_weight, const ckb_bf16 *gn_bias, ckb_bf16 *out)
{
    const int64_t npanel = OUT / 16;
    uint32_t *wp = ckb_kit_alloc64((size_t)(IN * OUT) * 2);
    if (!wp) /* out of memory: no way to report, out stays unwritten */
        return;
    struct msg__call c = {x, bias, gn_weight, gn_bias, wp, out};
#pragma omp parallel
    {
        /* the packing, in runs of 4 panels (128-byte row segments) */
#pragma omp for schedule(static)
        for (int64_t q = 0; q < npanel; q += 4)
            ckb_kit_panel_pack_kn(weight, OUT, IN, q, q + 4 < npanel ? q + 4 : npanel, wp);
        ckb_kit_panel_rows(B, MSG_MB, (size_t)(MSG_MB * MSG_NB) * 4, msg__rows, &c);
    }
    free(wp);
}

#elif defined(__AVX2__) && defined(__FMA__) && OUT % G == 0
/*
 * The kit's path (no AMX, or dims the tiles above do not fit): the kit's
 * GEMM (ckb_kit_gemm.h: BLIS's loops around a micro-kernel on the bf16 dot
 * or on f32 FMA, per MMA). Each thread owns a range of columns (TN) and of
 * rows; per column block (NB rounded to whole groups and panels) the GEMM
 * leaves the f32 products of up to MSG_TR of its rows in an f32 tile, and the block's epilogue (msg__norm_rows8) takes
 * each row's groups from it: swish and bias, mean and variance, the
 * normalisation and affine, one rounding to bf16. Blocks: MB rows of x
 * packed at a time (the kit clamps it to L2), KC deep (0: 256 here, the
 * depth whose packed panel stays in L1).
 */

#define MSG_KC8 (KC > 0 ? KC : 256)
#ifndef MSG_TR /* rows per f32 tile (a multiple of the kit's MR) */
#define MSG_TR (1024 / CKB_KIT_GEMM8_MR * CKB_KIT_GEMM8_MR)
#endif

struct msg__epi {
    const float *t;
    int64_t ldt;
    const ckb_bf16 *bias, *gamma, *beta;
    ckb_bf16 *out;
};

/* swish(a) + bias = a / (1 + exp(-a)) + bias, 8 lanes. */
static inline __m256 msg__swish_bias8(__m256 a, __m256 b)
{
    const __m256 e = ckb_kit_exp8(_mm256_sub_ps(_mm256_setzero_ps(), a));
    return _mm256_add_ps(_mm256_div_ps(a, _mm256_add_ps(_mm256_set1_ps(1.0f), e)), b);
}

/* The block's epilogue: rows [m0, m1) x columns [j0, j0 + nc) of out from
 * the f32 products in t (row m0 and column j0 first); nc whole groups. */
static void msg__norm_rows8(void *ctx, int64_t m0, int64_t m1, int64_t j0, int64_t nc)
{
    const struct msg__epi *e = ctx;
    float v[MSG_CG] __attribute__((aligned(32)));
    for (int64_t i = m0; i < m1; i++) {
        const float *z = e->t + (i - m0) * e->ldt;
        for (int64_t g = 0; g < nc; g += MSG_CG) {
            const int64_t c = j0 + g;
            float mean = 0.0f, var = 0.0f;
            int64_t u = 0;
            __m256 s = _mm256_setzero_ps();
            for (; u + 8 <= MSG_CG; u += 8) {
                __m256 y = msg__swish_bias8(_mm256_loadu_ps(z + g + u),
                                            ckb_kit_load8_n(e->bias + c + u, 8));
                _mm256_store_ps(v + u, y);
                s = _mm256_add_ps(s, y);
            }
            mean = ckb_kit_hsum8(s);
            for (; u < MSG_CG; u++) {
                const float a = z[g + u];
                v[u] = a / (1.0f + expf(-a)) + ckb_bf16_to_f32(e->bias[c + u]);
                mean += v[u];
            }
            mean /= (float)MSG_CG;
            const __m256 mv = _mm256_set1_ps(mean);
            __m256 ss = _mm256_setzero_ps();
            for (u = 0; u + 8 <= MSG_CG; u += 8) {
                __m256 d = _mm256_sub_ps(_mm256_load_ps(v + u), mv);
                ss = _mm256_fmadd_ps(d, d, ss);
            }
            var = ckb_kit_hsum8(ss);
            for (; u < MSG_CG; u++)
                var += (v[u] - mean) * (v[u] - mean);
            const float rstd = 1.0f / sqrtf(var / (float)MSG_CG + (float)EPS);
            const __m256 rv = _mm256_set1_ps(rstd);
            ckb_bf16 *o = e->out + i * OUT + c;
            for (u = 0; u + 8 <= MSG_CG; u += 8) {
                __m256 y = _mm256_mul_ps(_mm256_sub_ps(_mm256_load_ps(v + u), mv), rv);
                y = _mm256_fmadd_ps(y, ckb_kit_load8_n(e->gamma + c + u, 8),
                                    ckb_kit_load8_n(e->beta + c + u, 8));
                ckb_kit_store8_n(o + u, y, 8);
            }
            for (; u < MSG_CG; u++)
                o[u] = ckb_f32_to_bf16((v[u] - mean) * rstd * ckb_bf16_to_f32(e->gamma[c + u]) +
                                       ckb_bf16_to_f32(e->beta[c + u]));
        }
    }
}

void workload(const ckb_bf16 *x, const ckb_bf16 *weight, const ckb_bf16 *bias,
              const ckb_bf16 *gn_weight, const ckb_bf16 *gn_bias, ckb_bf16 *out)
{
    enum { MR8 = CKB_KIT_GEMM8_MR, NR8 = CKB_KIT_GEMM8_NR };
    /* column blocks of whole groups and whole panels: a multiple of both */
    int64_t unit = MSG_CG;
    while (unit % NR8 != 0)
        unit += MSG_CG;
    const int64_t nb = NB / unit * unit > unit ? NB / unit * unit : unit;
    /* The thread grid: by default every thread takes a share of the
     * columns, packing only its share of the weight (at a few hundred rows
     * the weight is most of the traffic, and rows split would have every
     * thread pack all of it). */
    const ckb_kit_gemm_grid grid =
        ckb_kit_gemm_grid_make(omp_get_max_threads(), TN, (OUT + unit - 1) / unit);

#pragma omp parallel num_threads(grid.tm * grid.tn)
    {
        int64_t m0, m1, n0, n1; /* rows from multiples of MR, columns in whole units */
        ckb_kit_gemm_grid_share(grid, omp_get_thread_num(), B, MR8, OUT, unit, &m0, &m1, &n0, &n1);
        const int64_t rows = ((m1 - m0 < MSG_TR ? m1 - m0 : MSG_TR) + MR8 - 1) / MR8 * MR8;
        struct msg__epi e = {NULL, nb, bias, gn_weight, gn_bias, out};
        ckb_kit_gemm8_job g = {.a = x, .lda = IN, .b = weight, .ldb = OUT, .k = IN, .n = OUT,
                               .mc = MB, .nc = nb, .kc = MSG_KC8, .ldt = nb,
                               .done = msg__norm_rows8, .ctx = &e};
        /* one allocation per thread per call, freed below */
        const size_t a_n = ckb_kit_gemm8_ap_floats(&g) + 64, b_n = ckb_kit_gemm8_bp_floats(&g);
        const size_t t_n = (size_t)(rows * nb);
        float *buf = m0 < m1 && n0 < n1 ? ckb_kit_alloc64((a_n + b_n + t_n) * sizeof(float))
                                        : NULL;
        if (buf) { /* out of memory: no way to report, out stays unwritten */
            g.t = buf + a_n + b_n;
            e.t = g.t;
            for (int64_t mb = m0; mb < m1; mb += MSG_TR)
                ckb_kit_gemm8_run(&g, mb, m1 - mb < MSG_TR ? m1 : mb + MSG_TR, n0, n1, buf,
                                  buf + a_n);
        }
        free(buf);
    }
}

#else /* portable path: neither AVX-512 BF16 nor AVX2 + FMA, or OUT not whole groups */

/* The row epilogue's inputs. */
struct msg__rowctx {
    const ckb_bf16 *bias, *gamma, *beta;
    ckb_bf16 *out;
};

/* The kit's row-at-a-time GEMM; swish, the bias and each group's norm on
 * each finished row, rounded into out. */
static void msg__row(void *ctx, int64_t i, float *acc)
{
    const struct msg__rowctx *e = ctx;
    for (int64_t j = 0; j < OUT; j++)
        acc[j] = acc[j] / (1.0f + expf(-acc[j])) + ckb_bf16_to_f32(e->bias[j]);
    for (int64_t g0 = 0; g0 < OUT; g0 += MSG_CG) {
        float mean = 0.0f, var = 0.0f;
        for (int64_t j = g0; j < g0 + MSG_CG; j++)
            mean += acc[j];
        mean /= (float)MSG_CG;
        for (int64_t j = g0; j < g0 + MSG_CG; j++)
            var += (acc[j] - mean) * (acc[j] - mean);
        const float rstd = 1.0f / sqrtf(var / (float)MSG_CG + EPS);
        for (int64_t j = g0; j < g0 + MSG_CG; j++)
            e->out[i * OUT + j] = ckb_f32_to_bf16((acc[j] - mean) * rstd *
                                                      ckb_bf16_to_f32(e->gamma[j]) +
                                                  ckb_bf16_to_f32(e->beta[j]));
    }
}

void workload(const ckb_bf16 *x, const ckb_bf16 *weight, const ckb_bf16 *bias,
              const ckb_bf16 *gn_weight, const ckb_bf16 *gn_bias, ckb_bf16 *out)
{
    struct msg__rowctx e = {bias, gn_weight, gn_bias, out};
    ckb_kit_gemm_rows(x, B, IN, weight, OUT, NULL, msg__row, &e);
}

#endif
