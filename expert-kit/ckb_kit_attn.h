/*
 * ckb_kit_attn.h — the pieces of attention shared by the flash (1p 2p 3p
 * 4p) and paged (6p 7p) kits and experts: 4 query rows a register tile,
 *   q k^T: s[r][16v ..] = q[r] . K for nv key vectors, K packed as nv
 *          groups of [depth][lanes keys];
 *   P v:   o[r][16c ..] = alpha[r] o[r] + P[r] . V for dc output vectors,
 *          V rows (or, for the dot, key pairs) [key][d];
 * the online softmax of one row (running max and lane-wise sum in f32, P
 * rounded to bf16) and of a causal row tile; the output rows' last step;
 * the AMX tile loops and the AMX walk of a causal query block.
 * The tiles leave their accumulators in acc for the caller's mask and
 * running max (the flash kit's diagonal blocks). nv, dc and the unit flags
 * are constants at every call (the callers switch over them, or pass
 * their compile-time tunables), so the loops unroll into registers and the
 * flags cost no branch. Units: f32 FMA on widened operands (8 lanes on
 * AVX2, 16 on AVX-512), vdpbf16ps on bf16 pairs (AVX-512 BF16), AMX tiles.
 */
#pragma once

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <immintrin.h>

#include "ckb_kit_simd.h"

#define CKB_KIT_ATTN_R 4 /* query rows per register tile */

/* The block tunables of the experts that walk query blocks of BQ rows
 * against key blocks of BK keys (1p 2p 4p through the flash kit, 3p, 7p),
 * checked where the expert has set them before including this. */
#if defined(BQ) && (BQ < 4 || BQ % 4 != 0)
#error "BQ must be a positive multiple of 4"
#endif
#if defined(BK) && (BK < 16 || BK % 16 != 0)
#error "BK must be a positive multiple of 16"
#endif
/* The AMX paths (MMA=2) need whole 32-deep tiles (D and BK multiples of
 * 32) and 16-row query tiles (BQ a multiple of 16); otherwise the f32 FMA
 * path runs (MMA=1). */
#if defined(MMA) && defined(D) && defined(BK) && defined(BQ)
#if MMA == 2 && !(defined(__AMX_BF16__) && defined(__AMX_TILE__) && D % 32 == 0 &&         \
                  BK % 32 == 0 && BQ % 16 == 0)
#undef MMA
#define MMA 1
#endif
#endif
/* vdpbf16ps needs AVX-512 BF16; without it (an AVX-512 CPU that lacks or
 * hides the extension) MMA=0 runs the f32 FMA path, still in zmm. */
#if defined(MMA) && MMA == 0 && !defined(__AVX512BF16__)
#undef MMA
#define MMA 1
#endif

/* Runs CALL(k) over the vectors [i, n) of a row, i the caller's variable
 * (CALL reads it), k a constant at each call: whole tiles of w vectors
 * (16 lanes: 4, 16 of the 32 zmm accumulate; 8 lanes: 3, 12 of the 16
 * ymm), then one of the rest. */
#define CKB_KIT_ATTN_TILES(i, n, w, CALL)                                                      \
    do {                                                                                       \
        for (; (i) + (w) <= (n); (i) += (w))                                                   \
            CALL(w);                                                                           \
        switch ((n) - (i)) {                                                                   \
        case 1: CALL(1); break;                                                                \
        case 2: CALL(2); break;                                                                \
        case 3: if ((w) > 3) CALL(3); break; /* else none is left */                           \
        default: break;                                                                        \
        }                                                                                      \
    } while (0)

/* 8 lanes, P v: tiles of 3 vectors, the last four as two tiles of 2. */
#define CKB_KIT_ATTN_BY3_PV(i, n, CALL)                                                        \
    do {                                                                                       \
        for (; (n) - (i) > 4; (i) += 3)                                                        \
            CALL(3);                                                                           \
        switch ((n) - (i)) {                                                                   \
        case 1: CALL(1); break;                                                                \
        case 2: CALL(2); break;                                                                \
        case 3: CALL(3); break;                                                                \
        case 4: CALL(2); (i) += 2; CALL(2); break;                                             \
        default: break;                                                                        \
        }                                                                                      \
    } while (0)

/* Starts rows [0, rows) of an online softmax afresh: no output (rows ldo
 * floats), no sum (lanes floats a row), running max -inf. */
static inline void ckb_kit_attn_reset(float *o, int64_t ldo, float *l, int64_t lanes, float *m,
                                      int64_t rows)
{
    memset(o, 0, (size_t)(rows * ldo) * sizeof *o);
    memset(l, 0, (size_t)(rows * lanes) * sizeof *l);
    for (int64_t r = 0; r < rows; r++)
        m[r] = -INFINITY;
}

/* The portable paths' causal row (the flash kit, 3p), f32 throughout:
 * query row q (n1 + n2 values) against keys 0 .. nk-1, key j's first n1
 * values at k1 + j ks1 and its next n2 at k2 + j ks2 (3p: its k_nope and
 * the shared k_rope; n2 0: one part), its vd values at v + j vs; p holds
 * the row's scores, acc its output; out[0 .. vd) = bf16(softmax(scale
 * q.K) V). */
static inline void ckb_kit_attn_row_f32(const ckb_bf16 *q, const ckb_bf16 *k1, int64_t ks1,
                                        int64_t n1, const ckb_bf16 *k2, int64_t ks2, int64_t n2,
                                        const ckb_bf16 *v, int64_t vs, int64_t vd, int64_t nk,
                                        float scale, float *p, float *acc, ckb_bf16 *out)
{
    float mx = -INFINITY, sum = 0.0f;
    for (int64_t j = 0; j < nk; j++) {
        float s = 0.0f;
        for (int64_t d = 0; d < n1; d++)
            s += ckb_bf16_to_f32(q[d]) * ckb_bf16_to_f32(k1[j * ks1 + d]);
        for (int64_t d = 0; d < n2; d++)
            s += ckb_bf16_to_f32(q[n1 + d]) * ckb_bf16_to_f32(k2[j * ks2 + d]);
        p[j] = s * scale;
        mx = p[j] > mx ? p[j] : mx;
    }
    for (int64_t j = 0; j < nk; j++)
        sum += p[j] = expf(p[j] - mx);
    for (int64_t d = 0; d < vd; d++)
        acc[d] = 0.0f;
    for (int64_t j = 0; j < nk; j++)
        for (int64_t d = 0; d < vd; d++)
            acc[d] += p[j] * ckb_bf16_to_f32(v[j * vs + d]);
    for (int64_t d = 0; d < vd; d++)
        out[d] = ckb_f32_to_bf16(acc[d] / sum);
}

