/*
 * expert.c — the hand-tuned kernel for 7p_Ragged_Paged_Attention: mixed
 * prefill and decode GQA attention over a paged KV cache, one serving step.
 * Valid sequence i (i < num_seqs) owns the q_len = cu_q_lens[i + 1] -
 * cu_q_lens[i] packed query rows from row cu_q_lens[i] (1 for a decode, a
 * chunk for a prefill); its row t sits at position kv_lens[i] - q_len + t
 * and attends the cached keys at positions up to its own, read through
 * page_indices[i] from kv_pages, whose head axis interleaves K (2 kh) and V
 * (2 kh + 1); its answer goes to the same packed rows of out, and every
 * row no valid sequence owns is zeroed.
 *
 * Ragged paged flash attention: a work item is BQ query rows of one
 * (sequence, kv head), the rows ordered token-major (token t, query head g
 * of the group), so every row of a 4-row tile shares one causal limit when
 * G is a multiple of 4 and a K/V block serves all G·q_len rows of the
 * group (a decode's item is its G rows: one query head group over the
 * whole cache).
 * The item walks its keys in blocks of BK read in place through the page
 * table (no gather into a contiguous copy), only up to each row's causal
 * limit (no padding sequences, no pages past kv_len, no keys above the
 * diagonal), with an online softmax (running max and sum in f32, the
 * accumulator rescaled when the max moves). Items differ widely in cost (a
 * decode's G rows over a short cache against BQ chunk rows over a long
 * one); they go out heaviest first (dynamic), which balances them over the
 * threads.
 *
 * Both matmuls run on AMX tiles (MMA=2, the default where the compiler
 * targets AMX), 16 query rows a tile, bf16 operands, f32 accumulators:
 *   - q k^T: A = 16 rows of q x 32 d (row-major bf16 is A's layout), B = 16
 *     d pairs of K packed per block as [key group of 16][d pair][16 keys]
 *     (a 16 x 16 dword transpose of the page rows: B's VNNI layout), up to
 *     64 keys (4 accumulator tiles) per pass;
 *   - P v: A = 16 rows of P (bf16, as JAX's P is) x 32 keys, B = V packed
 *     as [key pair][d][2], 64 d per pass; the output rows are rescaled by
 *     the online softmax, loaded into the accumulators and stored back.
 * Why tiles: with vdpbf16ps at a quarter of the FMA rate on this Xeon, the
 * matmuls were most of the time; a tile product does 16 x 16 x 32 in one
 * instruction, so what remains is mostly the softmax (exp, max, bf16
 * rounding), the K/V packing and reading the pages, which is why the next
 * block's K/V rows are prefetched while one is computed.
 * A 16-row tile of token-major rows spans 16 / G query rows (with G = 8
 * two; a decode's item is G rows, half a tile, the rest pad rows), whose
 * causal limits differ: the softmax masks each row to its own
 * limit (those scores count as -inf: P = 0 there) and a row that is done
 * for a block keeps its state. Pad rows past an item's last row are zero
 * queries with that row's limit, computed and never stored. The tile path
 * needs D and BK multiples of 32 and BQ a multiple of 16; otherwise MMA=2
 * falls back to 1.
 * MMA=0 and 1 keep the AVX-512 register-tile kernels, 4 query rows a tile:
 *   - q k^T broadcasts a pair of q values against the same packed K, 4
 *     query rows x up to 64 keys a tile;
 *   - P v broadcasts a pair of probabilities against the same packed V, 4
 *     rows x 64 d.
 * MMA=0 needs AVX-512 BF16 and runs as 1 without it. Without AVX-512
 * F/BW/VL the paged kit's AVX2 + FMA core runs, and below AVX2 the kit's
 * portable path (pk__row1, scalar C) computes the same thing one query row
 * at a time in f32.
 *
 * Tunable (ckbench tune passes -DNAME=VALUE):
 *   BQ  query rows per work item (multiple of 4; 16 for tiles): reuse of a
 *       packed K/V block against the balance of the items
 *   BK  keys per block (multiple of 16; 32 for tiles): online-softmax
 *       rescale frequency and the K/V working set
 *   MMA 0: both matmuls on vdpbf16ps as above; 1: K, V and P widened to f32
 *       (exactly: a bf16 is the top half of an f32) when packed, and both
 *       matmuls on f32 FMA, 16 lanes x 1 product where vdpbf16ps does 2;
 *       2: AMX tiles (ra__item's MMA=2 form), the default where the
 *       compiler targets AMX, else 1. Between 0 and 1 the machine decides:
 *       on the Xeon this was tuned on, one vdpbf16ps issues at a quarter of
 *       the FMA rate (measured), so FMA does twice the flops; on a core with
 *       full-rate BF16 dot products MMA=0 halves the instructions. Tile data
 *       needs the process's permission (arch_prctl): the evaluation child
 *       requests it before the sandbox closes.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "ckbench.h"

#ifndef BQ
#define BQ 256
#endif
#ifndef BK
#define BK 64
#endif
/* MMA's default for a plain eval: AMX tiles where the compiler targets
 * them, else f32 FMA (bench passes the host's fastest unit) */
