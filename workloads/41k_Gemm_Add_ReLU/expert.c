/*
 * expert.c — hand-tuned fused GEMM + bias + relu for 41k_Gemm_Add_ReLU:
 * out[B,OUT] = relu(x[B,IN] @ weight[IN,OUT] + bias[OUT]), bf16 in, f32
 * accumulation and epilogue, bf16 out (round to nearest even).
 *
 * A candidate file (DESIGN §3): B, IN, OUT come from the force-included
 * header (they are macros: no local may be named B); the tunables below are
 * macros that `ckbench tune` overrides with -D.
 *
 * Design: the 8p_GEMM expert's (GotoBLAS/BLIS adapted to vdpbf16ps), with
 * the epilogue fused into the micro-kernel:
 * - weight is packed into NR-column panels in the pair layout vdpbf16ps
 *   reads (lane j of pair p: weight[2p][j] low, weight[2p+1][j] high); x
 *   needs no packing, two consecutive k of a row already form a pair.
 * - The MR x NR f32 tile stays in zmm registers over all of IN; the bias
 *   add and the relu run on those registers, so out is written once, as
 *   bf16, and no f32 intermediate ever reaches memory.
 * - Threads own disjoint parts of out (a TM x TN grid of row ranges and
 *   column panel ranges) and pack their own panels: no barrier.
 * - Ragged edges: masked loads zero-fill panels (and bias) past OUT, masked
 *   stores skip those columns, rows past B re-read the last valid row and
 *   are not stored, an odd IN ends with one half-empty pair.
 * - AMX (default where the compiler targets it and B, IN, OUT are multiples
 *   of 32): the same packed panels are what tdpbf16ps reads as weight tiles
 *   (16 pairs x 16 columns, rows NR pairs apart), x tiles load straight from
 *   x; a 2 x 2 grid of 16 x 16 f32 accumulator tiles covers 32 x 32 of out
 *   over all of IN, and the epilogue (bias, relu, bf16) reads the stored f32
 *   tile. Each thread configures its tiles before its share and releases
 *   them after. MR does not apply to this path (its rows step is 32). The
 *   harness grants the process AMX tile permission.
 * - Every other host (MMA 0 or 1, or no AMX): the kit's GEMM
 *   (ckb_kit_gemm.h) on the bf16 dot or f32 FMA with the same fusion (see
 *   the comment over that path); it replaced this file's own vdpbf16ps
 *   kernel, which lost to oneDNN on an AMD Zen 4.
 * No state is kept between calls; the packing buffer lives for one call.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <immintrin.h>
#include <omp.h>

#include "ckbench.h"

/* ---- tunables (untuned defaults) --------------------------------------- */

#include "ckb_kit_unit.h" /* MMA: the matmul unit (bench: the host's fastest) */
/* Which path: this file's own AVX-512 GEMM (AMX tiles where the dims allow)
 * where the compiler targets AMX and MMA asks for it; else the kit's GEMM
 * on the bf16 dot (MMA=0, where there is AVX-512 BF16) or on f32 FMA; else
 * portable C. */
#if MMA == 2 && defined(__AMX_BF16__) && defined(__AMX_TILE__)
#define GAR_AVX2 0
#elif defined(__AVX2__) && defined(__FMA__)
#define GAR_AVX2 1
#else
#define GAR_AVX2 0
#endif
#define CKB_GEMM_UNIT (MMA == 1 ? 1 : 0) /* the kit runs 0 as 1 without AVX-512 BF16 */

#if GAR_AVX2 /* the kit path's own defaults; the same names mean the same blocks */
#ifndef MR /* micro-kernel rows (at most 8) */
#define MR 6
#endif
#ifndef NR /* micro-kernel columns: ymm 8-32 (vectors of 8), zmm and the dot 16-64 */
#if defined(__AVX512F__) && (MMA == 1 || !defined(__AVX512BF16__))
#define NR 64 /* f32 FMA in zmm: 6 x 64, 24 accumulators (the kit's default) */
#elif defined(__AVX512F__)
#define NR 32
#else
#define NR 16
#endif
#endif
#ifndef KC /* depth of one packed block; IN > KC accumulates in an f32 tile */
#define KC 256
#endif
#ifndef NC /* a packed block of weight that L2 holds: x is packed once per block */
#define NC 512
#endif
#endif

