/*
 * ckb_kit_flash.h — the flash-attention core shared by the experts of
 * 1p_Flash_Attention, 2p_GQA_Attention and 4p_Sparse_Attention (causal
 * attention, bf16 q/k/v/out, f32 scores and softmax, P rounded to bf16 as
 * the baselines' P is).
 *
 * Flash attention: each query block of BQ rows walks the key blocks of BK
 * keys left of its diagonal with an online softmax (running max and sum in
 * f32, the accumulator rescaled when the max moves), so no S x S matrix
 * exists. The causal mask is evaluated per block (ckb_kit_attn_block_kind,
 * the walks of ckb_kit_attn.h): a (row tile, key block) pair that is fully
 * masked is skipped (no q k^T, no exp, no P v, no load of its K or V), a
 * visible one runs with no mask, and only the partial (diagonal) ones apply
 * element masks. K and V of a kv head are packed once, FA_G kv heads
 * at a time into one of two rings, so threads that finish a group early pack
 * the next one while the others still compute (the barrier after a pack
 * proves the ring two groups back is free). The work items of a group are
 * (query block, query head) pairs, heaviest query blocks first, the query
 * heads sharing a kv head next to each other (their K and V stay hot).
 *
 * Paths, by what the compiler targets:
 *   - AVX-512 (F, BW, VL; BF16 for MMA 0 and AMX for 2, else MMA=1 runs):
 *     MMA=0 both matmuls on vdpbf16ps (K packed as VNNI key
 *     groups [16 keys][d pair][2], V as pairs of V^T), 4 query rows x 64 keys
 *     or 64 d a tile; MMA=1 K, V, P widened to f32 (exactly) and both
 *     matmuls on _mm512_fmadd_ps (better where vdpbf16ps issues well below
 *     the FMA rate: Sapphire Rapids and later); MMA=2 AMX tiles, 16 query
 *     rows a tile, from MMA=0's packing (the default where the compiler
 *     targets AMX; tile data needs the process's permission, which the
 *     sandbox asks for before it loads the kernel, src/eval/child.c);
 *   - AVX2 + FMA: K, V, q widened to f32 when packed, both matmuls on
 *     8-wide FMA, 4 rows x 3 vectors a tile (see that section);
 *   - otherwise a portable scalar path, row by row in f32, visiting only the
 *     unmasked keys.
 *
 * Contract: the expert includes <math.h>, <stdint.h>, <stdlib.h>,
 * <string.h>, <omp.h> and "ckbench.h", then defines, before including this:
 *   FA_BKV    kv heads over the batch
 *   FA_GQ     query heads per kv head
 *   FA_QS     elements between positions of one query head (q and out)
 *   FA_KS     elements between positions of one kv head (k and v)
 *   FA_SCALE  the score scale (a double expression)
 *   FA_G      kv heads per packed group (if unset: 1)
 *   fa__kv_off(kvh), fa__q_off(kvh, qh): where kv head kvh starts in k/v,
 *             and query head qh of its group in q/out (elements)
 * It gets fa__attention(q, k, v, out), the whole call.
 *
 * Tunable (ckbench tune passes -DNAME=VALUE):
 *   BQ     query rows per block (multiple of 4): reuse of a packed K/V block
 *   BK     keys per block (multiple of 16): online-softmax rescale frequency
 *          and the K/V working set
 *   SCHED  0: work items heaviest first, dynamic; 1: the same order, static
 *          cyclic (no scheduling traffic)
 *   MMA    AVX-512 only, as above: 2 where the compiler targets AMX, else 1.
 */
#pragma once

#ifndef FA_G
#define FA_G 1
#endif

#ifndef BQ
#define BQ 64
#endif
#ifndef BK
#define BK 64
#endif
#ifndef SCHED
#define SCHED 0
#endif
/* MMA's default for a plain eval: AMX tiles where the compiler targets
 * them, else f32 FMA (bench passes the host's fastest unit) */