#define CKB_KIT_UNIT_NO_DOT
#include "ckb_kit_unit.h"

#define RA_G (HQ / HKV)     /* query heads per kv head */
#define RA_L (PPS * PS)     /* cache positions of a sequence */
#define RA_RMAX ((int64_t)RA_G * NT) /* item rows of one (sequence, kv head), at most */

/* Keys per block, and the rows of one work item's state. The kit checks BQ
 * and BK, and takes MMA to 1 where the target or the blocks do not fit the
 * tile path (D and BK multiples of 32, BQ of 16). */
#define PK_BK BK
#define PK_ROWS BQ
#define PK_SROWS (MMA == 2 ? 16 : PK_R) /* rows of scores and P: a tile's */
#define PK_ROW_KEYS                     /* each row its own key limit */
#include "ckb_kit_paged.h"

/* Query rows of sequence i: cu_q_lens[i + 1] - cu_q_lens[i], none when
 * negative, at most NT. */
static inline int64_t ra__qlen(const int32_t *cu_q_lens, int64_t i)
{
    return pk__clamp((int64_t)cu_q_lens[i + 1] - cu_q_lens[i], NT);
}

/* Keys attended by query row t of sequence i, which has q of them:
 * positions <= kv_len - q + t, at most L; <= 0 means none. */
static inline int64_t ra__keys(const int32_t *kv_lens, int64_t i, int64_t q, int64_t t)
{
    int64_t n = (int64_t)kv_lens[i] - q + t + 1;
    return n < RA_L ? n : RA_L;
}

/* Packed row of query row t of sequence i (in queries and out), clamped
 * into [0, NT) as upstream's minimum(q_start + offset, NT - 1). */
static inline int64_t ra__row(const int32_t *cu_q_lens, int64_t i, int64_t t)
{
    return pk__clamp((int64_t)cu_q_lens[i] + t, NT - 1);
}

/* Query row t, head h of sequence i. */
static inline const ckb_bf16 *ra__q(const ckb_bf16 *queries, const int32_t *cu_q_lens, int64_t i,
                                    int64_t t, int64_t h)
{
    return queries + (ra__row(cu_q_lens, i, t) * HQ + h) * D;
}

/* Valid sequences: num_seqs, clamped to [0, NS]. */
static inline int64_t ra__nvalid(const int32_t *num_seqs)
{
    return num_seqs[0] < 0 ? 0 : num_seqs[0] > NS ? NS : num_seqs[0];
}

/* A row with no valid key is a constant row: uniform over all L positions,
 * P = bf16(1/L) as in JAX, in f32. */
static void ra__uniform(const ckb_bf16 *kv_pages, const int32_t *pages, int64_t i, int64_t kh,
                        ckb_bf16 *dst)
{
    const float u = ckb_bf16_to_f32(ckb_f32_to_bf16(1.0f / (float)RA_L));
    float acc[D];
    for (int64_t d = 0; d < D; d++)
        acc[d] = 0.0f;
    for (int64_t j = 0; j < RA_L; j++) {
        const ckb_bf16 *v = kv_pages + (pk__slot(pages, i, j) * HKV2 + 2 * kh + 1) * D;
        for (int64_t d = 0; d < D; d++)
            acc[d] += u * ckb_bf16_to_f32(v[d]);
    }
    for (int64_t d = 0; d < D; d++)
        dst[d] = ckb_f32_to_bf16(acc[d]);
}

/* The rows no valid sequence writes are zero. With the windows packed
 * (cu_q_lens nondecreasing over the valid sequences, within [0, NT], as
 * every input is) they are those outside [cu_q_lens[0], cu_q_lens[nvalid]):
 * *lo and *hi get that range and the answer is 1. Otherwise 0, [lo, hi) is
 * every row: the caller zeroes the whole output before the windows are
 * written. */
