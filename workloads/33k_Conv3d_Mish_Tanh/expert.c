/*
 * expert.c — hand-tuned direct 3-D convolution with bias + mish + tanh
 * fused for 33k_Conv3d_Mish_Tanh:
 *     out = tanh(mish(conv3d(x, weight) + bias))
 * NCDHW, VALID padding, stride 1; x [N, IC, D, H, W], weight [OC, IC, KD,
 * KH, KW]. bf16 in, f32 accumulation and epilogue, bf16 out.
 *
 * A candidate file (DESIGN §3): N, IC, OC, D, H, W, KD, KH, KW, OD, OH, OW
 * come from the force-included header (they are macros: no local may be
 * named after them); the tunables below are macros that `ckbench tune`
 * overrides with -D.
 *
 * Design: x is rewritten once per call into channel pairs: xp[n][d][p][h*W
 * + w] holds channels 2p and 2p+1 of one voxel as the two halves of a
 * 32-bit word, the pair layout vdpbf16ps (and AMX's tdpbf16ps) multiply.
 * With (h, w) flattened, the input of 16 consecutive output positions s =
 * oh*W + ow under one tap (kd, kh, kw) is 16 consecutive words at s + kh*W
 * + kw: every operand is a plain vector load, no im2col is built. Outputs
 * are computed over the full width W (the W - OW columns past the edge are
 * computed and dropped: 3% at default).
 * - The micro-kernel (AVX-512 BF16): R output channels x PV vectors of 16
 *   positions of f32 accumulators in zmm registers over all IC x KD x KH x
 *   KW; per tap and channel pair, PV loads of x and R broadcasts of the
 *   weight pair feed R * PV vdpbf16ps (the kit's CKB_KIT_DPBF16_TILE, the
 *   step of its GEMM driver too).
 * - The epilogue on the registers: bias, mish (x * tanh(softplus(x)) as
 *   x * t / (t + 2), t = e(e + 2), e = exp(x)) and tanh, one rounding to
 *   bf16, stored straight into out's NCDHW rows (masked where a vector
 *   crosses the OW edge): the conv's f32 output never reaches memory.
 * - Threads split the (sample, output depth) planes.
 * - MMA (expert-kit/ckb_kit_unit.h) picks the unit: 0 the vdpbf16ps
 *   micro-kernel above; 2 AMX: a 2 x 2 grid of 16 x 16 f32 tiles (32
 *   channels x 32 positions), weights as the A tiles, 16 x-pair rows of 16
 *   positions as the B tiles loaded straight from xp, tiles stored to a
 *   small buffer for the same epilogue (AMX needs the process's permission
 *   to use tile data, arch_prctl; the harness's oneDNN baseline obtains
 *   it); 1 f32 FMA: the same kernel in f32 (x widened into f32 planes
 *   per thread, FMA tiles of 16 positions in zmm on AVX-512, 8 in ymm on
 *   AVX2; see that section), which is also where MMA 0 or 2 lands on a
 *   target without AVX-512 BF16. Where FMA outruns the dot (an Intel Xeon
 *   without AMX) bench passes MMA=1.
 * - A portable OpenMP path where neither fits (no AVX2, or dims the
 *   kernels do not cover: odd IC, OC not a multiple of R).
 * exp is a vector one within ~1 ulp of expf. No state is kept between
 * calls; buffers live for one call.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <immintrin.h>
#include <omp.h>

#include "ckbench.h"
#include "ckb_kit_alloc.h"
#include "ckb_kit_simd.h"
#include "ckb_kit_unit.h"

/* ---- tunables (untuned defaults) --------------------------------------- */

#ifndef R /* output channels per micro-tile (divides OC) */
#define R 8
#endif
#ifndef PV /* vectors of output positions per micro-tile: 16 positions a zmm, 8 a ymm (AVX2) */
#define PV 3 /* 8 x 3 in 32 zmm, 4 x 3 sub-tiles in 16 ymm: the model's pair (bench) */
#endif

#if R < 1 || PV < 1 || R * PV + PV > 31
#error "R x PV accumulators must fit the 32 zmm registers: R * PV + PV <= 31"
#endif