#define CKB_KIT_UNIT_NO_DOT
#include "ckb_kit_unit.h"
/* After the tunables: the attention kit checks BQ and BK and takes MMA to
 * 1 where the target lacks the unit (AMX, AVX-512 BF16) or the blocks do
 * not fit its tiles. */
#include "ckb_kit_alloc.h"
#include "ckb_kit_attn.h"
#include "ckb_kit_simd.h"

#define FA_NQB ((S + BQ - 1) / BQ) /* query blocks per head */

/* The it-th query block in heaviest-first order (block i costs ~i+1). */
static inline int64_t fa__block_of(int64_t it) { return FA_NQB - 1 - it; }

/* scale * log2(e): scores go straight to the base-2 domain of ckb_kit_exp2_16 / _8. */
#define FA_C2 ((float)(1.4426950408889634 * (FA_SCALE)))


#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#define FA_VEC 1

#include <immintrin.h>

#define FA_DP ((D + 1) / 2)         /* d pairs: q and K rows padded to even */
#define FA_DQ (2 * FA_DP)
#define FA_DV ((D + 15) / 16)       /* 16-wide d vectors: O and V padded */
#define FA_DO (16 * FA_DV)
/* keys padded to a group of 16 (MMA=2: 32, a whole P v tile, zero V) */
#define FA_SP (MMA == 2 ? (S + 31) / 32 * 32 : (S + 15) / 16 * 16)
#define FA_R 4                      /* query rows per register tile */
#define FA_RS (MMA == 2 ? 16 : FA_R)  /* rows of scores and P: a tile's */
/* Bytes of packed K and V of one head: bf16 (MMA=0) or f32 (MMA=1). */
#define FA_EB (MMA == 1 ? 4 : 2)
#define FA_KP_BYTES ((int64_t)FA_SP * FA_DQ * FA_EB)
#define FA_VP_BYTES ((int64_t)FA_SP * FA_DO * FA_EB)

/* Packs K of one kv head (k points at its position 0, positions FA_KS
 * apart): kp[g][p][jj][2] = k[16g + jj][2p + e], zero past S
 * and past D, so every q k^T tile reads whole vectors. */
static __attribute__((unused)) void fa__pack_k(const ckb_bf16 *k, uint32_t *kp, int64_t g)
{
    for (int64_t jj = 0; jj < 16; jj++) {
        int64_t j = g * 16 + jj;
        uint32_t *dst = kp + g * FA_DP * 16 + jj;
        if (j >= S) {
            for (int64_t p = 0; p < FA_DP; p++)
                dst[p * 16] = 0;
            continue;
        }
        const ckb_bf16 *src = k + j * FA_KS;
        for (int64_t p = 0; p < D / 2; p++)
            dst[p * 16] = ckb_kit_pair(src + 2 * p);
        if (D % 2)
            dst[(FA_DP - 1) * 16] = src[D - 1];
    }
}

/* Packs V of one head for key pairs 8g .. 8g+7 (keys 16g .. 16g+15):
 * vp[t][d][2] = v[2t + e][d], zero past S and past D. */
static __attribute__((unused)) void fa__pack_v(const ckb_bf16 *v, ckb_bf16 *vp, int64_t g)
{
    for (int64_t t = 8 * g; t < 8 * g + 8; t++)
        ckb_kit_attn_pack_v2(2 * t < S ? v + 2 * t * FA_KS : NULL,
                             2 * t + 1 < S ? v + (2 * t + 1) * FA_KS : NULL, D, FA_DO,
                             vp + t * 2 * FA_DO);
}

/* MMA=1: packs K of one kv head (positions FA_KS apart), key group g,
 * widened to f32: kf[g][d][jj] = k[16g + jj][d], zero past S and past D
 * (to FA_DQ). 16 d pairs of the 16 keys at a time: one dword transpose,
 * then each pair split into its two f32 (a bf16 is an f32's top half). */
