/*
 * ckb_kit_attn.h — the register tiles of attention, shared by the flash
 * (1p 2p 3p 4p) and paged (6p 7p) kits: 4 query rows a tile,
 *   q k^T: s[r][16v ..] = q[r] . K for nv key vectors, K packed as nv
 *          groups of [depth][lanes keys];
 *   P v:   o[r][16c ..] = alpha[r] o[r] + P[r] . V for dc output vectors,
 *          V rows (or, for the dot, key pairs) [key][d].
 * Each leaves its accumulators in acc for the caller's mask and running
 * max (the flash kit's diagonal blocks). nv and dc are constants at every
 * call (the callers switch over them), so the loops unroll into registers.
 * Units: f32 FMA on widened operands (8 lanes on AVX2, 16 on AVX-512) and
 * vdpbf16ps on bf16 pairs (AVX-512 BF16).
 */
#pragma once

#include <math.h>
#include <stdint.h>

#include <immintrin.h>

#include "ckb_kit_simd.h"

#define CKB_KIT_ATTN_R 4 /* query rows per register tile */

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)

/* q rows ldq floats apart, K groups ldk x 16 floats apart, depth d steps;
 * scores rows lds apart. */
static inline __attribute__((always_inline)) void
ckb_kit_attn_qk16_f(const float *q, int64_t ldq, const float *kf, int64_t ldk, int64_t depth,
                    float *s, int64_t lds, const int nv, __m512 acc[][4])
{
    for (int r = 0; r < CKB_KIT_ATTN_R; r++)
        for (int v = 0; v < nv; v++)
            acc[r][v] = _mm512_setzero_ps();
    for (int64_t d = 0; d < depth; d++) {
        __m512 b[4];
        for (int v = 0; v < nv; v++)
            b[v] = _mm512_load_ps(kf + (v * ldk + d) * 16);
        for (int r = 0; r < CKB_KIT_ATTN_R; r++) {
            __m512 a = _mm512_set1_ps(q[r * ldq + d]);
            for (int v = 0; v < nv; v++)
                acc[r][v] = _mm512_fmadd_ps(a, b[v], acc[r][v]);
        }
    }
    for (int r = 0; r < CKB_KIT_ATTN_R; r++)
        for (int v = 0; v < nv; v++)
            _mm512_store_ps(s + r * lds + 16 * v, acc[r][v]);
}

/* P rows ldp floats apart over nk keys, V rows ldv floats apart, o rows
 * ldo apart. */
static inline __attribute__((always_inline)) void
ckb_kit_attn_pv16_f(const float *p, int64_t ldp, const float *vf, int64_t ldv, float *o,
                    int64_t ldo, const float *alpha, int64_t nk, const int dc)
{
    __m512 acc[CKB_KIT_ATTN_R][4];
    for (int r = 0; r < CKB_KIT_ATTN_R; r++) {
        __m512 al = _mm512_set1_ps(alpha[r]);
        for (int c = 0; c < dc; c++)
            acc[r][c] = _mm512_mul_ps(al, _mm512_load_ps(o + r * ldo + 16 * c));
    }
    for (int64_t t = 0; t < nk; t++) {
        __m512 b[4];
        for (int c = 0; c < dc; c++)
            b[c] = _mm512_load_ps(vf + t * ldv + 16 * c);
        for (int r = 0; r < CKB_KIT_ATTN_R; r++) {
            __m512 a = _mm512_set1_ps(p[r * ldp + t]);
            for (int c = 0; c < dc; c++)
                acc[r][c] = _mm512_fmadd_ps(a, b[c], acc[r][c]);
        }
    }
    for (int r = 0; r < CKB_KIT_ATTN_R; r++)
        for (int c = 0; c < dc; c++)
            _mm512_store_ps(o + r * ldo + 16 * c, acc[r][c]);
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
    const __m512 c2 = _mm512_set1_ps(c2s);
    for (int r = 0; r < 16; r++) {
        int64_t qi = qi0 + r;
        int64_t kend = qi + 1 < nkeys ? qi + 1 : nkeys;
        int64_t c = kend - j0 < w16 ? kend - j0 : w16;
        const float *sr = s + r * lds;
        ckb_bf16 *pr = p + r * ldp;
        __m512 mx = _mm512_set1_ps(-INFINITY);
        for (int64_t k = 0; k < c; k += 16) {
            __mmask16 mk = c - k >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (c - k)) - 1);
            mx = _mm512_mask_max_ps(mx, mk, mx, _mm512_load_ps(sr + k));
        }
        float m_old = m[r];
        float m_new = _mm512_reduce_max_ps(mx) * c2s;
        if (m_new < m_old)
            m_new = m_old;
        alpha[r] = exp2f(m_old - m_new); /* 0 on the first block: m_old = -inf */
        __m512 mv = _mm512_set1_ps(m_new);
        __m512 sum = _mm512_setzero_ps();
        for (int64_t k = 0; k < w32; k += 16) {
            __m512 e = _mm512_setzero_ps();
            if (k < c) {
                e = ckb_kit_exp2_16(_mm512_fmsub_ps(_mm512_load_ps(sr + k), c2, mv));
                if (k + 16 > c)
                    e = _mm512_maskz_mov_ps((__mmask16)((1u << (c - k)) - 1), e);
                sum = _mm512_add_ps(sum, e);
            }
            _mm256_store_si256((__m256i *)(pr + k), (__m256i)_mm512_cvtneps_pbh(e));
        }
        m[r] = m_new;
        __m512 *lr = (__m512 *)(l + 16 * r);
        *lr = _mm512_fmadd_ps(*lr, _mm512_set1_ps(alpha[r]), sum);
    }
}