#define CMT_ICP (IC / 2)                          /* channel pairs */
#define CMT_HW (H * W)                            /* one flattened input plane */
#define CMT_PLANE ((CMT_HW + 128 + 15) / 16 * 16) /* words per pair plane, padded */
#define CMT_SPAN (OH * W)                         /* output positions per (n, od) */
#define CMT_TAPS (KD * KH * KW)

/* ---- the epilogue, in 16 lanes (the dot, AMX and zmm FMA paths) or 8 -- */

/* cmt__mish_tanhL, tanh(mish(v)) in L lanes (V the vector type, P the
 * intrinsics' prefix): mish = v * tanh(log(1 + e)) = v * t / (t + 2) with
 * e = exp(v), t = e (e + 2) (past v = 20, tanh(softplus) is 1 in f32 and t
 * would overflow); then the kit's tanh. One definition for both widths. */
#define CMT_MISH_TANH(L, V, P)                                                                     \
    static inline V cmt__mish_tanh##L(V v)                                                         \
    {                                                                                              \
        const V two = P##set1_ps(2.0f);                                                            \
        const V e = ckb_kit_exp##L(P##min_ps(v, P##set1_ps(20.0f)));                               \
        const V t = P##mul_ps(e, P##add_ps(e, two));                                               \
        const V u = P##div_ps(P##mul_ps(v, t), P##add_ps(t, two));                                 \
        return ckb_kit_tanh##L(u);                                                                 \
    }

/* Results v[0:lanes] (bf16) for positions s.. of output plane (n, oc, od),
 * one at a time: drops columns ow >= OW and rows oh >= OH. A macro: as an
 * inline function it moved the spill slots of the ymm tile's loops. */
#define CMT_SCATTER(plane, s, v, lanes)                                                            \
    for (int l = 0; l < (lanes); l++) {                                                            \
        const int64_t oh = ((s) + l) / W, ow = ((s) + l) % W;                                      \
        if (oh < OH && ow < OW)                                                                    \
            (plane)[oh * OW + ow] = (v)[l];                                                        \
    }

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)

CMT_MISH_TANH(16, __m512, _mm512_) /* cmt__mish_tanh16 */

/* Stores 16 results for positions s..s+15 of output plane (n, oc, od):
 * drops columns ow >= OW and rows oh >= OH. */
static inline void cmt__store16(ckb_bf16 *plane, int64_t s, __m512 y)
{
    const __m256i h = ckb_kit_bf16x16(y);
#if W % 16 == 0 /* a vector lies in one row */
    const int64_t oh = s / W, ow = s % W;
    if (oh < OH) {
        const int64_t left = OW - ow;
        const __mmask16 m =
            left >= 16 ? (__mmask16)0xffff : left <= 0 ? 0 : (__mmask16)((1u << left) - 1);
        _mm256_mask_storeu_epi16((void *)(plane + oh * OW + ow), m, h);
    }
#else
    ckb_bf16 v[16];
    _mm256_storeu_si256((__m256i *)v, h);
    CMT_SCATTER(plane, s, v, 16);
#endif
}

#endif

#if MMA != 1 && defined(__AVX512BF16__) && defined(__AVX512BW__) && defined(__AVX512VL__) &&              \
    IC % 2 == 0 && OC % R == 0 && 16 * PV + KW <= 128 && 32 + KW <= 128

/* Rewrites x into xp[n][d][p][CMT_PLANE] channel pairs (pad words zero)
 * for planes [z0, z1) of the N * D * CMT_ICP ones. */
static void cmt__pair_input(const ckb_bf16 *x, uint32_t *xp, int64_t z0, int64_t z1)
{
    for (int64_t z = z0; z < z1; z++) {
        const int64_t p = z % CMT_ICP, nd = z / CMT_ICP, d = nd % D, s = nd / D;
        const ckb_bf16 *lo = x + ((s * IC + 2 * p) * D + d) * CMT_HW, *hi = lo + D * CMT_HW;
        uint32_t *dst = xp + z * CMT_PLANE;
        int64_t j = 0;
        for (; j + 16 <= CMT_HW; j += 16) {
            __m512i a = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(lo + j)));
            __m512i b = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(hi + j)));
            _mm512_storeu_si512((void *)(dst + j), _mm512_or_si512(a, _mm512_slli_epi32(b, 16)));
        }
        for (; j < CMT_HW; j++)
            dst[j] = (uint32_t)lo[j] | (uint32_t)hi[j] << 16;
        for (; j < CMT_PLANE; j++)
            dst[j] = 0;
    }
}

