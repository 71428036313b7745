/*
 * ckb_kit_gemm.h — the GEMM machinery the matmul experts share (8p, 11p,
 * 29k, 32k, 41k, 50k): bf16 operands, f32 accumulation.
 *
 * Three levels, each compiled where the target has it:
 * - portable C (always): ckb_kit_gemm_row, one row of C as an axpy over k that
 *   the compiler vectorises, and ckb_kit_gemm_rows, the whole product that
 *   way on the team, each row through the expert's row epilogue.
 * - AVX2 + FMA (also on AVX-512 targets): ckb_kit_gemm8_*, BLIS's five loops
 *   around an MR x NR f32 micro-kernel of ymm accumulators. bf16 is widened
 *   to f32 while it is packed (exact: a bf16 is an f32's top half), so the
 *   inner loop is pure f32 FMA, the fastest unit of a CPU without AVX-512
 *   BF16 (and of some with it). An expert plugs its epilogue in as a
 *   function called on each finished C tile, or on each finished column
 *   block, or reads the f32 sums the driver leaves in its buffer.
 * - AVX-512 BF16 and AMX: ckb_kit_amx_2x2 (a 32 x 32 block of C on tiles);
 *   the panel GEMM, ckb_kit_panel_* (f32 row blocks from packed panels, on
 *   AMX or vdpbf16ps: 29k, 32k); the resident driver, ckb_kit_gemm16_* (a
 *   tile's whole k in registers, on vdpbf16ps, f32 FMA or AMX: 8p, 11p,
 *   41k, 50k, 3p's projections). The primitives under them (lane masks,
 *   pair loads, exp, the tile configuration) are ckb_kit_simd.h's.
 *
 * An expert sets CKB_KIT_GEMM8_MR / CKB_KIT_GEMM8_NR before including this file
 * (defaults below: 6 x 16 in ymm, 6 x 64 for f32 FMA in zmm, 8 x 32 for the
 * dot). Only experts can include it (see README.md).
 *
 * CKB_KIT_GEMM_UNIT chooses the instructions of that driver's micro-kernel, in
 * the experts' MMA encoding: 1 (the default) f32 FMA in ymm, as above; 0
 * vdpbf16ps in zmm on bf16 pairs, where the target has AVX-512 BF16 (else
 * it runs as 1). Which is faster is the CPU's: an AMD Zen 4 runs the dot at
 * twice the FMA rate, an Intel Xeon without AMX at half. With 0 both
 * operands are packed as pairs of consecutive k (the "VNNI" layout, lane j
 * holding column j's pair), NR a multiple of 16 and MR at most 8; the job, the blocking, the
 * epilogues and their f32 tiles are the same, so an expert switches unit by
 * one macro.
 */
#pragma once

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <immintrin.h>

#include "ckbench.h"
#include "ckb_kit_alloc.h"
#include "ckb_kit_simd.h"

/* ---- portable ----------------------------------------------------------- */

/* acc[0:n] += a[0:k] @ b[0:k, 0:n] (b's rows ldb apart), in f32: k outer,
 * so the inner loop over j is a contiguous axpy the compiler vectorises. */

static inline void ckb_kit_gemm_row(const ckb_bf16 *a, int64_t k, const ckb_bf16 *b, int64_t ldb,
                                    int64_t n, float *restrict acc)
{
    for (int64_t q = 0; q < k; q++) {
        const float x = ckb_bf16_to_f32(a[q]);
        const ckb_bf16 *r = b + q * ldb;
        for (int64_t j = 0; j < n; j++)
            acc[j] += x * ckb_bf16_to_f32(r[j]);
    }
}

/*
 * The portable path of a GEMM expert, C = A @ B with A [m][k], B [k][n]
 * (rows k and n apart): on the team, one row of C at a time, acc[0:n] =
 * init (bf16, a bias; NULL: zero) + A[i] @ B, then epi(ctx, i, acc), which
 * may overwrite acc. One f32 row per thread; out of memory, nothing is
 * written (nothing to report it to).
 */
typedef void (*ckb_kit_gemm_row_epi)(void *ctx, int64_t i, float *acc);

static inline void ckb_kit_gemm_rows(const ckb_bf16 *a, int64_t m, int64_t k, const ckb_bf16 *b,
                                     int64_t n, const ckb_bf16 *init, ckb_kit_gemm_row_epi epi,
                                     void *ctx)
{
#pragma omp parallel
    {
        float *acc = malloc((size_t)n * sizeof(float));
        if (acc) {
#pragma omp for schedule(static)
            for (int64_t i = 0; i < m; i++) {
                for (int64_t j = 0; j < n; j++)
                    acc[j] = init ? ckb_bf16_to_f32(init[j]) : 0.0f;
                ckb_kit_gemm_row(a + i * k, k, b, n, n, acc);
                epi(ctx, i, acc);
            }
        }
        free(acc);
    }
}

/* a[0:k] . b[0:k] in f32 (both bf16, contiguous). */
static inline float ckb_kit_gemm_dot(const ckb_bf16 *a, const ckb_bf16 *b, int64_t k)
{
    float v = 0.0f;
#pragma omp simd reduction(+ : v)
    for (int64_t q = 0; q < k; q++)
        v += ckb_bf16_to_f32(a[q]) * ckb_bf16_to_f32(b[q]);
    return v;
}

/* for (r = 0; r < rows && r < mr; r++) as the epilogues loop over a tile's
 * real rows: the constant bound rows lets the compiler unroll it whole
 * (put `#pragma GCC unroll` before it), mr only leaves it; written as a
 * break because the && form compiles to other code. */
#define CKB_KIT_GEMM_ROWS(r, rows, mr)                                                             \
    for (int r = 0; r < (rows); r++)                                                               \
        if (r >= (mr))                                                                             \
            break;                                                                                 \
        else

/* ---- the thread grid ------------------------------------------------------ */

/*
 * How threads share C [m][n]: tn of them split the columns in whole units
 * (a panel, or a run of panels that an epilogue needs whole), each packing
 * only its share of B, and tm = nthr / tn split the rows in multiples of
 * rstep (a micro-kernel's rows). tn_want 0 (or >= nthr): every thread along
 * the columns; never more than there are units.
 */
typedef struct {
    int tm, tn;
} ckb_kit_gemm_grid;

static inline ckb_kit_gemm_grid ckb_kit_gemm_grid_make(int nthr, int tn_want, int64_t nunits)
{
    int tn = tn_want > 0 && tn_want < nthr ? tn_want : nthr;
    if (tn > nunits)
        tn = (int)nunits;
    if (tn < 1)
        tn = 1;
    return (ckb_kit_gemm_grid){nthr / tn, tn};
}

/* Thread t's rows [*m0, *m1) and columns [*n0, *n1); the last row group and
 * the last column group take what the rounding leaves. */
static inline void ckb_kit_gemm_grid_share(ckb_kit_gemm_grid g, int t, int64_t m, int64_t rstep,
                                           int64_t n, int64_t unit, int64_t *m0, int64_t *m1,
                                           int64_t *n0, int64_t *n1)
{
    const int ti = t / g.tn, tj = t % g.tn;
    const int64_t nunits = (n + unit - 1) / unit;
    *m0 = m * ti / g.tm / rstep * rstep;
    *m1 = ti == g.tm - 1 ? m : m * (ti + 1) / g.tm / rstep * rstep;
    *n0 = nunits * tj / g.tn * unit;
    *n1 = tj == g.tn - 1 ? n : nunits * (tj + 1) / g.tn * unit;
}

/* ---- AVX2 + FMA: the f32 path -------------------------------------------- */

#if defined(__AVX2__) && defined(__FMA__)

#ifndef CKB_KIT_GEMM_UNIT
#define CKB_KIT_GEMM_UNIT 1
#endif
#if CKB_KIT_GEMM_UNIT == 0 &&                                                                      \
    !(defined(__AVX512BF16__) && defined(__AVX512BW__) && defined(__AVX512VL__))
#undef CKB_KIT_GEMM_UNIT
#define CKB_KIT_GEMM_UNIT 1
#endif
#define CKB_KIT_GEMM_DOT (CKB_KIT_GEMM_UNIT == 0)
/* The widest registers of the target: 32 zmm on AVX-512, else 16 ymm. */
#if defined(__AVX512F__)
#define CKB_KIT_GEMM_WIDE 1
#else
#define CKB_KIT_GEMM_WIDE 0
#endif

/* The default tile per register file: 6 x 16 in ymm (12 accumulators, 2
 * panel vectors and a broadcast fill the 16); 8 x 32 for the dot; 6 x 64 for
 * f32 FMA in zmm, whose 24 accumulators need 10 loads per 24 FMAs where
 * 8 x 32 needs 10 per 16 (measured on 8p, Xeon without AMX: 6 x 64 7-10%
 * faster than 6 x 32 or 8 x 32). */