/* One thread's scratch for the walk of a query block (the flash kit, 3p):
 * the gathered query rows, one row tile's scores and P, and the block's
 * unnormalised output rows, running max and lane-wise sums. */
typedef struct {
    void *q;  /* [bq] query rows, qrow bytes each, zero padded */
    float *s; /* [rs][bk] scores of one row tile */
    void *p;  /* [rs][bk] its P, peb bytes a value */
    float *o; /* [bq][ldo] unnormalised output rows */
    float *m; /* [bq] running max (base-2 domain) */
    float *l; /* [bq][lanes] running sum, lane-wise */
} ckb_kit_attn_scratch;

/* The bytes of a scratch for bq query rows of qrow bytes, row tiles of rs
 * rows against bk keys (P peb bytes a value), output rows of ldo floats and
 * sums of lanes floats, each part 64-byte aligned; with sc, its parts are
 * carved from base (64-byte aligned). */
static inline size_t ckb_kit_attn_scratch_carve(char *base, int64_t bq, int64_t qrow, int64_t rs,
                                                int64_t bk, int64_t peb, int64_t ldo,
                                                int64_t lanes, ckb_kit_attn_scratch *sc)
{
    const size_t part[6] = {(size_t)(bq * qrow), (size_t)(rs * bk * 4), (size_t)(rs * bk * peb),
                            (size_t)(bq * ldo * 4), (size_t)(bq * 4), (size_t)(bq * lanes * 4)};
    void *at[6];
    size_t n = 0;
    for (int i = 0; i < 6; n += (part[i] + 63) / 64 * 64, i++)
        at[i] = base ? base + n : NULL;
    if (sc)
        *sc = (ckb_kit_attn_scratch){at[0], at[1], at[2], at[3], at[4], at[5]};
    return n;
}

/* The keys a tile of rows needs: the largest of their limits n[r]. */
static inline int64_t ckb_kit_attn_tile_end(const int64_t *n, const int rows)
{
    int64_t tend = 0;
    for (int r = 0; r < rows; r++)
        tend = n[r] > tend ? n[r] : tend;
    return tend;
}

/* Keys [j0, j0 + c) that causal row qi keeps of a block of w: j <= qi and
 * j < nkeys. */
static inline int64_t ckb_kit_attn_causal_c(int64_t qi, int64_t nkeys, int64_t j0, int64_t w)
{
    int64_t kend = qi + 1 < nkeys ? qi + 1 : nkeys;
    return kend - j0 < w ? kend - j0 : w;
}

enum { CKB_KIT_MASKED, CKB_KIT_VISIBLE, CKB_KIT_PARTIAL };

/* The causal mask per block: rows qi0 .. qend-1 against keys j0 .. j0+w-1
 * (keys from nkeys on count as masked) are fully masked when every key lies
 * right of the last row, fully visible when every key lies at or left of
 * the first row and inside nkeys, partial otherwise. Only partial blocks
 * apply element masks. */
static inline int ckb_kit_attn_block_kind(int64_t qi0, int64_t qend, int64_t j0, int64_t w,
                                          int64_t nkeys)
{
    if (j0 > qend - 1)
        return CKB_KIT_MASKED;
    return j0 + w - 1 <= qi0 && j0 + w <= nkeys ? CKB_KIT_VISIBLE : CKB_KIT_PARTIAL;
}

/* ---- the f32 register tiles, in the target's widest vectors ------------- */

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#define CKB_KIT_ATTN_W 16 /* f32 lanes of a vector */
#define CKB_KIT_ATTN_NV 4 /* the most vectors of a tile row */
typedef __m512 ckb_kit_attn_vec;
#define CKB_KIT_ATTN_V(op) _mm512_##op /* the width's intrinsic op */
#define CKB_KIT_ATTN_BCAST(p) _mm512_set1_ps(*(p))
#elif defined(__AVX2__) && defined(__FMA__)
#define CKB_KIT_ATTN_W 8
#define CKB_KIT_ATTN_NV 3
typedef __m256 ckb_kit_attn_vec;
#define CKB_KIT_ATTN_V(op) _mm256_##op
#define CKB_KIT_ATTN_BCAST(p) _mm256_broadcast_ss(p) /* from memory: GCC keeps it so */
#endif

#ifdef CKB_KIT_ATTN_W

/* The accumulators of a 4-row tile: zeroed; stored to rows lds floats
 * apart; loaded from output rows ldo apart, each scaled by alpha[r]
 * (CKB_KIT_ATTN_SCALED). */
static inline __attribute__((always_inline)) void
ckb_kit_attn__zero(ckb_kit_attn_vec acc[][CKB_KIT_ATTN_NV], const int nv)
{
    for (int r = 0; r < CKB_KIT_ATTN_R; r++)
        for (int v = 0; v < nv; v++)
            acc[r][v] = CKB_KIT_ATTN_V(setzero_ps)();
}

static inline __attribute__((always_inline)) void
ckb_kit_attn__store(float *s, int64_t lds, ckb_kit_attn_vec acc[][CKB_KIT_ATTN_NV], const int nv)
{
    for (int r = 0; r < CKB_KIT_ATTN_R; r++)
        for (int v = 0; v < nv; v++)
            CKB_KIT_ATTN_V(store_ps)(s + r * lds + CKB_KIT_ATTN_W * v, acc[r][v]);
}

/* (a macro: the loop compiles exactly as written out in place, which an
 * inlined function did not on AVX2, checked against the disassembly) */