#if MMA == 2 && CKB_KIT_AMX && OC % 32 == 0 &&                  \
    (IC % 32 == 0 || IC < 32)

#define CMT_KCH (IC % 32 == 0 ? 32 : IC) /* channels per tile step */

typedef ckb_bf16 cmt_weight;
#define CMT_WEIGHTS (CMT_TAPS * IC * OC)

/* wa[tap][icc][oc][CMT_KCH] bf16: a weight tile is 16 rows of oc. */
static void cmt__pack_weight(const ckb_bf16 *weight, ckb_bf16 *wa)
{
    for (int64_t t = 0; t < CMT_TAPS; t++)
        for (int64_t c = 0; c < IC / CMT_KCH; c++)
            for (int64_t o = 0; o < OC; o++)
                for (int64_t k = 0; k < CMT_KCH; k++)
                    wa[((t * (IC / CMT_KCH) + c) * OC + o) * CMT_KCH + k] =
                        weight[(o * IC + c * CMT_KCH + k) * CMT_TAPS + t];
}

/* The tiles each thread configures: 4-5 weights, 6-7 inputs. */
static void cmt__unit_on(void)
{
    ckb_kit_amx_on_k(CMT_KCH);
}

static void cmt__unit_off(void)
{
    ckb_kit_amx_off();
}

/* One (n, od) plane of every output channel. */
static void cmt__plane(const uint32_t *xp, const ckb_bf16 *wa, const ckb_bf16 *bias,
                       ckb_bf16 *out, int64_t s, int64_t od)
{
    float st[32 * 32] __attribute__((aligned(64)));
    for (int64_t s0 = 0; s0 < CMT_SPAN; s0 += 32)
        for (int64_t o0 = 0; o0 < OC; o0 += 32) {
            _tile_zero(0);
            _tile_zero(1);
            _tile_zero(2);
            _tile_zero(3);
            for (int64_t kd = 0; kd < KD; kd++)
                for (int64_t kh = 0; kh < KH; kh++)
                    for (int64_t kw = 0; kw < KW; kw++) {
                        const int64_t t = (kd * KH + kh) * KW + kw;
                        const uint32_t *xb =
                            xp + (s * D + od + kd) * CMT_ICP * CMT_PLANE + kh * W + kw + s0;
                        for (int64_t c = 0; c < IC / CMT_KCH; c++) {
                            const ckb_bf16 *a =
                                wa + ((t * (IC / CMT_KCH) + c) * OC + o0) * CMT_KCH;
                            const uint32_t *b = xb + c * (CMT_KCH / 2) * CMT_PLANE;
                            _tile_loadd(4, a, CMT_KCH * 2);
                            _tile_loadd(6, b, CMT_PLANE * 4);
                            _tile_loadd(7, b + 16, CMT_PLANE * 4);
                            _tile_dpbf16ps(0, 4, 6);
                            _tile_dpbf16ps(1, 4, 7);
                            _tile_loadd(5, a + 16 * CMT_KCH, CMT_KCH * 2);
                            _tile_dpbf16ps(2, 5, 6);
                            _tile_dpbf16ps(3, 5, 7);
                        }
                    }
            _tile_stored(0, st, 128);
            _tile_stored(1, st + 16, 128);
            _tile_stored(2, st + 16 * 32, 128);
            _tile_stored(3, st + 16 * 32 + 16, 128);
            for (int64_t r = 0; r < 32; r++) {
                const int64_t o = o0 + r;
                ckb_bf16 *plane = out + ((s * OC + o) * OD + od) * OH * OW;
                const __m512 bv = _mm512_set1_ps(ckb_bf16_to_f32(bias[o]));
                for (int v = 0; v < 2; v++)
                    if (s0 + 16 * v < CMT_SPAN)
                        cmt__store16(plane, s0 + 16 * v,
                                     cmt__mish_tanh16(_mm512_add_ps(
                                         _mm512_loadu_ps(st + r * 32 + 16 * v), bv)));
            }
        }
}