static int ra__packed(const int32_t *cu_q_lens, int64_t nvalid, int64_t *lo, int64_t *hi)
{
    int ok = cu_q_lens[0] >= 0 && cu_q_lens[nvalid] <= NT;
    for (int64_t i = 0; i < nvalid; i++)
        ok &= cu_q_lens[i + 1] >= cu_q_lens[i];
    *lo = ok ? cu_q_lens[0] : 0; /* else nothing is left to zero after */
    *hi = ok ? cu_q_lens[nvalid] : NT;
    return ok;
}

/* Zeroes out's rows outside [lo, hi) (inside a parallel region). */
static void ra__zero_rest(int64_t lo, int64_t hi, ckb_bf16 *out)
{
#pragma omp for schedule(static) nowait
    for (int64_t r = 0; r < NT; r++)
        if (r < lo || r >= hi)
            memset(out + r * HQ * D, 0, (size_t)(HQ * D) * sizeof *out);
}

#if defined(PK_AVX512) || defined(PK_AVX2)
/* Asks for the K and V rows (adjacent: 2 kh and 2 kh + 1) of keys [j0, j0 +
 * nk) of sequence i into L2 while the block before is computed: the pages
 * are scattered and a key's rows sit HKV2 * D apart, which the hardware
 * prefetchers do not follow, so the pack would wait on memory. Always
 * inlined: GCC takes a function whose only effect is prefetching for one
 * without side effects and drops the call. */
static inline __attribute__((always_inline)) void
ra__prefetch(const ckb_bf16 *kv_pages, const int32_t *pages, int64_t i, int64_t kh, int64_t j0,
             int64_t nk)
{
    for (int64_t j = j0; j < j0 + nk; j++) {
        const char *kv = (const char *)(kv_pages + (pk__slot(pages, i, j) * HKV2 + 2 * kh) * D);
        for (int64_t b = 0; b < 2 * D * 2; b += 64)
            _mm_prefetch(kv + b, _MM_HINT_T1);
    }
}

/* Writes a work item's rows [0, nrows) (item rows r0 .. of sequence i, kv
 * head kh): each row's output o over its sum (lane-wise in l), or the
 * uniform row where it attends no key (n[r] <= 0). */
static void ra__item_finish(const ckb_bf16 *kv_pages, const int32_t *pages,
                            const int32_t *cu_q_lens, ckb_bf16 *out, int64_t i, int64_t kh,
                            int64_t r0, int64_t nrows, const float *o, const float *l,
                            const int64_t *n)
{
    for (int64_t r = 0; r < nrows; r++) {
        const int64_t t = (r0 + r) / RA_G, h = kh * RA_G + (r0 + r) % RA_G;
        ckb_bf16 *dst = out + (ra__row(cu_q_lens, i, t) * HQ + h) * D;
        if (n[r] <= 0)
            ra__uniform(kv_pages, pages, i, kh, dst);
#ifdef PK_AVX512
        else
            ckb_kit_attn_out16(o + r * PK_DO, ckb_kit_attn_sum16(l + 16 * r), D, dst);
#else
        else
            ckb_kit_attn_out8(o + r * PK_DO, ckb_kit_attn_sum8(l + 8 * r), D, dst);
#endif
    }
}
#endif

#ifdef PK_AVX512 /* AVX-512 F/BW/VL; vdpbf16ps only where MMA=0 */

#include <immintrin.h>

/* The packed layout is the paged kit's (expert-kit/ckb_kit_paged.h: PK_R
 * rows a register tile, q and K rows PK_DP d pairs or PK_DQ f32, output
 * rows PK_DO; BK is a multiple of 16, so blocks are PK_BKS = BK keys). */
#define RA_RS PK_SROWS
#define RA_PE (MMA == 1 ? 4 : 2)     /* bytes of one P (and packed K/V) value */

/* Online softmax of the `rows` rows of the tile at item row rt against the
 * block of keys from j0, scores over w16 keys: row r keeps its first n[r] -
 * j0 keys (none when that is <= 0: the row is done, its state stays), the
 * rest count as -inf. Writes P over wp >= w16 keys (bf16, zero where masked
 * and past w16), updates m and l, returns in alpha how much each row's old
 * output shrinks. */
