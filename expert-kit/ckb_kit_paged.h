/*
 * ckb_kit_paged.h — what the paged-KV attention experts share
 * (6p_Paged_Attention: decode; 7p_Ragged_Paged_Attention: mixed prefill and
 * decode): the page-table walk, JAX's index clamping, the AVX-512
 * packers and register-tile kernels (vdpbf16ps where the target has AVX-512
 * BF16, f32 FMA in zmm everywhere), the AVX2 + FMA flash core that both
 * run below AVX-512, and the portable path's one-row attention below AVX2.
 *
 * Contract: the expert includes <math.h>, <stdint.h>, <stdlib.h>,
 * <string.h>, <omp.h> and "ckbench.h", has the dims D, PS, PPS and NP, and
 * defines before including this:
 *   PK_BK    keys per block at most (the K/V a block packs)
 *   PK_ROWS  query rows of one work item's state at most (a multiple of 4)
 * and may define (AVX-512 state):
 *   PK_SROWS    rows of scores and P held at a time (default a register
 *               tile's 4; 7p's AMX tiles 16)
 *   PK_ROW_KEYS each state row has its own key count (pk__state's n)
 *
 * The AVX2 core (PK_AVX2 is defined where it is compiled): a work item is a
 * set of query rows, each with its own key limit n[r] (row r attends
 * positions j < n[r]), walked over blocks of keys read in place through the
 * page table (pk__pack gathers and widens one block's K and V rows to f32,
 * exactly: a bf16 is the top half of an f32). pk__attend runs an online
 * softmax (running max and sum in f32, the output rescaled when the max
 * moves) over the block for a range of rows, 4 rows a register tile:
 *   - q k^T broadcasts a q value against K packed as [key group of 8][d][8],
 *     4 rows x 3 vectors of 8 keys (12 accumulators of the 16 ymm);
 *   - P v broadcasts a probability (rounded to bf16, as JAX's P is)
 *     against V rows [key][d], 4 rows x 3 vectors of 8 d.
 * A row past its limit keeps its state; rows whose limit is reached by no
 * key of the block cost nothing beyond the tile's widest row.
 *
 * The portable path (neither AVX-512 nor AVX2 + FMA): pk__row1 attends one
 * query row in f32, the experts' reference-like fallback.
 */
#pragma once

#include "ckb_kit_alloc.h"
#include "ckb_kit_attn.h"
#include "ckb_kit_simd.h"

/* scale * log2(e): scores go straight to the base-2 domain of
 * ckb_kit_exp2_16 / _8. */
#define PK_C2 ((float)(1.4426950408889634 / sqrt((double)D)))

#define PK_ROUND64(n) (((size_t)(n) + 63) / 64 * 64)

/* Index clamping as JAX does it (dynamic_slice, gather), so any table is
 * read in bounds. */
static inline int64_t pk__clamp(int64_t x, int64_t hi) { return x < 0 ? 0 : x > hi ? hi : x; }

/* Cache row of position j of sequence i: page page_indices[i][j / PS],
 * slot j % PS (the row of head 0; a row holds the heads of one token). */
static inline int64_t pk__slot(const int32_t *pages, int64_t i, int64_t j)
{
    return pk__clamp(pages[i * PPS + j / PS], NP - 1) * PS + j % PS;
}

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#define PK_AVX512 1

/* AVX-512: the per-thread state (pk__state), the packers and the
 * register-tile kernels both experts run on, 4 query rows a tile (their
 * blocks stay in the experts, on the attention kit's softmax rows and AMX
 * loops). MMA=0 operands (AVX-512 BF16): q and K as d pairs, K packed per
 * block as [key group of 16][d pair][16 keys] (a 16 x 16 dword transpose of
 * the page rows), V as [key pair][d][2]; MMA=1: the same widened to f32,
 * which needs only AVX-512 F/BW/VL. Scores and P rows are PK_BKS apart. */

#include <immintrin.h>