#ifndef MR /* micro-kernel rows */
#define MR 6
#endif
#ifndef NR /* micro-kernel columns: 16, 32, 48 or 64 */
#define NR 64
#endif
#ifndef MC /* rows of x (MC x IN) reused across the panels of one packed block */
#define MC 4096
#endif
#ifndef NC /* columns of weight packed per block (rounded up to whole panels of NR) */
#define NC 64
#endif
#ifndef TN /* threads along OUT (the rest go along B); 0: every thread along OUT */
#define TN 0
#endif
#ifndef AMX /* 1: AMX tiles where the compiler targets them and dims allow; 0: vdpbf16ps */
#define AMX 1
#endif

#if GAR_AVX2 /* the kit's micro-kernel takes this path's tile */
#define CKB_GEMM8_MR MR
#define CKB_GEMM8_NR NR
#endif
#include "ckb_kit_gemm.h"

/* ---- fixed choices ------------------------------------------------------ */

#ifndef GAR_PREFETCH /* pairs of weight rows the packer prefetches ahead */
#define GAR_PREFETCH 32
#endif
#ifndef GAR_STACK_MAX /* packed blocks up to this size live on the stack */
#define GAR_STACK_MAX (4L << 20)
#endif

#define GAR_NV (NR / 16)      /* zmm accumulators per row of the tile */
#define GAR_KP ((IN + 1) / 2) /* k pairs; the last is half zero when IN is odd */

#if !GAR_AVX2 && (NR % 16 != 0 || NR < 16 || NR > 64 || MR < 1 || MR * GAR_NV + GAR_NV > 30)
#error "MR x NR must fit the 32 zmm registers: NR in {16,32,48,64}, MR * (NR/16 + 1) <= 30"
#endif

#if !GAR_AVX2 && defined(__AVX512BF16__) && defined(__AVX512BW__) && defined(__AVX512VL__)

/* AMX needs whole 16 x 16 tiles in pairs: rows and columns multiples of
 * 32, IN of 32 (one x tile is 16 rows x 32 k), panels of whole tile pairs. */
#if AMX && defined(__AMX_BF16__) && defined(__AMX_TILE__) && B % 32 == 0 && IN % 32 == 0 &&       \
    OUT % 32 == 0 && NR % 32 == 0
#define GAR_AMX 1
#define GAR_RB 32 /* rows per step of the kernel */
#else
#define GAR_AMX 0
#define GAR_RB MR
#endif

/* Packs panels [q0, q0+np) of weight (panel q = columns [q*NR, q*NR+NR))
 * into bp[q-q0][GAR_KP][NR] pairs. Row-pair outer, so each weight row is
 * read in one contiguous run of np*NR columns. */
static void gar__pack(const ckb_bf16 *w, int64_t q0, int64_t np, uint32_t *bp)
{
    for (int64_t p = 0; p < GAR_KP; p++) {
        const ckb_bf16 *r0 = w + 2 * p * OUT;
        const int has_odd = 2 * p + 1 < IN;
        /* The rows are OUT apart: too far for the hardware prefetcher to
         * follow, and the packer is latency bound without this. */
        if (2 * (p + GAR_PREFETCH) + 1 < IN) {
            const char *f = (const char *)(r0 + 2 * GAR_PREFETCH * OUT + q0 * NR);
            for (int64_t o = 0; o < np * NR * 2; o += 64) {
                _mm_prefetch(f + o, _MM_HINT_T0);
                _mm_prefetch(f + 2 * OUT + o, _MM_HINT_T0);
            }
        }
        for (int64_t q = 0; q < np; q++) {
            uint32_t *dst = bp + (q * GAR_KP + p) * NR;
#pragma GCC unroll 4
            for (int v = 0; v < GAR_NV; v++) {
                int64_t j = (q0 + q) * NR + 16 * v;
                __mmask16 m = ckb_gemm16_mask(OUT - j);
                __m512i lo = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, r0 + j));
                __m512i hi = has_odd
                                 ? _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, r0 + OUT + j))
                                 : _mm512_setzero_si512();
                _mm512_store_si512((void *)(dst + 16 * v),
                                   _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
            }
        }
    }
}

