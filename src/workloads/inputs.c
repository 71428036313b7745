#include "workloads/inputs.h"

#include <math.h>
#include <string.h>

/*
 * The normal sampler is Box-Muller on two 32-bit uniforms of one hash,
 * sqrt(-2 ln u1) cos(2 pi u2), written here in plain double arithmetic
 * instead of libm's log and cos: the fill loops vectorise (libm's scalar
 * calls made input generation most of an evaluation's time, 46 ns an
 * element), and the values are the same on every x86-64 host and at every
 * ISA level. This file is compiled with -ffp-contract=off (Makefile), so no
 * host's FMA changes a rounding, and -fno-math-errno, so sqrt is one
 * instruction. The affine steps (mean + std x, lo + (hi - lo) u) are one
 * fmaf, rounded once, as the compiler fused them on FMA hosts before, so
 * the inputs of a seed stayed what they were. log and cos here are within
 * a few double ulps of libm's, far below a float's ulp: the float a sample
 * rounds to is libm's but for the rare value within that distance of a
 * rounding boundary (tests/test_inputs.c bounds how many).
 */

/* x (below 2^52) as a double, exactly: 2^52 + x by its bits, minus 2^52.
 * Integer operations only, so it vectorises below AVX-512 too. */
static inline double inputs__exact(uint64_t x)
{
    uint64_t b = 0x4330000000000000ull | x;
    double d;
    memcpy(&d, &b, sizeof d);
    return d - 4503599627370496.0;
}

/* c[0] x^(n-1) + c[1] x^(n-2) + ... + c[n-1], by Horner's rule. */
static inline double inputs__horner(double x, const double *c, int n)
{
    double p = c[0];
    for (int i = 1; i < n; i++)
        p = p * x + c[i];
    return p;
}

/* ln u for u in (0, 1]: u = 2^e m with m in [sqrt(1/2), sqrt(2)), and
 * ln m = 2 atanh(s), s = (m - 1)/(m + 1), |s| <= 0.172, by its series to
 * s^23 (the next term is below 1e-18 of the sum). ln 2 in two parts, the
 * first with trailing zero bits so that e times it is exact. */
static inline double inputs__log(double u)
{
    uint64_t b;
    memcpy(&b, &u, sizeof b);
    const uint64_t frac = b & 0x000fffffffffffffull;
    const uint64_t big = frac >= 0x6a09e667f3bcdull; /* m >= sqrt(2): halve it */
    const uint64_t mb = frac | (0x3ff0000000000000ull - (big << 52));
    double m;
    memcpy(&m, &mb, sizeof m);
    const double e = inputs__exact((b >> 52) + big) - 1023.0;
    const double s = (m - 1.0) / (m + 1.0), s2 = s * s;
    static const double series[] = {1.0 / 23.0, 1.0 / 21.0, 1.0 / 19.0, 1.0 / 17.0,
                                    1.0 / 15.0, 1.0 / 13.0, 1.0 / 11.0, 1.0 / 9.0,
                                    1.0 / 7.0,  1.0 / 5.0,  1.0 / 3.0};
    const double p = inputs__horner(s2, series, (int)(sizeof series / sizeof *series));
    const double ln_m = 2.0 * s + 2.0 * s * s2 * p;
    return e * 6.93147180369123816490e-01 + (e * 1.90821492927058770002e-10 + ln_m);
}

/* cos x for x in [0, 2 pi], within an ulp or so. x = q pi/2 + y with q the
 * nearest quarter turn; y = (x - q P1) - q P1t, where P1 is pi/2 to 33
 * bits (so q P1 and the first difference are exact) and P1t the rest to
 * double precision: y keeps its relative accuracy even where it cancels
 * to almost nothing (cos x near a zero). For |y| <= pi/4 the Taylor
 * series of cos to y^16 and of sin to y^17 are within 1e-18. */
static inline double inputs__cos(double x)
{
    /* round to nearest by the 2^52 + 2^51 shift: q in its low bits */
    const double shifted = x * 0.63661977236758134308 + 6755399441055744.0;
    uint64_t qb;
    memcpy(&qb, &shifted, sizeof qb);
    const uint64_t q = qb & 7; /* 0 .. 4 */
    const double qd = shifted - 6755399441055744.0;
    const double y = (x - qd * 1.57079632673412561417e+00) - qd * 6.07710050650619224932e-11;
    const double y2 = y * y;
    static const double cos_series[] = {1.0 / 20922789888000.0, -1.0 / 87178291200.0,
                                        1.0 / 479001600.0,      -1.0 / 3628800.0,
                                        1.0 / 40320.0,          -1.0 / 720.0,
                                        1.0 / 24.0,             -0.5,
                                        1.0};
    static const double sin_series[] = {1.0 / 355687428096000.0, -1.0 / 1307674368000.0,
                                        1.0 / 6227020800.0,      -1.0 / 39916800.0,
                                        1.0 / 362880.0,          -1.0 / 5040.0,
                                        1.0 / 120.0,             -1.0 / 6.0};
    const double c = inputs__horner(y2, cos_series, 9);
    const double s = y + y * y2 * inputs__horner(y2, sin_series, 8);
    /* quarter turns 0..4: cos y, -sin y, -cos y, sin y, cos y; chosen and
     * negated by bits, no branch (so the loop vectorises on AVX2 too) */
    uint64_t sb, cb;
    memcpy(&sb, &s, sizeof sb);
    memcpy(&cb, &c, sizeof cb);
    const uint64_t odd = 0 - (q & 1);
    const uint64_t vb = ((sb & odd) | (cb & ~odd)) ^ (((q + 1) & 2) << 62);
    double v;
    memcpy(&v, &vb, sizeof v);
    return v;
}