#define PK_R 4                      /* query rows per register tile */
#define PK_DP ((D + 1) / 2)         /* d pairs: q and K rows padded to even */
#define PK_DV ((D + 15) / 16)       /* 16-wide d vectors */
#define PK_DO (16 * PK_DV)
#define PK_DQ (2 * PK_DP)           /* d rows of f32 K (MMA=1), D padded to even */
#define PK_BKS ((PK_BK + 15) / 16 * 16) /* block keys padded to a group of 16 */
#define PK_NV 4                     /* 16-key vectors per q k^T tile */
#ifndef PK_SROWS /* rows of scores and P at a time: a register tile's (7p's AMX tiles: 16) */
#define PK_SROWS PK_R
#endif

/* One work item's state and scratch, per thread, 64-byte aligned, sized
 * for the wider unit. MMA=0: q [PK_ROWS][PK_DP] as d pairs, kp
 * [PK_BKS/16][PK_DP][16] pairs, vp [PK_BKS/2][PK_DO][2], p
 * [PK_SROWS][PK_BKS] bf16. MMA=1: q [PK_ROWS][PK_DQ] f32, kp
 * [PK_BKS/16][PK_DQ][16] f32, vp [PK_BKS][PK_DO] f32, p [PK_SROWS][PK_BKS]
 * f32 (holding bf16-rounded values, as the baselines' P). */
typedef struct {
    uint32_t *q;  /* the item's query rows */
    uint32_t *kp; /* packed K of one block, one kv head */
    ckb_bf16 *vp; /* packed V of one block, one kv head */
    float *s;     /* [PK_SROWS][PK_BKS] scores of one row tile */
    ckb_bf16 *p;  /* probabilities of one row tile */
    float *o;     /* [PK_ROWS][PK_DO] unnormalised output rows */
    float *m;     /* [PK_ROWS] running max (base-2 domain) */
    float *l;     /* [PK_ROWS][16] running sum, lane-wise */
#ifdef PK_ROW_KEYS
    int64_t *n; /* [PK_ROWS] keys each row attends (7p: an item's rows differ) */
#endif
} pk__state;

#define PK_SZ_Q PK_ROUND64(PK_ROWS * PK_DQ * 4)
#define PK_SZ_KP PK_ROUND64(PK_BKS * PK_DQ * 4)
#define PK_SZ_VP PK_ROUND64(PK_BKS * PK_DO * 4)
#define PK_SZ_S PK_ROUND64(PK_SROWS * PK_BKS * 4)
#define PK_SZ_O PK_ROUND64(PK_ROWS * PK_DO * 4)
#define PK_SZ_M PK_ROUND64(PK_ROWS * 4)
#define PK_SZ_L PK_ROUND64(PK_ROWS * 16 * 4)
#ifdef PK_ROW_KEYS
#define PK_SZ_N PK_ROUND64(PK_ROWS * 8)
#else
#define PK_SZ_N 0
#endif
#define PK_STATE_BYTES                                                                          \
    (PK_SZ_Q + PK_SZ_KP + PK_SZ_VP + 2 * PK_SZ_S + PK_SZ_O + PK_SZ_M + PK_SZ_L + PK_SZ_N)

static void pk__state_carve(char *base, pk__state *st)
{
    st->q = (uint32_t *)base, base += PK_SZ_Q;
    st->kp = (uint32_t *)base, base += PK_SZ_KP;
    st->vp = (ckb_bf16 *)base, base += PK_SZ_VP;
    st->s = (float *)base, base += PK_SZ_S;
    st->p = (ckb_bf16 *)base, base += PK_SZ_S;
    st->o = (float *)base, base += PK_SZ_O;
    st->m = (float *)base, base += PK_SZ_M;
#ifdef PK_ROW_KEYS
    st->l = (float *)base, base += PK_SZ_L;
    st->n = (int64_t *)base;
#else
    st->l = (float *)base;
#endif
}

/* Packs K of kv head kh for 16 keys (rows[jj], NULL past the valid ones):
 * kp[p][jj] = pair p of key jj, zero for missing keys and past D. */