#ifndef CKB_KIT_GEMM8_MR
#define CKB_KIT_GEMM8_MR (CKB_KIT_GEMM_WIDE && CKB_KIT_GEMM_DOT ? 8 : 6)
#endif
#ifndef CKB_KIT_GEMM8_NR
#define CKB_KIT_GEMM8_NR (!CKB_KIT_GEMM_WIDE ? 16 : CKB_KIT_GEMM_DOT ? 32 : 64)
#endif
/* f32 FMA in zmm where the target has them and the tile is whole zmm. */
#define CKB_KIT_GEMM_ZMM (!CKB_KIT_GEMM_DOT && CKB_KIT_GEMM_WIDE && CKB_KIT_GEMM8_NR % 16 == 0)
#define CKB_KIT_GEMM8_V (CKB_KIT_GEMM8_NR / 8) /* ymm vectors per tile row */
#define CKB_KIT_GEMM8_AS 8                     /* values per k step in a packed A sliver */

#if CKB_KIT_GEMM_DOT || CKB_KIT_GEMM_ZMM /* zmm accumulators, NR / 16 a row */
#if CKB_KIT_GEMM8_NR % 16 != 0 || CKB_KIT_GEMM8_NR > 64 || CKB_KIT_GEMM8_MR < 1 ||                 \
    CKB_KIT_GEMM8_MR > 8 ||                                                                        \
    CKB_KIT_GEMM8_MR * (CKB_KIT_GEMM8_NR / 16) + CKB_KIT_GEMM8_NR / 16 + 1 > 32
#error "MR x NR must fit the 32 zmm registers: NR in {16,32,48,64}, MR <= 8"
#endif
#elif CKB_KIT_GEMM8_NR % 8 != 0 || CKB_KIT_GEMM8_NR < 8 || CKB_KIT_GEMM8_NR > 32 ||                \
    CKB_KIT_GEMM8_MR < 1 || CKB_KIT_GEMM8_MR > 8 ||                                                \
    CKB_KIT_GEMM8_MR * CKB_KIT_GEMM8_V + CKB_KIT_GEMM8_V + 1 > 16
#error "MR x NR must fit the 16 ymm registers: NR in {8,16,24,32}, MR <= 8, MR*(NR/8+1)+1 <= 16"
#endif

/* k steps of a packed kc-deep block: k itself in f32, pairs with the dot. */
static inline int64_t ckb_kit_gemm8_kp(int64_t kc)
{
    return CKB_KIT_GEMM_DOT ? (kc + 1) / 2 : kc;
}

/*
 * The epilogue of one finished C tile: tile[0:mr][0:nr] (rows
 * CKB_KIT_GEMM8_NR floats apart, columns past nr hold garbage) is C[i:i+mr,
 * j:j+nr] as f32 sums over all of k. ctx is the job's.
 */
typedef void (*ckb_kit_gemm8_epi)(void *ctx, const float *tile, int64_t i, int64_t j, int mr,
                                  int nr);

/* The epilogue of one finished column block: C[m0:m1, j0:j0+nc] is in the
 * job's f32 buffer t (see ckb_kit_gemm8_job). */
typedef void (*ckb_kit_gemm8_done)(void *ctx, int64_t m0, int64_t m1, int64_t j0, int64_t nc);

/*
 * One GEMM C = A @ B for ckb_kit_gemm8_run. A is [m][k] bf16, rows lda apart;
 * B is [k][n] bf16, rows ldb apart, or with bt its transpose [n][k] (an
 * nn.Linear weight), rows ldb apart; or bpre, B already packed whole by
 * ckb_kit_gemm8_prepack. Blocks (BLIS's): kc deep, nc columns of B packed at a
 * time (L3), mc rows of A packed at a time (L2); each is clamped, so any
 * positive value is correct.
 *
 * t: f32 sums, needed when k > kc (the partial sums between k blocks) or
 * when epi is NULL (the result is left there). Rows count from the m0 of
 * ckb_kit_gemm8_run, ldt apart; columns from the column block's first (t_whole
 * 0: t is at least rows x nc rounded up to NR) or from column 0 (t_whole
 * 1: ldt at least n rounded up to NR). Only rows below m1 are touched.
 * epi: called on each finished tile instead of storing it to t; done: on
 * each finished column block.
 */
typedef struct ckb_kit_gemm8_job {
    const ckb_bf16 *a;
    int64_t lda;
    const ckb_bf16 *b;
    int64_t ldb;
    int bt;
    const float *bpre;
    int64_t k, n;
    int64_t mc, nc, kc;
    float *t;
    int64_t ldt;
    int t_whole;
    ckb_kit_gemm8_epi epi;
    ckb_kit_gemm8_done done;
    void *ctx;
} ckb_kit_gemm8_job;

/* The blocks as the driver uses them: kc in [1, k], nc whole panels, mc
 * whole slivers. */
static inline int64_t ckb_kit_gemm8_kc(const ckb_kit_gemm8_job *g)
{
    if (g->kc < 1 || g->kc >= g->k)
        return g->k;
    /* pairs never straddle two k blocks: only the last may be odd */
    return CKB_KIT_GEMM_DOT ? (g->kc < 2 ? 2 : g->kc & ~(int64_t)1) : g->kc;
}

static inline int64_t ckb_kit_gemm8_nc(const ckb_kit_gemm8_job *g)
{
    int64_t nc = g->nc < 1 ? 1 : g->nc;
    return (nc + CKB_KIT_GEMM8_NR - 1) / CKB_KIT_GEMM8_NR * CKB_KIT_GEMM8_NR;
}

/* The packed A block is meant for L2 (the micro-kernel streams it once per
 * panel): mc is clamped so that it stays within CKB_KIT_GEMM8_A_BYTES, which
 * makes a large mc (an AVX-512 path's value) as good as the largest that
 * fits, not slower (measured on 8p: mc 4096 at kc 256 ran 1.24x longer). */
#ifndef CKB_KIT_GEMM8_A_BYTES
#define CKB_KIT_GEMM8_A_BYTES (256 << 10)
#endif

static inline int64_t ckb_kit_gemm8_mc(const ckb_kit_gemm8_job *g)
{
    int64_t mc = g->mc, cap = CKB_KIT_GEMM8_A_BYTES / 4 / ckb_kit_gemm8_kc(g);
    mc = mc < cap ? mc : cap;
    return mc < CKB_KIT_GEMM8_MR ? CKB_KIT_GEMM8_MR : mc / CKB_KIT_GEMM8_MR * CKB_KIT_GEMM8_MR;
}

/* Floats of the packing buffers one thread passes to ckb_kit_gemm8_run (ap
 * 32-byte aligned, bp too; bp unused with bpre). */
static inline size_t ckb_kit_gemm8_ap_floats(const ckb_kit_gemm8_job *g)
{
    return (size_t)(ckb_kit_gemm8_mc(g) / CKB_KIT_GEMM8_MR * ckb_kit_gemm8_kc(g) *
                    CKB_KIT_GEMM8_AS);
}

static inline size_t ckb_kit_gemm8_bp_floats(const ckb_kit_gemm8_job *g)
{
    return (size_t)(ckb_kit_gemm8_kc(g) * ckb_kit_gemm8_nc(g));
}

/* Floats of a whole pre-packed B: k x n rounded up to whole panels. */
static inline size_t ckb_kit_gemm8_prepack_floats(const ckb_kit_gemm8_job *g)
{
    return (size_t)(g->k * ((g->n + CKB_KIT_GEMM8_NR - 1) / CKB_KIT_GEMM8_NR * CKB_KIT_GEMM8_NR));
}

/* Eight rows of bf16 (k contiguous) into out[k][0:8] f32 (k stride floats
 * apart): 8 rows x 8 k transposed at a time as 16-bit lanes, then widened. */
static inline void ckb_kit_gemm8__pack8(const ckb_bf16 *const row[8], int64_t kc,
                                        float *restrict out, int64_t stride)
{
    int64_t k = 0;
    for (; k + 8 <= kc; k += 8) {
        __m128i x0 = _mm_loadu_si128((const __m128i *)(row[0] + k));
        __m128i x1 = _mm_loadu_si128((const __m128i *)(row[1] + k));
        __m128i x2 = _mm_loadu_si128((const __m128i *)(row[2] + k));
        __m128i x3 = _mm_loadu_si128((const __m128i *)(row[3] + k));
        __m128i x4 = _mm_loadu_si128((const __m128i *)(row[4] + k));
        __m128i x5 = _mm_loadu_si128((const __m128i *)(row[5] + k));
        __m128i x6 = _mm_loadu_si128((const __m128i *)(row[6] + k));
        __m128i x7 = _mm_loadu_si128((const __m128i *)(row[7] + k));
        __m128i a0 = _mm_unpacklo_epi16(x0, x1), a1 = _mm_unpackhi_epi16(x0, x1);
        __m128i a2 = _mm_unpacklo_epi16(x2, x3), a3 = _mm_unpackhi_epi16(x2, x3);
        __m128i a4 = _mm_unpacklo_epi16(x4, x5), a5 = _mm_unpackhi_epi16(x4, x5);
        __m128i a6 = _mm_unpacklo_epi16(x6, x7), a7 = _mm_unpackhi_epi16(x6, x7);
        __m128i b0 = _mm_unpacklo_epi32(a0, a2), b1 = _mm_unpackhi_epi32(a0, a2);
        __m128i b2 = _mm_unpacklo_epi32(a1, a3), b3 = _mm_unpackhi_epi32(a1, a3);
        __m128i b4 = _mm_unpacklo_epi32(a4, a6), b5 = _mm_unpackhi_epi32(a4, a6);
        __m128i b6 = _mm_unpacklo_epi32(a5, a7), b7 = _mm_unpackhi_epi32(a5, a7);
        float *o = out + k * stride;
        _mm256_store_ps(o + 0 * stride, ckb_kit_f32x8(_mm_unpacklo_epi64(b0, b4)));
        _mm256_store_ps(o + 1 * stride, ckb_kit_f32x8(_mm_unpackhi_epi64(b0, b4)));
        _mm256_store_ps(o + 2 * stride, ckb_kit_f32x8(_mm_unpacklo_epi64(b1, b5)));
        _mm256_store_ps(o + 3 * stride, ckb_kit_f32x8(_mm_unpackhi_epi64(b1, b5)));
        _mm256_store_ps(o + 4 * stride, ckb_kit_f32x8(_mm_unpacklo_epi64(b2, b6)));
        _mm256_store_ps(o + 5 * stride, ckb_kit_f32x8(_mm_unpackhi_epi64(b2, b6)));
        _mm256_store_ps(o + 6 * stride, ckb_kit_f32x8(_mm_unpacklo_epi64(b3, b7)));
        _mm256_store_ps(o + 7 * stride, ckb_kit_f32x8(_mm_unpackhi_epi64(b3, b7)));
    }
    const int rem = (int)(kc - k); /* fewer than 8 k left */
    for (int e = 0; e < rem; e++)
        for (int r = 0; r < 8; r++)
            out[(k + e) * stride + r] = ckb_bf16_to_f32(row[r][k + e]);
}