static __attribute__((unused)) void fa__pack_kf(const ckb_bf16 *k, float *kf, int64_t g)
{
    float *dst = kf + g * FA_DQ * 16;
    uint32_t pairs[16 * 16] __attribute__((aligned(64)));
    for (int64_t p0 = 0; p0 < FA_DP; p0 += 16) {
        const int64_t left = D - 2 * p0; /* >= 1: bf16 of a row from pair p0 on */
        const __mmask32 m = left >= 32 ? ~(__mmask32)0 : (__mmask32)((1ull << left) - 1);
        __m512i r[16];
        for (int jj = 0; jj < 16; jj++) {
            const int64_t j = g * 16 + jj;
            r[jj] = j < S ? _mm512_maskz_loadu_epi16(m, k + j * FA_KS + 2 * p0)
                          : _mm512_setzero_si512();
        }
        ckb_kit_transpose16(r, pairs);
        ckb_kit_pairs_f32(pairs, FA_DP - p0 < 16 ? FA_DP - p0 : 16, dst + 2 * p0 * 16);
    }
}

/* MMA=1: packs V of one kv head for keys 16g .. 16g+15 widened to f32:
 * vf[j][d] = v[j][d], zero past S and past D (to FA_DO). */
static __attribute__((unused)) void fa__pack_vf(const ckb_bf16 *v, float *vf, int64_t g)
{
    for (int64_t j = 16 * g; j < 16 * g + 16; j++)
        for (int64_t d = 0; d < FA_DO; d += 16) {
            __mmask16 m = d + 16 <= D ? (__mmask16)0xffff
                          : d < D     ? (__mmask16)((1u << (D - d)) - 1)
                                      : 0;
            __m256i x = j < S ? _mm256_maskz_loadu_epi16(m, v + j * FA_KS + d)
                              : _mm256_setzero_si256();
            _mm512_store_si512(vf + j * FA_DO + d, _mm512_slli_epi32(_mm512_cvtepu16_epi32(x), 16));
        }
}

/* Per-thread scratch (one allocation, owned by fa__attention()): the query
 * block as d pairs and P as bf16 (MMA=1: both widened to f32), 16-lane sums. */
#define FA_SCRATCH(base, sc)                                                                    \
    ckb_kit_attn_scratch_carve(base, BQ, FA_DQ * FA_EB, FA_RS, BK, FA_EB, FA_DO, 16, sc)

/* One query block: rows i0 .. i0+BQ of one query head (q and out point at
 * its position 0, positions FA_QS apart) against its kv head's packed K, V. */
static __attribute__((unused)) void fa__block(const ckb_bf16 *q, const char *kp, const char *vp, ckb_bf16 *out,
                      int64_t i0, ckb_kit_attn_scratch *sc)
{
    int64_t nrows = S - i0 < BQ ? S - i0 : BQ;
    int64_t ntiles = (nrows + FA_R - 1) / FA_R;
    /* The query block as d pairs; pad rows and the odd-D column are zero. */
    memset(sc->q, 0, (size_t)ntiles * FA_R * FA_DQ * FA_EB);
    for (int64_t r = 0; r < nrows; r++) {
#if MMA == 1
        float *qr = (float *)sc->q + r * FA_DQ;
        for (int64_t d = 0; d < D; d++)
            qr[d] = ckb_bf16_to_f32(q[(i0 + r) * FA_QS + d]);
#else
        memcpy((uint32_t *)sc->q + r * FA_DP, q + (i0 + r) * FA_QS, (size_t)D * 2);
#endif
    }
    /* q and K in 4-byte elements: f32, or bf16 d pairs */
    const int64_t dq = MMA == 1 ? FA_DQ : FA_DP;
    ckb_kit_reg_flash(sc->q, dq, kp, dq, kp, 0, vp, FA_DV, sc->s, sc->p, BK, sc->o, sc->m, sc->l,
                      S, i0, nrows, FA_C2, out, FA_QS, D, MMA == 1);
}

#if MMA == 2

