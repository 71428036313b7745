/*
 * ckb_kit_simd.h — the SIMD primitives every expert and kit header shares:
 * bf16 rounding and widening, lane masks, pair loads, exp, exp2, tanh and
 * gelu, horizontal reductions, the AMX tile configuration. Each is
 * compiled where the target has its instructions: the 8-lane (ymm) forms
 * on AVX2 + FMA, the 16-lane (zmm) forms on AVX-512 F/BW/VL, the tile
 * configuration where AMX is targeted. Names end in the lane count.
 *
 * Errors, measured by tests/test_kit_simd.c against libm in double on a
 * grid of 2^17 points (the bound it holds each to in brackets):
 *   ckb_kit_exp8/16    x in [-87, 88]: 0.90 ulp [1 ulp]; exp8 clamps x to
 *                      that range (never inf, never denormal), exp16 gives
 *                      inf / 0 past it
 *   ckb_kit_exp2_8/16  x in [-126, 0]: 2.2e-7 relative [2.5e-7]
 *   ckb_kit_tanh8/16   x in [-12, 12]: 3.0e-6 relative, absolute below
 *                      |x| = 0.01 (1 - 2/(e+1) cancels near 0) [3e-6]
 *   ckb_kit_gelu8/16   x in [-12, 12]: 1.0e-5 relative [1.5e-5], the f32
 *                      rounding of the exponent u ~ 80 near x = -9; none
 *                      of these is visible in a bf16 result (4e-3)
 */
#pragma once

#include <stdint.h>
#include <string.h>

#include <immintrin.h>

#include "ckbench.h"

/* Two consecutive bf16 as one 32-bit pair (any alignment): the operand
 * vdpbf16ps and tdpbf16ps read. */