#if CKB_KIT_GEMM_DOT
/* Eight rows of bf16 (k contiguous, kc of them) into out[p][0:8] (p the
 * pair of k 2p, 2p+1; pairs stride apart): 8 rows x 8 pairs transposed as
 * 32-bit lanes at a time. An odd kc's last pair has a zero high half. */
static inline void ckb_kit_gemm8__pairs8(const ckb_bf16 *const row[8], int64_t kc,
                                         uint32_t *restrict out, int64_t stride)
{
    int64_t p = 0;
    for (; 2 * p + 16 <= kc; p += 8) {
        __m256i r[8], t[8], u[8];
        for (int i = 0; i < 8; i++)
            r[i] = _mm256_loadu_si256((const __m256i *)(row[i] + 2 * p));
        for (int i = 0; i < 8; i += 2) {
            t[i] = _mm256_unpacklo_epi32(r[i], r[i + 1]);
            t[i + 1] = _mm256_unpackhi_epi32(r[i], r[i + 1]);
        }
        for (int i = 0; i < 8; i += 4) {
            u[i] = _mm256_unpacklo_epi64(t[i], t[i + 2]);
            u[i + 1] = _mm256_unpackhi_epi64(t[i], t[i + 2]);
            u[i + 2] = _mm256_unpacklo_epi64(t[i + 1], t[i + 3]);
            u[i + 3] = _mm256_unpackhi_epi64(t[i + 1], t[i + 3]);
        }
        uint32_t *o = out + p * stride;
        for (int i = 0; i < 4; i++) {
            _mm256_storeu_si256((__m256i *)(o + i * stride),
                                _mm256_permute2x128_si256(u[i], u[i + 4], 0x20));
            _mm256_storeu_si256((__m256i *)(o + (i + 4) * stride),
                                _mm256_permute2x128_si256(u[i], u[i + 4], 0x31));
        }
    }
    for (; 2 * p < kc; p++)
        for (int i = 0; i < 8; i++)
            out[p * stride + i] = (uint32_t)row[i][2 * p] |
                                  (2 * p + 1 < kc ? (uint32_t)row[i][2 * p + 1] << 16 : 0u);
}

/* The dot's B panels from a row-major B: bp[q][(kc+1)/2][NR] pairs of
 * B[k0:k0+kc, j0 + NR q ...], the pair of column j from two rows; columns
 * past n are zero (never stored). */
static inline void ckb_kit_gemm8__pack_b_pairs(const ckb_kit_gemm8_job *g, int64_t k0, int64_t kc,
                                               int64_t j0, int64_t np, uint32_t *restrict bp)
{
    const int64_t kp = (kc + 1) / 2;
    /* row pair outer: each B row is read in one run of the block's columns
     * (a short run per panel, rows ldb apart, starves the prefetcher); 32
     * columns of two rows interleaved into 32 pairs by two word permutes */
    const __m512i ilo = _mm512_set_epi16(47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10, 41, 9,
                                         40, 8, 39, 7, 38, 6, 37, 5, 36, 4, 35, 3, 34, 2, 33, 1,
                                         32, 0);
    const __m512i ihi = _mm512_add_epi16(ilo, _mm512_set1_epi16(16));
    for (int64_t p = 0; p < kp; p++) {
        const ckb_bf16 *r0 = g->b + (k0 + 2 * p) * g->ldb;
        const ckb_bf16 *r1 = 2 * p + 1 < kc ? r0 + g->ldb : NULL;
        for (int64_t q = 0; q < np; q++) {
            uint32_t *dst = bp + (q * kp + p) * CKB_KIT_GEMM8_NR;
            for (int h = 0; h < CKB_KIT_GEMM8_NR; h += 32) {
                const int64_t j = j0 + q * CKB_KIT_GEMM8_NR + h, left = g->n - j;
                const __mmask32 m = left >= 32 ? ~(__mmask32)0
                                    : left <= 0 ? 0
                                                : (((__mmask32)1 << left) - 1);
                __m512i x0 = _mm512_maskz_loadu_epi16(m, r0 + j);
                __m512i x1 = r1 ? _mm512_maskz_loadu_epi16(m, r1 + j) : _mm512_setzero_si512();
                _mm512_storeu_si512((void *)(dst + h), _mm512_permutex2var_epi16(x0, ilo, x1));
                if (h + 16 < CKB_KIT_GEMM8_NR)
                    _mm512_storeu_si512((void *)(dst + h + 16),
                                        _mm512_permutex2var_epi16(x0, ihi, x1));
            }
        }
    }
}
#endif

/* Packs B[k0:k0+kc, j0:j0+nc] into panels bp[q][kc][NR] of f32 (the dot:
 * [q][(kc+1)/2][NR] pairs). Columns past n are zero (row-major B) or repeat
 * column n-1 (transposed B): never stored either way. Row-major B is read
 * row by row, each row one run. */
static inline void ckb_kit_gemm8_pack_b(const ckb_kit_gemm8_job *g, int64_t k0, int64_t kc,
                                        int64_t j0, int64_t nc, float *restrict bp)
{
    const int64_t np = (nc + CKB_KIT_GEMM8_NR - 1) / CKB_KIT_GEMM8_NR;
    if (g->bt) { /* a column's k run along its row: 8 columns transposed at a time */
        for (int64_t q = 0; q < np; q++)
            for (int h = 0; h < CKB_KIT_GEMM8_NR; h += 8) {
                const ckb_bf16 *row[8];
                for (int r = 0; r < 8; r++) {
                    int64_t j = j0 + q * CKB_KIT_GEMM8_NR + h + r;
                    row[r] = g->b + (j < g->n ? j : g->n - 1) * g->ldb + k0;
                }
#if CKB_KIT_GEMM_DOT
                ckb_kit_gemm8__pairs8(
                    row, kc, (uint32_t *)bp + q * ckb_kit_gemm8_kp(kc) * CKB_KIT_GEMM8_NR + h,
                    CKB_KIT_GEMM8_NR);
#else
                ckb_kit_gemm8__pack8(row, kc, bp + q * kc * CKB_KIT_GEMM8_NR + h, CKB_KIT_GEMM8_NR);
#endif
            }
        return;
    }
#if CKB_KIT_GEMM_DOT
    ckb_kit_gemm8__pack_b_pairs(g, k0, kc, j0, np, (uint32_t *)bp);
    return;
#endif
    for (int64_t k = 0; k < kc; k++) {
        const ckb_bf16 *row = g->b + (k0 + k) * g->ldb;
        for (int64_t q = 0; q < np; q++) {
            float *out = bp + (q * kc + k) * CKB_KIT_GEMM8_NR;
            const int64_t j = j0 + q * CKB_KIT_GEMM8_NR;
            if (j + CKB_KIT_GEMM8_NR <= g->n) {
#pragma GCC unroll 4
                for (int v = 0; v < CKB_KIT_GEMM8_V; v++)
                    _mm256_store_ps(out + 8 * v, ckb_kit_f32x8(_mm_loadu_si128(
                                                     (const __m128i *)(row + j + 8 * v))));
            } else {
                for (int x = 0; x < CKB_KIT_GEMM8_NR; x++)
                    out[x] = j + x < g->n ? ckb_bf16_to_f32(row[j + x]) : 0.0f;
            }
        }
    }
}

/* Packs panels [q0, q1) of B (all of k) into dst, laid out as the driver
 * reads a pre-packed B: k block pc at dst + pc * (n rounded up to CKB_KIT_GEMM8_NR), its
 * panel q at + q * ckb_kit_gemm8_kp(kc) * CKB_KIT_GEMM8_NR. Threads may split the panels; dst needs
 * ckb_kit_gemm8_prepack_floats floats, 32-byte aligned. */
