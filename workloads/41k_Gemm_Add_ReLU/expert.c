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

/* The kit's (ckb_kit_blocks.h: MMA, MR, NR, MC, NC, KC, TN, AMX). The
 * path: the kit's resident driver (AMX tiles where the dims allow) where
 * the compiler targets AMX and MMA asks for it; else the kit's packed
 * driver on the bf16 dot (MMA=0, where there is AVX-512 BF16) or on f32
 * FMA; else portable C. */
#include "ckb_kit_unit.h"
#define CKB_KIT_BLOCKS_RESIDENT (MMA == 2 && CKB_KIT_AMX)
#define CKB_KIT_BLOCKS_TILES (B % 32 == 0 && IN % 32 == 0 && OUT % 32 == 0)
#define CKB_KIT_GEMM_UNIT (MMA == 1 ? 1 : 0) /* the kit runs 0 as 1 without AVX-512 BF16 */
#define CKB_KIT_BLOCKS_EPI gar__epi
#define CKB_KIT_BLOCKS_EPI_AMX gar__epi_amx
#ifndef MC /* rows of x: reused across one packed block (resident); packed, the kit clamps
            * MC x KC f32 to L2 */
#define MC 4096
#endif
#ifndef NC /* columns of weight packed per block; packed, a block that L2 holds: x is
            * packed once per block */
#define NC (CKB_KIT_BLOCKS_PATH == 8 ? 512 : 64)
#endif
#include "ckb_kit_blocks.h"

struct gar__epi {
    const ckb_bf16 *bias;
    ckb_bf16 *out;
};

#if CKB_KIT_BLOCKS_PATH == 16

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
    CKB_KIT_GEMM16_ROW(bv, e->bias + j, nr);
#pragma GCC unroll 16
    CKB_KIT_GEMM_ROWS(r, MR, mr)
#pragma GCC unroll 4
        for (int v = 0; v < CKB_KIT_GEMM16_NV; v++) {
            __m512 y = _mm512_max_ps(_mm512_add_ps(acc[r][v], bv[v]), zero);
            _mm256_mask_storeu_epi16((void *)(c + r * OUT + 16 * v), ckb_kit_mask16(nr - 16 * v),
                                     (__m256i)_mm512_cvtneps_pbh(y));
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

#elif CKB_KIT_BLOCKS_PATH == 8
/*
 * The kit's path: its GEMM (ckb_kit_gemm.h: BLIS's loops around an MR x NR
 * micro-kernel on the bf16 dot, MMA=0, or on f32 FMA over operands widened
 * while packed, MMA=1), as 8p's kit path, with bias + relu
 * + the rounding to bf16 as the epilogue of each finished tile. When
 * IN > KC the partial sums of one column block live in an f32 tile (up to
 * GEMM_MB of the thread's rows x NC) between KC blocks.
 */

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
    CKB_KIT_GEMM_ROWS(r, MR, mr)
#pragma GCC unroll 4
        for (int v = 0; v < NR / 8; v++) {
            __m256 y = _mm256_add_ps(_mm256_load_ps(tile + r * NR + 8 * v), bv[v]);
            ckb_kit_store8_n(c + r * OUT + 8 * v, _mm256_max_ps(y, _mm256_setzero_ps()),
                             nr - 8 * v);
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
        ckb_kit_gemm8_share(&g, m0, m1, n0, n1, GEMM_MB);
    }
}

#else /* portable path: neither AVX-512 BF16 nor AVX2 + FMA */

/* The kit's row-at-a-time GEMM from the bias; relu on each finished row,
 * rounded into out. */
static void gar__row(void *ctx, int64_t i, float *acc)
{
    ckb_bf16 *o = (ckb_bf16 *)ctx + i * OUT;
    for (int64_t j = 0; j < OUT; j++)
        o[j] = ckb_f32_to_bf16(acc[j] > 0.0f ? acc[j] : 0.0f);
}

void workload(const ckb_bf16 *x, const ckb_bf16 *weight, const ckb_bf16 *bias, ckb_bf16 *out)
{
    ckb_kit_gemm_rows(x, B, IN, weight, OUT, bias, gar__row, out);
}

#endif