static inline uint32_t ckb_kit_pair(const ckb_bf16 *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* ---- the math of both widths ----------------------------------------------
 * One definition each, stamped into the 8- and 16-lane forms: P is the
 * width's intrinsic prefix (_mm256_, _mm512_), ROUND its round to nearest,
 * V its vector type. Macros, not functions, so that each width compiles to
 * its own instructions exactly as if written out. */

/* exp's core: x = n ln2 + r, n = round(x / ln2), with ln2 in two parts so
 * that r is exact enough, |r| <= ln2/2; p = exp(r) by its Taylor series to
 * r^7 (truncation < 2e-8 relative). The caller clamps x first and scales p
 * by 2^n its own way. */
#define CKB_KIT__EXP_CORE(P, ROUND, x, n, r, p)                                                    \
    n = ROUND(P##mul_ps(x, P##set1_ps(1.44269504088896341f)),                                      \
              _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);                                      \
    r = P##fnmadd_ps(n, P##set1_ps(0.693145751953125f), x);                                        \
    r = P##fnmadd_ps(n, P##set1_ps(1.428606765330187045e-06f), r);                                 \
    p = P##set1_ps(1.0f / 5040.0f);                                                                \
    p = P##fmadd_ps(p, r, P##set1_ps(1.0f / 720.0f));                                              \
    p = P##fmadd_ps(p, r, P##set1_ps(1.0f / 120.0f));                                              \
    p = P##fmadd_ps(p, r, P##set1_ps(1.0f / 24.0f));                                               \
    p = P##fmadd_ps(p, r, P##set1_ps(1.0f / 6.0f));                                                \
    p = P##fmadd_ps(p, r, P##set1_ps(0.5f));                                                       \
    p = P##fmadd_ps(p, r, P##set1_ps(1.0f));                                                       \
    p = P##fmadd_ps(p, r, P##set1_ps(1.0f))

/* exp2's core: n = round(x), p = 2^f, f = x - n in [-1/2, 1/2], by a
 * degree-5 interpolant at Chebyshev nodes; the caller scales p by 2^n. */
#define CKB_KIT__EXP2_CORE(P, ROUND, x, n, f, p)                                                   \
    n = ROUND(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);                                   \
    f = P##sub_ps(x, n);                                                                           \
    p = P##set1_ps(1.339086331e-03f);                                                              \
    p = P##fmadd_ps(p, f, P##set1_ps(9.676031768e-03f));                                          \
    p = P##fmadd_ps(p, f, P##set1_ps(5.550356954e-02f));                                          \
    p = P##fmadd_ps(p, f, P##set1_ps(2.402210683e-01f));                                          \
    p = P##fmadd_ps(p, f, P##set1_ps(6.931471825e-01f));                                          \
    p = P##fmadd_ps(p, f, P##set1_ps(1.000000119e+00f))

/* ckb_kit_tanhL and ckb_kit_geluL (L the lanes) on that width's exp:
 *   tanh(u) = (e2 - 1) / (e2 + 1), e2 = exp(2u), u capped at 10 where tanh
 *   is 1 in f32;
 *   gelu, tanh form: v / (1 + exp(-2 sqrt(2/pi) (v + 0.044715 v^3))), as
 *   src/workloads/ops.h. */
#define CKB_KIT__TANH_GELU(L, V, P)                                                                \
    static inline V ckb_kit_tanh##L(V u)                                                           \
    {                                                                                              \
        const V one = P##set1_ps(1.0f), two = P##set1_ps(2.0f);                                    \
        const V e2 = ckb_kit_exp##L(P##mul_ps(two, P##min_ps(u, P##set1_ps(10.0f))));             \
        return P##div_ps(P##sub_ps(e2, one), P##add_ps(e2, one));                                  \
    }                                                                                              \
    static inline V ckb_kit_gelu##L(V v)                                                           \
    {                                                                                              \
        const V v3 = P##mul_ps(P##mul_ps(v, v), v);                                                \
        const V u = P##fmadd_ps(P##set1_ps(0.044715f), v3, v);                                     \
        const V e = ckb_kit_exp##L(P##mul_ps(P##set1_ps(-1.5957691216057308f), u));               \
        return P##div_ps(v, P##add_ps(P##set1_ps(1.0f), e));                                       \
    }

/* Every accumulator (r, v) of a micro-kernel's rows x nv tile, both loops
 * unrolled whole (rows <= 16 and nv <= 4, constants), so that the tile
 * stays in registers. */
#define CKB_KIT_EACH_ACC(r, rows, v, nv)                                                           \
    _Pragma("GCC unroll 16") for (int r = 0; r < (rows); r++)                                      \
        _Pragma("GCC unroll 4") for (int v = 0; v < (nv); v++)

/* ---- AVX2 + FMA: 8 lanes ------------------------------------------------- */

#if defined(__AVX2__) && defined(__FMA__)

/* 8 f32 to 8 bf16, rounded to nearest even; NaN stays (quiet) NaN. The
 * same arithmetic as ckb_f32_to_bf16, lane by lane. */
static inline __m128i ckb_kit_bf16x8(__m256 x)
{
    const __m256i u = _mm256_castps_si256(x);
    __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    __m256i r = _mm256_add_epi32(u, _mm256_add_epi32(odd, _mm256_set1_epi32(0x7fff)));
    r = _mm256_srli_epi32(r, 16);
    __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)),
                                     _mm256_set1_epi32(0x7f800000));
    __m256i q = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
    r = _mm256_blendv_epi8(r, q, nan);
    /* packus works within 128-bit lanes: qwords 0 and 2 hold lanes 0-3, 4-7 */
    __m256i p = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
    return _mm256_castsi256_si128(p);
}

/* x rounded to the nearest bf16 (ties to even) and kept as an f32 bit
 * pattern (the bf16 in the top half); x finite. */
static inline __m256i ckb_kit_bf16x8_top(__m256 x)
{
    __m256i u = _mm256_castps_si256(x);
    __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    u = _mm256_add_epi32(u, _mm256_add_epi32(odd, _mm256_set1_epi32(0x7fff)));
    return _mm256_and_si256(u, _mm256_set1_epi32((int)0xffff0000u));
}