/* Keeps the streams of (seed, stream) pairs apart: distinct keys per pair. */
static uint64_t inputs__key(uint64_t seed, uint64_t stream)
{
    return ckb_hash64(seed * 0x100000001b3ull + 0x632be59bd9b4e019ull, stream);
}

static inline float inputs__box_muller(uint64_t h)
{
    /* Two 32-bit uniforms; u1 in (0, 1] so its log is finite. */
    const double u1 = (inputs__exact(h >> 32) + 1.0) * (1.0 / 4294967296.0);
    const double u2 = inputs__exact(h & 0xffffffffu) * (1.0 / 4294967296.0);
    /* 2 pi u2 rounded as libm's caller rounds it: the cosine of the same
     * argument, so the zeros of the two fall on the same samples */
    return (float)(sqrt(-2.0 * inputs__log(u1)) * inputs__cos(6.283185307179586 * u2));
}

static inline float inputs__normal(uint64_t key, uint64_t index)
{
    return inputs__box_muller(ckb_hash64(key, index));
}

float ckb_box_muller(uint64_t h) { return inputs__box_muller(h); }

float ckb_box_muller_libm(uint64_t h)
{
    double u1 = ((double)(h >> 32) + 1.0) / 4294967296.0;
    double u2 = (double)(h & 0xffffffffu) / 4294967296.0;
    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

uint64_t ckb_input_hash(uint64_t seed, uint64_t stream, uint64_t index)
{
    return ckb_hash64(inputs__key(seed, stream), index);
}

float ckb_normal(uint64_t seed, uint64_t stream, uint64_t index)
{
    return inputs__normal(inputs__key(seed, stream), index);
}

static inline float inputs__uniform(uint64_t key, uint64_t index, float lo, float hi)
{
    /* the top 53 bits as a double (53 bits: exact as two halves), over 2^53 */
    const uint64_t top = ckb_hash64(key, index) >> 11;
    const double u = (inputs__exact(top >> 1) * 2.0 + inputs__exact(top & 1)) *
                     (1.0 / 9007199254740992.0);
    return fmaf(hi - lo, (float)u, lo);
}

void ckb_fill_normal_bf16(ckb_bf16 *x, int64_t n, uint64_t seed, uint64_t stream, float mean,
                          float std)
{
    const uint64_t key = inputs__key(seed, stream);
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < n; i++)
        x[i] = ckb_f32_to_bf16(fmaf(std, inputs__normal(key, (uint64_t)i), mean));
}

void ckb_normal_row_bf16(ckb_bf16 *x, int64_t n, uint64_t seed, uint64_t stream, uint64_t first,
                         float scale)
{
    const uint64_t key = inputs__key(seed, stream);
#pragma omp simd
    for (int64_t i = 0; i < n; i++)
        x[i] = ckb_f32_to_bf16(scale * inputs__normal(key, first + (uint64_t)i));
}

void ckb_fill_uniform_bf16(ckb_bf16 *x, int64_t n, uint64_t seed, uint64_t stream, float lo,
                           float hi)
{
    const uint64_t key = inputs__key(seed, stream);
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < n; i++)
        x[i] = ckb_f32_to_bf16(inputs__uniform(key, (uint64_t)i, lo, hi));
}

void ckb_fill_normal_f32(float *x, int64_t n, uint64_t seed, uint64_t stream, float mean,
                         float std)
{
    const uint64_t key = inputs__key(seed, stream);
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < n; i++)
        x[i] = fmaf(std, inputs__normal(key, (uint64_t)i), mean);
}

void ckb_fill_uniform_f32(float *x, int64_t n, uint64_t seed, uint64_t stream, float lo,
                          float hi)
{
    const uint64_t key = inputs__key(seed, stream);
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < n; i++)
        x[i] = inputs__uniform(key, (uint64_t)i, lo, hi);
}

float ckb_seed_factor(uint64_t seed, uint64_t stream, float lo, float hi)
{
    return inputs__uniform(inputs__key(seed, stream ^ 0xfac7011ull), 0, lo, hi);
}