#if GAR_AMX

/* The tile shapes: 0-3 the 2 x 2 f32 accumulators, 4-5 x (16 rows x 32
 * bf16), 6-7 weight (16 pairs x 16 columns); all 16 rows of 64 bytes. The
 * configuration is per thread: each thread loads it before its share. */
static void gar__tiles_on(void) { ckb_amx_tiles_on(); }

static void gar__tiles_off(void) { ckb_amx_tiles_off(); }

/*
 * c[0:32, 0:nr] = relu(a[0:32, 0:IN] @ panel + bias[0:nr]), rounded to
 * bf16; nr a multiple of 32. Per 32 columns a 2 x 2 grid of f32
 * accumulator tiles runs over all of IN, x tiles loaded straight from x (a
 * pair of k is already the layout tdpbf16ps reads), weight tiles from the
 * packed panel (rows NR pairs apart); the epilogue (bias, relu, one
 * rounding to bf16, nearest even) reads the stored f32 tiles.
 */
static void gar__amx_block(const ckb_bf16 *restrict a, const uint32_t *restrict bp,
                           const ckb_bf16 *restrict bias, ckb_bf16 *restrict c, int nr)
{
    float buf[32][32] __attribute__((aligned(64)));
    const ckb_bf16 *a1 = a + 16 * IN;
    const __m512 zero = _mm512_setzero_ps();
    for (int v = 0; v < nr; v += 32) {
        const uint32_t *b0 = bp + v, *b1 = b0 + 16;
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
        for (int64_t kk = 0; kk < IN; kk += 32) {
            _tile_loadd(4, a + kk, IN * 2);
            _tile_loadd(6, b0 + kk / 2 * NR, NR * 4);
            _tile_loadd(7, b1 + kk / 2 * NR, NR * 4);
            _tile_dpbf16ps(0, 4, 6);
            _tile_dpbf16ps(1, 4, 7);
            _tile_loadd(5, a1 + kk, IN * 2);
            _tile_dpbf16ps(2, 5, 6);
            _tile_dpbf16ps(3, 5, 7);
        }
        _tile_stored(0, &buf[0][0], 128);
        _tile_stored(1, &buf[0][16], 128);
        _tile_stored(2, &buf[16][0], 128);
        _tile_stored(3, &buf[16][16], 128);
        const __m512 bv0 = ckb_gemm16_load_bf16(bias + v, 16);
        const __m512 bv1 = ckb_gemm16_load_bf16(bias + v + 16, 16);
        for (int r = 0; r < 32; r++) {
            __m512 y0 = _mm512_max_ps(_mm512_add_ps(_mm512_load_ps(&buf[r][0]), bv0), zero);
            __m512 y1 = _mm512_max_ps(_mm512_add_ps(_mm512_load_ps(&buf[r][16]), bv1), zero);
            /* 32 columns in one: the second argument gives the low half */
            _mm512_storeu_si512((void *)(c + r * OUT + v), (__m512i)_mm512_cvtne2ps_pbh(y1, y0));
        }
    }
}

#else

static void gar__tiles_on(void) {}
static void gar__tiles_off(void) {}

#endif

/*
 * The micro-kernel: c[0:mr, 0:nr] = relu(a[0:mr, 0:IN] @ panel + bias[0:nr]),
 * rounded to bf16. a points at row 0 of the sliver in x (rows IN apart), bp
 * at a packed panel, bias at the panel's first column.
 */