#else /* AVX-512 BF16 micro-kernel */

typedef uint32_t cmt_weight;
#define CMT_WEIGHTS (CMT_TAPS * CMT_ICP * OC)

static void cmt__unit_on(void) {}
static void cmt__unit_off(void) {}

/* wb[tap][p][oc]: the weight pair (channels 2p, 2p+1) of each output
 * channel, one word, broadcast by the micro-kernel. */
static void cmt__pack_weight(const ckb_bf16 *weight, uint32_t *wb)
{
    for (int64_t t = 0; t < CMT_TAPS; t++)
        for (int64_t p = 0; p < CMT_ICP; p++)
            for (int64_t o = 0; o < OC; o++)
                wb[(t * CMT_ICP + p) * OC + o] =
                    (uint32_t)weight[(o * IC + 2 * p) * CMT_TAPS + t] |
                    (uint32_t)weight[(o * IC + 2 * p + 1) * CMT_TAPS + t] << 16;
}

/* Output channels [o0, o0+R) x positions [s0, s0 + 16*PV) of plane (n, od). */
static inline void cmt__tile(const uint32_t *xp, const uint32_t *wb, const ckb_bf16 *bias,
                             ckb_bf16 *out, int64_t s, int64_t od, int64_t o0, int64_t s0)
{
    __m512 acc[R][PV];
    CKB_KIT_EACH_ACC(r, R, v, PV)
        acc[r][v] = _mm512_setzero_ps();
    for (int64_t kd = 0; kd < KD; kd++)
        for (int64_t kh = 0; kh < KH; kh++)
            for (int64_t kw = 0; kw < KW; kw++) {
                const int64_t t = (kd * KH + kh) * KW + kw;
                const uint32_t *xb =
                    xp + (s * D + od + kd) * CMT_ICP * CMT_PLANE + kh * W + kw + s0;
                const uint32_t *wt = wb + t * CMT_ICP * OC + o0;
                for (int64_t p = 0; p < CMT_ICP; p++) {
                    __m512i xv[PV];
#pragma GCC unroll 4
                    for (int v = 0; v < PV; v++)
                        xv[v] = _mm512_loadu_si512((const void *)(xb + p * CMT_PLANE + 16 * v));
                    CKB_KIT_DPBF16_TILE(acc, xv, R, PV, r, wt[p * OC + r]);
                }
            }
#pragma GCC unroll 16
    for (int r = 0; r < R; r++) {
        ckb_bf16 *plane = out + ((s * OC + o0 + r) * OD + od) * OH * OW;
        const __m512 bv = _mm512_set1_ps(ckb_bf16_to_f32(bias[o0 + r]));
#pragma GCC unroll 4
        for (int v = 0; v < PV; v++)
            if (s0 + 16 * v < CMT_SPAN)
                cmt__store16(plane, s0 + 16 * v, cmt__mish_tanh16(_mm512_add_ps(acc[r][v], bv)));
    }
}

/* One (n, od) plane of every output channel, positions outer: one block
 * of x rows serves every channel. */
static inline void cmt__plane(const uint32_t *xp, const uint32_t *wb, const ckb_bf16 *bias,
                              ckb_bf16 *out, int64_t s, int64_t od)
{
    for (int64_t s0 = 0; s0 < CMT_SPAN; s0 += 16 * PV)
        for (int64_t o0 = 0; o0 < OC; o0 += R)
            cmt__tile(xp, wb, bias, out, s, od, o0, s0);
}

#endif

/* Either unit: x into channel pairs and the weights packed, by all
 * threads; then the threads split the (n, od) planes. */