/* MMA=2: fa__block on AMX tiles, 16 query rows a tile. q k^T: A = 16 q rows
 * x 32 d (row-major bf16 is A's layout), B = 16 d pairs of a packed key group
 * (fa__pack_k's layout is B's). P v: A = 16 rows of P x 32 keys, B = 16 key
 * pairs x 16 d of packed V (fa__pack_v's layout). The output rows are loaded
 * into the accumulators after the alpha rescale and stored back. */
static void fa__block_amx(const ckb_bf16 *q, const char *kp, const char *vp, ckb_bf16 *out,
                          int64_t i0, ckb_kit_attn_scratch *sc)
{
    int64_t nrows = S - i0 < BQ ? S - i0 : BQ;
    memset(sc->q, 0, (size_t)(nrows + 15) / 16 * 16 * FA_DQ * 2);
    for (int64_t r = 0; r < nrows; r++)
        memcpy((ckb_bf16 *)sc->q + r * FA_DQ, q + (i0 + r) * FA_QS, (size_t)D * 2);
    ckb_kit_amx_flash(sc->q, FA_DQ * 2, kp, FA_DQ * 16 * 2, D / 32, kp, 0, 0, vp, FA_DV, sc->s,
                      sc->p, BK, sc->o, sc->m, sc->l, S, i0, nrows, FA_C2, out, FA_QS, D);
}
#define FA_BLOCK fa__block_amx
#define FA_TILES_ON() ckb_kit_amx_on()
#define FA_TILES_OFF() _tile_release()
#else
#define FA_BLOCK fa__block
#define FA_TILES_ON() ((void)0)
#define FA_TILES_OFF() ((void)0)
#endif

/* Packs key group g (keys 16g .. 16g+15) of one kv head's K and V into pk. */
static void fa__pack_group(const ckb_bf16 *k, const ckb_bf16 *v, char *pk, int64_t g)
{
#if MMA == 1
    fa__pack_kf(k, (float *)pk, g);
    fa__pack_vf(v, (float *)(pk + FA_KP_BYTES), g);
#else
    fa__pack_k(k, (uint32_t *)pk, g);
    fa__pack_v(v, (ckb_bf16 *)(pk + FA_KP_BYTES), g);
#endif
}

#elif defined(__AVX2__) && defined(__FMA__)
#define FA_VEC 1

/* AVX2 + FMA, no AVX-512: both matmuls on 8-wide f32 FMA. K, V and q are
 * widened to f32 when packed (exactly: a bf16 is the top half of an f32),
 * P is rounded to bf16 as the baseline's is and kept as f32. A register tile
 * is FA_R query rows x 3 vectors (12 accumulators of the 16 ymm registers):
 *   - q k^T broadcasts a q value against K packed as [key group of 8][d][8];
 *   - P v broadcasts a probability against V rows [key][d].
 * Blocks narrow to 8-key groups at the diagonal, not 16. */

#include <immintrin.h>

#define FA_DO ((D + 7) / 8 * 8)     /* d padded to 8-wide vectors: q, K, V, O rows */
#define FA_DV (FA_DO / 8)
#define FA_SP ((S + 15) / 16 * 16)  /* keys padded to a pack group of 16 */
#define FA_R 4                      /* query rows per register tile */
#define FA_NV 3                     /* 8-key vectors per q k^T tile */
#define FA_KP_BYTES ((int64_t)FA_SP * FA_DO * 4)
#define FA_VP_BYTES ((int64_t)FA_SP * FA_DO * 4)

/* Packs K of one kv head (positions FA_KS apart), keys 16g .. 16g+15, as
 * two groups of 8: kf[g8][d][jj] = k[8 g8 + jj][d], zero past S and D. Whole
 * 8 x 8 blocks are widened and transposed in registers. */