static inline void ckb_kit_gemm8_prepack(const ckb_kit_gemm8_job *g, float *dst, int64_t q0,
                                         int64_t q1)
{
    const int64_t kcb = ckb_kit_gemm8_kc(g),
                  npad = (int64_t)(ckb_kit_gemm8_prepack_floats(g) / g->k);
    for (int64_t pc = 0; pc < g->k; pc += kcb) {
        const int64_t kc = g->k - pc < kcb ? g->k - pc : kcb;
        for (int64_t q = q0; q < q1; q++)
            ckb_kit_gemm8_pack_b(g, pc, kc, q * CKB_KIT_GEMM8_NR, CKB_KIT_GEMM8_NR,
                                 dst + pc * npad + q * ckb_kit_gemm8_kp(kc) * CKB_KIT_GEMM8_NR);
    }
}

/* Packs A[i0:i0+mc, k0:k0+kc] into slivers ap[s][kc][8] of f32; rows past
 * the block repeat its last row (computed, never stored). */
static inline void ckb_kit_gemm8_pack_a(const ckb_kit_gemm8_job *g, int64_t i0, int64_t mc,
                                        int64_t k0, int64_t kc, float *restrict ap)
{
    for (int64_t s = 0; s * CKB_KIT_GEMM8_MR < mc; s++) {
        const ckb_bf16 *row[8];
        for (int r = 0; r < 8; r++) {
            int64_t i = s * CKB_KIT_GEMM8_MR + (r < CKB_KIT_GEMM8_MR ? r : CKB_KIT_GEMM8_MR - 1);
            row[r] = g->a + (i0 + (i < mc ? i : mc - 1)) * g->lda + k0;
        }
#if CKB_KIT_GEMM_DOT
        ckb_kit_gemm8__pairs8(row, kc, (uint32_t *)ap + s * ckb_kit_gemm8_kp(kc) * CKB_KIT_GEMM8_AS,
                              CKB_KIT_GEMM8_AS);
#else
        ckb_kit_gemm8__pack8(row, kc, ap + s * kc * CKB_KIT_GEMM8_AS, CKB_KIT_GEMM8_AS);
#endif
    }
}

/* The accumulators: zmm for the dot and for f32 FMA on AVX-512 targets (an
 * Intel core with two 512-bit FMA ports runs them at twice the ymm rate),
 * ymm otherwise. */
#if CKB_KIT_GEMM_ZMM || CKB_KIT_GEMM_DOT
#define CKB_KIT_GEMM8__W 16
#define CKB_KIT_GEMM8__VEC __m512
#define CKB_KIT_GEMM8__ZERO _mm512_setzero_ps
#define CKB_KIT_GEMM8__LOADU _mm512_loadu_ps
#define CKB_KIT_GEMM8__STOREU _mm512_storeu_ps
#define CKB_KIT_GEMM8__BCAST(p) _mm512_set1_ps(*(p))
#define CKB_KIT_GEMM8__FMA _mm512_fmadd_ps
#define CKB_KIT_GEMM8__ADD _mm512_add_ps
#else
#define CKB_KIT_GEMM8__W 8
#define CKB_KIT_GEMM8__VEC __m256
#define CKB_KIT_GEMM8__ZERO _mm256_setzero_ps
#define CKB_KIT_GEMM8__LOADU _mm256_loadu_ps
#define CKB_KIT_GEMM8__STOREU _mm256_storeu_ps
#define CKB_KIT_GEMM8__BCAST(p) _mm256_broadcast_ss(p)
#define CKB_KIT_GEMM8__FMA _mm256_fmadd_ps
#define CKB_KIT_GEMM8__ADD _mm256_add_ps
#endif
#define CKB_KIT_GEMM8__NV (CKB_KIT_GEMM8_NR / CKB_KIT_GEMM8__W) /* accumulators per tile row */

/*
 * The micro-kernel: acc = a[0:kc] (CKB_KIT_GEMM8_MR rows of a sliver) x b[0:kc] (CKB_KIT_GEMM8_NR
 * columns of a panel; the dot: (kc+1)/2 pairs of each), plus the partial
 * sums in t (rows ldt apart) when add. Not last (or no epi): the sums go to
 * t, rows below mr only; last with epi: the tile goes to epi.
 */
static inline __attribute__((always_inline)) void
ckb_kit_gemm8__ukernel(int64_t kc, const float *restrict a, const float *restrict b,
                       float *restrict t, int64_t ldt, int add, int last, ckb_kit_gemm8_epi epi,
                       void *ctx, int64_t i, int64_t j, int mr, int nr)
{
    CKB_KIT_GEMM8__VEC acc[CKB_KIT_GEMM8_MR][CKB_KIT_GEMM8__NV];
    CKB_KIT_EACH_ACC(r, CKB_KIT_GEMM8_MR, v, CKB_KIT_GEMM8__NV)
        acc[r][v] = CKB_KIT_GEMM8__ZERO();
#if CKB_KIT_GEMM_DOT
    /* (kc+1)/2 pairs of k; a's pair of row r broadcast into every lane */
    const uint32_t *restrict ap = (const uint32_t *)a, *restrict bp = (const uint32_t *)b;
#pragma GCC unroll 2
    for (int64_t p = 0; p < (kc + 1) / 2; p++) {
        __m512bh bv[CKB_KIT_GEMM8__NV];
#pragma GCC unroll 4
        for (int v = 0; v < CKB_KIT_GEMM8__NV; v++)
            bv[v] =
                (__m512bh)_mm512_loadu_si512((const void *)(bp + p * CKB_KIT_GEMM8_NR + 16 * v));
#pragma GCC unroll 8
        for (int r = 0; r < CKB_KIT_GEMM8_MR; r++) {
            const __m512bh x = (__m512bh)_mm512_set1_epi32((int)ap[p * CKB_KIT_GEMM8_AS + r]);
#pragma GCC unroll 4
            for (int v = 0; v < CKB_KIT_GEMM8__NV; v++)
                acc[r][v] = _mm512_dpbf16_ps(acc[r][v], bv[v], x);
        }
    }
#else
#pragma GCC unroll 4
    for (int64_t k = 0; k < kc; k++) {
        CKB_KIT_GEMM8__VEC bv[CKB_KIT_GEMM8__NV];
#pragma GCC unroll 4
        for (int v = 0; v < CKB_KIT_GEMM8__NV; v++)
            bv[v] = CKB_KIT_GEMM8__LOADU(b + k * CKB_KIT_GEMM8_NR + CKB_KIT_GEMM8__W * v);
#pragma GCC unroll 8
        for (int r = 0; r < CKB_KIT_GEMM8_MR; r++) {
            CKB_KIT_GEMM8__VEC x = CKB_KIT_GEMM8__BCAST(a + k * CKB_KIT_GEMM8_AS + r);
#pragma GCC unroll 4
            for (int v = 0; v < CKB_KIT_GEMM8__NV; v++)
                acc[r][v] = CKB_KIT_GEMM8__FMA(x, bv[v], acc[r][v]);
        }
    }
#endif
    if (add) {
#pragma GCC unroll 8
        for (int r = 0; r < CKB_KIT_GEMM8_MR; r++)
            if (r < mr)
#pragma GCC unroll 4
                for (int v = 0; v < CKB_KIT_GEMM8__NV; v++)
                    acc[r][v] = CKB_KIT_GEMM8__ADD(
                        acc[r][v], CKB_KIT_GEMM8__LOADU(t + r * ldt + CKB_KIT_GEMM8__W * v));
    }
    if (!last || !epi) {
#pragma GCC unroll 8
        for (int r = 0; r < CKB_KIT_GEMM8_MR; r++)
            if (r < mr)
#pragma GCC unroll 4
                for (int v = 0; v < CKB_KIT_GEMM8__NV; v++)
                    CKB_KIT_GEMM8__STOREU(t + r * ldt + CKB_KIT_GEMM8__W * v, acc[r][v]);
        return;
    }
    float tile[CKB_KIT_GEMM8_MR * CKB_KIT_GEMM8_NR] __attribute__((aligned(64)));
#pragma GCC unroll 8
    for (int r = 0; r < CKB_KIT_GEMM8_MR; r++)
#pragma GCC unroll 4
        for (int v = 0; v < CKB_KIT_GEMM8__NV; v++)
            CKB_KIT_GEMM8__STOREU(tile + r * CKB_KIT_GEMM8_NR + CKB_KIT_GEMM8__W * v, acc[r][v]);
    epi(ctx, tile, i, j, mr, nr);
}

/*
 * C[m0:m1, n0:n1] of the job (n0 a multiple of CKB_KIT_GEMM8_NR): BLIS's loops
 *   jc: nc columns   pc: kc deep, pack B   ic: mc rows, pack A
 *   jr, ir: the micro-kernel over one panel and one sliver.
 * ap, bp: this thread's packing buffers (ckb_kit_gemm8_ap_floats and
 * ckb_kit_gemm8_bp_floats, 32-byte aligned).
 */