/* 8 bf16 to 8 f32 (exact: a bf16 is an f32's top half). */
static inline __m256 ckb_kit_f32x8(__m128i h)
{
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

/* 8 bf16 at p widened to f32. */
static inline __m256 ckb_kit_load8(const ckb_bf16 *p)
{
    return ckb_kit_f32x8(_mm_loadu_si128((const __m128i *)p));
}

/* 8 bf16 from p widened to f32, lanes at or past `left` zero (not read). */
static inline __m256 ckb_kit_load8_n(const ckb_bf16 *p, int64_t left)
{
    if (left >= 8)
        return ckb_kit_load8(p);
    float f[8] = {0};
    for (int64_t x = 0; x < left; x++)
        f[x] = ckb_bf16_to_f32(p[x]);
    return _mm256_loadu_ps(f);
}

/* v rounded to bf16 into p[0:min(left, 8)]. */
static inline void ckb_kit_store8_n(ckb_bf16 *p, __m256 v, int64_t left)
{
    if (left >= 8) {
        _mm_storeu_si128((__m128i *)p, ckb_kit_bf16x8(v));
        return;
    }
    ckb_bf16 h[8];
    _mm_storeu_si128((__m128i *)h, ckb_kit_bf16x8(v));
    memcpy(p, h, (size_t)(left > 0 ? left : 0) * sizeof *p);
}

/* dst[0:npad) = src[0:n) widened, zero past n (a zero row: src NULL); dst
 * 32-byte aligned (the experts' scratch rows are). */
static inline void ckb_kit_widen8(const ckb_bf16 *src, int64_t n, int64_t npad, float *dst)
{
    int64_t d = 0;
    if (src)
        for (; d + 8 <= n; d += 8)
            _mm256_store_ps(dst + d, ckb_kit_load8(src + d));
    for (; d < npad; d++)
        dst[d] = src && d < n ? ckb_bf16_to_f32(src[d]) : 0.0f;
}

/* exp(x): x is clamped to [-87, 88] first, so the result is never inf and
 * never denormal: exp(-100) gives ~1e-38 where expf gives 4e-44, which no
 * softmax, sigmoid or swish in bf16 can tell apart; 2^n is built in the
 * exponent field. */
static inline __m256 ckb_kit_exp8(__m256 x)
{
    __m256 n, r, p;
    x = _mm256_max_ps(_mm256_min_ps(x, _mm256_set1_ps(88.0f)), _mm256_set1_ps(-87.0f));
    CKB_KIT__EXP_CORE(_mm256_, _mm256_round_ps, x, n, r, p);
    const __m256i e =
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

/* 2^x for x <= 0: x is clamped at -126 so that 2^round(x) stays a normal
 * number (the result is then at most 2^-126 where it should underflow to
 * 0). The online softmax's exp, in the base-2 domain. */
static inline __m256 ckb_kit_exp2_8(__m256 x)
{
    __m256 n, f, p;
    x = _mm256_max_ps(x, _mm256_set1_ps(-126.0f));
    CKB_KIT__EXP2_CORE(_mm256_, _mm256_round_ps, x, n, f, p);
    __m256i e =
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

CKB_KIT__TANH_GELU(8, __m256, _mm256_) /* ckb_kit_tanh8, ckb_kit_gelu8 */

/* Horizontal sum and max of 8 lanes. */
static inline float ckb_kit_hsum8(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

static inline float ckb_kit_hmax8(__m256 v)
{
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

#endif /* AVX2 + FMA */

/* ---- AVX-512 F/BW/VL: 16 lanes ------------------------------------------- */

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)

/* Lanes [0, left) of a 16-lane vector. */
static inline __mmask16 ckb_kit_mask16(int64_t left)
{
    return left >= 16 ? (__mmask16)0xffff : left <= 0 ? 0 : (__mmask16)((1u << left) - 1);
}

/* 16 bf16 (lanes past `left` zero, not read) widened to f32. */
static inline __m512 ckb_kit_load16_n(const ckb_bf16 *p, int64_t left)
{
    __m512i w = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(ckb_kit_mask16(left), p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
}

/* The rounding to bf16 in integer lanes: each lane's bf16 in its top half,
 * the low half zero (so the lane is that bf16 as an f32). A NaN stays a
 * NaN, made quiet, with its sign, as ckb_f32_to_bf16 and vcvtneps2bf16 keep
 * it; the instruction also flushes denormal inputs to zero, the integer
 * lanes round them. */
static inline __m512i ckb_kit__bf16_top(__m512 x)
{
    const __m512i u = _mm512_castps_si512(x), top = _mm512_set1_epi32((int)0xffff0000u);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    const __m512i r = _mm512_and_si512(
        _mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))), top);
    const __m512i nan = _mm512_and_si512(_mm512_or_si512(u, _mm512_set1_epi32(0x400000)), top);
    return _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), nan);
}