/* The dot: q rows ldq pairs apart, K groups ldk x 16 pairs apart, depth d
 * pairs. */
static inline __attribute__((always_inline)) void
ckb_kit_attn_qk16_bf(const uint32_t *q, int64_t ldq, const uint32_t *kp, int64_t ldk, int64_t depth,
                     float *s, int64_t lds, const int nv, __m512 acc[][4])
{
    for (int r = 0; r < CKB_KIT_ATTN_R; r++)
        for (int v = 0; v < nv; v++)
            acc[r][v] = _mm512_setzero_ps();
    for (int64_t p = 0; p < depth; p++) {
        __m512i b[4];
        for (int v = 0; v < nv; v++)
            b[v] = _mm512_load_si512(kp + (v * ldk + p) * 16);
        for (int r = 0; r < CKB_KIT_ATTN_R; r++) {
            __m512i a = _mm512_set1_epi32((int)q[r * ldq + p]);
            for (int v = 0; v < nv; v++)
                acc[r][v] = _mm512_dpbf16_ps(acc[r][v], (__m512bh)a, (__m512bh)b[v]);
        }
    }
    for (int r = 0; r < CKB_KIT_ATTN_R; r++)
        for (int v = 0; v < nv; v++)
            _mm512_store_ps(s + r * lds + 16 * v, acc[r][v]);
}

/* The dot: P rows ldp pairs apart over np key pairs, V as [key pair][d][2]
 * (a pair's rows 2 ldv bf16 apart), o rows ldo apart. */
static inline __attribute__((always_inline)) void
ckb_kit_attn_pv16_bf(const uint32_t *p, int64_t ldp, const ckb_bf16 *vp, int64_t ldv, float *o,
                     int64_t ldo, const float *alpha, int64_t np, const int dc)
{
    __m512 acc[CKB_KIT_ATTN_R][4];
    for (int r = 0; r < CKB_KIT_ATTN_R; r++) {
        __m512 al = _mm512_set1_ps(alpha[r]);
        for (int c = 0; c < dc; c++)
            acc[r][c] = _mm512_mul_ps(al, _mm512_load_ps(o + r * ldo + 16 * c));
    }
    for (int64_t t = 0; t < np; t++) {
        __m512i b[4];
        for (int c = 0; c < dc; c++)
            b[c] = _mm512_load_si512(vp + t * 2 * ldv + 32 * c);
        for (int r = 0; r < CKB_KIT_ATTN_R; r++) {
            __m512i a = _mm512_set1_epi32((int)p[r * ldp + t]);
            for (int c = 0; c < dc; c++)
                acc[r][c] = _mm512_dpbf16_ps(acc[r][c], (__m512bh)a, (__m512bh)b[c]);
        }
    }
    for (int r = 0; r < CKB_KIT_ATTN_R; r++)
        for (int c = 0; c < dc; c++)
            _mm512_store_ps(o + r * ldo + 16 * c, acc[r][c]);
}