static void fa__pack_kf8(const ckb_bf16 *k, float *kf, int64_t g)
{
    for (int64_t g8 = 2 * g; g8 < 2 * g + 2; g8++) {
        const ckb_bf16 *rows[8];
        for (int jj = 0; jj < 8; jj++)
            rows[jj] = k + (8 * g8 + jj < S ? 8 * g8 + jj : 0) * FA_KS; /* past S: not read */
        ckb_kit_attn_pack_k8(rows, S - 8 * g8, D, FA_DO, kf + g8 * FA_DO * 8);
    }
}

/* Packs V of one kv head, keys 16g .. 16g+15, widened: vf[j][d] = v[j][d],
 * zero past S and D. */
static void fa__pack_vf8(const ckb_bf16 *v, float *vf, int64_t g)
{
    for (int64_t j = 16 * g; j < 16 * g + 16; j++)
        ckb_kit_widen8(j < S ? v + j * FA_KS : NULL, D, FA_DO, vf + j * FA_DO);
}

static void fa__pack_group(const ckb_bf16 *k, const ckb_bf16 *v, char *pk, int64_t g)
{
    fa__pack_kf8(k, (float *)pk, g);
    fa__pack_vf8(v, (float *)(pk + FA_KP_BYTES), g);
}

/* s[r][0 .. 8nv) = q[r] . K for FA_R rows and nv 8-key vectors; q rows f32
 * (stride FA_DO), kf the first key group. mx[r] takes the lane-wise max of
 * row r's unmasked scores; diag: the block is partial (ckb_kit_attn_block_kind). */
static inline __attribute__((always_inline)) void fa__qk(const float *q, const float *kf, float *s,
                                                         const int nv, __m256 *mx, int diag,
                                                         int64_t key0, int64_t qi0)
{
    __m256 acc[FA_R][FA_NV];
    ckb_kit_attn_qk_f(q, FA_DO, kf, FA_DO, D, s, BK, nv, acc);
    if (!diag) {
        for (int r = 0; r < FA_R; r++)
            for (int v = 0; v < nv; v++)
                mx[r] = _mm256_max_ps(mx[r], acc[r][v]);
        return;
    }
    /* Row i keeps keys j <= min(i, S - 1): pad rows (i >= S) keep all keys. */
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256 ninf = _mm256_set1_ps(-INFINITY);
    for (int r = 0; r < FA_R; r++) {
        int64_t lim = qi0 + r < S ? qi0 + r : S - 1;
        for (int v = 0; v < nv; v++) {
            __m256i keep = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(lim - key0 + 1 - 8 * v)), iota);
            mx[r] = _mm256_max_ps(mx[r], _mm256_blendv_ps(ninf, acc[r][v], _mm256_castsi256_ps(keep)));
        }
    }
}

/* o[r][0 .. 8dc) = alpha[r] * o[r] + P[r] . V over nk keys; p rows f32
 * (stride BK), vf the block's first key at this d chunk (stride FA_DO). */
static inline __attribute__((always_inline)) void fa__pv(const float *p, const float *vf, float *o,
                                                         const float *alpha, int64_t nk,
                                                         const int dc)
{
    ckb_kit_attn_pv_f(p, BK, vf, FA_DO, o, FA_DO, alpha, nk, dc);
}

/* Per-thread scratch (one allocation, owned by fa__attention()): the query
 * block and P widened to f32, 8-lane sums. */
#define FA_SCRATCH(base, sc)                                                                    \
    ckb_kit_attn_scratch_carve(base, BQ, FA_DO * 4, FA_R, BK, 4, FA_DO, 8, sc)

/* Online softmax of one row tile against key block j0, width w8 (a
 * multiple of 8), given each row's lane-wise max mx: row qi0 + r keeps its
 * causal keys (at least one: see fa__block). */