#define CKB_KIT_ATTN_SCALED(acc, o, ldo, alpha, dc)                                            \
    for (int r_ = 0; r_ < CKB_KIT_ATTN_R; r_++) {                                              \
        ckb_kit_attn_vec al_ = CKB_KIT_ATTN_V(set1_ps)((alpha)[r_]);                           \
        for (int c_ = 0; c_ < (dc); c_++)                                                      \
            (acc)[r_][c_] = CKB_KIT_ATTN_V(mul_ps)(                                            \
                al_, CKB_KIT_ATTN_V(load_ps)((o) + r_ * (ldo) + CKB_KIT_ATTN_W * c_));         \
    }

/* The micro-kernel of both matmuls: acc[r][v] += a[r][t] b[t][v] over n
 * steps t, a's rows lda apart, b's vector (t, v) at b + t bt + v bv. q k^T:
 * a = q, t a depth, v a key group (bt W, bv a group's size); P v: a = P,
 * t a key, v a W-wide d chunk (bt a V row, bv W); W the lanes. */
static inline __attribute__((always_inline)) void
ckb_kit_attn__fma(const float *a, int64_t lda, const float *b, int64_t bt, int64_t bv, int64_t n,
                  const int nv, ckb_kit_attn_vec acc[][CKB_KIT_ATTN_NV])
{
    for (int64_t t = 0; t < n; t++) {
        ckb_kit_attn_vec bb[CKB_KIT_ATTN_NV];
        for (int v = 0; v < nv; v++)
            bb[v] = CKB_KIT_ATTN_V(load_ps)(b + t * bt + v * bv);
        for (int r = 0; r < CKB_KIT_ATTN_R; r++) {
            ckb_kit_attn_vec x = CKB_KIT_ATTN_BCAST(a + r * lda + t);
            for (int v = 0; v < nv; v++)
                acc[r][v] = CKB_KIT_ATTN_V(fmadd_ps)(x, bb[v], acc[r][v]);
        }
    }
}

/* q rows ldq floats apart, K groups ldk x W floats apart, depth d steps;
 * scores rows lds apart. */
static inline __attribute__((always_inline)) void
ckb_kit_attn_qk_f(const float *q, int64_t ldq, const float *kf, int64_t ldk, int64_t depth,
                  float *s, int64_t lds, const int nv, ckb_kit_attn_vec acc[][CKB_KIT_ATTN_NV])
{
    ckb_kit_attn__zero(acc, nv);
    ckb_kit_attn__fma(q, ldq, kf, CKB_KIT_ATTN_W, ldk * CKB_KIT_ATTN_W, depth, nv, acc);
    ckb_kit_attn__store(s, lds, acc, nv);
}

/* P rows ldp floats apart over nk keys, V rows ldv floats apart, o rows
 * ldo apart. */
static inline __attribute__((always_inline)) void
ckb_kit_attn_pv_f(const float *p, int64_t ldp, const float *vf, int64_t ldv, float *o,
                  int64_t ldo, const float *alpha, int64_t nk, const int dc)
{
    ckb_kit_attn_vec acc[CKB_KIT_ATTN_R][CKB_KIT_ATTN_NV];
    CKB_KIT_ATTN_SCALED(acc, o, ldo, alpha, dc);
    ckb_kit_attn__fma(p, ldp, vf, ldv, CKB_KIT_ATTN_W, nk, dc, acc);
    ckb_kit_attn__store(o, ldo, acc, dc);
}

#endif /* AVX-512 or AVX2 */

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)

/* The lane-wise max mx[r] of the unmasked scores of a 4-row tile (acc, nv
 * 16-key vectors from key0): all of them unless diag (a partial block);
 * then row qi0 + r keeps keys j <= min(qi0 + r, nkeys - 1) (a pad row past
 * nkeys keeps all). */
static inline __attribute__((always_inline)) void
ckb_kit_attn_rowmax16(__m512 acc[][4], const int nv, __m512 *mx, int diag, int64_t key0,
                      int64_t qi0, int64_t nkeys)
{
    if (!diag) {
        for (int r = 0; r < CKB_KIT_ATTN_R; r++)
            for (int v = 0; v < nv; v++)
                mx[r] = _mm512_max_ps(mx[r], acc[r][v]);
        return;
    }
    const __m512i iota = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    for (int r = 0; r < CKB_KIT_ATTN_R; r++) {
        int64_t lim = qi0 + r < nkeys ? qi0 + r : nkeys - 1;
        __m512i l = _mm512_set1_epi32((int)(lim - key0));
        for (int v = 0; v < nv; v++) {
            __mmask16 m = _mm512_cmple_epi32_mask(_mm512_add_epi32(iota, _mm512_set1_epi32(16 * v)), l);
            mx[r] = _mm512_mask_max_ps(mx[r], m, mx[r], acc[r][v]);
        }
    }
}

/* The largest of a row's first c >= 1 scores. */
static inline __attribute__((always_inline)) float ckb_kit_attn_max16(const float *s, int64_t c)
{
    __m512 mx = _mm512_set1_ps(-INFINITY);
    for (int64_t k = 0; k < c; k += 16) {
        __mmask16 mk = c - k >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (c - k)) - 1);
        mx = _mm512_mask_max_ps(mx, mk, mx, _mm512_load_ps(s + k));
    }
    return _mm512_reduce_max_ps(mx);
}

/* P of one row: 2^(s c2 - m_new) over its first c of w keys (16 a step),
 * 0 past c, stored in bf16 (pf32 0) or as its bf16 value in f32 (pf32 1:
 * the f32 FMA P v); returns the lane-wise sum. skip 1: steps wholly past c
 * store 0 with no exp (P wider than the scores: AMX's 32-key tiles); skip
 * 0: every step is exponentiated and masked, with no branch. */