#endif /* AVX-512 BF16 */

#elif defined(__AVX2__) && defined(__FMA__)

/* 8 lanes: q rows ldq floats apart, K groups ldk x 8 floats apart, depth
 * d steps; scores rows lds apart. */
static inline __attribute__((always_inline)) void
ckb_kit_attn_qk8(const float *q, int64_t ldq, const float *kf, int64_t ldk, int64_t depth, float *s,
                 int64_t lds, const int nv, __m256 acc[][3])
{
    for (int r = 0; r < CKB_KIT_ATTN_R; r++)
        for (int v = 0; v < nv; v++)
            acc[r][v] = _mm256_setzero_ps();
    for (int64_t d = 0; d < depth; d++) {
        __m256 b[3];
        for (int v = 0; v < nv; v++)
            b[v] = _mm256_load_ps(kf + (v * ldk + d) * 8);
        for (int r = 0; r < CKB_KIT_ATTN_R; r++) {
            __m256 a = _mm256_broadcast_ss(q + r * ldq + d);
            for (int v = 0; v < nv; v++)
                acc[r][v] = _mm256_fmadd_ps(a, b[v], acc[r][v]);
        }
    }
    for (int r = 0; r < CKB_KIT_ATTN_R; r++)
        for (int v = 0; v < nv; v++)
            _mm256_store_ps(s + r * lds + 8 * v, acc[r][v]);
}

/* 8 lanes: P rows ldp floats apart over nk keys, V rows ldv floats apart,
 * o rows ldo apart. */
static inline __attribute__((always_inline)) void
ckb_kit_attn_pv8(const float *p, int64_t ldp, const float *vf, int64_t ldv, float *o, int64_t ldo,
                 const float *alpha, int64_t nk, const int dc)
{
    __m256 acc[CKB_KIT_ATTN_R][3];
    for (int r = 0; r < CKB_KIT_ATTN_R; r++) {
        __m256 al = _mm256_set1_ps(alpha[r]);
        for (int c = 0; c < dc; c++)
            acc[r][c] = _mm256_mul_ps(al, _mm256_load_ps(o + r * ldo + 8 * c));
    }
    for (int64_t t = 0; t < nk; t++) {
        __m256 b[3];
        for (int c = 0; c < dc; c++)
            b[c] = _mm256_load_ps(vf + t * ldv + 8 * c);
        for (int r = 0; r < CKB_KIT_ATTN_R; r++) {
            __m256 a = _mm256_broadcast_ss(p + r * ldp + t);
            for (int c = 0; c < dc; c++)
                acc[r][c] = _mm256_fmadd_ps(a, b[c], acc[r][c]);
        }
    }
    for (int r = 0; r < CKB_KIT_ATTN_R; r++)
        for (int c = 0; c < dc; c++)
            _mm256_store_ps(o + r * ldo + 8 * c, acc[r][c]);
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
 * each; or zeroed. */
static inline __attribute__((always_inline)) void ckb_kit_amx_load4(const float *f, int64_t ld,
                                                                    int64_t n)
{
    _tile_loadd(0, f, ld * 4);
    if (n > 1)
        _tile_loadd(1, f + 16, ld * 4);
    if (n > 2)
        _tile_loadd(2, f + 32, ld * 4);
    if (n > 3)
        _tile_loadd(3, f + 48, ld * 4);
}

static inline __attribute__((always_inline)) void ckb_kit_amx_store4(float *f, int64_t ld,
                                                                     int64_t n)
{
    _tile_stored(0, f, ld * 4);
    if (n > 1)
        _tile_stored(1, f + 16, ld * 4);
    if (n > 2)
        _tile_stored(2, f + 32, ld * 4);
    if (n > 3)
        _tile_stored(3, f + 48, ld * 4);
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

#endif /* AMX */