static inline __attribute__((always_inline)) void ra__softmax(pk__state *sc, const int rows,
                                                              int64_t rt, int64_t j0, int64_t w16,
                                                              int64_t wp, float *alpha)
{
    float m_old[16], m_new[16]; /* a row that is done keeps m: both 0, alpha 1 */
    __m512 sums[RA_RS];
    for (int r = 0; r < rows; r++) {
        const int64_t row = rt + r;
        const float *s = sc->s + r * BK;
        ckb_bf16 *pr = (ckb_bf16 *)((char *)sc->p + r * BK * RA_PE);
        int64_t c = sc->n[row] - j0;
        c = c < 0 ? 0 : c > w16 ? w16 : c;
        sums[r] = _mm512_setzero_ps();
        if (c == 0) {
            m_old[r] = m_new[r] = 0.0f;
            memset(pr, 0, (size_t)wp * RA_PE);
            continue;
        }
        float mo = sc->m[row], mn = ckb_kit_attn_max16(s, c) * PK_C2;
        if (mn < mo)
            mn = mo;
        m_old[r] = mo, m_new[r] = mn, sc->m[row] = mn;
        sums[r] = ckb_kit_attn_p16(s, pr, c, wp, mn, PK_C2, MMA == 1, 1);
    }
    /* alpha = 2^(m_old - m_new) for all rows at once: exactly 1 where the
     * max stayed, 0 on a row's first block (m_old = -inf, clamped to a
     * power that underflows) */
    const __mmask16 rm = rows >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << rows) - 1);
    const __m512 mo = _mm512_maskz_loadu_ps(rm, m_old), mn = _mm512_maskz_loadu_ps(rm, m_new);
    __m512 a = ckb_kit_exp2_16(_mm512_max_ps(_mm512_sub_ps(mo, mn), _mm512_set1_ps(-256.0f)));
    a = _mm512_mask_mov_ps(a, _mm512_cmp_ps_mask(mo, mn, _CMP_EQ_OQ), _mm512_set1_ps(1.0f));
    _mm512_mask_storeu_ps(alpha, rm, a);
    for (int r = 0; r < rows; r++) {
        __m512 *l = (__m512 *)(sc->l + 16 * (rt + r));
        *l = _mm512_fmadd_ps(*l, _mm512_set1_ps(alpha[r]), sums[r]);
    }
}

/* K and V of nk keys from position j0 of sequence i, kv head kh, packed;
 * zero past nk up to the next multiple of 16 (MMA=2: of 32, as P v reads
 * whole 32-key tiles and 0 * stale V could be NaN). */
static void ra__pack(const ckb_bf16 *kv_pages, const int32_t *pages, int64_t i, int64_t kh,
                     int64_t j0, int64_t nk, pk__state *sc)
{
    const int64_t nv = MMA == 2 ? (nk + 31) / 32 * 2 : (nk + 15) / 16;
    for (int64_t g = 0; g < nv; g++) {
        const ckb_bf16 *kr[16];
        for (int jj = 0; jj < 16; jj++) {
            int64_t j = 16 * g + jj;
            kr[jj] = j < nk ? kv_pages + (pk__slot(pages, i, j0 + j) * HKV2 + 2 * kh) * D : NULL;
        }
#if MMA == 1
        /* pairs first, then each pair split into its two f32 */
        uint32_t pairs[PK_DP * 16] __attribute__((aligned(64)));
        pk__pack_k16(kr, pairs);
        ckb_kit_pairs_f32(pairs, PK_DP, (float *)sc->kp + g * PK_DQ * 16);
        for (int jj = 0; jj < 16; jj++) {
            float *vf = (float *)sc->vp + (16 * g + jj) * PK_DO;
            for (int64_t d = 0; d < PK_DO; d += 16) {
                __m256i x = kr[jj] ? _mm256_maskz_loadu_epi16(ckb_kit_mask16(D - d), kr[jj] + D + d)
                                   : _mm256_setzero_si256();
                _mm512_store_si512(vf + d, _mm512_slli_epi32(_mm512_cvtepu16_epi32(x), 16));
            }
        }
#else
        pk__pack_k16(kr, sc->kp + g * PK_DP * 16);
        for (int t = 0; t < 8; t++)
            ckb_kit_attn_pack_v2(kr[2 * t] ? kr[2 * t] + D : NULL,
                                 kr[2 * t + 1] ? kr[2 * t + 1] + D : NULL, D, PK_DO,
                                 sc->vp + (8 * g + t) * 2 * PK_DO);
#endif
    }
}