/* The integer form, compiled on every AVX-512 target (tests/kit_bf16.c
 * checks it where the instruction would be used instead). */
static inline __m256i ckb_kit_bf16x16_int(__m512 x)
{
    return _mm512_cvtepi32_epi16(_mm512_srli_epi32(ckb_kit__bf16_top(x), 16));
}

/* 16 f32 lanes rounded to bf16 (to nearest even): vcvtneps2bf16 where the
 * target has AVX-512 BF16, else the same rounding in integer lanes, so
 * that a path written for AVX-512 runs on a CPU that lacks or hides the
 * extension (some Intel Xeons) rather than falling to AVX2. */
static inline __m256i ckb_kit_bf16x16(__m512 x)
{
#ifdef __AVX512BF16__
    return (__m256i)_mm512_cvtneps_pbh(x);
#else
    return ckb_kit_bf16x16_int(x);
#endif
}

/* x rounded to bf16 and kept as f32 (the bf16 is the f32's top half): the
 * probabilities of an f32 FMA P v, rounded as the baselines' bf16 P is. */
static inline __m512 ckb_kit_bf16x16_f32(__m512 x)
{
#ifdef __AVX512BF16__
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(ckb_kit_bf16x16(x)), 16));
#else
    return _mm512_castsi512_ps(ckb_kit__bf16_top(x));
#endif
}

/* np vectors of 16 bf16 pairs (a packed K's d pairs) widened to 2 np
 * vectors of f32: kf[2p] the pairs' low halves, kf[2p + 1] their high
 * halves (exact: a bf16 is an f32's top half). */
static inline void ckb_kit_pairs_f32(const uint32_t *pairs, int64_t np, float *kf)
{
    const __m512i top = _mm512_set1_epi32((int)0xffff0000u);
    for (int64_t p = 0; p < np; p++) {
        const __m512i x = _mm512_load_si512(pairs + p * 16);
        _mm512_store_si512(kf + 2 * p * 16, _mm512_slli_epi32(x, 16));
        _mm512_store_si512(kf + (2 * p + 1) * 16, _mm512_and_si512(x, top));
    }
}

/* Transposes 16 rows of 16 dwords: r[jj][p] -> out[p * 16 + jj] (out 64-byte
 * aligned). With 16 keys' rows of bf16 pairs, the q k^T packing of K: pair p
 * of every key in one vector. */
static inline __attribute__((always_inline)) void ckb_kit_transpose16(__m512i *r, uint32_t *out)
{
    __m512i t[16], u[16];
    for (int a = 0; a < 16; a += 2) {
        t[a] = _mm512_unpacklo_epi32(r[a], r[a + 1]);
        t[a + 1] = _mm512_unpackhi_epi32(r[a], r[a + 1]);
    }
    /* per group of 4 rows: u[4b + c] holds columns c, c+4, c+8, c+12 */
    for (int b = 0; b < 16; b += 4) {
        u[b + 0] = _mm512_unpacklo_epi64(t[b], t[b + 2]);
        u[b + 1] = _mm512_unpackhi_epi64(t[b], t[b + 2]);
        u[b + 2] = _mm512_unpacklo_epi64(t[b + 1], t[b + 3]);
        u[b + 3] = _mm512_unpackhi_epi64(t[b + 1], t[b + 3]);
    }
    for (int c = 0; c < 4; c++) {
        __m512i v0 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0x88);
        __m512i v1 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0xDD);
        __m512i w0 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0x88);
        __m512i w1 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0xDD);
        _mm512_store_si512(out + (c + 0) * 16, _mm512_shuffle_i32x4(v0, w0, 0x88));
        _mm512_store_si512(out + (c + 8) * 16, _mm512_shuffle_i32x4(v0, w0, 0xDD));
        _mm512_store_si512(out + (c + 4) * 16, _mm512_shuffle_i32x4(v1, w1, 0x88));
        _mm512_store_si512(out + (c + 12) * 16, _mm512_shuffle_i32x4(v1, w1, 0xDD));
    }
}

