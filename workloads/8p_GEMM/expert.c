/*
 * expert.c — hand-tuned bf16 GEMM for 8p_GEMM: C[M,N] = A[M,K] @ B[K,N],
 * bf16 in, f32 accumulation, bf16 out (round to nearest even).
 *
 * A candidate file (DESIGN §3): M, K, N come from the force-included header;
 * the tunables below are macros that `ckbench tune` overrides with -D.
 *
 * Design (GotoBLAS/BLIS, adapted to vdpbf16ps):
 * - B is packed into NR-column panels in the pair layout vdpbf16ps reads:
 *   lane j of pair p holds B[2p][j] (low half) and B[2p+1][j] (high half).
 *   A needs no packing: two consecutive k of one row already form such a
 *   pair, so the micro-kernel broadcasts 32-bit words straight from A.
 * - The MR x NR micro-kernel keeps its whole f32 tile in zmm registers for
 *   all of K (no f32 round trip through memory, C is written once as bf16);
 *   a packed panel (K x NR) stays in L2 while MR-row slivers of A stream
 *   past it from L3.
 * - Threads own disjoint parts of C (a TM x TN grid of row ranges and column
 *   panel ranges) and pack their own B panels, so a call has no barrier and a
 *   descheduled thread delays only its own share.
 * - Ragged edges: masked loads zero-fill the packed panels past N, masked
 *   stores skip columns past N, rows past M re-read the last valid row and are
 *   not stored, and an odd K ends with one half-empty pair.
 * - AMX (default where the compiler targets it and M, N, K are multiples of
 *   32): the same packed panels are what tdpbf16ps reads as B tiles (16
 *   pairs x 16 columns, rows NR pairs apart), A tiles load straight from A;
 *   a 2 x 2 grid of 16 x 16 f32 accumulator tiles covers 32 x 32 of C over
 *   all of K and is rounded to bf16 from the stored f32 tile. Each thread
 *   configures its tiles before its share and releases them after. MR does
 *   not apply to this path (its rows step is 32). The harness grants the
 *   process AMX tile permission.
 * - MMA=1 (f32 FMA the host's fastest unit), or no AVX-512 BF16: the kit's
 *   f32 GEMM (see the comment over it; zmm on AVX-512, ymm on AVX2), with
 *   its own defaults for the same block macros.
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
 * path: the kit's resident driver (AMX tiles where targeted and the dims
 * allow, else vdpbf16ps) for MMA 2 or 0 where the target has AVX-512 BF16;
 * else its packed f32 FMA driver (zmm on AVX-512, ymm on AVX2: the faster
 * unit of a CPU whose bf16 dot runs at half the FMA rate, and the only one
 * below AVX-512 BF16); else portable C. */
#include "ckb_kit_unit.h"
#define CKB_KIT_BLOCKS_RESIDENT (MMA != 1)
#define CKB_KIT_BLOCKS_TILES (M % 32 == 0 && K % 32 == 0 && N % 32 == 0)
#ifndef MC /* rows of A: reused across one packed block (resident), MC x KC f32 for L2 (packed) */
#define MC (CKB_KIT_BLOCKS_PATH == 8 ? 144 : 1024)
#endif
#ifndef NC /* columns of B packed per block (rounded up to whole panels of NR) */
#define NC (CKB_KIT_BLOCKS_PATH == 8 ? 1024 : 256)
#endif
#include "ckb_kit_blocks.h"

#if CKB_KIT_BLOCKS_PATH == 16

/* The kit's resident driver with its default epilogues (round to bf16). */
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    ckb_kit_gemm16_out out = {C, N};
    const ckb_kit_gemm16_job g = {.a = A, .lda = K, .b = B, .ldb = N, .m = M, .n = N, .k = K,
                                  .mc = MC, .nc = NC, .tn = TN, .ctx = &out};
    ckb_kit_gemm16_run(&g);
}

#elif CKB_KIT_BLOCKS_PATH == 8
/*
 * The f32 FMA path (MMA=1, or no AVX-512 BF16): f32 FMA is the fastest
 * unit, so the kit's f32 GEMM (ckb_kit_gemm.h: both operands widened while
 * they are packed, BLIS's five loops, an MR x NR micro-kernel of zmm or
 * ymm accumulators)
 * does the work. When K > KC the partial sums of one column block live in
 * an f32 tile (up to GEMM_MB of the thread's rows x NC); the epilogue of
 * the last KC block rounds each finished tile to bf16 into C (nearest
 * even, as ckb_f32_to_bf16).
 */

/* The tile's epilogue: round to bf16 into C. */
static inline __attribute__((always_inline)) void gemm__store(void *ctx, const float *tile,
                                                              int64_t i, int64_t j, int mr, int nr)
{
    ckb_bf16 *c = (ckb_bf16 *)ctx + i * N + j;
#pragma GCC unroll 8
    CKB_KIT_GEMM_ROWS(r, MR, mr)
#pragma GCC unroll 4
        for (int v = 0; v < NR / 8; v++)
            ckb_kit_store8_n(c + r * N + 8 * v, _mm256_load_ps(tile + r * NR + 8 * v), nr - 8 * v);
}

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    const ckb_kit_gemm_grid grid =
        ckb_kit_gemm_grid_make(omp_get_max_threads(), TN, (N + NR - 1) / NR);

#pragma omp parallel num_threads(grid.tm * grid.tn)
    {
        int64_t m0, m1, n0, n1; /* rows from multiples of MR, columns on panels */
        ckb_kit_gemm_grid_share(grid, omp_get_thread_num(), M, MR, N, NR, &m0, &m1, &n0, &n1);
        ckb_kit_gemm8_job g = {.a = A, .lda = K, .b = B, .ldb = N, .k = K, .n = N, .mc = MC,
                               .nc = NC, .kc = KC, .epi = gemm__store, .ctx = C};
        ckb_kit_gemm8_share(&g, m0, m1, n0, n1, GEMM_MB);
    }
}
#else /* portable path: neither AVX-512 BF16 nor AVX2 + FMA */

/* The kit's row-at-a-time GEMM; each finished row rounded into C. */
static void gemm__row(void *ctx, int64_t i, float *acc)
{
    ckb_bf16 *c = (ckb_bf16 *)ctx + i * N;
    for (int64_t j = 0; j < N; j++)
        c[j] = ckb_f32_to_bf16(acc[j]);
}

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    ckb_kit_gemm_rows(A, M, K, B, N, NULL, gemm__row, C);
}

#endif