static inline __attribute__((always_inline)) void ckb_kit_gemm8_run(const ckb_kit_gemm8_job *g,
                                                                    int64_t m0, int64_t m1,
                                                                    int64_t n0, int64_t n1,
                                                                    float *ap, float *bp)
{
    const int64_t kcb = ckb_kit_gemm8_kc(g), ncb = ckb_kit_gemm8_nc(g), mcb = ckb_kit_gemm8_mc(g);
    const int64_t npad = (g->n + CKB_KIT_GEMM8_NR - 1) / CKB_KIT_GEMM8_NR * CKB_KIT_GEMM8_NR;
    const ckb_kit_gemm8_epi epi = g->epi;
    for (int64_t jc = n0; jc < n1; jc += ncb) {
        const int64_t nc = n1 - jc < ncb ? n1 - jc : ncb;
        for (int64_t pc = 0; pc < g->k; pc += kcb) {
            const int64_t kc = g->k - pc < kcb ? g->k - pc : kcb;
            const int add = pc > 0, last = pc + kc >= g->k;
            const float *b = bp;
            if (g->bpre)
                b = g->bpre + pc * npad + jc * ckb_kit_gemm8_kp(kc);
            else
                ckb_kit_gemm8_pack_b(g, pc, kc, jc, nc, bp);
            for (int64_t ic = m0; ic < m1; ic += mcb) {
                const int64_t mc = m1 - ic < mcb ? m1 - ic : mcb;
                ckb_kit_gemm8_pack_a(g, ic, mc, pc, kc, ap);
                for (int64_t jr = 0; jr < nc; jr += CKB_KIT_GEMM8_NR) {
                    const int nr = nc - jr < CKB_KIT_GEMM8_NR ? (int)(nc - jr) : CKB_KIT_GEMM8_NR;
                    const float *bb = b + jr * ckb_kit_gemm8_kp(kc); /* panel jr / NR */
                    for (int64_t ir = 0; ir < mc; ir += CKB_KIT_GEMM8_MR) {
                        const int mr =
                            mc - ir < CKB_KIT_GEMM8_MR ? (int)(mc - ir) : CKB_KIT_GEMM8_MR;
                        float *tt = g->t ? g->t + (ic - m0 + ir) * g->ldt +
                                               (g->t_whole ? jc + jr : jr)
                                         : NULL;
                        const float *aa =
                            ap + ir / CKB_KIT_GEMM8_MR * ckb_kit_gemm8_kp(kc) * CKB_KIT_GEMM8_AS;
                        ckb_kit_gemm8__ukernel(kc, aa, bb, tt, g->ldt, add, last, epi, g->ctx,
                                               ic + ir, jc + jr, mr, nr);
                    }
                }
            }
        }
        if (g->done)
            g->done(g->ctx, m0, m1, jc, nc);
    }
}

/*
 * One thread's share C[m0:m1, n0:n1] of the job, mb rows at a time (a
 * multiple of CKB_KIT_GEMM8_MR), so that the f32 partial sums between k blocks
 * (g->t, set here: mb x nc) stay that size whatever m is. One allocation
 * (packed A, packed B, those sums) per call, freed before it returns; out
 * of memory, the share stays unwritten (nothing to report it to). Called
 * inside the expert's parallel region, so that its epilogue is a constant
 * the compiler inlines.
 */
static inline __attribute__((always_inline)) void ckb_kit_gemm8_share(ckb_kit_gemm8_job *g,
                                                                      int64_t m0, int64_t m1,
                                                                      int64_t n0, int64_t n1,
                                                                      int64_t mb)
{
    if (m0 >= m1 || n0 >= n1)
        return;
    const int64_t mrows = m1 - m0 < mb ? m1 - m0 : mb;
    const int64_t rows = (mrows + CKB_KIT_GEMM8_MR - 1) / CKB_KIT_GEMM8_MR * CKB_KIT_GEMM8_MR;
    g->ldt = ckb_kit_gemm8_nc(g);
    g->t_whole = 0;
    const size_t a_n = ckb_kit_gemm8_ap_floats(g) + 64, b_n = ckb_kit_gemm8_bp_floats(g);
    const size_t t_n = g->k > ckb_kit_gemm8_kc(g) ? (size_t)(rows * g->ldt) : 0;
    float *buf = ckb_kit_alloc64((a_n + b_n + t_n) * sizeof(float));
    g->t = buf && t_n ? buf + a_n + b_n : NULL;
    for (int64_t mb0 = m0; buf && mb0 < m1; mb0 += mb)
        ckb_kit_gemm8_run(g, mb0, m1 - mb0 < mb ? m1 : mb0 + mb, n0, n1, buf, buf + a_n);
    free(buf);
}

#endif /* AVX2 + FMA */

/* ---- AMX ---------------------------------------------------------------- */

#if defined(__AMX_BF16__) && defined(__AMX_TILE__)

/*
 * One k run of a 16 rt x 32 block of C: acc = a[0:16 rt, 0:kc] @ B, or
 * acc + that product when !first; acc's rows ldacc floats apart; rt 1 or 2
 * row tiles (a constant at each call, so the loop is specialised). A tiles
 * load straight from A (two consecutive k of a row are already the pair
 * tdpbf16ps reads; all 16 rt rows are read), B tiles from packed panels in
 * the pair layout: tile row p is pair p of 16 columns at b0 (the first 16)
 * and b1 (the next), ldb dwords apart.
 */
static inline __attribute__((always_inline)) void
ckb_kit_amx_2x2(const ckb_bf16 *a, int64_t lda, const uint32_t *b0, const uint32_t *b1, int64_t ldb,
                int64_t kc, int rt, int first, float *acc, int64_t ldacc)
{
    const ckb_bf16 *a1 = a + 16 * lda;
    float *c1 = acc + 16 * ldacc;
    if (first) {
        _tile_zero(0);
        _tile_zero(1);
        if (rt == 2) {
            _tile_zero(2);
            _tile_zero(3);
        }
    } else {
        _tile_loadd(0, acc, ldacc * 4);
        _tile_loadd(1, acc + 16, ldacc * 4);
        if (rt == 2) {
            _tile_loadd(2, c1, ldacc * 4);
            _tile_loadd(3, c1 + 16, ldacc * 4);
        }
    }
    for (int64_t kk = 0; kk < kc; kk += 32) {
        _tile_loadd(4, a + kk, lda * 2);
        _tile_loadd(6, b0 + kk / 2 * ldb, ldb * 4);
        _tile_loadd(7, b1 + kk / 2 * ldb, ldb * 4);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        if (rt == 2) {
            _tile_loadd(5, a1 + kk, lda * 2);
            _tile_dpbf16ps(2, 5, 6);
            _tile_dpbf16ps(3, 5, 7);
        }
    }
    _tile_stored(0, acc, ldacc * 4);
    _tile_stored(1, acc + 16, ldacc * 4);
    if (rt == 2) {
        _tile_stored(2, c1, ldacc * 4);
        _tile_stored(3, c1 + 16, ldacc * 4);
    }
}

#endif /* AMX */

/* ---- AVX-512 BF16: the resident driver ------------------------------------ */

/*
 * The driver of the experts whose whole k fits one pass (8p, 11p, 41k,
 * 50k): A is read in place (two consecutive k of a row already form the
 * pair vdpbf16ps and tdpbf16ps read), B is packed into panels of
 * CKB_KIT_GEMM16_NR columns in the pair layout (lane j of pair p: B[2p][j] low,
 * B[2p+1][j] high), and each MR x NR tile of C stays in zmm registers over
 * all of k (no f32 round trip through memory), so C is written once, by
 * the expert's epilogue. The units (CKB_KIT_GEMM16_UNIT, the MMA encoding):
 * 0 vdpbf16ps; 1 f32 FMA, B panels widened to f32 and A widened as it is
 * broadcast; 2 AMX, a 2 x 2 grid of 16 x 16 tiles per 32 x 32 of C (the
 * expert asks for it only where M, N, K are multiples of 32 and NR of 32;
 * else, and where the target lacks AMX, it runs as 0).
 *
 * The expert sets before including this file: CKB_KIT_GEMM16_MR, _NR (its MR,
 * NR), _UNIT, and names its epilogues (defined after the include, inlined
 * into the micro-kernel):
 *   CKB_KIT_GEMM16_EPI(ctx, acc, i, j, mr, nr): the f32 tile acc[r][v] (row r,
 *     columns 16 v..) is C[i + r, j + 16 v ..], rows below mr and columns
 *     below nr real; default ckb_kit_gemm16_epi_bf16 (round into a
 *     ckb_kit_gemm16_out).
 *   CKB_KIT_GEMM16_EPI_AMX(ctx, tile, i, j): the f32 block tile[32][32] is
 *     C[i:i+32, j:j+32]; default ckb_kit_gemm16_epi_amx_bf16.
 */
#if defined(__AVX512BF16__) && defined(__AVX512BW__) && defined(__AVX512VL__)

#include <omp.h>