static inline __attribute__((always_inline)) void
fa__softmax(ckb_kit_attn_scratch *sc, int64_t qi0, int64_t rt, int64_t j0, int64_t w8,
            const __m256 *mx, float *alpha)
{
    for (int r = 0; r < FA_R; r++)
        alpha[r] = ckb_kit_attn_row8(sc->s + r * BK, (float *)sc->p + r * BK,
                                     ckb_kit_attn_causal_c(qi0 + r, S, j0, w8), w8,
                                     ckb_kit_hmax8(mx[r]), FA_C2, sc->m + rt + r,
                                     sc->l + 8 * (rt + r), 0);
}

/* One query block: rows i0 .. i0+BQ of one query head (q and out point at
 * its position 0, positions FA_QS apart) against its kv head's packed K, V. */
static void fa__block(const ckb_bf16 *q, const char *kp, const char *vp, ckb_bf16 *out,
                      int64_t i0, ckb_kit_attn_scratch *sc)
{
    int64_t nrows = S - i0 < BQ ? S - i0 : BQ;
    int64_t ntiles = (nrows + FA_R - 1) / FA_R;
    for (int64_t r = 0; r < ntiles * FA_R; r++)
        ckb_kit_widen8(r < nrows ? q + (i0 + r) * FA_QS : NULL, D, FA_DO, (float *)sc->q + r * FA_DO);
    ckb_kit_attn_reset(sc->o, FA_DO, sc->l, 8, sc->m, ntiles * FA_R);

    int64_t kend = i0 + nrows; /* keys past the last row are all masked */
    for (int64_t j0 = 0; j0 < kend; j0 += BK) {
        for (int64_t rt = 0; rt < ntiles * FA_R; rt += FA_R) {
            /* Tiles start at multiples of 4 and j0 at a multiple of 16, so a
             * tile that reaches j0 has every row reaching it: c >= 1. */
            int64_t qi0 = i0 + rt;
            int64_t tend = qi0 + FA_R < S ? qi0 + FA_R : S;
            if (ckb_kit_attn_block_kind(qi0, tend, j0, BK, S) == CKB_KIT_MASKED)
                continue; /* skipped whole: its K and V are never read */
            int64_t w = tend - j0 < BK ? tend - j0 : BK;
            int64_t nv = (w + 7) / 8;
            const float *qt = (const float *)sc->q + rt * FA_DO;
            const float *kt = (const float *)kp + j0 * FA_DO; /* key group j0 / 8 */
            int diag = ckb_kit_attn_block_kind(qi0, tend, j0, 8 * nv, S) == CKB_KIT_PARTIAL;
            __m256 mx[FA_R];
            for (int r = 0; r < FA_R; r++)
                mx[r] = _mm256_set1_ps(-INFINITY);
            int64_t v = 0;
#define FA_QK(n) fa__qk(qt, kt + v * 8 * FA_DO, sc->s + 8 * v, n, mx, diag, j0 + 8 * v, qi0)
            CKB_KIT_ATTN_TILES(v, nv, 3, FA_QK);
#undef FA_QK
            float alpha[FA_R];
            fa__softmax(sc, qi0, rt, j0, nv * 8, mx, alpha);
            const float *vt = (const float *)vp + j0 * FA_DO;
            float *ot = sc->o + rt * FA_DO;
            int c = 0;
#define FA_PV(n) fa__pv(sc->p, vt + 8 * c, ot + 8 * c, alpha, nv * 8, n)
            CKB_KIT_ATTN_BY3_PV(c, FA_DV, FA_PV);
#undef FA_PV
        }
    }
    for (int64_t r = 0; r < nrows; r++)
        ckb_kit_attn_out8(sc->o + r * FA_DO, ckb_kit_attn_sum8(sc->l + 8 * r), D,
                          out + (i0 + r) * FA_QS);
}

#define FA_BLOCK fa__block
#define FA_TILES_ON() ((void)0)
#define FA_TILES_OFF() ((void)0)

#endif /* ISA sections */

#ifdef FA_VEC

