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
#define CKB_GEMM8_MR MR
#define CKB_GEMM8_NR NR
#endif
#include "ckb_kit_gemm.h"

/* ---- fixed choices ------------------------------------------------------ */

#ifndef GEMM_PREFETCH /* pairs of B rows the packer prefetches ahead */
#define GEMM_PREFETCH 32
#endif
#ifndef GEMM_STACK_MAX /* packed blocks up to this size live on the stack */
#define GEMM_STACK_MAX (4L << 20)
#endif

#define GEMM_NV (NR / 16)     /* zmm accumulators per row of the tile */
#define GEMM_KP ((K + 1) / 2) /* k pairs; the last is half zero when K is odd */

#if !GEMM_AVX2 && (NR % 16 != 0 || NR < 16 || NR > 64 || MR < 1 || MR * GEMM_NV + GEMM_NV > 30)
#error "MR x NR must fit the 32 zmm registers: NR in {16,32,48,64}, MR * (NR/16 + 1) <= 30"
#endif

#if !GEMM_AVX2 && defined(__AVX512BF16__) && defined(__AVX512BW__) && defined(__AVX512VL__)

/* AMX needs whole 16 x 16 tiles in pairs: rows and columns multiples of
 * 32, K of 32 (one A tile is 16 rows x 32 k), panels of whole tile pairs. */
#if AMX && defined(__AMX_BF16__) && defined(__AMX_TILE__) && M % 32 == 0 && K % 32 == 0 &&        \
    N % 32 == 0 && NR % 32 == 0
#define GEMM_AMX 1
#define GEMM_RB 32 /* rows per step of the kernel */
#else
#define GEMM_AMX 0
#define GEMM_RB MR
#endif

/* Packs panels [q0, q0+np) of B (panel q = columns [q*NR, q*NR+NR)) into
 * bp[q-q0][GEMM_KP][NR] pairs. Row-pair outer, so each B row is read in one
 * contiguous run of np*NR columns. */
static void gemm__pack_b(const ckb_bf16 *B, int64_t q0, int64_t np, uint32_t *bp)
{
    for (int64_t p = 0; p < GEMM_KP; p++) {
        const ckb_bf16 *r0 = B + 2 * p * N;
        const int has_odd = 2 * p + 1 < K;
        /* The rows are N apart: too far for the hardware prefetcher to
         * follow, and the packer is latency bound without this. */
        if (2 * (p + GEMM_PREFETCH) + 1 < K) {
            const char *f = (const char *)(r0 + 2 * GEMM_PREFETCH * N + q0 * NR);
            for (int64_t o = 0; o < np * NR * 2; o += 64) {
                _mm_prefetch(f + o, _MM_HINT_T0);
                _mm_prefetch(f + 2 * N + o, _MM_HINT_T0);
            }
        }
        for (int64_t q = 0; q < np; q++) {
            uint32_t *out = bp + (q * GEMM_KP + p) * NR;
#pragma GCC unroll 4
            for (int v = 0; v < GEMM_NV; v++) {
                int64_t j = (q0 + q) * NR + 16 * v;
                __mmask16 m = ckb_gemm16_mask(N - j);
                __m512i lo = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, r0 + j));
                __m512i hi = has_odd
                                 ? _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, r0 + N + j))
                                 : _mm512_setzero_si512();
                _mm512_store_si512((void *)(out + 16 * v),
                                   _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
            }
        }
    }
}

#if GEMM_AMX

/* The tile shapes: 0-3 the 2 x 2 f32 accumulators, 4-5 A (16 rows x 32
 * bf16), 6-7 B (16 pairs x 16 columns); all 16 rows of 64 bytes. The
 * configuration is per thread: each thread loads it before its share. */
static void gemm__tiles_on(void) { ckb_amx_tiles_on(); }

static void gemm__tiles_off(void) { ckb_amx_tiles_off(); }

/*
 * C[0:32, 0:nr] = a[0:32, 0:K] @ panel, rounded to bf16; nr a multiple of
 * 32. Per 32 columns a 2 x 2 grid of f32 accumulator tiles runs over all of
 * K, A tiles loaded straight from A (a pair of k is already the layout
 * tdpbf16ps reads), B tiles from the packed panel (rows NR pairs apart);
 * then the tiles go through a small f32 buffer and are rounded to bf16
 * once (vcvtneps2bf16: nearest even), as the f32 accumulator of the
 * reference is.
 */