#ifndef CKB_KIT_GEMM16_MR
#define CKB_KIT_GEMM16_MR 6
#endif
#ifndef CKB_KIT_GEMM16_NR
#define CKB_KIT_GEMM16_NR 64
#endif
#ifndef CKB_KIT_GEMM16_UNIT
#define CKB_KIT_GEMM16_UNIT 0
#endif
#if CKB_KIT_GEMM16_UNIT == 2 && !(defined(__AMX_BF16__) && defined(__AMX_TILE__))
#undef CKB_KIT_GEMM16_UNIT
#define CKB_KIT_GEMM16_UNIT 0
#endif
#define CKB_KIT_GEMM16_NV (CKB_KIT_GEMM16_NR / 16) /* zmm accumulators per tile row */
/* rows per step of the kernel: a micro-kernel's, or AMX's 32 */
#define CKB_KIT_GEMM16_RB (CKB_KIT_GEMM16_UNIT == 2 ? 32 : CKB_KIT_GEMM16_MR)
#ifndef CKB_KIT_GEMM16_PREFETCH /* pairs of B rows the packer prefetches ahead */
#define CKB_KIT_GEMM16_PREFETCH 32
#endif
#ifndef CKB_KIT_GEMM16_HINT /* where they go: _MM_HINT_T0 (L1) or _MM_HINT_T1 (L2) */
#define CKB_KIT_GEMM16_HINT _MM_HINT_T0
#endif
#ifndef CKB_KIT_GEMM16_STACK_MAX /* packed blocks up to this size live on the stack */
#define CKB_KIT_GEMM16_STACK_MAX (4L << 20)
#endif

#if CKB_KIT_GEMM16_NR % 16 != 0 || CKB_KIT_GEMM16_NR < 16 || CKB_KIT_GEMM16_NR > 64 ||             \
    CKB_KIT_GEMM16_MR < 1 || CKB_KIT_GEMM16_MR * CKB_KIT_GEMM16_NV + CKB_KIT_GEMM16_NV > 30
#error "MR x NR must fit the 32 zmm registers: NR in {16,32,48,64}, MR * (NR/16 + 1) <= 30"
#endif
#if CKB_KIT_GEMM16_UNIT == 2 && CKB_KIT_GEMM16_NR % 32 != 0
#error "AMX needs panels of whole tile pairs: NR a multiple of 32"
#endif

/*
 * One GEMM C = A @ B for the resident driver: A [m][k] rows lda apart, B
 * [k][n] rows ldb apart; mc rows of A run past one packed block of nc
 * columns (rounded up to panels), tn threads split the columns (0: all),
 * ctx is the epilogues'.
 */
typedef struct ckb_kit_gemm16_job {
    const ckb_bf16 *a;
    int64_t lda;
    const ckb_bf16 *b;
    int64_t ldb;
    int64_t m, n, k;
    int64_t mc, nc;
    int tn;
    void *ctx;
} ckb_kit_gemm16_job;

/* The default epilogues' context: C as bf16, rows ldc apart. */
typedef struct {
    ckb_bf16 *c;
    int64_t ldc;
} ckb_kit_gemm16_out;

#ifndef CKB_KIT_GEMM16_EPI
#define CKB_KIT_GEMM16_EPI ckb_kit_gemm16_epi_bf16
#endif
#ifndef CKB_KIT_GEMM16_EPI_AMX
#define CKB_KIT_GEMM16_EPI_AMX ckb_kit_gemm16_epi_amx_bf16
#endif
static inline __attribute__((always_inline)) void
CKB_KIT_GEMM16_EPI(void *ctx, __m512 acc[][CKB_KIT_GEMM16_NV], int64_t i, int64_t j, int mr,
                   int nr);
static inline __attribute__((always_inline)) void
CKB_KIT_GEMM16_EPI_AMX(void *ctx, const float *tile, int64_t i, int64_t j);

/* An epilogue's row of constants over the tile's columns (a bias), loaded
 * once per tile: bv[v] = row[16 v ..], lanes at or past nr zero (not read).
 * A macro: as an inline function it moved 50k's spill slots. */
#define CKB_KIT_GEMM16_ROW(bv, row, nr)                                                            \
    _Pragma("GCC unroll 4") for (int v_ = 0; v_ < CKB_KIT_GEMM16_NV; v_++)                         \
        (bv)[v_] = ckb_kit_load16_n((row) + 16 * v_, (nr) - 16 * v_)

/* The tile rounded to bf16 (vcvtneps2bf16: nearest even) into C. */
static inline __attribute__((always_inline)) void
ckb_kit_gemm16_epi_bf16(void *ctx, __m512 acc[][CKB_KIT_GEMM16_NV], int64_t i, int64_t j, int mr,
                        int nr)
{
    const ckb_kit_gemm16_out *o = ctx;
    ckb_bf16 *c = o->c + i * o->ldc + j;
#pragma GCC unroll 16
    CKB_KIT_GEMM_ROWS(r, CKB_KIT_GEMM16_MR, mr)
#pragma GCC unroll 4
        for (int v = 0; v < CKB_KIT_GEMM16_NV; v++)
            _mm256_mask_storeu_epi16((void *)(c + r * o->ldc + 16 * v), ckb_kit_mask16(nr - 16 * v),
                                     (__m256i)_mm512_cvtneps_pbh(acc[r][v]));
}

/* The AMX block rounded to bf16 into C, 32 columns a row in one. */
static inline __attribute__((always_inline)) void
ckb_kit_gemm16_epi_amx_bf16(void *ctx, const float *tile, int64_t i, int64_t j)
{
    const ckb_kit_gemm16_out *o = ctx;
    for (int r = 0; r < 32; r++) {
        /* the second argument gives the low half */
        __m512bh y =
            _mm512_cvtne2ps_pbh(_mm512_load_ps(tile + r * 32 + 16), _mm512_load_ps(tile + r * 32));
        _mm512_storeu_si512((void *)(o->c + (i + r) * o->ldc + j), (__m512i)y);
    }
}

/* k steps of a packed panel: pairs, or k itself for f32 FMA. */
#define CKB_KIT_GEMM16_KP(k) (CKB_KIT_GEMM16_UNIT == 1 ? (k) : ((k) + 1) / 2)

/*
 * Packs np panels of w columns of B (rows [k0, k0 + kc), columns from c0)
 * into bp[q][(kc+1)/2][w] pairs, zero past n and, for an odd kc, in the
 * last pair's high half. Row-pair outer, so each B row is read in one run
 * of np w columns; the rows are ldb apart, too far for the hardware
 * prefetcher to follow, so they are prefetched ahead (the packer is latency
 * bound without it).
 */
static inline void ckb_kit_gemm16_pack(const ckb_kit_gemm16_job *g, int64_t k0, int64_t kc,
                                       int64_t c0, int64_t np, int64_t w, uint32_t *restrict bp)
{
    const int64_t kp = (kc + 1) / 2, ldb = g->ldb;
    for (int64_t p = 0; p < kp; p++) {
        const ckb_bf16 *r0 = g->b + (k0 + 2 * p) * ldb;
        const int has_odd = 2 * p + 1 < kc;
        if (k0 + 2 * (p + CKB_KIT_GEMM16_PREFETCH) + 1 < g->k) {
            const char *f = (const char *)(r0 + 2 * CKB_KIT_GEMM16_PREFETCH * ldb + c0);
            for (int64_t o = 0; o < np * w * 2; o += 64) {
                _mm_prefetch(f + o, CKB_KIT_GEMM16_HINT);
                _mm_prefetch(f + 2 * ldb + o, CKB_KIT_GEMM16_HINT);
            }
        }
        for (int64_t q = 0; q < np; q++) {
            uint32_t *out = bp + (q * kp + p) * w;
#pragma GCC unroll 4
            for (int64_t v = 0; v < w / 16; v++) {
                int64_t j = c0 + q * w + 16 * v;
                __mmask16 m = ckb_kit_mask16(g->n - j);
                __m512i lo = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, r0 + j));
                __m512i hi = has_odd
                                 ? _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, r0 + ldb + j))
                                 : _mm512_setzero_si512();
                _mm512_store_si512((void *)(out + 16 * v),
                                   _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
            }
        }
    }
}

/* f32 FMA: packs np panels of B (all of k, columns from c0) into
 * bf[q][k][NR] f32, zero past n. */
static inline void ckb_kit_gemm16_pack_f32(const ckb_kit_gemm16_job *g, int64_t c0, int64_t np,
                                           float *restrict bf)
{
    const int64_t c1 = c0 + np * CKB_KIT_GEMM16_NR < g->n ? c0 + np * CKB_KIT_GEMM16_NR : g->n;
    for (int64_t k = 0; k < g->k; k++) {
        const ckb_bf16 *r = g->b + k * g->ldb;
        if (k + 2 * CKB_KIT_GEMM16_PREFETCH < g->k)
            for (int64_t c = c0; c < c1; c += 32)
                _mm_prefetch((const char *)(r + 2 * CKB_KIT_GEMM16_PREFETCH * g->ldb + c),
                             CKB_KIT_GEMM16_HINT);
        for (int64_t c = c0; c < c0 + np * CKB_KIT_GEMM16_NR; c += 16) {
            __m256i x = _mm256_maskz_loadu_epi16(ckb_kit_mask16(c1 - c), r + c);
            const int64_t q = (c - c0) / CKB_KIT_GEMM16_NR, j = (c - c0) % CKB_KIT_GEMM16_NR;
            _mm512_store_si512(bf + (q * g->k + k) * CKB_KIT_GEMM16_NR + j,
                               _mm512_slli_epi32(_mm512_cvtepu16_epi32(x), 16));
        }
    }
}