static void pk__pack_k16(const ckb_bf16 *const *rows, uint32_t *kp)
{
    int64_t p = 0;
    for (; p + 16 <= D / 2; p += 16) {
        __m512i r[16];
        for (int jj = 0; jj < 16; jj++)
            r[jj] = rows[jj] ? _mm512_loadu_si512(rows[jj] + 2 * p) : _mm512_setzero_si512();
        ckb_kit_transpose16(r, kp + p * 16);
    }
#if (D / 2) % 16 != 0 || D % 2 != 0 /* pairs past the whole 16-pair blocks */
    for (; p < PK_DP; p++)
        for (int jj = 0; jj < 16; jj++) {
            uint32_t w = 0;
            if (rows[jj] && 2 * p + 1 < D)
                memcpy(&w, rows[jj] + 2 * p, 4);
            else if (rows[jj])
                w = rows[jj][2 * p];
            kp[p * 16 + jj] = w;
        }
#endif
}

/* s[r][0 .. 16nv) = q[r] . K for PK_R rows and nv 16-key vectors, kp the
 * first key group. MMA=0: q rows as d pairs (stride PK_DP), K groups
 * [d pair][16 keys] (vdpbf16ps); else q rows f32 (stride PK_DQ), K groups
 * [d][16 keys] f32 (f32 FMA). */
static inline __attribute__((always_inline)) void pk__qk(const void *q, const void *kp, float *s,
                                                         const int nv)
{
    __m512 acc[PK_R][PK_NV];
#if defined(MMA) && MMA == 0
    ckb_kit_attn_qk16_bf(q, PK_DP, kp, PK_DP, PK_DP, s, PK_BKS, nv, acc);
#else
    ckb_kit_attn_qk_f(q, PK_DQ, kp, PK_DQ, PK_DQ, s, PK_BKS, nv, acc);
#endif
}

/* o[r][0 .. 16dc) = alpha[r] * o[r] + P[r] . V over nk keys (a multiple
 * of 2), v the first key at this d chunk. MMA=0: P rows as key pairs
 * (stride PK_BKS/2), V [key pair][PK_DO][2]; else P rows f32 (stride
 * PK_BKS), V [key][PK_DO] f32. */
static inline __attribute__((always_inline)) void pk__pv(const void *p, const void *v, float *o,
                                                         const float *alpha, int64_t nk,
                                                         const int dc)
{
#if defined(MMA) && MMA == 0
    ckb_kit_attn_pv16_bf(p, PK_BKS / 2, v, PK_DO, o, PK_DO, alpha, nk / 2, dc);
#else
    ckb_kit_attn_pv_f(p, PK_BKS, v, PK_DO, o, PK_DO, alpha, nk, dc);
#endif
}

#endif /* AVX-512 */

#if !defined(PK_AVX512) && defined(__AVX2__) && defined(__FMA__)
#define PK_AVX2 1

#include <immintrin.h>

#define PK_DO ((D + 7) / 8 * 8)         /* d padded to 8-wide vectors */
#define PK_DV (PK_DO / 8)
#define PK_BKP ((PK_BK + 7) / 8 * 8)    /* block keys padded to a group of 8 */
#define PK_R 4                          /* query rows per register tile */
#define PK_NV 3                         /* 8-key vectors per q k^T tile */

#if PK_ROWS % PK_R != 0
#error "PK_ROWS must be a multiple of 4"
#endif

/* One work item's state and scratch, per thread, 64-byte aligned. */
typedef struct {
    float *q;   /* [PK_ROWS][PK_DO] query rows widened (zero rows: padding) */
    float *kf;  /* [PK_BKP / 8][PK_DO][8] K of one block */
    float *vf;  /* [PK_BKP][PK_DO] V of one block */
    float *s;   /* [PK_R][PK_BKP] scores of one row tile */
    float *p;   /* [PK_R][PK_BKP] probabilities of one row tile, bf16 values */
    float *o;   /* [PK_ROWS][PK_DO] unnormalised output rows */
    float *m;   /* [PK_ROWS] running max (base-2 domain) */
    float *l;   /* [PK_ROWS][8] running sum, lane-wise */
    int64_t *n; /* [PK_ROWS] keys attended by each row: positions j < n[r] */
} pk__state;

