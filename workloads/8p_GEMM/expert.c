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

#include "ckb_kit_unit.h" /* MMA: the matmul unit (bench: the host's fastest) */
/* Which path: this file's own AVX-512 BF16 GEMM (AMX tiles where targeted
 * and the dims allow, else vdpbf16ps) for MMA 2 or 0 where the target has
 * AVX-512 BF16; else the kit's f32 FMA GEMM (zmm on AVX-512, ymm on AVX2:
 * the faster unit of a CPU whose bf16 dot runs at half the FMA rate, and
 * the only one below AVX-512 BF16); else portable C. */
#if MMA != 1 && defined(__AVX512BF16__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#define GEMM_AVX2 0
#elif defined(__AVX2__) && defined(__FMA__)
#define GEMM_AVX2 1
#else
#define GEMM_AVX2 0
#endif

#if GEMM_AVX2 /* the kit path's own defaults; the same names mean the same blocks */
#ifndef NR /* micro-kernel columns: ymm 8-32 (vectors of 8), zmm 16-64 (of 16) */
#ifdef __AVX512F__
#define NR 64 /* f32 FMA in zmm: 6 x 64, 24 accumulators (the kit's default) */
#else
#define NR 16
#endif
#endif
#ifndef MC /* rows of A packed per block (MC x KC f32, meant for L2) */
#define MC 144
#endif
#ifndef NC /* columns of B packed per block (KC x NC f32, rounded up to panels of NR) */
#define NC 1024
#endif
#ifndef KC /* depth of one packed block; K > KC accumulates in an f32 tile of C */
#define KC 256
#endif
#endif

#ifndef MR /* micro-kernel rows */
#define MR 6
#endif
#ifndef NR /* micro-kernel columns: 16, 32, 48 or 64 */
#define NR 64
#endif
#ifndef MC /* rows of A (MC x K) reused across the panels of one packed block */
#define MC 1024
#endif
#ifndef NC /* columns of B packed per block (rounded up to whole panels of NR) */
#define NC 256
#endif
#ifndef TN /* threads along N (the rest go along M); 0: every thread along N */
#define TN 0
#endif
#ifndef AMX /* 1: AMX tiles where the compiler targets them and dims allow; 0: vdpbf16ps */
#define AMX 1
#endif

#if GEMM_AVX2 /* the kit's micro-kernel takes this path's tile */
#define CKB_KIT_GEMM8_MR MR
#define CKB_KIT_GEMM8_NR NR
#else /* the kit's resident driver, AMX where the dims allow (whole tile pairs) */
#define CKB_KIT_GEMM16_MR MR
#define CKB_KIT_GEMM16_NR NR
#if AMX && M % 32 == 0 && K % 32 == 0 && N % 32 == 0 && NR % 32 == 0
#define CKB_KIT_GEMM16_UNIT 2 /* runs as 0 where the target lacks AMX */
#endif
#endif
#include "ckb_kit_gemm.h"

#if !GEMM_AVX2 && defined(__AVX512BF16__) && defined(__AVX512BW__) && defined(__AVX512VL__)

/* The kit's resident driver with its default epilogues (round to bf16). */
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    ckb_kit_gemm16_out out = {C, N};
    const ckb_kit_gemm16_job g = {.a = A, .lda = K, .b = B, .ldb = N, .m = M, .n = N, .k = K,
                                  .mc = MC, .nc = NC, .tn = TN, .ctx = &out};
    ckb_kit_gemm16_run(&g);
}

#elif GEMM_AVX2
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

#ifndef GEMM_MB /* rows per f32 partial-sum tile (a multiple of MR) */
#define GEMM_MB (1024 / MR * MR)
#endif
#if KC < 1
#error "KC must be positive"
#endif

/* The tile's epilogue: round to bf16 into C. */
static inline __attribute__((always_inline)) void gemm__store(void *ctx, const float *tile,
                                                              int64_t i, int64_t j, int mr, int nr)
{
    ckb_bf16 *c = (ckb_bf16 *)ctx + i * N + j;
#pragma GCC unroll 8
    for (int r = 0; r < MR; r++) {
        if (r >= mr)
            break;
#pragma GCC unroll 4
        for (int v = 0; v < NR / 8; v++)
            ckb_kit_store8_n(c + r * N + 8 * v, _mm256_load_ps(tile + r * NR + 8 * v), nr - 8 * v);
    }
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

/* One row of C at a time: an f32 row accumulator, k outer so the inner
 * loop over j is a contiguous axpy the compiler vectorises. */
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
#pragma omp parallel
    {
        float *acc = malloc((size_t)N * sizeof(float));
        if (acc) {
#pragma omp for schedule(static)
            for (int64_t i = 0; i < M; i++) {
                for (int64_t j = 0; j < N; j++)
                    acc[j] = 0.0f;
                ckb_kit_gemm_row(A + i * K, K, B, N, N, acc);
                for (int64_t j = 0; j < N; j++)
                    C[i * N + j] = ckb_f32_to_bf16(acc[j]);
            }
        }
        free(acc);
    }
}

#endif