static inline __attribute__((always_inline)) __m512
ckb_kit_attn_p16(const float *s, void *p, int64_t c, int64_t w, float m_new, float c2s,
                 const int pf32, const int skip)
{
    const __m512 c2 = _mm512_set1_ps(c2s), mv = _mm512_set1_ps(m_new);
    __m512 sum = _mm512_setzero_ps();
    for (int64_t k = 0; k < w; k += 16) {
        __m512 e = _mm512_setzero_ps();
        if (!skip || k < c) {
            e = ckb_kit_exp2_16(_mm512_fmsub_ps(_mm512_load_ps(s + k), c2, mv));
            if (k + 16 > c) /* skip: k < c here */
                e = _mm512_maskz_mov_ps(skip || c > k ? (__mmask16)((1u << (c - k)) - 1) : 0, e);
            sum = _mm512_add_ps(sum, e);
        }
        if (pf32)
            _mm512_store_ps((float *)p + k, ckb_kit_bf16x16_f32(e));
        else
            _mm256_store_si256((__m256i *)((ckb_bf16 *)p + k), ckb_kit_bf16x16(e));
    }
    return sum;
}

/* The online-softmax step of one row against a key block whose largest
 * kept score is top: the running max m (base 2: scores scaled by c2s)
 * rises to at least top c2s, P as ckb_kit_attn_p16, the lane-wise sum l
 * (16 floats) scaled by alpha plus P's. Returns alpha, how much the row's
 * old output shrinks (0 on its first block: m = -inf). */
static inline __attribute__((always_inline)) float
ckb_kit_attn_row16(const float *s, void *p, int64_t c, int64_t w, float top, float c2s, float *m,
                   float *l, const int pf32, const int skip)
{
    float m_old = *m, m_new = top * c2s;
    if (m_new < m_old)
        m_new = m_old;
    const float alpha = exp2f(m_old - m_new);
    const __m512 sum = ckb_kit_attn_p16(s, p, c, w, m_new, c2s, pf32, skip);
    *m = m_new;
    __m512 *lv = (__m512 *)l;
    *lv = _mm512_fmadd_ps(*lv, _mm512_set1_ps(alpha), sum);
    return alpha;
}

/* The online softmax of a 4-row register tile of scores s (rows lds
 * floats apart) against the key block at j0 (w16 keys): row r is query
 * qi0 + r, whose kept keys (at least one) are causal; mx[r] their
 * lane-wise max, from the q k^T. P rows ldp values apart (pf32 as
 * ckb_kit_attn_p16); m, l the tile's first row's running max and sums (16
 * floats a row); alpha[r] how much row r's old output shrinks. */
static inline __attribute__((always_inline)) void
ckb_kit_attn_softmax4(const float *s, int64_t lds, void *p, int64_t ldp, const int pf32, float *m,
                      float *l, int64_t qi0, int64_t nkeys, int64_t j0, int64_t w16,
                      const __m512 *mx, float c2s, float *alpha)
{
    for (int r = 0; r < CKB_KIT_ATTN_R; r++) {
        const int64_t c = ckb_kit_attn_causal_c(qi0 + r, nkeys, j0, w16);
        alpha[r] = ckb_kit_attn_row16(s + r * lds, (char *)p + r * ldp * (pf32 ? 4 : 2), c, w16,
                                      _mm512_reduce_max_ps(mx[r]), c2s, m + r, l + 16 * r, pf32,
                                      0);
    }
}

/* dst[0 .. n) = bf16(o / sum), o read in whole 16-wide vectors. */
static inline __attribute__((always_inline)) void ckb_kit_attn_out16(const float *o, float sum,
                                                                     int64_t n, ckb_bf16 *dst)
{
    const __mmask16 tail = n % 16 ? (__mmask16)((1u << (n % 16)) - 1) : (__mmask16)0xffff;
    const __m512 inv = _mm512_set1_ps(1.0f / sum);
    for (int64_t d = 0; d < n; d += 16) {
        __m256i y = ckb_kit_bf16x16(_mm512_mul_ps(inv, _mm512_load_ps(o + d)));
        _mm256_mask_storeu_epi16(dst + d, d + 16 <= n ? (__mmask16)0xffff : tail, y);
    }
}

/* The sum of a row's 16 lane-wise sums (its softmax denominator). */
static inline float ckb_kit_attn_sum16(const float *l)
{
    return _mm512_reduce_add_ps(_mm512_load_ps(l));
}

/* Packs V of one key pair (rows a and b, n values each; NULL = a zero row)
 * for the dot and the AMX P v: vp[d][2] = {a[d], b[d]} for d < npad (a
 * multiple of 16), zero past n. */
static inline __attribute__((always_inline)) void
ckb_kit_attn_pack_v2(const ckb_bf16 *a, const ckb_bf16 *b, int64_t n, int64_t npad, ckb_bf16 *vp)
{
    const __m512i lo = _mm512_set_epi16(47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10, 41, 9,
                                        40, 8, 39, 7, 38, 6, 37, 5, 36, 4, 35, 3, 34, 2, 33, 1,
                                        32, 0);
    const __m512i hi = _mm512_add_epi16(lo, _mm512_set1_epi16(16));
    for (int64_t d = 0; d < npad; d += 32) {
        __mmask32 m = d + 32 <= n ? ~(__mmask32)0
                      : d < n     ? (__mmask32)((1ull << (n - d)) - 1)
                                  : 0;
        __m512i x = a ? _mm512_maskz_loadu_epi16(m, a + d) : _mm512_setzero_si512();
        __m512i y = b ? _mm512_maskz_loadu_epi16(m, b + d) : _mm512_setzero_si512();
        _mm512_store_si512(vp + 2 * d, _mm512_permutex2var_epi16(x, lo, y));
        if (d + 16 < npad)
            _mm512_store_si512(vp + 2 * d + 32, _mm512_permutex2var_epi16(x, hi, y));
    }
}

#ifdef __AVX512BF16__

/*
 * The online softmax of a 16-row tile of scores s (rows lds floats apart)
 * against the key block at j0 (w16 keys): row r is query qi0 + r, which
 * keeps keys j <= qi0 + r and j < nkeys, at least one. Writes P in bf16
 * (rows ldp apart) over w32 keys, zero where masked and past w16 (whole
 * 32-key tiles), updates the running max m[r] (base 2, scores scaled by
 * c2) and the lane-wise sums l[16 r ..], and returns in alpha how much
 * each row's old output shrinks.
 */
