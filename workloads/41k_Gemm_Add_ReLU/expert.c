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
#define CKB_KIT_GEMM_UNIT (MMA == 1 ? 1 : 0) /* the kit runs 0 as 1 without AVX-512 BF16 */

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
#define CKB_KIT_GEMM8_MR MR
#define CKB_KIT_GEMM8_NR NR
#else /* the kit's resident driver, AMX where the dims allow (whole tile pairs) */
#define CKB_KIT_GEMM16_MR MR
#define CKB_KIT_GEMM16_NR NR
#if AMX && B % 32 == 0 && IN % 32 == 0 && OUT % 32 == 0 && NR % 32 == 0
#define CKB_KIT_GEMM16_UNIT 2 /* runs as 0 where the target lacks AMX */
#endif
#define CKB_KIT_GEMM16_EPI gar__epi
#define CKB_KIT_GEMM16_EPI_AMX gar__epi_amx
#endif
#include "ckb_kit_gemm.h"

struct gar__epi {
    const ckb_bf16 *bias;
    ckb_bf16 *out;
};

#if !GAR_AVX2 && defined(__AVX512BF16__) && defined(__AVX512BW__) && defined(__AVX512VL__)

/* The micro-kernel's epilogue on its registers: relu(acc + bias) rounded
 * to bf16 (nearest even); the bias, loaded once per tile, is the
 * accumulator's only other input. */
static inline __attribute__((always_inline)) void
gar__epi(void *ctx, __m512 acc[][CKB_KIT_GEMM16_NV], int64_t i, int64_t j, int mr, int nr)
{
    const struct gar__epi *e = ctx;
    ckb_bf16 *c = e->out + i * OUT + j;
    __m512 bv[CKB_KIT_GEMM16_NV];
    const __m512 zero = _mm512_setzero_ps();
#pragma GCC unroll 4
    for (int v = 0; v < CKB_KIT_GEMM16_NV; v++)
        bv[v] = ckb_kit_load16_n(e->bias + j + 16 * v, nr - 16 * v);
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++) {
        if (r >= mr)
            break;
#pragma GCC unroll 4
        for (int v = 0; v < CKB_KIT_GEMM16_NV; v++) {
            __m512 y = _mm512_max_ps(_mm512_add_ps(acc[r][v], bv[v]), zero);
            _mm256_mask_storeu_epi16((void *)(c + r * OUT + 16 * v), ckb_kit_mask16(nr - 16 * v),
                                     (__m256i)_mm512_cvtneps_pbh(y));
        }
    }
}

/* The AMX block's epilogue: the same on a stored 32 x 32 f32 block. */
static inline __attribute__((always_inline)) void gar__epi_amx(void *ctx, const float *tile,
                                                               int64_t i, int64_t j)
{
    const struct gar__epi *e = ctx;
    const __m512 bv0 = ckb_kit_load16_n(e->bias + j, 16);
    const __m512 bv1 = ckb_kit_load16_n(e->bias + j + 16, 16);
    const __m512 zero = _mm512_setzero_ps();
    for (int r = 0; r < 32; r++) {
        __m512 y0 = _mm512_max_ps(_mm512_add_ps(_mm512_load_ps(tile + r * 32), bv0), zero);
        __m512 y1 = _mm512_max_ps(_mm512_add_ps(_mm512_load_ps(tile + r * 32 + 16), bv1), zero);
        /* 32 columns in one: the second argument gives the low half */
        _mm512_storeu_si512((void *)(e->out + (i + r) * OUT + j),
                            (__m512i)_mm512_cvtne2ps_pbh(y1, y0));
    }
}

void workload(const ckb_bf16 *x, const ckb_bf16 *weight, const ckb_bf16 *bias, ckb_bf16 *out)
{
    struct gar__epi epi = {bias, out};
    const ckb_kit_gemm16_job g = {.a = x, .lda = IN, .b = weight, .ldb = OUT, .m = B, .n = OUT,
                                  .k = IN, .mc = MC, .nc = NC, .tn = TN, .ctx = &epi};
    ckb_kit_gemm16_run(&g);
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

#ifndef GAR_MB /* rows per f32 partial-sum tile (a multiple of MR) */
#define GAR_MB (1024 / MR * MR)
#endif
#if KC < 1
#error "KC must be positive"
#endif

/* The tile's epilogue: relu(tile + bias) rounded to bf16 into out. */
static inline __attribute__((always_inline)) void gar__store(void *ctx, const float *tile,
                                                             int64_t i, int64_t j, int mr, int nr)
{
    const struct gar__epi *e = ctx;
    ckb_bf16 *c = e->out + i * OUT + j;
    __m256 bv[NR / 8];
#pragma GCC unroll 4
    for (int v = 0; v < NR / 8; v++)
        bv[v] = ckb_kit_load8_n(e->bias + j + 8 * v, nr - 8 * v);
#pragma GCC unroll 8
    for (int r = 0; r < MR; r++) {
        if (r >= mr)
            break;
#pragma GCC unroll 4
        for (int v = 0; v < NR / 8; v++) {
            __m256 y = _mm256_add_ps(_mm256_load_ps(tile + r * NR + 8 * v), bv[v]);
            ckb_kit_store8_n(c + r * OUT + 8 * v, _mm256_max_ps(y, _mm256_setzero_ps()),
                             nr - 8 * v);
        }
    }
}

void workload(const ckb_bf16 *x, const ckb_bf16 *weight, const ckb_bf16 *bias, ckb_bf16 *out)
{
    const ckb_kit_gemm_grid grid =
        ckb_kit_gemm_grid_make(omp_get_max_threads(), TN, (OUT + NR - 1) / NR);
    struct gar__epi epi = {bias, out};

#pragma omp parallel num_threads(grid.tm * grid.tn)
    {
        int64_t m0, m1, n0, n1; /* rows from multiples of MR, columns on panels */
        ckb_kit_gemm_grid_share(grid, omp_get_thread_num(), B, MR, OUT, NR, &m0, &m1, &n0, &n1);
        ckb_kit_gemm8_job g = {.a = x, .lda = IN, .b = weight, .ldb = OUT, .k = IN, .n = OUT,
                               .mc = MC, .nc = NC, .kc = KC, .epi = gar__store, .ctx = &epi};
        ckb_kit_gemm8_share(&g, m0, m1, n0, n1, GAR_MB);
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
                ckb_kit_gemm_row(x + i * IN, IN, weight, OUT, OUT, acc);
                for (int64_t j = 0; j < OUT; j++)
                    out[i * OUT + j] = ckb_f32_to_bf16(acc[j] > 0.0f ? acc[j] : 0.0f);
            }
        }
        free(acc);
    }
}

#endif