static void fa__attention(const ckb_bf16 *q, const ckb_bf16 *k, const ckb_bf16 *v, ckb_bf16 *out)
{
    int nthreads = omp_get_max_threads();
    /* Two rings of FA_G kv heads: a group is packed while the last one's
     * stragglers finish computing. */
    const size_t head_bytes = (FA_KP_BYTES + FA_VP_BYTES + 63) / 64 * 64;
    const size_t ring_bytes = FA_G * head_bytes, scratch_bytes = FA_SCRATCH(NULL, NULL);
    char *mem = ckb_kit_alloc64(2 * ring_bytes + (size_t)nthreads * scratch_bytes);
    if (!mem)
        return; /* out of memory: the output stays as it was and fails the check */

#pragma omp parallel num_threads(nthreads)
    {
        ckb_kit_attn_scratch sc;
        FA_SCRATCH(mem + 2 * ring_bytes + (size_t)omp_get_thread_num() * scratch_bytes, &sc);
        FA_TILES_ON();
        for (int64_t h0 = 0; h0 < FA_BKV; h0 += FA_G) {
            const int64_t nh = FA_BKV - h0 < FA_G ? FA_BKV - h0 : FA_G;
            char *ring = mem + ((h0 / FA_G) & 1) * ring_bytes;
#pragma omp for schedule(dynamic, 4)
            for (int64_t x = 0; x < nh * (FA_SP / 16); x++) {
                int64_t h = x / (FA_SP / 16), g = x % (FA_SP / 16);
                char *pk = ring + h * head_bytes;
                fa__pack_group(k + fa__kv_off(h0 + h), v + fa__kv_off(h0 + h), pk, g);
            }
            /* The barrier above also means every thread is done with the
             * group before, whose ring the next pack overwrites: no wait
             * after the compute loop. */
#if SCHED == 0
#pragma omp for schedule(dynamic, 1) nowait
#else
#pragma omp for schedule(static, 1) nowait
#endif
            for (int64_t it = 0; it < nh * FA_GQ * FA_NQB; it++) {
                int64_t hq = it % (nh * FA_GQ), h = hq / FA_GQ;
                int64_t off = fa__q_off(h0 + h, hq % FA_GQ);
                const char *pk = ring + h * head_bytes;
                FA_BLOCK(q + off, pk, pk + FA_KP_BYTES, out + off,
                         fa__block_of(it / (nh * FA_GQ)) * BQ, &sc);
            }
        }
        FA_TILES_OFF();
    }
    free(mem);
}

#else /* portable path: no AVX-512 BF16, no AVX2 */

static void fa__attention(const ckb_bf16 *q, const ckb_bf16 *k, const ckb_bf16 *v, ckb_bf16 *out)
{
    int nthreads = omp_get_max_threads();
    float *mem = malloc((size_t)nthreads * (S + D) * sizeof *mem);
    if (!mem)
        return; /* out of memory: the output stays as it was and fails the check */
#pragma omp parallel num_threads(nthreads)
    {
        float *p = mem + (size_t)omp_get_thread_num() * (S + D), *acc = p + S;
        /* Rows in blocks of BQ, heaviest first, as the vector path does. */
#if SCHED == 0
#pragma omp for schedule(dynamic, 1) collapse(2)
#else
#pragma omp for schedule(static, 1) collapse(2)
#endif
        for (int64_t bh = 0; bh < FA_BKV * FA_GQ; bh++)
            for (int64_t it = 0; it < FA_NQB; it++) {
                int64_t kvh = bh / FA_GQ;
                int64_t qo = fa__q_off(kvh, bh % FA_GQ), ko = fa__kv_off(kvh);
                int64_t i0 = fa__block_of(it) * BQ;
                for (int64_t i = i0; i < i0 + BQ && i < S; i++)
                    ckb_kit_attn_row_f32(q + qo + i * FA_QS, k + ko, FA_KS, D, k + ko, FA_KS, 0,
                                         v + ko, FA_KS, D, i + 1, (float)(FA_SCALE), p, acc,
                                         out + qo + i * FA_QS);
            }
    }
    free(mem);
}

#endif /* FA_VEC */