static void gemm__amx_block(const ckb_bf16 *restrict a, const uint32_t *restrict bp,
                            ckb_bf16 *restrict c, int nr)
{
    float buf[32][32] __attribute__((aligned(64)));
    const ckb_bf16 *a1 = a + 16 * K;
    for (int v = 0; v < nr; v += 32) {
        const uint32_t *b0 = bp + v, *b1 = b0 + 16;
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
        for (int64_t kk = 0; kk < K; kk += 32) {
            _tile_loadd(4, a + kk, K * 2);
            _tile_loadd(6, b0 + kk / 2 * NR, NR * 4);
            _tile_loadd(7, b1 + kk / 2 * NR, NR * 4);
            _tile_dpbf16ps(0, 4, 6);
            _tile_dpbf16ps(1, 4, 7);
            _tile_loadd(5, a1 + kk, K * 2);
            _tile_dpbf16ps(2, 5, 6);
            _tile_dpbf16ps(3, 5, 7);
        }
        _tile_stored(0, &buf[0][0], 128);
        _tile_stored(1, &buf[0][16], 128);
        _tile_stored(2, &buf[16][0], 128);
        _tile_stored(3, &buf[16][16], 128);
        for (int r = 0; r < 32; r++) {
            /* 32 columns in one: the second argument gives the low half */
            __m512bh y =
                _mm512_cvtne2ps_pbh(_mm512_load_ps(&buf[r][16]), _mm512_load_ps(&buf[r][0]));
            _mm512_storeu_si512((void *)(c + r * N + v), (__m512i)y);
        }
    }
}

#else

static void gemm__tiles_on(void) {}
static void gemm__tiles_off(void) {}

#endif

/*
 * The micro-kernel: C[0:mr, 0:nr] = a[0:mr, 0:K] @ panel, rounded to bf16.
 * a points at row 0 of the sliver in A (rows K apart), bp at a packed panel.
 */
static inline void gemm__ukernel(const ckb_bf16 *restrict a, const uint32_t *restrict bp,
                                 ckb_bf16 *restrict c, int mr, int nr)
{
    __m512 acc[MR][GEMM_NV];
    const ckb_bf16 *row[MR];
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++) {
        /* rows past the edge recompute the last valid row: never stored */
        row[r] = a + (r < mr ? r : mr - 1) * K;
#pragma GCC unroll 4
        for (int v = 0; v < GEMM_NV; v++)
            acc[r][v] = _mm512_setzero_ps();
    }
    for (int64_t p = 0; p < K / 2; p++) {
        __m512i b[GEMM_NV];
#pragma GCC unroll 4
        for (int v = 0; v < GEMM_NV; v++)
            b[v] = _mm512_load_si512((const void *)(bp + p * NR + 16 * v));
#pragma GCC unroll 16
        for (int r = 0; r < MR; r++) {
            __m512i x = _mm512_set1_epi32(ckb_gemm16_pair(row[r] + 2 * p));
#pragma GCC unroll 4
            for (int v = 0; v < GEMM_NV; v++)
                acc[r][v] = _mm512_dpbf16_ps(acc[r][v], (__m512bh)x, (__m512bh)b[v]);
        }
    }
    if (K & 1) { /* the last k alone: A's high half and B's are zero */
        __m512i b[GEMM_NV];
#pragma GCC unroll 4
        for (int v = 0; v < GEMM_NV; v++)
            b[v] = _mm512_load_si512((const void *)(bp + (K / 2) * NR + 16 * v));
#pragma GCC unroll 16
        for (int r = 0; r < MR; r++) {
            __m512i x = _mm512_set1_epi32(row[r][K - 1]);
#pragma GCC unroll 4
            for (int v = 0; v < GEMM_NV; v++)
                acc[r][v] = _mm512_dpbf16_ps(acc[r][v], (__m512bh)x, (__m512bh)b[v]);
        }
    }
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++) {
        if (r >= mr)
            break;
#pragma GCC unroll 4
        for (int v = 0; v < GEMM_NV; v++) /* vcvtneps2bf16 rounds to nearest even */
            _mm256_mask_storeu_epi16((void *)(c + r * N + 16 * v), ckb_gemm16_mask(nr - 16 * v),
                                     (__m256i)_mm512_cvtneps_pbh(acc[r][v]));
    }
}

/* One thread's share: rows [m0, m1) x panels [q0, q1), packing ncp panels
 * at a time into bp. */