static inline void ckb_kit_attn_softmax16(const float *s, int64_t lds, ckb_bf16 *p, int64_t ldp,
                                          float *m, float *l, int64_t qi0, int64_t nkeys,
                                          int64_t j0, int64_t w16, int64_t w32, float c2s,
                                          float *alpha)
{
    for (int r = 0; r < 16; r++) {
        const int64_t c = ckb_kit_attn_causal_c(qi0 + r, nkeys, j0, w16);
        const float *sr = s + r * lds;
        alpha[r] = ckb_kit_attn_row16(sr, p + r * ldp, c, w32, ckb_kit_attn_max16(sr, c), c2s,
                                      m + r, l + 16 * r, 0, 1);
    }
}

/* The dot's micro-kernel, as ckb_kit_attn__fma on bf16 pairs: a's
 * pairs, b's pair vectors (t, v) at b + t bt + v bv (in pairs). */
static inline __attribute__((always_inline)) void
ckb_kit_attn__dot16(const uint32_t *a, int64_t lda, const uint32_t *b, int64_t bt, int64_t bv,
                    int64_t n, const int nv, __m512 acc[][4])
{
    for (int64_t t = 0; t < n; t++) {
        __m512i bb[4];
        for (int v = 0; v < nv; v++)
            bb[v] = _mm512_load_si512(b + t * bt + v * bv);
        for (int r = 0; r < CKB_KIT_ATTN_R; r++) {
            __m512i x = _mm512_set1_epi32((int)a[r * lda + t]);
            for (int v = 0; v < nv; v++)
                acc[r][v] = _mm512_dpbf16_ps(acc[r][v], (__m512bh)x, (__m512bh)bb[v]);
        }
    }
}

/* The dot: q k^T over two key parts (3p: per-head and shared RoPE keys),
 * q's first depth pairs against kp (groups ldk x 16 pairs apart), its
 * next depth2 against kp2 (ldk2); q rows ldq pairs apart. */
static inline __attribute__((always_inline)) void
ckb_kit_attn_qk16_bf2(const uint32_t *q, int64_t ldq, const uint32_t *kp, int64_t ldk,
                      int64_t depth, const uint32_t *kp2, int64_t ldk2, int64_t depth2, float *s,
                      int64_t lds, const int nv, __m512 acc[][4])
{
    ckb_kit_attn__zero(acc, nv);
    ckb_kit_attn__dot16(q, ldq, kp, 16, ldk * 16, depth, nv, acc);
    ckb_kit_attn__dot16(q + depth, ldq, kp2, 16, ldk2 * 16, depth2, nv, acc);
    ckb_kit_attn__store(s, lds, acc, nv);
}

/* The dot: q rows ldq pairs apart, K groups ldk x 16 pairs apart, depth d
 * pairs. */
static inline __attribute__((always_inline)) void
ckb_kit_attn_qk16_bf(const uint32_t *q, int64_t ldq, const uint32_t *kp, int64_t ldk, int64_t depth,
                     float *s, int64_t lds, const int nv, __m512 acc[][4])
{
    ckb_kit_attn_qk16_bf2(q, ldq, kp, ldk, depth, kp, ldk, 0, s, lds, nv, acc);
}

/* The dot: P rows ldp pairs apart over np key pairs, V as [key pair][d][2]
 * (a pair's rows 2 ldv bf16 apart), o rows ldo apart. */
static inline __attribute__((always_inline)) void
ckb_kit_attn_pv16_bf(const uint32_t *p, int64_t ldp, const ckb_bf16 *vp, int64_t ldv, float *o,
                     int64_t ldo, const float *alpha, int64_t np, const int dc)
{
    __m512 acc[CKB_KIT_ATTN_R][4];
    CKB_KIT_ATTN_SCALED(acc, o, ldo, alpha, dc);
    ckb_kit_attn__dot16(p, ldp, (const uint32_t *)vp, ldv, 16, np, dc, acc);
    ckb_kit_attn__store(o, ldo, acc, dc);
}

#endif /* AVX-512 BF16 */

/* A 4-row tile's q k^T (ckb_kit_attn_qk_f, or _bf2 over two key parts)
 * and P v (ckb_kit_attn_pv_f or _bf over nk keys) on the unit f32 picks,
 * with ckb_kit_reg_flash's layouts. */
static inline __attribute__((always_inline)) void
ckb_kit_attn__qk_unit(const int f32, const uint32_t *q, int64_t ldq, const uint32_t *k,
                      int64_t kd, const uint32_t *k2, int64_t kd2, float *s, int64_t lds,
                      const int nv, __m512 acc[][4])
{
#ifdef __AVX512BF16__
    if (!f32) {
        ckb_kit_attn_qk16_bf2(q, ldq, k, kd, kd, k2, kd2, kd2, s, lds, nv, acc);
        return;
    }
#endif
    (void)f32, (void)k2, (void)kd2;
    ckb_kit_attn_qk_f((const float *)q, ldq, (const float *)k, kd, kd, s, lds, nv, acc);
}

static inline __attribute__((always_inline)) void
ckb_kit_attn__pv_unit(const int f32, const void *p, int64_t bk, const char *v, int64_t ldo,
                      float *o, const float *alpha, int64_t nk, const int dc)
{
#ifdef __AVX512BF16__
    if (!f32) {
        ckb_kit_attn_pv16_bf(p, bk / 2, (const ckb_bf16 *)v, ldo, o, ldo, alpha, nk / 2, dc);
        return;
    }
#endif
    (void)f32;
    ckb_kit_attn_pv_f(p, bk, (const float *)v, ldo, o, ldo, alpha, nk, dc);
}

/*
 * One causal query block in 4-row register tiles: rows i0 .. i0 + nrows of
 * nkeys keys (row i attends j <= i), key blocks of bk keys; a tile skips the
 * blocks right of its last row whole (their K and V are never read), and
 * only the diagonal blocks mask elements. f32 (a constant) picks the unit:
 * f32 FMA on widened operands, else vdpbf16ps on bf16 pairs; an element of
 * q and K is 4 bytes either way (an f32, or a bf16 pair). q: the block's
 * rows gathered, ldq elements apart, zero padded to whole tiles. q k^T sums
 * up to two key parts (3p: its per-head k_nope and the shared k_rope; kd2
 * 0 and k2 = k: one part; bf16 only): q's first kd elements against groups of 16 keys
 * packed [kd][16] at k, its next kd2 against k2. s, p: one tile's scores
 * (f32 [4][bk]) and P (bf16 [4][bk], f32 for f32). v: packed from key 0 as
 * [key][16 dv] f32, or [key pair][16 dv][2] bf16. o, m, l, out, ldout and
 * vd as ckb_kit_amx_flash.
 */