#define PK_STATE_BYTES                                                                          \
    (2 * PK_ROUND64(PK_ROWS * PK_DO * 4) + 2 * PK_ROUND64(PK_BKP * PK_DO * 4) +                 \
     2 * PK_ROUND64(PK_R * PK_BKP * 4) + PK_ROUND64(PK_ROWS * 4) + PK_ROUND64(PK_ROWS * 8 * 4) + \
     PK_ROUND64(PK_ROWS * 8))

static void pk__state_carve(char *base, pk__state *st)
{
    st->q = (float *)base, base += PK_ROUND64(PK_ROWS * PK_DO * 4);
    st->kf = (float *)base, base += PK_ROUND64(PK_BKP * PK_DO * 4);
    st->vf = (float *)base, base += PK_ROUND64(PK_BKP * PK_DO * 4);
    st->s = (float *)base, base += PK_ROUND64(PK_R * PK_BKP * 4);
    st->p = (float *)base, base += PK_ROUND64(PK_R * PK_BKP * 4);
    st->o = (float *)base, base += PK_ROUND64(PK_ROWS * PK_DO * 4);
    st->m = (float *)base, base += PK_ROUND64(PK_ROWS * 4);
    st->l = (float *)base, base += PK_ROUND64(PK_ROWS * 8 * 4);
    st->n = (int64_t *)base;
}

/* Starts rows [0, rows) afresh: no output, no sum, max -inf. The expert
 * fills q (ckb_kit_widen8) and n. */
static void pk__reset(pk__state *st, int64_t rows)
{
    ckb_kit_attn_reset(st->o, PK_DO, st->l, 8, st->m, rows);
}

/* Packs one block of nk <= PK_BK keys: krows[j], vrows[j] the K and V rows
 * of key j (D bf16 each), widened; zero past nk to the next group of 8, so
 * that the kernels read whole vectors of finite values. */
static void pk__pack(const ckb_bf16 *const *krows, const ckb_bf16 *const *vrows, int64_t nk,
                     pk__state *st)
{
    const int64_t ng = (nk + 7) / 8;
    for (int64_t g = 0; g < ng; g++) {
        const int64_t j0 = 8 * g;
        ckb_kit_attn_pack_k8(krows + j0, nk - j0, D, PK_DO, st->kf + g * PK_DO * 8);
        for (int64_t j = j0; j < j0 + 8; j++)
            ckb_kit_widen8(j < nk ? vrows[j] : NULL, D, PK_DO, st->vf + j * PK_DO);
    }
}

/* s[r][0 .. 8nv) = q[r] . K for PK_R rows and nv 8-key vectors. */
static inline __attribute__((always_inline)) void pk__qk(const float *q, const float *kf, float *s,
                                                         const int nv)
{
    __m256 acc[PK_R][PK_NV];
    ckb_kit_attn_qk_f(q, PK_DO, kf, PK_DO, D, s, PK_BKP, nv, acc);
}

/* o[r][0 .. 8dc) = alpha[r] * o[r] + P[r] . V over nk keys. */
static inline __attribute__((always_inline)) void pk__pv(const float *p, const float *vf, float *o,
                                                         const float *alpha, int64_t nk,
                                                         const int dc)
{
    ckb_kit_attn_pv_f(p, PK_BKP, vf, PK_DO, o, PK_DO, alpha, nk, dc);
}

/* Online softmax of the row tile at state row rt over a block of keys from
 * position j0, scores over w8 keys: row r keeps its first c = n[r] - j0
 * (clamped to [0, w8]). Writes P (bf16 values, zero past c), updates m and
 * l, returns alpha (1 for a row with no key here: its state stays). */
static inline __attribute__((always_inline)) void pk__softmax(pk__state *st, int64_t rt,
                                                              int64_t j0, int64_t w8,
                                                              float *alpha)
{
    for (int r = 0; r < PK_R; r++) {
        const int64_t row = rt + r;
        int64_t c = st->n[row] - j0;
        c = c < 0 ? 0 : c > w8 ? w8 : c;
        const float *s = st->s + r * PK_BKP;
        float *pr = st->p + r * PK_BKP;
        if (c == 0) {
            alpha[r] = 1.0f;
            memset(pr, 0, (size_t)w8 * 4);
            continue;
        }
        alpha[r] = ckb_kit_attn_row8(s, pr, c, w8, ckb_kit_attn_max8(s, c), PK_C2, st->m + row,
                                     st->l + 8 * row, 1);
    }
}