/* Sets up the state of a work item, item rows [r0, r0 + BQ) of sequence i,
 * kv head kh (item row r is query row r / G, query head kh * G + r % G):
 * its rows' queries (zero padded to whole tiles of `tile` rows), limits n,
 * running max, sum and output. Returns the rows it computes (whole tiles);
 * *nrows gets the real ones, *kend the most keys any row attends. */
static int64_t ra__item_setup(const ckb_bf16 *queries, const int32_t *kv_lens,
                              const int32_t *cu_q_lens, int64_t i, int64_t kh, int64_t r0,
                              int64_t tile, pk__state *sc, int64_t *nrows_out,
                              int64_t *kend_out)
{
    const int64_t q = ra__qlen(cu_q_lens, i), rows = RA_G * q;
    const int64_t nrows = rows - r0 < BQ ? rows - r0 : BQ;
    const int64_t padded = (nrows + tile - 1) / tile * tile;
    memset(sc->q, 0, (size_t)padded * (MMA == 1 ? PK_DQ : PK_DP) * 4);
    ckb_kit_attn_reset(sc->o, PK_DO, sc->l, 16, sc->m, padded);
    int64_t kend = 0;
    for (int64_t r = 0; r < padded; r++) {
        /* pad rows copy the last row's limit: computed, never stored */
        const int64_t rr = r < nrows ? r0 + r : r0 + nrows - 1;
        sc->n[r] = ra__keys(kv_lens, i, q, rr / RA_G);
        kend = sc->n[r] > kend ? sc->n[r] : kend;
        if (r >= nrows)
            continue;
        const ckb_bf16 *q = ra__q(queries, cu_q_lens, i, rr / RA_G, kh * RA_G + rr % RA_G);
#if MMA == 1
        for (int64_t d = 0; d < D; d++)
            ((float *)sc->q)[r * PK_DQ + d] = ckb_bf16_to_f32(q[d]);
#else
        memcpy(sc->q + r * PK_DP, q, (size_t)D * 2);
#endif
    }
    *nrows_out = nrows;
    *kend_out = kend;
    return padded;
}

#if MMA != 2

#define RA_TR PK_R /* query rows a tile */

/* A row tile (item rows rt .. rt + 3) against the first w keys of the
 * packed block at j0, in 4-row register tiles. */
static inline __attribute__((always_inline)) void ra__tile(pk__state *sc, int64_t rt,
                                                           int64_t j0, int64_t w)
{
    const int64_t nv = (w + 15) / 16;
    /* a 16-key group of K, a 16-wide d chunk of V: 64 bytes a row in both
     * units' layouts */
#define RA_QK(n) pk__qk((const char *)sc->q + rt * PK_DQ * RA_PE, (const char *)sc->kp + v * PK_DQ * 16 * RA_PE, sc->s + 16 * v, n)
#define RA_PV(n) pk__pv(sc->p, (const char *)sc->vp + 64 * c, ot + 16 * c, alpha, nv * 16, n)
    int64_t v = 0;
    CKB_KIT_ATTN_TILES(v, nv, 4, RA_QK);
    float alpha[PK_R];
    ra__softmax(sc, PK_R, rt, j0, nv * 16, nv * 16, alpha);
    float *ot = sc->o + rt * PK_DO;
    int c = 0;
    CKB_KIT_ATTN_TILES(c, PK_DV, 4, RA_PV);
#undef RA_QK
#undef RA_PV
}
#define RA_TILES_ON() ((void)0)
#define RA_TILES_OFF() ((void)0)

#else /* MMA == 2 */

#define RA_TR 16 /* query rows a tile */

/* A row tile (item rows rt .. rt + 15) against the first w keys of the
 * packed block at j0 on AMX tiles. With rows token-major a tile spans 16 /
 * G tokens (G >= 16: part of one), whose causal limits differ, so
 * ra__softmax masks each row to its own limit (its P is zero past it) and
 * a row past its limit in a whole block keeps its state. q k^T: A = the
 * 16 query rows (bf16, PK_DP pairs apart: row-major bf16 is A's layout),
 * B = up to 4 packed key groups a pass (pk__pack_k16's [d pair][16 keys]
 * is B's layout). P v: P bf16 [16][BK] (A) against V packed [key
 * pair][PK_DO][2] (ckb_kit_attn_pack_v2's layout is B's); rows whose max
 * stayed keep their output as it is. */