static inline __attribute__((always_inline)) void
ckb_kit_reg_flash(const void *q, int64_t ldq, const void *k, const int64_t kd, const void *k2,
                  const int64_t kd2, const void *v, const int64_t dv, float *s, void *p,
                  const int64_t bk, float *o, float *m, float *l, int64_t nkeys, int64_t i0,
                  int64_t nrows, float c2, ckb_bf16 *out, int64_t ldout, int64_t vd,
                  const int f32)
{
    const int64_t ntiles = (nrows + CKB_KIT_ATTN_R - 1) / CKB_KIT_ATTN_R, ldo = 16 * dv;
    ckb_kit_attn_reset(o, ldo, l, 16, m, ntiles * CKB_KIT_ATTN_R);
    const int64_t kend = i0 + nrows; /* keys past the last row are all masked */
    for (int64_t j0 = 0; j0 < kend; j0 += bk) {
        for (int64_t rt = 0; rt < ntiles * CKB_KIT_ATTN_R; rt += CKB_KIT_ATTN_R) {
            /* Tiles start at multiples of 4 and j0 at a multiple of 16, so a
             * tile that reaches j0 has every row reaching it: c >= 1. */
            const int64_t qi0 = i0 + rt;
            const int64_t tend = qi0 + CKB_KIT_ATTN_R < nkeys ? qi0 + CKB_KIT_ATTN_R : nkeys;
            if (ckb_kit_attn_block_kind(qi0, tend, j0, bk, nkeys) == CKB_KIT_MASKED)
                continue;
            /* Keys past the tile's last row are masked for all its rows:
             * the block narrows to the 16-key groups that reach it. */
            const int64_t w = tend - j0 < bk ? tend - j0 : bk;
            const int64_t nv = (w + 15) / 16;
            const int diag =
                ckb_kit_attn_block_kind(qi0, tend, j0, 16 * nv, nkeys) == CKB_KIT_PARTIAL;
            const uint32_t *qt = (const uint32_t *)q + rt * ldq;
            const uint32_t *kt = (const uint32_t *)k + (j0 / 16) * kd * 16;
            const uint32_t *kt2 = (const uint32_t *)k2 + (j0 / 16) * kd2 * 16;
            __m512 mx[CKB_KIT_ATTN_R];
            for (int r = 0; r < CKB_KIT_ATTN_R; r++)
                mx[r] = _mm512_set1_ps(-INFINITY);
            int64_t g = 0;
#define CKB_KIT_QK(n)                                                                          \
    do {                                                                                       \
        __m512 acc[CKB_KIT_ATTN_R][4];                                                         \
        ckb_kit_attn__qk_unit(f32, qt, ldq, kt + g * kd * 16, kd, kt2 + g * kd2 * 16, kd2,     \
                              s + 16 * g, bk, n, acc);                                         \
        ckb_kit_attn_rowmax16(acc, n, mx, diag, j0 + 16 * g, qi0, nkeys);                      \
    } while (0)
            CKB_KIT_ATTN_TILES(g, nv, 4, CKB_KIT_QK);
#undef CKB_KIT_QK
            float alpha[CKB_KIT_ATTN_R];
            ckb_kit_attn_softmax4(s, bk, p, bk, f32, m + rt, l + 16 * rt, qi0, nkeys, j0, nv * 16,
                                  mx, c2, alpha);
            /* key j0's V row; a 16-wide d chunk is 64 bytes in both layouts
             * (16 f32, or 16 bf16 pairs) */
            const char *vt = (const char *)v + j0 * ldo * (f32 ? 4 : 2);
            float *ot = o + rt * ldo;
            int c = 0;
#define CKB_KIT_PV(n)                                                                          \
    ckb_kit_attn__pv_unit(f32, p, bk, vt + 64 * c, ldo, ot + 16 * c, alpha, nv * 16, n)
            CKB_KIT_ATTN_TILES(c, dv, 4, CKB_KIT_PV);
#undef CKB_KIT_PV
        }
    }
    for (int64_t r = 0; r < nrows; r++)
        ckb_kit_attn_out16(o + r * ldo, ckb_kit_attn_sum16(l + 16 * r), vd, out + (i0 + r) * ldout);
}

#elif defined(__AVX2__) && defined(__FMA__)

/* 8 lanes: the largest of a row's first c >= 1 scores. */
static inline __attribute__((always_inline)) float ckb_kit_attn_max8(const float *s, int64_t c)
{
    const __m256 ninf = _mm256_set1_ps(-INFINITY);
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256 mx = ninf;
    for (int64_t k = 0; k < c; k += 8) {
        __m256i keep = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(c - k)), iota);
        mx = _mm256_max_ps(mx, _mm256_blendv_ps(ninf, _mm256_load_ps(s + k), _mm256_castsi256_ps(keep)));
    }
    return ckb_kit_hmax8(mx);
}

/* 8 lanes: the online-softmax step of one row (as ckb_kit_attn_row16): P
 * over its first c of w keys as bf16 values in f32, 0 past c; skip 1:
 * steps wholly past c store 0 with no exp; l is 8 floats. Returns alpha. */
static inline __attribute__((always_inline)) float
ckb_kit_attn_row8(const float *s, float *p, int64_t c, int64_t w, float top, float c2s, float *m,
                  float *l, const int skip)
{
    const __m256 c2 = _mm256_set1_ps(c2s);
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    float m_old = *m, m_new = top * c2s;
    if (m_new < m_old)
        m_new = m_old;
    const float alpha = exp2f(m_old - m_new);
    const __m256 mv = _mm256_set1_ps(m_new);
    __m256 sum = _mm256_setzero_ps();
    for (int64_t k = 0; k < w; k += 8) {
        __m256 e = _mm256_setzero_ps();
        if (!skip || k < c) {
            e = ckb_kit_exp2_8(_mm256_fmsub_ps(_mm256_load_ps(s + k), c2, mv));
            if (k + 8 > c)
                e = _mm256_and_ps(e, _mm256_castsi256_ps(_mm256_cmpgt_epi32(
                                         _mm256_set1_epi32((int)(c - k)), iota)));
            sum = _mm256_add_ps(sum, e);
        }
        _mm256_store_si256((__m256i *)(p + k), ckb_kit_bf16x8_top(e));
    }
    *m = m_new;
    __m256 *lv = (__m256 *)l;
    *lv = _mm256_fmadd_ps(*lv, _mm256_set1_ps(alpha), sum);
    return alpha;
}