static void gemm__share(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C, int64_t m0, int64_t m1,
                        int64_t q0, int64_t q1, int64_t ncp, uint32_t *bp)
{
    const int64_t mc = MC < GEMM_RB ? GEMM_RB : MC / GEMM_RB * GEMM_RB; /* whole slivers */
    for (int64_t jq = q0; jq < q1; jq += ncp) {
        int64_t np = q1 - jq < ncp ? q1 - jq : ncp;
        gemm__pack_b(B, jq, np, bp);
        for (int64_t ic = m0; ic < m1; ic += mc) {
            int64_t ie = m1 - ic < mc ? m1 : ic + mc;
            for (int64_t q = 0; q < np; q++) {
                int64_t j = (jq + q) * NR;
                int nr = N - j < NR ? (int)(N - j) : NR;
#if GEMM_AMX
                for (int64_t i = ic; i < ie; i += 32)
                    gemm__amx_block(A + i * K, bp + q * GEMM_KP * NR, C + i * N + j, nr);
#else
                for (int64_t i = ic; i < ie; i += MR) {
                    int mr = ie - i < MR ? (int)(ie - i) : MR;
                    gemm__ukernel(A + i * K, bp + q * GEMM_KP * NR, C + i * N + j, mr, nr);
                }
#endif
            }
        }
    }
}

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    const int64_t npanel = (N + NR - 1) / NR;
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
        int64_t m0 = M * ti / tm / GEMM_RB * GEMM_RB;
        int64_t m1 = ti == tm - 1 ? M : M * (ti + 1) / tm / GEMM_RB * GEMM_RB;
        int64_t q0 = npanel * tj / tn, q1 = npanel * (tj + 1) / tn;
        int64_t ncp = (NC + NR - 1) / NR; /* panels per packed block */
        if (ncp > q1 - q0)
            ncp = q1 - q0;
        const int64_t panel_bytes = GEMM_KP * NR * 4;
        if (m0 < m1 && ncp > 0) {
            gemm__tiles_on();
            if (ncp * panel_bytes <= GEMM_STACK_MAX) {
                /* the stack's pages stay mapped from one call to the next */
                uint32_t buf[ncp * panel_bytes / 4 + 16];
                uint32_t *bp = (uint32_t *)(((uintptr_t)buf + 63) & ~(uintptr_t)63);
                gemm__share(A, B, C, m0, m1, q0, q1, ncp, bp);
            } else {
                uint32_t *bp = ckb_kit_alloc64((size_t)(ncp * panel_bytes));
                if (bp) /* out of memory: no way to report, C stays unwritten */
                    gemm__share(A, B, C, m0, m1, q0, q1, ncp, bp);
                free(bp);
            }
            gemm__tiles_off();
        }
    }
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

#define GEMM_NCP ((NC + NR - 1) / NR * NR)
#define GEMM_KCB (KC < K ? KC : K)
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
            ckb_gemm8_store_bf16(c + r * N + 8 * v, _mm256_load_ps(tile + r * NR + 8 * v),
                                 nr - 8 * v);
    }
}

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    const ckb_gemm_grid grid = ckb_gemm_grid_make(omp_get_max_threads(), TN, (N + NR - 1) / NR);

#pragma omp parallel num_threads(grid.tm * grid.tn)
    {
        int64_t m0, m1, n0, n1; /* rows from multiples of MR, columns on panels */
        ckb_gemm_grid_share(grid, omp_get_thread_num(), M, MR, N, NR, &m0, &m1, &n0, &n1);
        const int64_t mrows = m1 - m0 < GEMM_MB ? m1 - m0 : GEMM_MB;
        const int64_t rows = (mrows + MR - 1) / MR * MR;
        ckb_gemm8_job g = {.a = A, .lda = K, .b = B, .ldb = N, .k = K, .n = N, .mc = MC,
                           .nc = NC, .kc = KC, .ldt = GEMM_NCP, .epi = gemm__store, .ctx = C};
        /* one allocation per thread per call, freed below */
        const size_t a_n = ckb_gemm8_ap_floats(&g) + 64, b_n = ckb_gemm8_bp_floats(&g);
        const size_t t_n = K > GEMM_KCB ? (size_t)(rows * GEMM_NCP) : 0;
        if (m0 < m1 && n0 < n1) {
            const size_t bytes = ((a_n + b_n + t_n) * sizeof(float) + 63) / 64 * 64;
            float *buf = ckb_kit_alloc64(bytes);
            g.t = t_n ? buf + a_n + b_n : NULL;
            /* GEMM_MB rows at a time, so that the f32 tile stays GEMM_MB x
             * GEMM_NCP whatever M is (B is packed once per GEMM_MB rows) */
            for (int64_t mb = m0; buf && mb < m1; mb += GEMM_MB)
                ckb_gemm8_run(&g, mb, m1 - mb < GEMM_MB ? m1 : mb + GEMM_MB, n0, n1, buf,
                              buf + a_n);
            free(buf); /* out of memory: no way to report, C stays unwritten */
        }
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
                ckb_gemm_row(A + i * K, K, B, N, N, acc);
                for (int64_t j = 0; j < N; j++)
                    C[i * N + j] = ckb_f32_to_bf16(acc[j]);
            }
        }
        free(acc);
    }
}

#endif