void workload(const ckb_bf16 *x, const ckb_bf16 *weight, const ckb_bf16 *bias, ckb_bf16 *out)
{
    const int64_t nz = N * D * CMT_ICP;
    uint32_t *xp = ckb_kit_alloc64((size_t)(nz * CMT_PLANE) * 4);
    cmt_weight *wp = ckb_kit_alloc64(((size_t)CMT_WEIGHTS * sizeof(cmt_weight) + 63) / 64 * 64);
    if (xp && wp) { /* out of memory: no way to report, out stays unwritten */
        cmt__pack_weight(weight, wp);
#pragma omp parallel
        {
#pragma omp for schedule(static)
            for (int64_t z = 0; z < nz; z += 16)
                cmt__pair_input(x, xp, z, z + 16 < nz ? z + 16 : nz);
            cmt__unit_on();
#pragma omp for schedule(static)
            for (int64_t i = 0; i < N * OD; i++)
                cmt__plane(xp, wp, bias, out, i / OD, i % OD);
            cmt__unit_off();
        }
    }
    free(xp);
    free(wp);
}

#elif defined(__AVX2__) && defined(__FMA__) && OC % R == 0 && 16 * PV + KW <= 128

/* f32 FMA: the same direct convolution in f32. Each input depth a thread
 * reads is widened once into f32 planes slice[c][CMT_PLANE] of that
 * thread's ring of KD depths (exactly: a bf16 is the top half of an f32),
 * so the input of CMT_VL consecutive positions under one tap is one
 * unaligned load. A tile is R output channels x PV vectors of CMT_VL
 * positions (16 in zmm on AVX-512, 8 in ymm on AVX2), computed CMT_RS
 * channels at a time so that the accumulators, the PV inputs and one
 * broadcast fit the register file; the weights are f32
 * wf[oc / CMT_RS][tap][c][CMT_RS], so that a sub-tile's weights are one
 * contiguous stream (in [tap][c][oc] order each (tap, c) step used 16 bytes
 * of its own cache line, and the weights of a sub-tile overflowed L1). */

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#define CMT_VL 16
typedef __m512 cmt_vec;
#define CMT_V(op) _mm512_##op /* the width's intrinsic op */
#define cmt_vepilogue cmt__mish_tanh16
#define cmt_vstore cmt__store16
#else
#define CMT_VL 8
typedef __m256 cmt_vec;
#define CMT_V(op) _mm256_##op
#define cmt_vepilogue cmt__mish_tanh8
#define cmt_vstore cmt__store8
#endif
#define CMT_REGS (2 * CMT_VL) /* 32 zmm or 16 ymm */

#ifndef CMT_PF /* channels ahead that the tile prefetches its input rows (0: none) */
#define CMT_PF (CMT_VL == 16 ? 4 : 0) /* ymm: 7% slower with it (Xeon, x86-64-v3 build) */
#endif

/* the accumulators, PV inputs and one broadcast in the registers */
#define CMT_FITS(rs) ((rs) * PV + PV + 1 <= CMT_REGS)
#if CMT_FITS(R)
#define CMT_RS R
#elif R % 2 == 0 && CMT_FITS(R / 2)
#define CMT_RS (R / 2)
#elif R % 4 == 0 && CMT_FITS(R / 4)
#define CMT_RS (R / 4)
#else
#define CMT_RS 1
#endif

#if CMT_VL == 8
CMT_MISH_TANH(8, __m256, _mm256_) /* cmt__mish_tanh8 */

/* Stores 8 results for positions s..s+7 of output plane (n, oc, od),
 * rounded to bf16 (ties to even): drops columns ow >= OW and rows oh >= OH. */
static inline void cmt__store8(ckb_bf16 *plane, int64_t s, __m256 y)
{
    __m256i u = _mm256_castps_si256(y);
    u = _mm256_add_epi32(u, _mm256_add_epi32(_mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1)),
                                             _mm256_set1_epi32(0x7fff)));
    u = _mm256_srli_epi32(u, 16);
    const __m128i h = _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi32(u, u), 0x08));
#if W % 8 == 0 /* a vector lies in one row */
    const int64_t oh = s / W, ow = s % W;
    if (oh >= OH || ow >= OW)
        return;
    if (OW - ow >= 8) {
        _mm_storeu_si128((__m128i *)(plane + oh * OW + ow), h);
        return;
    }
