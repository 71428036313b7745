/*
 * expert.c — the hand-tuned kernel for 11p_Megablox_GMM: grouped matmul,
 * the M rows of lhs sorted by expert into G contiguous groups of
 * group_sizes[g] rows, out[rows of g] = bf16(lhs[rows of g] @ rhs[g]), bf16
 * in, f32 accumulation, rows past the last group zero.
 *
 * Tiled per group, with no padding: where JAX (and the baseline) computes
 * every group over a static window of CAP rows, this kernel computes each
 * group's rows exactly — an empty group costs nothing, and only the last
 * sliver of a group is ragged.
 *   - A work item is NCB column panels (64 columns each) of one group.
 *     Items go out heaviest group first (dynamic): the groups are uneven,
 *     and a big group's panels are spread over every thread, so the threads
 *     finish together.
 *   - AMX (MMA=2, the default where the compiler targets it): K goes in
 *     chunks of KC. The item's thread packs a chunk of rhs[g] into the pair
 *     layout tdpbf16ps reads as B tiles (dword j of pair p holds rhs[2p][j]
 *     low, rhs[2p+1][j] high, 16 columns a tile row), then runs every
 *     32-row block of the group past each 32 columns of it: a 2 x 2 grid of
 *     16 x 16 f32 accumulator tiles, A tiles loaded straight from lhs (two
 *     consecutive k of a row are already a pair). Between chunks the
 *     accumulators wait in a per-thread f32 buffer (the group's rows x the
 *     item's columns, in L2), so items can be wide and lhs is read few
 *     times; after the last chunk they are rounded to bf16 (vcvtneps2bf16,
 *     nearest even). A last sliver of up to 16 rows uses one row of tiles;
 *     a block that would run past row M is moved back to end at M and its
 *     rows outside the group are computed but not written, so no tile reads
 *     or writes out of bounds. Each thread configures its tiles before its
 *     items and releases them after; the harness grants AMX permission.
 *     Where AMX is not targeted (or K % 32 != 0, or M < 32) MMA=2 runs as 1.
 *   - MMA=0/1 (AVX-512): the item's panels are packed whole (all of K) in
 *     the pair layout vdpbf16ps reads, or widened to f32; every MR-row
 *     sliver of the group runs past them in an MR x 64 micro-kernel that
 *     keeps its f32 tile in zmm registers over all of K and writes it once
 *     as bf16.
 * Sizes are clamped as the baseline's layout clamps them (to [0, CAP], the
 * running offset to M), so no input makes the kernel read or write out of
 * bounds. Without __AVX512BF16__ the kit's f32 AVX2 + FMA GEMM runs the same
 * work items; below AVX2 a portable path computes row by row in f32.
 *
 * Tunable (ckbench tune passes -DNAME=VALUE):
 *   MMA  2: AMX tiles as above; 1: f32 FMA on operands widened exactly (a
 *        bf16 is the top half of an f32); 0: vdpbf16ps. On the Xeon this
 *        was tuned on AMX does ~10x the FMA rate, and one vdpbf16ps issues
 *        at a quarter of the FMA rate (measured), so FMA beats it.
 *   NCB  column panels per work item: for AMX, lhs re-reads (N / item
 *        width) against the accumulator buffer's size and balance; for
 *        MMA=0/1, packed-panel reuse against balance
 *   KC   AMX: k per packed chunk (a multiple of 32): fewer accumulator
 *        round trips against the packed chunk's share of L2
 *   MR   MMA=0/1: rows of the micro-kernel tile (MR x 64 accumulators,
 *        MR <= 6)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "ckbench.h"

#ifndef MR
#define MR 4
#endif
#ifndef NCB
#define NCB 4
#endif
#ifndef KC
#define KC 256
#endif
#ifndef MMA /* AMX where the compiler targets it, else f32 FMA */
#if defined(__AMX_BF16__) && defined(__AMX_TILE__)
#define MMA 2
#else
#define MMA 1
#endif
#endif