/* The sum of a row's 8 lane-wise sums, in lane order. */
static inline float ckb_kit_attn_sum8(const float *l)
{
    float sum = 0.0f;
    for (int e = 0; e < 8; e++)
        sum += l[e];
    return sum;
}

/* dst[0 .. n) = bf16(o / sum), o 32-byte aligned. */
static inline __attribute__((always_inline)) void ckb_kit_attn_out8(const float *o, float sum,
                                                                    int64_t n, ckb_bf16 *dst)
{
    const __m256 inv = _mm256_set1_ps(1.0f / sum);
    int64_t d = 0;
    for (; d + 8 <= n; d += 8) {
        __m256i u = _mm256_srli_epi32(ckb_kit_bf16x8_top(_mm256_mul_ps(inv, _mm256_load_ps(o + d))),
                                      16);
        __m256i pk = _mm256_permute4x64_epi64(_mm256_packus_epi32(u, u), 0x08);
        _mm_storeu_si128((__m128i *)(dst + d), _mm256_castsi256_si128(pk));
    }
    for (; d < n; d++)
        dst[d] = ckb_f32_to_bf16(o[d] / sum);
}

/* Packs the K rows of 8 keys (rows[jj], the first nk of them read) widened
 * to f32 as [d][8 keys] for d < npad: zero past nk and past n dims. Whole
 * 8 x 8 blocks are widened and transposed in registers. */