#endif
    ckb_bf16 v[8];
    _mm_storeu_si128((__m128i *)v, h);
    CMT_SCATTER(plane, s, v, 8);
}

#endif /* CMT_VL == 8 */

/* Output channels [o0, o0+R) x positions [s0, s0 + CMT_VL*PV) of plane (n, od). */
static inline void cmt__tilev(const float *ring, const float *wf, const ckb_bf16 *bias,
                              ckb_bf16 *out, int64_t s, int64_t od, int64_t o0, int64_t s0)
{
    for (int64_t oc = o0; oc < o0 + R; oc += CMT_RS) {
        cmt_vec acc[CMT_RS][PV];
        CKB_KIT_EACH_ACC(r, CMT_RS, v, PV)
            acc[r][v] = CMT_V(setzero_ps)();
        for (int64_t kd = 0; kd < KD; kd++)
            for (int64_t kh = 0; kh < KH; kh++)
                for (int64_t kw = 0; kw < KW; kw++) {
                    const int64_t t = (kd * KH + kh) * KW + kw;
                    const float *xb = ring + (od + kd) % KD * IC * CMT_PLANE + kh * W + kw + s0;
                    const float *wt = wf + ((oc / CMT_RS) * CMT_TAPS + t) * IC * CMT_RS;
                    for (int64_t c = 0; c < IC; c++) {
                        cmt_vec xv[PV];
                        /* the same rows CMT_PF channels ahead: planes are
                         * 16 KiB apart, past what the stride prefetchers
                         * follow (a prefetch past the buffer's end is
                         * dropped, never a fault) */
#pragma GCC unroll 4
                        for (int v = 0; CMT_PF > 0 && v <= PV; v++)
                            _mm_prefetch((const char *)(xb + (c + CMT_PF) * CMT_PLANE + CMT_VL * v),
                                         _MM_HINT_T0);
#pragma GCC unroll 4
                        for (int v = 0; v < PV; v++)
                            xv[v] = CMT_V(loadu_ps)(xb + c * CMT_PLANE + CMT_VL * v);
#pragma GCC unroll 16
                        for (int r = 0; r < CMT_RS; r++) {
                            const cmt_vec wv = CMT_V(set1_ps)(wt[c * CMT_RS + r]);
#pragma GCC unroll 4
                            for (int v = 0; v < PV; v++)
                                acc[r][v] = CMT_V(fmadd_ps)(wv, xv[v], acc[r][v]);
                        }
                    }
                }
#pragma GCC unroll 16
        for (int r = 0; r < CMT_RS; r++) {
            ckb_bf16 *plane = out + ((s * OC + oc + r) * OD + od) * OH * OW;
            const cmt_vec bv = CMT_V(set1_ps)(ckb_bf16_to_f32(bias[oc + r]));
#pragma GCC unroll 4
            for (int v = 0; v < PV; v++)
                if (s0 + CMT_VL * v < CMT_SPAN)
                    cmt_vstore(plane, s0 + CMT_VL * v, cmt_vepilogue(CMT_V(add_ps)(acc[r][v], bv)));
        }
    }
}

/* Input depth d of sample n, widened to f32 into slice[c][CMT_PLANE]; the
 * padding past a plane (read by the last rows' taps, dropped) is zero. */
static void cmt__widen_depth(const ckb_bf16 *x, int64_t n, int64_t d, float *slice)
{
    for (int64_t c = 0; c < IC; c++) {
        const ckb_bf16 *src = x + ((n * IC + c) * D + d) * CMT_HW;
        float *dst = slice + c * CMT_PLANE;
        int64_t j = 0;
        for (; j + 8 <= CMT_HW; j += 8) {
            __m128i h = _mm_loadu_si128((const __m128i *)(src + j));
            _mm256_store_ps(dst + j, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16)));
        }
        for (; j < CMT_PLANE; j++)
            dst[j] = j < CMT_HW ? ckb_bf16_to_f32(src[j]) : 0.0f;
    }
}

