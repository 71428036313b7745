/*
 * ckb_kit_bf16.h — the bf16 helpers of the experts' AVX-512 paths.
 *
 * 16 f32 lanes rounded to bf16 (to nearest even): vcvtneps2bf16 where the
 * target has AVX-512 BF16, else the same rounding in integer lanes, so that
 * a path written for AVX-512 runs on a CPU that lacks or hides the extension
 * (some Intel Xeons) rather than falling to AVX2. A NaN stays a NaN, made
 * quiet, with its sign, as ckb_f32_to_bf16 and the instruction keep it; the
 * instruction also flushes denormal inputs to zero, the integer lanes round
 * them.
 */
#pragma once

#include <stdint.h>

#include <immintrin.h>

#if defined(__AVX512F__) && defined(__AVX512BW__)

/* The rounding in integer lanes: each lane's bf16 in its top half, the
 * low half zero (so the lane is that bf16 as an f32). */
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

#endif