#if MR < 1 || MR > 6
#error "MR must be in 1..6: MR x 4 accumulators, 4 panel vectors and a broadcast fit 32 zmm"
#endif
#if NCB < 1
#error "NCB must be at least 1"
#endif
#if KC < 32 || KC % 32 != 0
#error "KC must be a positive multiple of 32"
#endif
#if MMA < 0 || MMA > 2
#error "MMA must be 0 (vdpbf16ps), 1 (f32 FMA) or 2 (AMX)"
#endif

/* AMX tiles when asked for, targeted, and the sizes allow: an A tile row
 * holds 32 k, and a ragged row block is moved back to end at row M, so M
 * must hold one whole block (32 rows). Otherwise MMA=2 runs as MMA=1. */
#if MMA == 2 && defined(__AMX_BF16__) && defined(__AMX_TILE__) && K % 32 == 0 && M >= 32
#define GM_AMX 1
#define GM_FMA 0
#else
#define GM_AMX 0
#define GM_FMA (MMA != 0)
#endif

#include "ckb_kit_gemm.h"

#define GM_NR 64                          /* columns per panel */
#define GM_NV (GM_NR / 16)                /* zmm per tile row */
#define GM_KP ((K + 1) / 2)               /* k pairs; the last half zero when K is odd */
#define GM_NPANEL ((N + GM_NR - 1) / GM_NR)
#define GM_NQB ((GM_NPANEL + NCB - 1) / NCB) /* items per group */
#define GM_KC (KC < K ? KC : K)           /* AMX: k per packed chunk */
#define GM_ROWS (((CAP < M ? CAP : M) + 31) / 32 * 32) /* a group's rows, in whole blocks */
#ifndef GM_PREFETCH /* pairs of rhs rows the packer prefetches ahead */
#define GM_PREFETCH 16
#endif

/* Each group's first row and row count, clamped as the baseline's layout
 * does; returns the rows covered (the rest are zero). */
static int64_t gm__layout(const int32_t *sizes, int64_t *start, int64_t *count)
{
    int64_t at = 0;
    for (int64_t g = 0; g < G; g++) {
        int64_t c = sizes[g] < 0 ? 0 : sizes[g] > CAP ? CAP : sizes[g];
        if (c > M - at)
            c = M - at;
        start[g] = at;
        count[g] = c;
        at += c;
    }
    return at;
}

/* Rows past the last group: zero. */
static void gm__zero_tail(int64_t covered, ckb_bf16 *out)
{
#pragma omp for schedule(static)
    for (int64_t r = covered; r < M; r++)
        memset(out + r * N, 0, (size_t)N * sizeof *out);
}

#if defined(__AVX512BF16__) && defined(__AVX512BW__)

#include <immintrin.h>

#if !GM_AMX && !GM_FMA /* MMA=0: vdpbf16ps */

/* Packs panels [q0, q0 + np) of one group's rhs (K x N) into
 * bp[q - q0][GM_KP][GM_NR]: pair p of column j as one dword, zero past N
 * and, for an odd K, in the last pair's high half. */
static void gm__pack(const ckb_bf16 *rhs, int64_t q0, int64_t np, uint32_t *bp)
{
    const __m512i lo = _mm512_set_epi16(47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10, 41, 9,
                                        40, 8, 39, 7, 38, 6, 37, 5, 36, 4, 35, 3, 34, 2, 33, 1,
                                        32, 0);
    const __m512i hi = _mm512_add_epi16(lo, _mm512_set1_epi16(16));
    const int64_t c0 = q0 * GM_NR, c1 = (q0 + np) * GM_NR < N ? (q0 + np) * GM_NR : N;
    for (int64_t p = 0; p < GM_KP; p++) {
        const ckb_bf16 *r0 = rhs + 2 * p * N, *r1 = r0 + N;
        const int has_odd = 2 * p + 1 < K;
        /* The rows are N apart, too far for the hardware prefetcher. */
        if (2 * (p + GM_PREFETCH) + 1 < K)
            for (int64_t c = c0; c < c1; c += 32) {
                _mm_prefetch((const char *)(r0 + 2 * GM_PREFETCH * N + c), _MM_HINT_T0);
                _mm_prefetch((const char *)(r1 + 2 * GM_PREFETCH * N + c), _MM_HINT_T0);
            }
        for (int64_t c = c0; c < c0 + np * GM_NR; c += 32) {
            const int64_t left = c1 - c;
            const __mmask32 m = left >= 32 ? ~(__mmask32)0
                                : left > 0 ? (__mmask32)((1u << left) - 1)
                                           : 0;
            __m512i a = _mm512_maskz_loadu_epi16(m, r0 + c);
            __m512i b = has_odd ? _mm512_maskz_loadu_epi16(m, r1 + c) : _mm512_setzero_si512();
            const int64_t q = (c - c0) / GM_NR, j = (c - c0) % GM_NR;
            uint32_t *dst = bp + (q * GM_KP + p) * GM_NR + j;
            _mm512_store_si512(dst, _mm512_permutex2var_epi16(a, lo, b));
            _mm512_store_si512(dst + 16, _mm512_permutex2var_epi16(a, hi, b));
        }
    }
}