static inline __attribute__((always_inline)) void ra__tile(pk__state *sc, int64_t rt,
                                                           int64_t j0, int64_t w)
{
    const int64_t nv = (w + 15) / 16, w32 = (w + 31) / 32 * 32;
    const int64_t kg = PK_DP * 16 * 4; /* bytes of a packed key group */
    const char *qt = (const char *)(sc->q + rt * PK_DP);
    for (int64_t v = 0; v < nv; v += 4) {
        const int64_t n = nv - v < 4 ? nv - v : 4;
        ckb_kit_amx_zero4();
        ckb_kit_amx_1x4(qt, PK_DP * 4, (const char *)sc->kp + v * kg, 64, 16 * 64, kg, D / 32, n);
        ckb_kit_amx_store4(sc->s + 16 * v, BK, n);
    }
    float alpha[16];
    ra__softmax(sc, 16, rt, j0, nv * 16, w32, alpha);
    ckb_kit_amx_rescale_pv(sc->o + rt * PK_DO, PK_DV, alpha, 1, (const char *)sc->p, BK * 2,
                           (const char *)sc->vp, w32 / 32);
}
/* the kit's tiles at kch 32 are all 16 rows of 64 bytes, the shapes 7p uses:
 * 0-3 f32 accumulators, 4 A, 5-7 B (16 pairs x 16 columns, VNNI) */
#define RA_TILES_ON() ckb_kit_amx_on()
#define RA_TILES_OFF() _tile_release()

#endif /* MMA == 2 */

/* One work item (see ra__item_setup), RA_TR rows a tile: each block of
 * keys packed once (the next one's rows asked for meanwhile) and walked by
 * the tiles that reach it. Pad rows (past the item's rows) are zero
 * queries with the last row's limit: computed, never stored. */
static void ra__item(const ckb_bf16 *queries, const ckb_bf16 *kv_pages, const int32_t *kv_lens,
                     const int32_t *pages, const int32_t *cu_q_lens, ckb_bf16 *out, int64_t i,
                     int64_t kh, int64_t r0, pk__state *sc)
{
    int64_t nrows, kend;
    const int64_t padded =
        ra__item_setup(queries, kv_lens, cu_q_lens, i, kh, r0, RA_TR, sc, &nrows, &kend);
    for (int64_t j0 = 0; j0 < kend; j0 += BK) {
        const int64_t nk = kend - j0 < BK ? kend - j0 : BK;
        ra__pack(kv_pages, pages, i, kh, j0, nk, sc);
        if (j0 + BK < kend)
            ra__prefetch(kv_pages, pages, i, kh, j0 + BK,
                         kend - j0 - BK < BK ? kend - j0 - BK : BK);
        for (int64_t rt = 0; rt < padded; rt += RA_TR) {
            const int64_t tend = ckb_kit_attn_tile_end(sc->n + rt, RA_TR);
            if (tend > j0)
                ra__tile(sc, rt, j0, tend - j0 < nk ? tend - j0 : nk);
        }
    }
    ra__item_finish(kv_pages, pages, cu_q_lens, out, i, kh, r0, nrows, sc->o, sc->l, sc->n);
}

#elif defined(PK_AVX2)

/* AVX2 + FMA: the paged kit's f32 core (expert-kit/ckb_kit_paged.h), 4-row
 * register tiles; each row keeps its own causal limit (the kit masks every
 * row to it), pad rows past an item's last row are zero queries with that
 * row's limit, computed and never stored. */
#define RA_TILES_ON() ((void)0)
#define RA_TILES_OFF() ((void)0)

/* One work item: item rows [r0, r0 + BQ) of sequence i, kv head kh (item
 * row r is query row r / G of the sequence, query head kh * G + r % G). */