/* State rows [row0, row0 + rows) (rows a multiple of 4) against the packed
 * block of nk keys from position j0. */
static void pk__attend(pk__state *st, int64_t row0, int64_t rows, int64_t j0, int64_t nk)
{
    for (int64_t rt = row0; rt < row0 + rows; rt += PK_R) {
        const int64_t tend = ckb_kit_attn_tile_end(st->n + rt, PK_R);
        if (tend <= j0)
            continue;
        const int64_t w = tend - j0 < nk ? tend - j0 : nk, nv = (w + 7) / 8;
        const float *qt = st->q + rt * PK_DO;
        int64_t v = 0;
#define PK_QK(k) pk__qk(qt, st->kf + v * 8 * PK_DO, st->s + 8 * v, k)
        CKB_KIT_ATTN_TILES(v, nv, 3, PK_QK);
#undef PK_QK
        float alpha[PK_R];
        pk__softmax(st, rt, j0, nv * 8, alpha);
        float *ot = st->o + rt * PK_DO;
        int c = 0;
#define PK_PV(k) pk__pv(st->p, st->vf + 8 * c, ot + 8 * c, alpha, nv * 8, k)
        CKB_KIT_ATTN_BY3_PV(c, PK_DV, PK_PV);
#undef PK_PV
    }
}

/* The sum of row r (its softmax denominator). */
static inline float pk__row_sum(const pk__state *st, int64_t r)
{
    return ckb_kit_attn_sum8(st->l + 8 * r);
}

/* dst[0 .. D) = bf16(o[r] / sum of row r). */
static void pk__row_out(const pk__state *st, int64_t r, ckb_bf16 *dst)
{
    ckb_kit_attn_out8(st->o + r * PK_DO, pk__row_sum(st, r), D, dst);
}

#endif /* AVX2 */

#if !defined(PK_AVX512) && !defined(PK_AVX2)
/* The portable path (neither above): one query row at a time, in C. */

/* dst[0 .. D) = bf16(softmax(q K^T / sqrt(D)) V) for the query row q over
 * positions j < n (n > 0) of sequence i, f32 throughout, two passes over
 * its keys in place: p[0 .. n) holds the scores, then the exponentials. P
 * is rounded to bf16 as the baselines' is. The K row of position j is k +
 * pk__slot(pages, i, j) * stride, its V row likewise from v: k and v are
 * the kv head's rows in slot 0, stride the elements from one slot to the
 * next (6p keeps K and V apart, 7p interleaves them). */
static void pk__row1(const ckb_bf16 *q, const ckb_bf16 *k, const ckb_bf16 *v, int64_t stride,
                     const int32_t *pages, int64_t i, int64_t n, float *p, ckb_bf16 *dst)
{
    const float scale = (float)(1.0 / sqrt((double)D));
    float mx = -INFINITY, acc[D];
    for (int64_t j = 0; j < n; j++) {
        const ckb_bf16 *kr = k + pk__slot(pages, i, j) * stride;
        float s = 0.0f;
        for (int64_t d = 0; d < D; d++)
            s += ckb_bf16_to_f32(q[d]) * ckb_bf16_to_f32(kr[d]);
        p[j] = s * scale;
        mx = p[j] > mx ? p[j] : mx;
    }
    float sum = 0.0f;
    for (int64_t j = 0; j < n; j++)
        sum += p[j] = expf(p[j] - mx);
    for (int64_t d = 0; d < D; d++)
        acc[d] = 0.0f;
    for (int64_t j = 0; j < n; j++) {
        const float w = ckb_bf16_to_f32(ckb_f32_to_bf16(p[j] / sum));
        const ckb_bf16 *vr = v + pk__slot(pages, i, j) * stride;
        for (int64_t d = 0; d < D; d++)
            acc[d] += w * ckb_bf16_to_f32(vr[d]);
    }
    for (int64_t d = 0; d < D; d++)
        dst[d] = ckb_f32_to_bf16(acc[d]);
}

#endif /* portable */