static inline void gar__ukernel(const ckb_bf16 *restrict a, const uint32_t *restrict bp,
                                const ckb_bf16 *restrict bias, ckb_bf16 *restrict c, int mr,
                                int nr)
{
    __m512 acc[MR][GAR_NV];
    const ckb_bf16 *row[MR];
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++) {
        /* rows past the edge recompute the last valid row: never stored */
        row[r] = a + (r < mr ? r : mr - 1) * IN;
#pragma GCC unroll 4
        for (int v = 0; v < GAR_NV; v++)
            acc[r][v] = _mm512_setzero_ps();
    }
    for (int64_t p = 0; p < IN / 2; p++) {
        __m512i b[GAR_NV];
#pragma GCC unroll 4
        for (int v = 0; v < GAR_NV; v++)
            b[v] = _mm512_load_si512((const void *)(bp + p * NR + 16 * v));
#pragma GCC unroll 16
        for (int r = 0; r < MR; r++) {
            __m512i xv = _mm512_set1_epi32(ckb_gemm16_pair(row[r] + 2 * p));
#pragma GCC unroll 4
            for (int v = 0; v < GAR_NV; v++)
                acc[r][v] = _mm512_dpbf16_ps(acc[r][v], (__m512bh)xv, (__m512bh)b[v]);
        }
    }
    if (IN & 1) { /* the last k alone: x's high half and the panel's are zero */
        __m512i b[GAR_NV];
#pragma GCC unroll 4
        for (int v = 0; v < GAR_NV; v++)
            b[v] = _mm512_load_si512((const void *)(bp + (IN / 2) * NR + 16 * v));
#pragma GCC unroll 16
        for (int r = 0; r < MR; r++) {
            __m512i xv = _mm512_set1_epi32(row[r][IN - 1]);
#pragma GCC unroll 4
            for (int v = 0; v < GAR_NV; v++)
                acc[r][v] = _mm512_dpbf16_ps(acc[r][v], (__m512bh)xv, (__m512bh)b[v]);
        }
    }
    /* The epilogue on the registers: the bias, loaded once per tile, is the
     * accumulator's only other input. */
    __m512 bv[GAR_NV];
    const __m512 zero = _mm512_setzero_ps();
#pragma GCC unroll 4
    for (int v = 0; v < GAR_NV; v++)
        bv[v] = ckb_gemm16_load_bf16(bias + 16 * v, nr - 16 * v);
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++) {
        if (r >= mr)
            break;
#pragma GCC unroll 4
        for (int v = 0; v < GAR_NV; v++) { /* vcvtneps2bf16 rounds to nearest even */
            __m512 y = _mm512_max_ps(_mm512_add_ps(acc[r][v], bv[v]), zero);
            _mm256_mask_storeu_epi16((void *)(c + r * OUT + 16 * v), ckb_gemm16_mask(nr - 16 * v),
                                     (__m256i)_mm512_cvtneps_pbh(y));
        }
    }
}

/* One thread's share: rows [m0, m1) x panels [q0, q1), packing ncp panels
 * at a time into bp. */
static void gar__share(const ckb_bf16 *x, const ckb_bf16 *w, const ckb_bf16 *bias,
                       ckb_bf16 *out, int64_t m0, int64_t m1, int64_t q0, int64_t q1,
                       int64_t ncp, uint32_t *bp)
{
    const int64_t mc = MC < GAR_RB ? GAR_RB : MC / GAR_RB * GAR_RB; /* whole slivers */
    for (int64_t jq = q0; jq < q1; jq += ncp) {
        int64_t np = q1 - jq < ncp ? q1 - jq : ncp;
        gar__pack(w, jq, np, bp);
        for (int64_t ic = m0; ic < m1; ic += mc) {
            int64_t ie = m1 - ic < mc ? m1 : ic + mc;
            for (int64_t q = 0; q < np; q++) {
                int64_t j = (jq + q) * NR;
                int nr = OUT - j < NR ? (int)(OUT - j) : NR;
#if GAR_AMX
                for (int64_t i = ic; i < ie; i += 32)
                    gar__amx_block(x + i * IN, bp + q * GAR_KP * NR, bias + j, out + i * OUT + j,
                                   nr);
#else
                for (int64_t i = ic; i < ie; i += MR) {
                    int mr = ie - i < MR ? (int)(ie - i) : MR;
                    gar__ukernel(x + i * IN, bp + q * GAR_KP * NR, bias + j, out + i * OUT + j,
                                 mr, nr);
                }
#endif
            }
        }
    }
}