static void ra__item(const ckb_bf16 *queries, const ckb_bf16 *kv_pages, const int32_t *kv_lens,
                     const int32_t *pages, const int32_t *cu_q_lens, ckb_bf16 *out, int64_t i,
                     int64_t kh, int64_t r0, pk__state *sc)
{
    const int64_t q = ra__qlen(cu_q_lens, i), rows = RA_G * q;
    const int64_t nrows = rows - r0 < BQ ? rows - r0 : BQ;
    const int64_t padded = (nrows + PK_R - 1) / PK_R * PK_R;
    int64_t kend = 0;
    for (int64_t r = 0; r < padded; r++) {
        const int64_t rr = r < nrows ? r0 + r : r0 + nrows - 1;
        sc->n[r] = ra__keys(kv_lens, i, q, rr / RA_G);
        kend = sc->n[r] > kend ? sc->n[r] : kend;
        ckb_kit_widen8(r < nrows ? ra__q(queries, cu_q_lens, i, rr / RA_G, kh * RA_G + rr % RA_G)
                                 : NULL,
                       D, PK_DO, sc->q + r * PK_DO);
    }
    pk__reset(sc, padded);

    const ckb_bf16 *kr[BK], *vr[BK];
    for (int64_t j0 = 0; j0 < kend; j0 += BK) {
        const int64_t nk = kend - j0 < BK ? kend - j0 : BK;
        for (int64_t j = 0; j < nk; j++) {
            kr[j] = kv_pages + (pk__slot(pages, i, j0 + j) * HKV2 + 2 * kh) * D;
            vr[j] = kr[j] + D; /* V of kv head kh is the next head row */
        }
        pk__pack(kr, vr, nk, sc);
        if (j0 + BK < kend)
            ra__prefetch(kv_pages, pages, i, kh, j0 + BK,
                         kend - j0 - BK < BK ? kend - j0 - BK : BK);
        pk__attend(sc, 0, padded, j0, nk);
    }

    ra__item_finish(kv_pages, pages, cu_q_lens, out, i, kh, r0, nrows, sc->o, sc->l, sc->n);
}

#endif /* ISA sections */

#if defined(PK_AVX512) || defined(PK_AVX2)

/* A work item x is item rows [r0, r0 + BQ) of (sequence i, kv head kh),
 * x = (i * HKV + kh) * RA_RMAX + r0. */
static inline void ra__unpack(int64_t x, int64_t *i, int64_t *kh, int64_t *r0)
{
    *i = x / (HKV * RA_RMAX), *kh = x / RA_RMAX % HKV, *r0 = x % RA_RMAX;
}

/* Items of the valid sequences: HKV * ceil(G * q_len / BQ) each. */
static int64_t ra__count(const int32_t *cu_q_lens, int64_t nvalid)
{
    int64_t n = 0;
    for (int64_t i = 0; i < nvalid; i++)
        n += HKV * ((RA_G * ra__qlen(cu_q_lens, i) + BQ - 1) / BQ);
    return n;
}

/* Cost of an item: the (row, key) pairs it computes, in keys per row
 * summed over its rows (a decode's G rows over its whole cache, a chunk's
 * BQ rows over the keys up to each). */
static int64_t ra__cost(const int32_t *kv_lens, const int32_t *cu_q_lens, int64_t x)
{
    int64_t i, kh, r0;
    ra__unpack(x, &i, &kh, &r0);
    const int64_t q = ra__qlen(cu_q_lens, i);
    int64_t c = 0;
    for (int64_t r = r0; r < r0 + BQ && r < RA_G * q; r++) {
        const int64_t n = ra__keys(kv_lens, i, q, r / RA_G);
        c += n > 0 ? n : 0;
    }
    return c;
}

/* The items of the valid sequences, heaviest first: an insertion sort on
 * the cost (no qsort: see DESIGN), a few hundred to a few thousand items,
 * most of them already in order (a chunk's items come cheapest first, so
 * they are walked backwards). */
static int64_t ra__order(const int32_t *kv_lens, const int32_t *cu_q_lens, int64_t nvalid,
                         int64_t *order, int64_t *cost)
{
    int64_t n = 0;
    for (int64_t i = 0; i < nvalid; i++) {
        const int64_t rows = RA_G * ra__qlen(cu_q_lens, i);
        for (int64_t kh = 0; kh < HKV; kh++)
            for (int64_t r0 = (rows + BQ - 1) / BQ * BQ - BQ; r0 >= 0; r0 -= BQ) {
                const int64_t x = (i * HKV + kh) * RA_RMAX + r0;
                const int64_t c = ra__cost(kv_lens, cu_q_lens, x);
                int64_t at = n++;
                for (; at > 0 && cost[at - 1] < c; at--) {
                    cost[at] = cost[at - 1];
                    order[at] = order[at - 1];
                }
                cost[at] = c;
                order[at] = x;
            }
    }
    return n;
}