/*
 * The micro-kernel: C[i:i+mr, j:j+nr] = a[0:mr, 0:k] @ the panel at bp,
 * through the epilogue. a is row 0 of the sliver in A; rows past mr
 * recompute row mr-1 (never stored). vdpbf16ps on pairs, or (unit 1) f32
 * FMA against an f32 panel, each A value widened as it is broadcast (a pair
 * loaded once per row and k pair, its low half shifted up, its high half
 * masked).
 */
static inline __attribute__((always_inline)) void
ckb_kit_gemm16_ukernel(const ckb_kit_gemm16_job *g, const ckb_bf16 *restrict a,
                       const void *restrict panel, int64_t i, int64_t j, int mr, int nr)
{
    const int64_t k = g->k;
    __m512 acc[CKB_KIT_GEMM16_MR][CKB_KIT_GEMM16_NV];
    const ckb_bf16 *row[CKB_KIT_GEMM16_MR];
#pragma GCC unroll 16
    for (int r = 0; r < CKB_KIT_GEMM16_MR; r++) {
        row[r] = a + (r < mr ? r : mr - 1) * g->lda;
#pragma GCC unroll 4
        for (int v = 0; v < CKB_KIT_GEMM16_NV; v++)
            acc[r][v] = _mm512_setzero_ps();
    }
#if CKB_KIT_GEMM16_UNIT == 1
    const float *restrict bf = panel;
    const __m512i hi = _mm512_set1_epi32((int)0xffff0000u);
    for (int64_t p = 0; p < k / 2; p++) {
        __m512 b[CKB_KIT_GEMM16_NV];
#pragma GCC unroll 4
        for (int v = 0; v < CKB_KIT_GEMM16_NV; v++)
            b[v] = _mm512_load_ps(bf + 2 * p * CKB_KIT_GEMM16_NR + 16 * v);
#pragma GCC unroll 16
        for (int r = 0; r < CKB_KIT_GEMM16_MR; r++) {
            __m512i pr = _mm512_set1_epi32(ckb_kit_pair(row[r] + 2 * p));
            __m512 x = (__m512)_mm512_slli_epi32(pr, 16);
#pragma GCC unroll 4
            for (int v = 0; v < CKB_KIT_GEMM16_NV; v++)
                acc[r][v] = _mm512_fmadd_ps(x, b[v], acc[r][v]);
        }
#pragma GCC unroll 4
        for (int v = 0; v < CKB_KIT_GEMM16_NV; v++)
            b[v] = _mm512_load_ps(bf + (2 * p + 1) * CKB_KIT_GEMM16_NR + 16 * v);
#pragma GCC unroll 16
        for (int r = 0; r < CKB_KIT_GEMM16_MR; r++) {
            __m512i pr = _mm512_set1_epi32(ckb_kit_pair(row[r] + 2 * p));
            __m512 x = (__m512)_mm512_and_si512(pr, hi);
#pragma GCC unroll 4
            for (int v = 0; v < CKB_KIT_GEMM16_NV; v++)
                acc[r][v] = _mm512_fmadd_ps(x, b[v], acc[r][v]);
        }
    }
    if (k & 1) { /* the last k alone */
        __m512 b[CKB_KIT_GEMM16_NV];
#pragma GCC unroll 4
        for (int v = 0; v < CKB_KIT_GEMM16_NV; v++)
            b[v] = _mm512_load_ps(bf + (k - 1) * CKB_KIT_GEMM16_NR + 16 * v);
#pragma GCC unroll 16
        for (int r = 0; r < CKB_KIT_GEMM16_MR; r++) {
            __m512 x = _mm512_set1_ps(ckb_bf16_to_f32(row[r][k - 1]));
#pragma GCC unroll 4
            for (int v = 0; v < CKB_KIT_GEMM16_NV; v++)
                acc[r][v] = _mm512_fmadd_ps(x, b[v], acc[r][v]);
        }
    }
#else
    const uint32_t *restrict bp = panel;
    for (int64_t p = 0; p < k / 2; p++) {
        __m512i b[CKB_KIT_GEMM16_NV];
#pragma GCC unroll 4
        for (int v = 0; v < CKB_KIT_GEMM16_NV; v++)
            b[v] = _mm512_load_si512((const void *)(bp + p * CKB_KIT_GEMM16_NR + 16 * v));
        CKB_KIT_DPBF16_TILE(acc, b, CKB_KIT_GEMM16_MR, CKB_KIT_GEMM16_NV, r,
                            ckb_kit_pair(row[r] + 2 * p));
    }
    if (k & 1) { /* the last k alone: A's high half and B's are zero */
        __m512i b[CKB_KIT_GEMM16_NV];
#pragma GCC unroll 4
        for (int v = 0; v < CKB_KIT_GEMM16_NV; v++)
            b[v] = _mm512_load_si512((const void *)(bp + (k / 2) * CKB_KIT_GEMM16_NR + 16 * v));
        CKB_KIT_DPBF16_TILE(acc, b, CKB_KIT_GEMM16_MR, CKB_KIT_GEMM16_NV, r, row[r][k - 1]);
    }
#endif
    CKB_KIT_GEMM16_EPI(g->ctx, acc, i, j, mr, nr);
}

#if CKB_KIT_GEMM16_UNIT == 2
/* C[i:i+32, j:j+nr] (nr a multiple of 32) = a[0:32, 0:k] @ the panel at
 * bp, per 32 columns a 2 x 2 grid of tiles over all of k, through a small
 * f32 block and the AMX epilogue. */
static inline void ckb_kit_gemm16_amx_block(const ckb_kit_gemm16_job *g, const ckb_bf16 *restrict a,
                                            const uint32_t *restrict bp, int64_t i, int64_t j,
                                            int nr)
{
    float buf[32 * 32] __attribute__((aligned(64)));
    for (int v = 0; v < nr; v += 32) {
        ckb_kit_amx_2x2(a, g->lda, bp + v, bp + v + 16, CKB_KIT_GEMM16_NR, g->k, 2, 1, buf, 32);
        CKB_KIT_GEMM16_EPI_AMX(g->ctx, buf, i, j + v);
    }
}
#endif

/* Floats (f32 FMA) or pair dwords of one packed panel. */
static inline int64_t ckb_kit_gemm16_panel_words(const ckb_kit_gemm16_job *g)
{
    return CKB_KIT_GEMM16_KP(g->k) * CKB_KIT_GEMM16_NR;
}

/*
 * Rows [m0, m1) x panels [q0, q1) of C: ncp panels of B packed at a time
 * into bp (ncp ckb_kit_gemm16_panel_words, 64-byte aligned), mc rows of A run
 * past each packed block, each panel in turn.
 */
static inline void ckb_kit_gemm16_panels(const ckb_kit_gemm16_job *g, int64_t m0, int64_t m1,
                                         int64_t q0, int64_t q1, int64_t ncp, uint32_t *bp)
{
    const int64_t rb = CKB_KIT_GEMM16_RB, pw = ckb_kit_gemm16_panel_words(g);
    int64_t mc = g->mc < rb ? rb : g->mc / rb * rb; /* whole slivers */
    if (mc > m1 - m0)                               /* (and no overflow past the last block) */
        mc = m1 - m0 > 0 ? m1 - m0 : 1;
    for (int64_t jq = q0; jq < q1; jq += ncp) {
        const int64_t np = q1 - jq < ncp ? q1 - jq : ncp;
#if CKB_KIT_GEMM16_UNIT == 1
        ckb_kit_gemm16_pack_f32(g, jq * CKB_KIT_GEMM16_NR, np, (float *)bp);
#else
        ckb_kit_gemm16_pack(g, 0, g->k, jq * CKB_KIT_GEMM16_NR, np, CKB_KIT_GEMM16_NR, bp);
#endif
        for (int64_t ic = m0; ic < m1; ic += mc) {
            const int64_t ie = m1 - ic < mc ? m1 : ic + mc;
            for (int64_t q = 0; q < np; q++) {
                const int64_t j = (jq + q) * CKB_KIT_GEMM16_NR;
                const int nr = g->n - j < CKB_KIT_GEMM16_NR ? (int)(g->n - j) : CKB_KIT_GEMM16_NR;
#if CKB_KIT_GEMM16_UNIT == 2
                for (int64_t i = ic; i < ie; i += 32)
                    ckb_kit_gemm16_amx_block(g, g->a + i * g->lda, bp + q * pw, i, j, nr);
#else
                for (int64_t i = ic; i < ie; i += CKB_KIT_GEMM16_MR) {
                    const int mr = ie - i < CKB_KIT_GEMM16_MR ? (int)(ie - i) : CKB_KIT_GEMM16_MR;
                    ckb_kit_gemm16_ukernel(g, g->a + i * g->lda, bp + q * pw, i, j, mr, nr);
                }
#endif
            }
        }
    }
}

static inline void ckb_kit_gemm16_tiles_on(void)
{
#if CKB_KIT_GEMM16_UNIT == 2
    ckb_kit_amx_on();
#endif
}

static inline void ckb_kit_gemm16_tiles_off(void)
{
#if CKB_KIT_GEMM16_UNIT == 2
    ckb_kit_amx_off();
#endif
}