static inline __attribute__((always_inline)) void
ckb_kit_attn_pack_k8(const ckb_bf16 *const *rows, int64_t nk, int64_t n, int64_t npad, float *dst)
{
    const int64_t whole = nk >= 8 ? n / 8 * 8 : 0; /* d covered by 8 x 8 blocks */
    for (int64_t d = 0; d < whole; d += 8) {
        __m256 r[8], t[8];
        for (int jj = 0; jj < 8; jj++)
            r[jj] = ckb_kit_load8(rows[jj] + d);
        for (int jj = 0; jj < 8; jj += 2) {
            t[jj] = _mm256_unpacklo_ps(r[jj], r[jj + 1]);
            t[jj + 1] = _mm256_unpackhi_ps(r[jj], r[jj + 1]);
        }
        for (int a = 0; a < 8; a += 4)
            for (int b = 0; b < 2; b++) {
                r[a + b] = _mm256_shuffle_ps(t[a + b], t[a + b + 2], 0x44);
                r[a + b + 2] = _mm256_shuffle_ps(t[a + b], t[a + b + 2], 0xee);
            }
        /* r[0..3]: rows 0-3 of d pairs (0,4) (2,6) (1,5) (3,7) by lane
         * half; r[4..7] the same for rows 4-7 */
        static const int dd[4] = {0, 2, 1, 3};
        for (int i = 0; i < 4; i++) {
            _mm256_store_ps(dst + (d + dd[i]) * 8, _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
            _mm256_store_ps(dst + (d + dd[i] + 4) * 8, _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
        }
    }
    for (int64_t t = whole * 8; t < npad * 8; t++) {
        int64_t d = t / 8, jj = t % 8;
        dst[t] = jj < nk && d < n ? ckb_bf16_to_f32(rows[jj][d]) : 0.0f;
    }
}

#endif /* AVX-512, AVX2 */

/* ---- AMX: 16-row tiles ---------------------------------------------------- */

#if defined(__AMX_BF16__) && defined(__AMX_TILE__)

/* Tiles 0..n-1 (n 1..4) += A x B over nk 32-deep steps: A (tile 4) the 16
 * rows at a + 64 kk, rows lda bytes apart; B tile v at b + kk bstep + v gb,
 * rows ldb bytes apart. The q k^T of a packed key group (B 16 d pairs x 16
 * keys) and the P v of packed V (B 16 key pairs x 16 d) alike. */
static inline __attribute__((always_inline)) void ckb_kit_amx_1x4(const char *a, int64_t lda,
                                                                  const char *b, int64_t ldb,
                                                                  int64_t bstep, int64_t gb,
                                                                  int64_t nk, int64_t n)
{
    for (int64_t kk = 0; kk < nk; kk++) {
        const char *bb = b + kk * bstep;
        _tile_loadd(4, a + kk * 64, lda);
        _tile_loadd(5, bb, ldb);
        _tile_dpbf16ps(0, 4, 5);
        if (n > 1) {
            _tile_loadd(6, bb + gb, ldb);
            _tile_dpbf16ps(1, 4, 6);
        }
        if (n > 2) {
            _tile_loadd(7, bb + 2 * gb, ldb);
            _tile_dpbf16ps(2, 4, 7);
        }
        if (n > 3) {
            _tile_loadd(5, bb + 3 * gb, ldb);
            _tile_dpbf16ps(3, 4, 5);
        }
    }
}

/* Accumulator tiles 0..n-1 from / to f32 rows ld floats apart, 16 columns
 * each (op _tile_loadd or _tile_stored; a tile's number must be a constant,
 * so no loop); or zeroed. */
#define CKB_KIT_AMX_EACH4(op, f, ld, n)                                                        \
    do {                                                                                       \
        op(0, (f), (ld) * 4);                                                                  \
        if ((n) > 1)                                                                           \
            op(1, (f) + 16, (ld) * 4);                                                         \
        if ((n) > 2)                                                                           \
            op(2, (f) + 32, (ld) * 4);                                                         \
        if ((n) > 3)                                                                           \
            op(3, (f) + 48, (ld) * 4);                                                         \
    } while (0)

static inline __attribute__((always_inline)) void ckb_kit_amx_load4(const float *f, int64_t ld,
                                                                    int64_t n)
{
    CKB_KIT_AMX_EACH4(_tile_loadd, f, ld, n);
}

static inline __attribute__((always_inline)) void ckb_kit_amx_store4(float *f, int64_t ld,
                                                                     int64_t n)
{
    CKB_KIT_AMX_EACH4(_tile_stored, f, ld, n);
}

static inline __attribute__((always_inline)) void ckb_kit_amx_zero4(void)
{
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
}

/* P v on tiles: o (16 rows, ldo floats apart, 16 n columns) += P (rows ldp
 * bytes apart) x V (key pair rows ldv bytes apart) over nkt 32-key steps. */
static inline __attribute__((always_inline)) void ckb_kit_amx_pv(const char *pt, int64_t ldp,
                                                                 const char *vt, int64_t ldv,
                                                                 float *o, int64_t ldo, int64_t nkt,
                                                                 int64_t n)
{
    ckb_kit_amx_load4(o, ldo, n);
    ckb_kit_amx_1x4(pt, ldp, vt, ldv, 16 * ldv, 64, nkt, n);
    ckb_kit_amx_store4(o, ldo, n);
}

/* The output rows of a 16-row tile (16 dv floats a row) scaled by alpha
 * (skip1: a row whose alpha is 1 is left as it is; a constant), then +=
 * P (rows ldp bytes apart) x packed V (pair rows 64 dv bytes apart from
 * v) over nkt 32-key steps, four 16-wide output vectors a pass. */
static inline __attribute__((always_inline)) void
ckb_kit_amx_rescale_pv(float *o, const int64_t dv, const float *alpha, const int skip1,
                       const char *p, int64_t ldp, const char *v, int64_t nkt)
{
    const int64_t ldo = 16 * dv;
    for (int r = 0; r < 16; r++) {
        if (skip1 && alpha[r] == 1.0f)
            continue;
        __m512 al = _mm512_set1_ps(alpha[r]);
        for (int64_t d = 0; d < ldo; d += 16)
            _mm512_store_ps(o + r * ldo + d, _mm512_mul_ps(al, _mm512_load_ps(o + r * ldo + d)));
    }
    for (int64_t c0 = 0; c0 < dv; c0 += 4)
        ckb_kit_amx_pv(p, ldp, v + c0 * 64, ldo * 4, o + 16 * c0, ldo, nkt, dv - c0 < 4 ? dv - c0 : 4);
}

#ifdef __AVX512BF16__

/*
 * One causal query block on AMX tiles, 16 query rows a tile: rows i0 ..
 * i0 + nrows of nkeys keys (row i attends j <= i), key blocks of bk keys.
 * q: the block's rows gathered as bf16, ldq bytes apart, zero padded to
 * whole tiles (row-major bf16 is A's layout). q k^T sums up to two key
 * parts (3p: its per-head k_nope and the shared k_rope; kc2 0: one part):
 * q's first 32 kc dims against groups of 16 keys kg bytes apart at k, its
 * next 32 kc2 against k2 (kg2); a packed group [d pair][16 keys] is B's
 * layout. P v: P (bf16 [16][bk], s the f32 scores [16][bk]) against V
 * packed as [key pair][16 dv][2] from key 0. o, m, l: the rows' output (16
 * dv floats a row), running max and lane-wise sums (16 floats a row). The
 * vd values of each row go to out, rows ldout apart.
 */
static inline __attribute__((always_inline)) void
ckb_kit_amx_flash(const char *q, int64_t ldq, const char *k, int64_t kg, int64_t kc,
                  const char *k2, int64_t kg2, int64_t kc2, const char *v, const int64_t dv,
                  float *s, ckb_bf16 *p, const int64_t bk, float *o, float *m, float *l,
                  int64_t nkeys, int64_t i0, int64_t nrows, float c2, ckb_bf16 *out,
                  int64_t ldout, int64_t vd)
{
    const int64_t ntiles = (nrows + 15) / 16, ldo = 16 * dv;
    ckb_kit_attn_reset(o, ldo, l, 16, m, ntiles * 16);
    const int64_t kend = i0 + nrows;
    for (int64_t j0 = 0; j0 < kend; j0 += bk) {
        for (int64_t rt = 0; rt < ntiles * 16; rt += 16) {
            /* Tiles and j0 start at multiples of 16, so a tile that reaches
             * j0 has every row reaching it. */
            const int64_t qi0 = i0 + rt, tend = qi0 + 16 < nkeys ? qi0 + 16 : nkeys;
            if (tend <= j0)
                continue;
            const int64_t w = tend - j0 < bk ? tend - j0 : bk;
            const int64_t nv = (w + 15) / 16, w32 = (w + 31) / 32 * 32;
            const char *qt = q + rt * ldq;
            for (int64_t g = 0; g < nv; g += 4) {
                const int64_t n = nv - g < 4 ? nv - g : 4, kgrp = j0 / 16 + g;
                ckb_kit_amx_zero4();
                ckb_kit_amx_1x4(qt, ldq, k + kgrp * kg, 64, 16 * 64, kg, kc, n);
                if (kc2) /* a constant: no second part, no code */
                    ckb_kit_amx_1x4(qt + kc * 64, ldq, k2 + kgrp * kg2, 64, 16 * 64, kg2, kc2, n);
                ckb_kit_amx_store4(s + 16 * g, bk, n);
            }
            float alpha[16];
            ckb_kit_attn_softmax16(s, bk, p, bk, m + rt, l + 16 * rt, qi0, nkeys, j0, nv * 16, w32,
                                   c2, alpha);
            /* key j0's pair row of V; 32 keys are 16 pair rows */
            ckb_kit_amx_rescale_pv(o + rt * ldo, dv, alpha, 0, (const char *)p, bk * 2,
                                   v + j0 * ldo * 2, w32 / 32);
        }
    }
    for (int64_t r = 0; r < nrows; r++)
        ckb_kit_attn_out16(o + r * ldo, ckb_kit_attn_sum16(l + 16 * r), vd,
                           out + (i0 + r) * ldout);
}

#endif /* AVX-512 BF16 */

#endif /* AMX */
