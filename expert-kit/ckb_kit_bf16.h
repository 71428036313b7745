/*
 * ckb_kit_bf16.h — 16 f32 lanes rounded to bf16 (to nearest even) for the
 * experts' AVX-512 paths: vcvtneps2bf16 where the target has AVX-512 BF16,
 * else the same rounding in integer lanes, so that a path written for
 * AVX-512 runs on a CPU that lacks or hides the extension (some Intel
 * Xeons) rather than falling to AVX2. A NaN stays a NaN, made quiet, with
 * its sign, as ckb_f32_to_bf16 and the instruction keep it; the instruction
 * also flushes denormal inputs to zero, the integer lanes round them.
 */
#pragma once

#include <immintrin.h>

#if defined(__AVX512F__) && defined(__AVX512BW__)

/* The integer form, compiled on every AVX-512 target (tests/kit_bf16.c
 * checks it where the instruction would be used instead). */
static inline __m256i ckb_kit_bf16x16_int(__m512 x)
{
    const __m512i u = _mm512_castps_si512(x);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_srli_epi32(
        _mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))), 16);
    r = _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q),
                              _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40)));
    return _mm512_cvtepi32_epi16(r);
}

static inline __m256i ckb_kit_bf16x16(__m512 x)
{
#ifdef __AVX512BF16__
    return (__m256i)_mm512_cvtneps_pbh(x);
#else
    return ckb_kit_bf16x16_int(x);
#endif
}

#endif