/* exp(x): scalef gives 2^n with correct overflow to inf and underflow to
 * 0, so the clamp only keeps n finite. */
static inline __m512 ckb_kit_exp16(__m512 x)
{
    __m512 n, r, p;
    x = _mm512_max_ps(_mm512_min_ps(x, _mm512_set1_ps(100.0f)), _mm512_set1_ps(-110.0f));
    CKB_KIT__EXP_CORE(_mm512_, _mm512_roundscale_ps, x, n, r, p);
    return _mm512_scalef_ps(p, n);
}

/* 2^x for finite x <= 0: scalef underflows to 0 however negative round(x)
 * is. */
static inline __m512 ckb_kit_exp2_16(__m512 x)
{
    __m512 n, f, p;
    CKB_KIT__EXP2_CORE(_mm512_, _mm512_roundscale_ps, x, n, f, p);
    return _mm512_scalef_ps(p, n);
}

CKB_KIT__TANH_GELU(16, __m512, _mm512_) /* ckb_kit_tanh16, ckb_kit_gelu16 */

#ifdef __AVX512BF16__
/* One k pair of a vdpbf16ps register tile (the resident GEMM driver's
 * micro-kernel, 33k's convolution): acc[r][v] += W . b[v] pairwise for
 * rows r < rows and vectors v < nv, W an expression of r (the loop
 * variable the caller names) giving row r's bf16 pair as a dword
 * (ckb_kit_pair), broadcast to every lane; b[v] the 16 pairs the caller
 * loaded. Both counts constants, so the tile stays in registers. The
 * broadcast is the first source: the pair products are exact in f32, so
 * the order changes no result. A macro: as an always_inline function
 * (acc, b and the pairs passed by pointer) it moved the registers and loop
 * counters of the driver and of 33k. */
#define CKB_KIT_DPBF16_TILE(acc, b, rows, nv, r, W)                                                \
    _Pragma("GCC unroll 16") for (int r = 0; r < (rows); r++)                                      \
    {                                                                                              \
        const __m512i x_ = _mm512_set1_epi32((int)(W));                                           \
        _Pragma("GCC unroll 4") for (int v_ = 0; v_ < (nv); v_++)                                  \
            (acc)[r][v_] = _mm512_dpbf16_ps((acc)[r][v_], (__m512bh)x_, (__m512bh)(b)[v_]);        \
    }
#endif

#endif /* AVX-512 */

/* ---- AMX: the tile configuration ----------------------------------------- */

#if defined(__AMX_BF16__) && defined(__AMX_TILE__)

/* The tile shapes every AMX path of the kit uses: 0-3 the 2 x 2 f32
 * accumulators (16 x 16), 4-5 A (16 rows x kch bf16), 6-7 B (kch / 2 pairs
 * x 16 columns); kch 32 fills every tile's 16 rows of 64 bytes. The
 * configuration is per thread: each thread loads it before its share and
 * releases it after. */
static inline void ckb_kit_amx_on_k(int kch)
{
    struct {
        uint8_t palette, start_row, reserved[14];
        uint16_t colsb[16];
        uint8_t rows[16];
    } cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < 8; t++)
        cfg.colsb[t] = 64, cfg.rows[t] = 16;
    cfg.colsb[4] = cfg.colsb[5] = (uint16_t)(kch * 2);
    cfg.rows[6] = cfg.rows[7] = (uint8_t)(kch / 2);
    _tile_loadconfig(&cfg);
}

static inline void ckb_kit_amx_on(void)
{
    ckb_kit_amx_on_k(32);
}

static inline void ckb_kit_amx_off(void)
{
    _tile_release();
}

#endif /* AMX */