/*
 * The whole GEMM on the team: threads own disjoint parts of C (the kit's
 * grid: tn along the columns in whole panels, the rest along the rows in
 * whole kernel steps) and pack their own panels, so a call has no barrier
 * and a descheduled thread delays only its own share. A thread's packed
 * block lives on its stack (whose pages stay mapped from one call to the
 * next) up to CKB_KIT_GEMM16_STACK_MAX, else on the heap; out of memory, its
 * share of C stays unwritten (nothing to report it to).
 */
static inline void ckb_kit_gemm16_run(const ckb_kit_gemm16_job *g)
{
    const int64_t npanel = (g->n + CKB_KIT_GEMM16_NR - 1) / CKB_KIT_GEMM16_NR;
    const ckb_kit_gemm_grid grid = ckb_kit_gemm_grid_make(omp_get_max_threads(), g->tn, npanel);

#pragma omp parallel num_threads(grid.tm *grid.tn)
    {
        int64_t m0, m1, n0, n1;
        ckb_kit_gemm_grid_share(grid, omp_get_thread_num(), g->m, CKB_KIT_GEMM16_RB, g->n,
                                CKB_KIT_GEMM16_NR, &m0, &m1, &n0, &n1);
        const int64_t q0 = n0 / CKB_KIT_GEMM16_NR,
                      q1 = (n1 + CKB_KIT_GEMM16_NR - 1) / CKB_KIT_GEMM16_NR;
        int64_t ncp = (g->nc + CKB_KIT_GEMM16_NR - 1) / CKB_KIT_GEMM16_NR; /* panels per block */
        if (ncp > q1 - q0)
            ncp = q1 - q0;
        const int64_t block_bytes = ncp * ckb_kit_gemm16_panel_words(g) * 4;
        if (m0 < m1 && ncp > 0) {
            ckb_kit_gemm16_tiles_on();
            if (block_bytes <= CKB_KIT_GEMM16_STACK_MAX) {
                uint32_t buf[block_bytes / 4 + 16];
                uint32_t *bp = (uint32_t *)(((uintptr_t)buf + 63) & ~(uintptr_t)63);
                ckb_kit_gemm16_panels(g, m0, m1, q0, q1, ncp, bp);
            } else {
                uint32_t *bp = ckb_kit_alloc64((size_t)block_bytes);
                if (bp)
                    ckb_kit_gemm16_panels(g, m0, m1, q0, q1, ncp, bp);
                free(bp);
            }
            ckb_kit_gemm16_tiles_off();
        }
    }
}

#endif /* AVX-512 BF16 */

/* ---- Panel GEMM: f32 row blocks from packed panels ------------------------ */

/*
 * For the experts whose epilogue needs a whole block of f32 sums at once (a
 * group norm over a row's groups, a log-sum-exp over the row: 29k, 32k).
 * B is packed once per call into panels of 16 columns in the pair layout
 * (panel q at bp + q k/2 16 dwords; lane j of pair p: B[2p][16q + j] low,
 * B[2p + 1][16q + j] high), A is read in place (two consecutive k of a row
 * are already a pair), and a block of C is left in f32 memory, k in passes
 * of kc with the partial sums reloaded between them. The unit,
 * CKB_KIT_PANEL_UNIT in the experts' MMA encoding: 2 AMX (2 x 2 tile blocks,
 * ckb_kit_amx_2x2; 2 runs as 0 where the target lacks AMX), 0 vdpbf16ps
 * (8 rows x 2 panels of zmm accumulators).
 */
#if defined(__AVX512BF16__) && defined(__AVX512BW__) && defined(__AVX512VL__)

#ifndef CKB_KIT_PANEL_UNIT
#define CKB_KIT_PANEL_UNIT 2
#endif
#if CKB_KIT_PANEL_UNIT == 2 && !(defined(__AMX_BF16__) && defined(__AMX_TILE__))
#undef CKB_KIT_PANEL_UNIT
#define CKB_KIT_PANEL_UNIT 0
#endif

/* Panels [q0, q1) of w [k][n] (B as it is): the resident driver's packer at
 * a panel width of 16. */
static inline void ckb_kit_panel_pack_kn(const ckb_bf16 *w, int64_t n, int64_t k, int64_t q0,
                                         int64_t q1, uint32_t *bp)
{
    const ckb_kit_gemm16_job g = {.b = w, .ldb = n, .n = n, .k = k};
    ckb_kit_gemm16_pack(&g, 0, k, 16 * q0, q1 - q0, 16, bp + q0 * (k / 2) * 16);
}

/* Panels [q0, q1) of w [n][k] (B transposed, as a linear layer's weight):
 * a pair of each of the panel's 16 rows gathered per store. */
static inline void ckb_kit_panel_pack_nk(const ckb_bf16 *w, int64_t k, int64_t q0, int64_t q1,
                                         uint32_t *bp)
{
    const __m512i idx = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5,
                                                            4, 3, 2, 1, 0),
                                           _mm512_set1_epi32((int)(k / 2)));
    for (int64_t q = q0; q < q1; q++) {
        const int *src = (const int *)(w + q * 16 * k);
        uint32_t *dst = bp + q * (k / 2) * 16;
        for (int64_t p = 0; p < k / 2; p++)
            _mm512_store_si512((void *)(dst + p * 16), _mm512_i32gather_epi32(idx, src + p, 4));
    }
}

/* The unit's per-thread state: AMX's tile configuration, which each thread
 * loads before its blocks and releases after; none for vdpbf16ps. */
static inline void ckb_kit_panel_on(void)
{
#if CKB_KIT_PANEL_UNIT == 2
    ckb_kit_amx_on();
#endif
}

static inline void ckb_kit_panel_off(void)
{
#if CKB_KIT_PANEL_UNIT == 2
    ckb_kit_amx_off();
#endif
}

/*
 * c[0:mb, 0:16 np] (rows ldc floats apart) = a[0:mb, 0:k] (rows lda apart)
 * @ np packed panels at bp, in f32: mb a multiple of 32 (AMX) or 8, np of
 * 2, k of 32 (AMX) or 2; k in passes of kc (< 1: all of it), c holding the
 * partial sums between passes. Called between ckb_kit_panel_on and _off.
 */
static inline void ckb_kit_panel_gemm_f32(const ckb_bf16 *a, int64_t lda, const uint32_t *bp,
                                          int64_t k, int64_t kc, float *c, int64_t ldc,
                                          int64_t mb, int64_t np)
{
    kc = kc > 0 && kc < k ? kc : k;
    const int64_t pstride = k / 2 * 16; /* uint32 per panel */
    for (int64_t k0 = 0; k0 < k; k0 += kc) {
        const int64_t k1 = k0 + kc < k ? k0 + kc : k;
        for (int64_t q = 0; q < np; q += 2) {
            const uint32_t *b0 = bp + q * pstride + k0 / 2 * 16, *b1 = b0 + pstride;
#if CKB_KIT_PANEL_UNIT == 2
            for (int64_t i = 0; i < mb; i += 32)
                ckb_kit_amx_2x2(a + i * lda + k0, lda, b0, b1, 16, k1 - k0, 2, k0 == 0,
                                c + i * ldc + q * 16, ldc);
#else
            for (int64_t i = 0; i < mb; i += 8) {
                __m512 acc[8][2];
                float *ci = c + i * ldc + q * 16;
#pragma GCC unroll 8
                for (int r = 0; r < 8; r++) {
                    acc[r][0] = k0 == 0 ? _mm512_setzero_ps() : _mm512_loadu_ps(ci + r * ldc);
                    acc[r][1] =
                        k0 == 0 ? _mm512_setzero_ps() : _mm512_loadu_ps(ci + r * ldc + 16);
                }
                const ckb_bf16 *ai = a + i * lda + k0;
                for (int64_t p = 0; p < (k1 - k0) / 2; p++) {
                    const __m512i v[2] = {_mm512_load_si512((const void *)(b0 + p * 16)),
                                          _mm512_load_si512((const void *)(b1 + p * 16))};
                    CKB_KIT_DPBF16_TILE(acc, v, 8, 2, r, ckb_kit_pair(ai + r * lda + 2 * p));
                }
#pragma GCC unroll 8
                for (int r = 0; r < 8; r++) {
                    _mm512_storeu_ps(ci + r * ldc, acc[r][0]);
                    _mm512_storeu_ps(ci + r * ldc + 16, acc[r][1]);
                }
            }
#endif
        }
    }
}

/*
 * Called by every thread of a parallel region: the row blocks [i0, i0 + mb)
 * of [0, m) shared out statically, body(ctx, i0, scratch) on each, with a
 * scratch of `bytes` (64-byte aligned) per thread and the unit on around
 * them. A thread that cannot get its scratch runs none of its blocks (out of
 * memory: their rows stay unwritten). Ends in the loop's barrier.
 */
typedef void (*ckb_kit_panel_rows_fn)(void *ctx, int64_t i0, void *scratch);

static inline void ckb_kit_panel_rows(int64_t m, int64_t mb, size_t bytes,
                                      ckb_kit_panel_rows_fn body, void *ctx)
{
    void *scratch = ckb_kit_alloc64(bytes);
    if (scratch)
        ckb_kit_panel_on();
#pragma omp for schedule(static)
    for (int64_t i0 = 0; i0 < m; i0 += mb)
        if (scratch)
            body(ctx, i0, scratch);
    if (scratch)
        ckb_kit_panel_off();
    free(scratch);
}

#endif /* AVX-512 BF16 */