/* out[0:mr, 0:nr] = a[0:mr, 0:K] @ panel, rounded to bf16; a is row 0 of
 * the sliver (rows K apart), rows past mr recompute row mr-1, unstored. */
static inline void gm__ukernel(const ckb_bf16 *restrict a, const uint32_t *restrict bp,
                               ckb_bf16 *restrict c, int mr, int64_t nr)
{
    __m512 acc[MR][GM_NV];
    const ckb_bf16 *row[MR];
#pragma GCC unroll 8
    for (int r = 0; r < MR; r++) {
        row[r] = a + (r < mr ? r : mr - 1) * K;
#pragma GCC unroll 4
        for (int v = 0; v < GM_NV; v++)
            acc[r][v] = _mm512_setzero_ps();
    }
    for (int64_t p = 0; p < K / 2; p++) {
        __m512i b[GM_NV];
#pragma GCC unroll 4
        for (int v = 0; v < GM_NV; v++)
            b[v] = _mm512_load_si512((const void *)(bp + p * GM_NR + 16 * v));
#pragma GCC unroll 8
        for (int r = 0; r < MR; r++) {
            __m512i x = _mm512_set1_epi32(ckb_gemm16_pair(row[r] + 2 * p));
#pragma GCC unroll 4
            for (int v = 0; v < GM_NV; v++)
                acc[r][v] = _mm512_dpbf16_ps(acc[r][v], (__m512bh)x, (__m512bh)b[v]);
        }
    }
    if (K & 1) { /* the last k alone: both high halves are zero */
        __m512i b[GM_NV];
#pragma GCC unroll 4
        for (int v = 0; v < GM_NV; v++)
            b[v] = _mm512_load_si512((const void *)(bp + (K / 2) * GM_NR + 16 * v));
#pragma GCC unroll 8
        for (int r = 0; r < MR; r++) {
            __m512i x = _mm512_set1_epi32(row[r][K - 1]);
#pragma GCC unroll 4
            for (int v = 0; v < GM_NV; v++)
                acc[r][v] = _mm512_dpbf16_ps(acc[r][v], (__m512bh)x, (__m512bh)b[v]);
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < MR; r++) {
        if (r >= mr)
            break;
#pragma GCC unroll 4
        for (int v = 0; v < GM_NV; v++)
            _mm256_mask_storeu_epi16((void *)(c + r * N + 16 * v), ckb_gemm16_mask(nr - 16 * v),
                                     (__m256i)_mm512_cvtneps_pbh(acc[r][v]));
    }
}

#elif GM_FMA /* MMA=1: f32 FMA */

/* MMA=1: packs panels [q0, q0 + np) of one group's rhs into
 * bf[q - q0][K][GM_NR] f32, zero past N. */
static void gm__pack_f(const ckb_bf16 *rhs, int64_t q0, int64_t np, float *bf)
{
    const int64_t c0 = q0 * GM_NR, c1 = (q0 + np) * GM_NR < N ? (q0 + np) * GM_NR : N;
    for (int64_t k = 0; k < K; k++) {
        const ckb_bf16 *r = rhs + k * N;
        if (k + 2 * GM_PREFETCH < K)
            for (int64_t c = c0; c < c1; c += 32)
                _mm_prefetch((const char *)(r + 2 * GM_PREFETCH * N + c), _MM_HINT_T0);
        for (int64_t c = c0; c < c0 + np * GM_NR; c += 16) {
            __m256i x = _mm256_maskz_loadu_epi16(ckb_gemm16_mask(c1 - c), r + c);
            const int64_t q = (c - c0) / GM_NR, j = (c - c0) % GM_NR;
            _mm512_store_si512(bf + (q * K + k) * GM_NR + j,
                               _mm512_slli_epi32(_mm512_cvtepu16_epi32(x), 16));
        }
    }
}

/* MMA=1: as gm__ukernel, in f32 FMA against an f32 panel; each lhs value is
 * widened as it is broadcast (a pair loaded once per row and k pair, its
 * low half shifted up, its high half masked). */
static inline void gm__ukernel_f(const ckb_bf16 *restrict a, const float *restrict bf,
                                 ckb_bf16 *restrict c, int mr, int64_t nr)
{
    __m512 acc[MR][GM_NV];
    const ckb_bf16 *row[MR];
    const __m512i hi = _mm512_set1_epi32((int)0xffff0000u);
#pragma GCC unroll 8
    for (int r = 0; r < MR; r++) {
        row[r] = a + (r < mr ? r : mr - 1) * K;
#pragma GCC unroll 4
        for (int v = 0; v < GM_NV; v++)
            acc[r][v] = _mm512_setzero_ps();
    }
    for (int64_t p = 0; p < K / 2; p++) {
        __m512 b[GM_NV];
#pragma GCC unroll 4
        for (int v = 0; v < GM_NV; v++)
            b[v] = _mm512_load_ps(bf + 2 * p * GM_NR + 16 * v);
#pragma GCC unroll 8
        for (int r = 0; r < MR; r++) {
            __m512i pr = _mm512_set1_epi32(ckb_gemm16_pair(row[r] + 2 * p));
            __m512 x = (__m512)_mm512_slli_epi32(pr, 16);
#pragma GCC unroll 4
            for (int v = 0; v < GM_NV; v++)
                acc[r][v] = _mm512_fmadd_ps(x, b[v], acc[r][v]);
        }
#pragma GCC unroll 4
        for (int v = 0; v < GM_NV; v++)
            b[v] = _mm512_load_ps(bf + (2 * p + 1) * GM_NR + 16 * v);
#pragma GCC unroll 8
        for (int r = 0; r < MR; r++) {
            __m512i pr = _mm512_set1_epi32(ckb_gemm16_pair(row[r] + 2 * p));
            __m512 x = (__m512)_mm512_and_si512(pr, hi);
#pragma GCC unroll 4
            for (int v = 0; v < GM_NV; v++)
                acc[r][v] = _mm512_fmadd_ps(x, b[v], acc[r][v]);
        }
    }
    if (K & 1) { /* the last k alone */
        __m512 b[GM_NV];
#pragma GCC unroll 4
        for (int v = 0; v < GM_NV; v++)
            b[v] = _mm512_load_ps(bf + (K - 1) * GM_NR + 16 * v);
#pragma GCC unroll 8
        for (int r = 0; r < MR; r++) {
            __m512 x = _mm512_set1_ps(ckb_bf16_to_f32(row[r][K - 1]));
#pragma GCC unroll 4
            for (int v = 0; v < GM_NV; v++)
                acc[r][v] = _mm512_fmadd_ps(x, b[v], acc[r][v]);
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < MR; r++) {
        if (r >= mr)
            break;
#pragma GCC unroll 4
        for (int v = 0; v < GM_NV; v++)
            _mm256_mask_storeu_epi16((void *)(c + r * N + 16 * v), ckb_gemm16_mask(nr - 16 * v),
                                     (__m256i)_mm512_cvtneps_pbh(acc[r][v]));
    }
}

#endif /* the AVX-512 micro-kernels */

#if GM_AMX

/* The tile shapes, all 16 rows of 64 bytes: 0-3 the 2 x 2 f32 accumulators
 * (16 x 16), 4-5 A (16 rows x 32 bf16), 6-7 B (16 pairs x 16 columns). The
 * configuration is per thread: each loads it before its items. */
static void gm__tiles_on(void) { ckb_amx_tiles_on(); }

static void gm__tiles_off(void) { ckb_amx_tiles_off(); }

/* Packs rows [k0, k0 + kc) and columns [c0, c0 + w) of one group's rhs
 * (w a multiple of 32) into bp[w / 32][kc / 2][32]: per 32 columns, pair p
 * of column j as one dword (rhs[k0 + 2p][j] low, rhs[k0 + 2p + 1][j]
 * high), zero past N; 16 of those dwords are one B tile row. The rows are
 * N apart, too far for the hardware prefetcher: they are prefetched ahead,
 * into L2 (into L1 measured slower: the lines evict the tiles' operands). */
static void gm__pack_amx(const ckb_bf16 *rhs, int64_t c0, int64_t w, int64_t k0, int64_t kc,
                         uint32_t *bp)
{
    const __m512i lo = _mm512_set_epi16(47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10, 41, 9,
                                        40, 8, 39, 7, 38, 6, 37, 5, 36, 4, 35, 3, 34, 2, 33, 1,
                                        32, 0);
    const __m512i hi = _mm512_add_epi16(lo, _mm512_set1_epi16(16));
    const int64_t c1 = c0 + w < N ? c0 + w : N;
    for (int64_t p = 0; p < kc / 2; p++) {
        const ckb_bf16 *r0 = rhs + (k0 + 2 * p) * N, *r1 = r0 + N;
        if (k0 + 2 * (p + GM_PREFETCH) + 1 < K) /* on into the next chunk: packed next */
            for (int64_t c = c0; c < c1; c += 32) {
                _mm_prefetch((const char *)(r0 + 2 * GM_PREFETCH * N + c), _MM_HINT_T1);
                _mm_prefetch((const char *)(r1 + 2 * GM_PREFETCH * N + c), _MM_HINT_T1);
            }
        for (int64_t c = c0; c < c0 + w; c += 32) {
            const int64_t left = c1 - c;
            const __mmask32 m = left >= 32 ? ~(__mmask32)0
                                : left > 0 ? (__mmask32)((1u << left) - 1)
                                           : 0;
            __m512i x = _mm512_maskz_loadu_epi16(m, r0 + c);
            __m512i y = _mm512_maskz_loadu_epi16(m, r1 + c);
            uint32_t *dst = bp + ((c - c0) / 32 * (kc / 2) + p) * 32;
            _mm512_store_si512(dst, _mm512_permutex2var_epi16(x, lo, y));
            _mm512_store_si512(dst + 16, _mm512_permutex2var_epi16(x, hi, y));
        }
    }
}

/*
 * One k chunk of a 16*rt x 32 block: acc += a[0:16*rt, 0:kc] @ chunk, rt 1
 * or 2 row tiles (a constant at each call, so the loop is specialised). A
 * tiles load straight from lhs (a pair of k is already the layout
 * tdpbf16ps reads; all 16*rt rows of a are read: the caller makes sure
 * they are rows of lhs), B tiles from the packed chunk (rows 32 dwords
 * apart). The f32 accumulators start at zero on the first k chunk, else
 * come from acc (rows 32 floats apart), and go back there; after the last
 * they are rounded to bf16 (vcvtneps2bf16: nearest even) and rows [s0, s1),
 * columns [0, nr) are written to c.
 */
static inline __attribute__((always_inline)) void
gm__amx_block(const ckb_bf16 *restrict a, const uint32_t *restrict bc, float *restrict acc,
              int rt, int64_t kc, int first, int last, ckb_bf16 *restrict c, int64_t s0,
              int64_t s1, int64_t nr)
{
    const ckb_bf16 *a1 = a + 16 * K;
    if (first) {
        _tile_zero(0);
        _tile_zero(1);
        if (rt == 2) {
            _tile_zero(2);
            _tile_zero(3);
        }
    } else {
        _tile_loadd(0, acc, 128);
        _tile_loadd(1, acc + 16, 128);
        if (rt == 2) {
            _tile_loadd(2, acc + 16 * 32, 128);
            _tile_loadd(3, acc + 16 * 32 + 16, 128);
        }
    }
    for (int64_t kk = 0; kk < kc; kk += 32) {
        _tile_loadd(4, a + kk, K * 2);
        _tile_loadd(6, bc + kk / 2 * 32, 128);
        _tile_loadd(7, bc + kk / 2 * 32 + 16, 128);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        if (rt == 2) {
            _tile_loadd(5, a1 + kk, K * 2);
            _tile_dpbf16ps(2, 5, 6);
            _tile_dpbf16ps(3, 5, 7);
        }
    }
    _tile_stored(0, acc, 128);
    _tile_stored(1, acc + 16, 128);
    if (rt == 2) {
        _tile_stored(2, acc + 16 * 32, 128);
        _tile_stored(3, acc + 16 * 32 + 16, 128);
    }
    if (!last)
        return;
    const __mmask32 m = nr >= 32 ? ~(__mmask32)0 : (__mmask32)((1u << nr) - 1);
    for (int64_t r = s0; r < s1; r++) {
        /* 32 columns in one: the second argument gives the low half */
        __m512bh y = _mm512_cvtne2ps_pbh(_mm512_load_ps(acc + r * 32 + 16),
                                         _mm512_load_ps(acc + r * 32));
        _mm512_mask_storeu_epi16((void *)(c + r * N), m, (__m512i)y);
    }
}

/*
 * One item on AMX: columns [q0 * 64, (q0 + np) * 64) of a group, rows
 * [r0, r0 + nrows). K goes in chunks of KC: each chunk of rhs is packed
 * (small enough to stay in L2), then every 32-row block of the group runs
 * past its 32-column slices, the f32 accumulators kept in acc (the group's
 * rows x the item's columns, in L2) from one chunk to the next. A wide
 * item reads each row of lhs from memory few times (N / item width) over
 * the call. The last block, of up to 16 rows, uses one row of tiles; a
 * block that would run past row M is moved back to end at M, its rows
 * outside the group computed, not written.
 */
static void gm__item(const ckb_bf16 *lhs, const ckb_bf16 *rhs_g, ckb_bf16 *out, int64_t r0,
                     int64_t nrows, int64_t q0, int64_t np, uint32_t *bp, float *acc)
{
    const int64_t c0 = q0 * GM_NR, w = (N - c0 < np * GM_NR ? N - c0 + 31 : np * GM_NR) / 32 * 32;
    const int64_t rows_pad = (nrows + 31) / 32 * 32;
    for (int64_t k0 = 0; k0 < K; k0 += GM_KC) {
        const int64_t kc = K - k0 < GM_KC ? K - k0 : GM_KC;
        const int first = k0 == 0, last = k0 + kc == K;
        gm__pack_amx(rhs_g, c0, w, k0, kc, bp);
        for (int64_t i = 0; i < nrows; i += 32) {
            const int64_t rows = nrows - i < 32 ? nrows - i : 32, rb = rows > 16 ? 32 : 16;
            const int64_t at = r0 + i < M - rb ? r0 + i : M - rb, s0 = r0 + i - at;
            const ckb_bf16 *a = lhs + at * K + k0;
            for (int64_t v = 0; v < w; v += 32) {
                const uint32_t *bc = bp + v / 32 * (kc / 2) * 32;
                float *ac = acc + (v / 32 * rows_pad + i) * 32;
                ckb_bf16 *c = out + at * N + c0 + v;
                const int64_t nr = N - c0 - v < 32 ? N - c0 - v : 32;
                if (rb == 32)
                    gm__amx_block(a, bc, ac, 2, kc, first, last, c, s0, s0 + rows, nr);
                else
                    gm__amx_block(a, bc, ac, 1, kc, first, last, c, s0, s0 + rows, nr);
            }
        }
    }
}

#else

static void gm__tiles_on(void) {}
static void gm__tiles_off(void) {}

/* One item: panels [q0, q0 + np) of group g, rows [r0, r0 + nrows). */
static void gm__item(const ckb_bf16 *lhs, const ckb_bf16 *rhs_g, ckb_bf16 *out, int64_t r0,
                     int64_t nrows, int64_t q0, int64_t np, uint32_t *bp, float *acc)
{
    (void)acc; /* the AMX path's */
#if GM_FMA
    gm__pack_f(rhs_g, q0, np, (float *)bp);
#else
    gm__pack(rhs_g, q0, np, bp);
#endif
    for (int64_t q = 0; q < np; q++) {
        const int64_t j = (q0 + q) * GM_NR, nr = N - j < GM_NR ? N - j : GM_NR;
        for (int64_t i = 0; i < nrows; i += MR) {
            const int mr = nrows - i < MR ? (int)(nrows - i) : MR;
#if GM_FMA
            gm__ukernel_f(lhs + (r0 + i) * K, (const float *)bp + q * K * GM_NR,
                          out + (r0 + i) * N + j, mr, nr);
#else
            gm__ukernel(lhs + (r0 + i) * K, bp + q * GM_KP * GM_NR, out + (r0 + i) * N + j, mr,
                        nr);
#endif
        }
    }
}

#endif /* GM_AMX */

void workload(const ckb_bf16 *lhs, const ckb_bf16 *rhs, const int32_t *group_sizes,
              ckb_bf16 *out)
{
    const int nthreads = omp_get_max_threads();
#if GM_AMX
    /* a packed k chunk of the item's columns, and its f32 accumulators */
    const size_t chunk_bytes = (size_t)GM_KC * NCB * GM_NR * 2;
    const size_t bp_bytes = chunk_bytes + (size_t)GM_ROWS * NCB * GM_NR * 4;
#else
    const size_t panel_bytes = (size_t)GM_KP * GM_NR * 4 * (GM_FMA ? 2 : 1);
    const size_t bp_bytes = (size_t)NCB * panel_bytes;
#endif
    const size_t head = ((size_t)3 * G * sizeof(int64_t) + 63) / 64 * 64;
    char *mem = ckb_kit_alloc64(head + (size_t)nthreads * bp_bytes);
    if (!mem)
        return; /* out of memory: the output stays as it was and fails the check */
    int64_t *start = (int64_t *)mem, *count = start + G, *order = count + G;
    const int64_t covered = gm__layout(group_sizes, start, count);
    /* Groups by row count, largest first (insertion sort: G is small). */
    int64_t ngroups = 0;
    for (int64_t g = 0; g < G; g++) {
        if (count[g] == 0)
            continue;
        int64_t at = ngroups++;
        for (; at > 0 && count[order[at - 1]] < count[g]; at--)
            order[at] = order[at - 1];
        order[at] = g;
    }

#pragma omp parallel num_threads(nthreads)
    {
        uint32_t *bp = (uint32_t *)(mem + head + (size_t)omp_get_thread_num() * bp_bytes);
#if GM_AMX
        float *acc = (float *)((char *)bp + chunk_bytes);
#else
        float *acc = NULL;
#endif
        gm__tiles_on();
#pragma omp for schedule(dynamic, 1) nowait
        for (int64_t x = 0; x < ngroups * GM_NQB; x++) {
            const int64_t g = order[x / GM_NQB], q0 = x % GM_NQB * NCB;
            const int64_t np = GM_NPANEL - q0 < NCB ? GM_NPANEL - q0 : NCB;
            gm__item(lhs, rhs + g * K * N, out, start[g], count[g], q0, np, bp, acc);
        }
        gm__tiles_off();
        gm__zero_tail(covered, out);
    }
    free(mem);
}

#elif defined(__AVX2__) && defined(__FMA__)
/*
 * AVX2 + FMA path (no AVX-512 BF16): the kit's f32 GEMM (ckb_kit_gemm.h:
 * both operands widened to f32 while packed, BLIS's loops, a 6 x 16
 * micro-kernel of ymm accumulators) runs each work item as above (NCB
 * panels of 64 columns of one group, heaviest group first): the group's
 * rows x the item's columns, KC deep, the partial sums between k blocks in
 * a per-thread f32 tile (CAP rows x the item's columns), and the last k
 * block's epilogue rounds each finished tile to bf16 into out. MR and
 * MMA are the AVX-512 micro-kernels' and do not apply here.
 */

#ifndef GM_MC8 /* rows of lhs packed per block (the kit clamps it to L2) */
#define GM_MC8 240
#endif

/* The tile's epilogue: round to bf16 into out. */
static inline __attribute__((always_inline)) void gm__store8(void *ctx, const float *tile,
                                                             int64_t i, int64_t j, int mr, int nr)
{
    ckb_bf16 *c = (ckb_bf16 *)ctx + i * N + j;
    for (int r = 0; r < mr; r++)
#pragma GCC unroll 4
        for (int v = 0; v < CKB_GEMM8_NR / 8; v++)
            ckb_gemm8_store_bf16(c + r * N + 8 * v,
                                 _mm256_load_ps(tile + r * CKB_GEMM8_NR + 8 * v), nr - 8 * v);
}

void workload(const ckb_bf16 *lhs, const ckb_bf16 *rhs, const int32_t *group_sizes,
              ckb_bf16 *out)
{
    int64_t start[G], count[G], order[G];
    const int64_t covered = gm__layout(group_sizes, start, count);
    /* Groups by row count, largest first (insertion sort: G is small). */
    int64_t ngroups = 0;
    for (int64_t g = 0; g < G; g++) {
        if (count[g] == 0)
            continue;
        int64_t at = ngroups++;
        for (; at > 0 && count[order[at - 1]] < count[g]; at--)
            order[at] = order[at - 1];
        order[at] = g;
    }

#pragma omp parallel
    {
        ckb_gemm8_job job = {.a = lhs, .lda = K, .ldb = N, .k = K, .n = N, .mc = GM_MC8,
                             .nc = NCB * GM_NR, .kc = KC,
                             .epi = gm__store8, .ctx = out};
        job.ldt = ckb_gemm8_nc(&job);
        const int64_t rows = ((CAP < M ? CAP : M) + CKB_GEMM8_MR - 1) / CKB_GEMM8_MR *
                             CKB_GEMM8_MR;
        /* one allocation per thread per call: packed lhs, rhs, partial sums */
        const size_t a_n = ckb_gemm8_ap_floats(&job) + 64, b_n = ckb_gemm8_bp_floats(&job);
        const size_t t_n = K > ckb_gemm8_kc(&job) ? (size_t)(rows * job.ldt) : 0;
        float *buf = ckb_kit_alloc64((a_n + b_n + t_n) * sizeof(float));
        job.t = buf && t_n ? buf + a_n + b_n : NULL;
#pragma omp for schedule(dynamic, 1) nowait
        for (int64_t x = 0; x < ngroups * GM_NQB; x++) {
            const int64_t g = order[x / GM_NQB], q0 = x % GM_NQB * NCB;
            const int64_t c1 = (q0 + NCB) * GM_NR < N ? (q0 + NCB) * GM_NR : N;
            if (!buf) /* out of memory: no way to report, out stays unwritten */
                continue;
            job.b = rhs + g * K * N;
            ckb_gemm8_run(&job, start[g], start[g] + count[g], q0 * GM_NR, c1, buf, buf + a_n);
        }
        free(buf);
        gm__zero_tail(covered, out);
    }
}

#else /* portable path: neither AVX-512 BF16 nor AVX2 + FMA */

/* One row of out at a time: an f32 row accumulator, k outer so the inner
 * loop over columns is an axpy the compiler vectorises. */
void workload(const ckb_bf16 *lhs, const ckb_bf16 *rhs, const int32_t *group_sizes,
              ckb_bf16 *out)
{
    int64_t start[G], count[G];
    const int64_t covered = gm__layout(group_sizes, start, count);
#pragma omp parallel
    {
        float *acc = malloc((size_t)N * sizeof(float));
#pragma omp for schedule(dynamic, 8)
        for (int64_t r = 0; r < covered; r++) {
            int64_t g = 0;
            while (r >= start[g] + count[g])
                g++;
            for (int64_t j = 0; acc && j < N; j++)
                acc[j] = 0.0f;
            if (acc)
                ckb_gemm_row(lhs + r * K, K, rhs + g * K * N, N, N, acc);
            for (int64_t j = 0; acc && j < N; j++)
                out[r * N + j] = ckb_f32_to_bf16(acc[j]);
        }
        free(acc);
        gm__zero_tail(covered, out);
    }
}

#endif