void workload(const ckb_bf16 *queries, const ckb_bf16 *kv_pages, const int32_t *kv_lens,
              const int32_t *page_indices, const int32_t *cu_q_lens, const int32_t *num_seqs,
              ckb_bf16 *out)
{
    const int nthreads = omp_get_max_threads();
    const int64_t nvalid = ra__nvalid(num_seqs);
    const int64_t nmax = ra__count(cu_q_lens, nvalid);
    const size_t order_bytes = PK_ROUND64((size_t)(nmax > 0 ? nmax : 1) * 2 * sizeof(int64_t));
    char *mem = ckb_kit_alloc64(order_bytes + (size_t)nthreads * PK_STATE_BYTES);
    if (!mem)
        return; /* out of memory: the output stays as it was and fails the check */
    int64_t *order = (int64_t *)mem, *cost = order + (nmax > 0 ? nmax : 1);
    const int64_t nitems = ra__order(kv_lens, cu_q_lens, nvalid, order, cost);
    int64_t lo, hi;
    if (!ra__packed(cu_q_lens, nvalid, &lo, &hi))
        memset(out, 0, (size_t)NT * HQ * D * sizeof *out);

#pragma omp parallel num_threads(nthreads)
    {
        pk__state sc;
        pk__state_carve(mem + order_bytes + (size_t)omp_get_thread_num() * PK_STATE_BYTES, &sc);
        ra__zero_rest(lo, hi, out);
        RA_TILES_ON();
#pragma omp for schedule(dynamic, 1) nowait
        for (int64_t it = 0; it < nitems; it++) {
            int64_t i, kh, r0;
            ra__unpack(order[it], &i, &kh, &r0);
            ra__item(queries, kv_pages, kv_lens, page_indices, cu_q_lens, out, i, kh, r0, &sc);
        }
        RA_TILES_OFF();
    }
    free(mem);
}

#else /* portable path: no AVX-512, no AVX2 */

/* One query row (row t, head h of sequence i, which has q rows): the paged
 * kit's portable row (pk__row1) over K and V interleaved in kv_pages, or
 * the uniform row where it attends no key. */
static void ra__row1(const ckb_bf16 *queries, const ckb_bf16 *kv_pages, const int32_t *kv_lens,
                     const int32_t *pages, const int32_t *cu_q_lens, ckb_bf16 *out, int64_t i,
                     int64_t q, int64_t t, int64_t h, float *p)
{
    const int64_t n = ra__keys(kv_lens, i, q, t), kh = h / RA_G;
    ckb_bf16 *dst = out + (ra__row(cu_q_lens, i, t) * HQ + h) * D;
    if (n <= 0) {
        ra__uniform(kv_pages, pages, i, kh, dst);
        return;
    }
    pk__row1(ra__q(queries, cu_q_lens, i, t, h), kv_pages + 2 * kh * D, kv_pages + (2 * kh + 1) * D,
             HKV2 * D, pages, i, n, p, dst);
}

void workload(const ckb_bf16 *queries, const ckb_bf16 *kv_pages, const int32_t *kv_lens,
              const int32_t *page_indices, const int32_t *cu_q_lens, const int32_t *num_seqs,
              ckb_bf16 *out)
{
    const int nthreads = omp_get_max_threads();
    const int64_t nvalid = ra__nvalid(num_seqs);
    float *mem = malloc((size_t)nthreads * RA_L * sizeof *mem);
    if (!mem)
        return; /* out of memory: the output stays as it was and fails the check */
    int64_t lo, hi;
    if (!ra__packed(cu_q_lens, nvalid, &lo, &hi))
        memset(out, 0, (size_t)NT * HQ * D * sizeof *out);
#pragma omp parallel num_threads(nthreads)
    {
        float *p = mem + (size_t)omp_get_thread_num() * RA_L;
        ra__zero_rest(lo, hi, out);
        /* Rows in blocks of BQ per (sequence, kv head), as the vector path. */
        for (int64_t i = 0; i < nvalid; i++) {
            const int64_t q = ra__qlen(cu_q_lens, i), nqb = (RA_G * q + BQ - 1) / BQ;
#pragma omp for schedule(dynamic, 1) nowait
            for (int64_t x = 0; x < HKV * nqb; x++) {
                const int64_t kh = x / nqb, r0 = x % nqb * BQ;
                for (int64_t r = r0; r < r0 + BQ && r < RA_G * q; r++)
                    ra__row1(queries, kv_pages, kv_lens, page_indices, cu_q_lens, out, i, q,
                             r / RA_G, kh * RA_G + r % RA_G, p);
            }
        }
    }
    free(mem);
}

#endif /* PK_AVX512 || PK_AVX2 */