void workload(const ckb_bf16 *x, const ckb_bf16 *weight, const ckb_bf16 *bias, ckb_bf16 *out)
{
    const int64_t npanel = (OUT + NR - 1) / NR;
    const int nthr = omp_get_max_threads();
    int tn = TN > 0 && TN < nthr ? TN : nthr;
    if (tn > npanel)
        tn = (int)npanel;
    const int tm = nthr / tn;

#pragma omp parallel num_threads(tm * tn)
    {
        const int t = omp_get_thread_num(), ti = t / tn, tj = t % tn;
        /* row ranges start on multiples of the kernel's rows so that only
         * the last is ragged */
        int64_t m0 = B * ti / tm / GAR_RB * GAR_RB;
        int64_t m1 = ti == tm - 1 ? B : B * (ti + 1) / tm / GAR_RB * GAR_RB;
        int64_t q0 = npanel * tj / tn, q1 = npanel * (tj + 1) / tn;
        int64_t ncp = (NC + NR - 1) / NR; /* panels per packed block */
        if (ncp > q1 - q0)
            ncp = q1 - q0;
        const int64_t panel_bytes = GAR_KP * NR * 4;
        if (m0 < m1 && ncp > 0) {
            gar__tiles_on();
            if (ncp * panel_bytes <= GAR_STACK_MAX) {
                /* the stack's pages stay mapped from one call to the next */
                uint32_t buf[ncp * panel_bytes / 4 + 16];
                uint32_t *bp = (uint32_t *)(((uintptr_t)buf + 63) & ~(uintptr_t)63);
                gar__share(x, weight, bias, out, m0, m1, q0, q1, ncp, bp);
            } else {
                uint32_t *bp = ckb_kit_alloc64((size_t)(ncp * panel_bytes));
                if (bp) /* out of memory: no way to report, out stays unwritten */
                    gar__share(x, weight, bias, out, m0, m1, q0, q1, ncp, bp);
                free(bp);
            }
            gar__tiles_off();
        }
    }
}

#elif GAR_AVX2
/*
 * The kit's path: its GEMM (ckb_kit_gemm.h: BLIS's loops around an MR x NR
 * micro-kernel on the bf16 dot, MMA=0, or on f32 FMA over operands widened
 * while packed, MMA=1), as 8p's kit path, with bias + relu
 * + the rounding to bf16 as the epilogue of each finished tile. When
 * IN > KC the partial sums of one column block live in an f32 tile (up to
 * GAR_MB of the thread's rows x NC) between KC blocks.
 */

#define GAR_NCP ((NC + NR - 1) / NR * NR)
#define GAR_KCB (KC < IN ? KC : IN)
#ifndef GAR_MB /* rows per f32 partial-sum tile (a multiple of MR) */
#define GAR_MB (1024 / MR * MR)
#endif
#if KC < 1
#error "KC must be positive"
#endif

struct gar__epi {
    const ckb_bf16 *bias;
    ckb_bf16 *out;
};