void workload(const ckb_bf16 *x, const ckb_bf16 *weight, const ckb_bf16 *bias, ckb_bf16 *out)
{
    float *wf = ckb_kit_alloc64(((size_t)(CMT_TAPS * IC * OC) * 4 + 63) / 64 * 64);
    if (!wf) /* out of memory: no way to report, out stays unwritten */
        return;
    for (int64_t t = 0; t < CMT_TAPS; t++)
        for (int64_t c = 0; c < IC; c++)
            for (int64_t o = 0; o < OC; o++)
                wf[((o / CMT_RS * CMT_TAPS + t) * IC + c) * CMT_RS + o % CMT_RS] =
                    ckb_bf16_to_f32(weight[(o * IC + c) * CMT_TAPS + t]);
#pragma omp parallel
    {
        /* Each thread widens the input depths its planes read into a ring of
         * KD slices (depth d in slice d % KD), each depth once as its planes
         * (n, od) go up: ~2 MB a thread that stays in cache, where widening
         * all of x first wrote 35 MB (a fresh mapping every call, 8,500 page
         * faults) and read it back from L3. */
        float *ring = ckb_kit_alloc64((size_t)(KD * IC * CMT_PLANE) * 4);
        int64_t have_n = -1, have_hi = 0; /* the ring holds depths [have_hi - KD, have_hi) of have_n */
#pragma omp for schedule(static)
        for (int64_t i = 0; i < N * OD; i++) {
            const int64_t n = i / OD, od = i % OD;
            if (!ring)
                continue;
            const int64_t keep = n == have_n && od >= have_hi - KD && od <= have_hi;
            for (int64_t d = keep ? have_hi : od; d < od + KD; d++)
                cmt__widen_depth(x, n, d, ring + d % KD * IC * CMT_PLANE);
            have_n = n, have_hi = od + KD;
            /* positions outer: one block of x rows serves every channel */
            for (int64_t s0 = 0; s0 < CMT_SPAN; s0 += CMT_VL * PV)
                for (int64_t o0 = 0; o0 < OC; o0 += R)
                    cmt__tilev(ring, wf, bias, out, n, od, o0, s0);
        }
        free(ring);
    }
    free(wf);
}

#else /* portable path: no AVX-512 BF16 or AVX2, or dims the kernels do not cover */

static float cmt__mish_tanh1(float v)
{
    const float sp = v > 20.0f ? v : log1pf(expf(v));
    return tanhf(v * tanhf(sp));
}

/* One output row at a time: an f32 row accumulator over every tap. */
void workload(const ckb_bf16 *x, const ckb_bf16 *weight, const ckb_bf16 *bias, ckb_bf16 *out)
{
#pragma omp parallel for collapse(3) schedule(static)
    for (int64_t s = 0; s < N; s++)
        for (int64_t o = 0; o < OC; o++)
            for (int64_t od = 0; od < OD; od++)
                for (int64_t oh = 0; oh < OH; oh++) {
                    float acc[OW];
                    for (int64_t ow = 0; ow < OW; ow++)
                        acc[ow] = ckb_bf16_to_f32(bias[o]);
                    for (int64_t c = 0; c < IC; c++)
                        for (int64_t kd = 0; kd < KD; kd++)
                            for (int64_t kh = 0; kh < KH; kh++)
                                for (int64_t kw = 0; kw < KW; kw++) {
                                    const float wv = ckb_bf16_to_f32(
                                        weight[(((o * IC + c) * KD + kd) * KH + kh) * KW + kw]);
                                    const ckb_bf16 *xr =
                                        x + (((s * IC + c) * D + od + kd) * H + oh + kh) * W + kw;
                                    for (int64_t ow = 0; ow < OW; ow++)
                                        acc[ow] += wv * ckb_bf16_to_f32(xr[ow]);
                                }
                    ckb_bf16 *orow = out + (((s * OC + o) * OD + od) * OH + oh) * OW;
                    for (int64_t ow = 0; ow < OW; ow++)
                        orow[ow] = ckb_f32_to_bf16(cmt__mish_tanh1(acc[ow]));
                }
}

#endif