/* The tile's epilogue: relu(tile + bias) rounded to bf16 into out. */
static inline __attribute__((always_inline)) void gar__store(void *ctx, const float *tile,
                                                             int64_t i, int64_t j, int mr, int nr)
{
    const struct gar__epi *e = ctx;
    ckb_bf16 *c = e->out + i * OUT + j;
    __m256 bv[NR / 8];
#pragma GCC unroll 4
    for (int v = 0; v < NR / 8; v++)
        bv[v] = ckb_gemm8_load_bf16(e->bias + j + 8 * v, nr - 8 * v);
#pragma GCC unroll 8
    for (int r = 0; r < MR; r++) {
        if (r >= mr)
            break;
#pragma GCC unroll 4
        for (int v = 0; v < NR / 8; v++) {
            __m256 y = _mm256_add_ps(_mm256_load_ps(tile + r * NR + 8 * v), bv[v]);
            ckb_gemm8_store_bf16(c + r * OUT + 8 * v, _mm256_max_ps(y, _mm256_setzero_ps()),
                                 nr - 8 * v);
        }
    }
}

void workload(const ckb_bf16 *x, const ckb_bf16 *weight, const ckb_bf16 *bias, ckb_bf16 *out)
{
    const ckb_gemm_grid grid = ckb_gemm_grid_make(omp_get_max_threads(), TN, (OUT + NR - 1) / NR);
    struct gar__epi epi = {bias, out};

#pragma omp parallel num_threads(grid.tm * grid.tn)
    {
        int64_t m0, m1, n0, n1; /* rows from multiples of MR, columns on panels */
        ckb_gemm_grid_share(grid, omp_get_thread_num(), B, MR, OUT, NR, &m0, &m1, &n0, &n1);
        const int64_t mrows = m1 - m0 < GAR_MB ? m1 - m0 : GAR_MB;
        const int64_t rows = (mrows + MR - 1) / MR * MR;
        ckb_gemm8_job g = {.a = x, .lda = IN, .b = weight, .ldb = OUT, .k = IN, .n = OUT,
                           .mc = MC, .nc = NC, .kc = KC, .ldt = GAR_NCP, .epi = gar__store,
                           .ctx = &epi};
        /* one allocation per thread per call, freed below */
        const size_t a_n = ckb_gemm8_ap_floats(&g) + 64, b_n = ckb_gemm8_bp_floats(&g);
        const size_t t_n = IN > GAR_KCB ? (size_t)(rows * GAR_NCP) : 0;
        if (m0 < m1 && n0 < n1) {
            const size_t bytes = ((a_n + b_n + t_n) * sizeof(float) + 63) / 64 * 64;
            float *buf = ckb_kit_alloc64(bytes);
            g.t = t_n ? buf + a_n + b_n : NULL;
            /* GAR_MB rows at a time: the f32 tile stays GAR_MB x GAR_NCP */
            for (int64_t mb = m0; buf && mb < m1; mb += GAR_MB)
                ckb_gemm8_run(&g, mb, m1 - mb < GAR_MB ? m1 : mb + GAR_MB, n0, n1, buf,
                              buf + a_n);
            free(buf); /* out of memory: no way to report, out stays unwritten */
        }
    }
}

#else /* portable path: neither AVX-512 BF16 nor AVX2 + FMA */

/* One row of out at a time: an f32 row accumulator, k outer so the inner
 * loop over j is a contiguous axpy the compiler vectorises. */
void workload(const ckb_bf16 *x, const ckb_bf16 *weight, const ckb_bf16 *bias, ckb_bf16 *out)
{
#pragma omp parallel
    {
        float *acc = malloc((size_t)OUT * sizeof(float));
        if (acc) {
#pragma omp for schedule(static)
            for (int64_t i = 0; i < B; i++) {
                for (int64_t j = 0; j < OUT; j++)
                    acc[j] = ckb_bf16_to_f32(bias[j]);
                ckb_gemm_row(x + i * IN, IN, weight, OUT, OUT, acc);
                for (int64_t j = 0; j < OUT; j++)
                    out[i * OUT + j] = ckb_f32_to_bf16(acc[j] > 0.0f ? acc[j] : 0.0f);
            }
        }
        free(acc);
    }
}

#endif
