/*
 * expert.c — the hand-tuned kernel for 6p_Paged_Attention: decode GQA
 * attention over a paged KV cache. Sequence i's query is row cu_q_lens[i]
 * of queries; it attends its first kv_lens[i] cached tokens, token j living
 * at slot j % PS of page page_indices[i][j / PS] of k_pages / v_pages.
 *
 * Paged flash-decoding: the pages are read in place through the table (no
 * gather into a contiguous copy) and only up to kv_len; each block of NPB
 * pages is read once for all G query heads of each kv head (the G rows are
 * the M of two small matmuls), with an online softmax (running max and sum
 * in f32, the accumulator rescaled when the max moves), so no score row of
 * length L exists. A block walks the kv heads of its pages in turn, so each
 * page (PS x HKV x D, contiguous) streams from memory once.
 *
 * Work split: a work item is SPLIT pages of one sequence (all of it when
 * SPLIT is 0), so that few long sequences still occupy every thread; items
 * go out longest first (dynamic), which balances the uneven lengths. A
 * sequence cut into several items gets f32 partials (max, sum, unnormalised
 * output per head) merged after a barrier, as flash-decoding does.
 *
 * Both matmuls run on AVX-512 with f32 accumulation (as below with
 * vdpbf16ps, MMA=0, which needs AVX-512 BF16; on f32 FMA with MMA=1):
 *   - q k^T broadcasts a pair of q values against K packed per block as
 *     [key group of 16][d pair][16 keys] (a 16 x 16 dword transpose of the
 *     page rows), 4 query rows x up to 64 keys a tile;
 *   - P v broadcasts a pair of probabilities (bf16, as the baseline's P is)
 *     against V packed as [key pair][d][2], 4 rows x 64 d.
 * Without AVX-512 F/BW/VL the paged kit's AVX2 + FMA core runs, and below
 * AVX2 the kit's portable path (pk__row1, scalar C) computes the same
 * thing one query head at a time in f32.
 *
 * Tunable (ckbench tune passes -DNAME=VALUE):
 *   NPB    pages per softmax block: the K/V working set and how often the
 *          online softmax rescales
 *   SPLIT  pages per work item, 0 = whole sequences: the KV split
 *   MMA    0: both matmuls on vdpbf16ps as above; 1: K, V and P widened to
 *          f32 (exactly: a bf16 is the top half of an f32) when packed, and
 *          both matmuls on f32 FMA. Which wins is the machine's: on the Xeon
 *          this was tuned on, vdpbf16ps issues at a quarter of the FMA rate
 *          (measured), so FMA does twice the flops.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "ckbench.h"

#ifndef NPB
#define NPB 2
#endif
#ifndef SPLIT
#define SPLIT 32
#endif
#ifndef MMA
#define MMA 1
#endif

#if NPB < 1
#error "NPB must be at least 1"
#endif
#if SPLIT < 0
#error "SPLIT must be 0 (whole sequences) or a page count"
#endif

#define PA_G (HQ / HKV)        /* query heads per kv head */
#define PA_L (PPS * PS)        /* cache positions of a sequence */
#define PA_SPLIT (SPLIT > 0 && SPLIT < PPS ? SPLIT : PPS)
#define PA_NCH ((PPS + PA_SPLIT - 1) / PA_SPLIT) /* most items of one sequence */

/* Pages per block, and the state rows of an item: each kv head's G query
 * rows padded to whole 4-row tiles. */
#define PK_BK (NPB * PS)
#define PK_ROWS (HKV * ((PA_G + 3) / 4 * 4))
#include "ckb_kit_paged.h"

/* Positions attended by sequence i: its kv_len, at most L. */
static inline int64_t pa__len(const int32_t *kv_lens, int64_t i)
{
    return kv_lens[i] < PA_L ? kv_lens[i] : PA_L;
}

/* A sequence with no valid key is a constant row: uniform over all L
 * positions, P = bf16(1/L) as in the baseline, in f32. */
static void pa__uniform(const ckb_bf16 *v_pages, const int32_t *pages, int64_t i, ckb_bf16 *out)
{
    const float u = ckb_bf16_to_f32(ckb_f32_to_bf16(1.0f / (float)PA_L));
    for (int64_t kh = 0; kh < HKV; kh++) {
        float acc[D];
        for (int64_t d = 0; d < D; d++)
            acc[d] = 0.0f;
        for (int64_t j = 0; j < PA_L; j++) {
            const ckb_bf16 *v = v_pages + (pk__slot(pages, i, j) * HKV + kh) * D;
            for (int64_t d = 0; d < D; d++)
                acc[d] += u * ckb_bf16_to_f32(v[d]);
        }
        for (int64_t g = 0; g < PA_G; g++)
            for (int64_t d = 0; d < D; d++)
                out[((i * HQ) + kh * PA_G + g) * D + d] = ckb_f32_to_bf16(acc[d]);
    }
}

/* One row of a partial: max, sum, then the unnormalised output padded to
 * 16-wide vectors (the AVX-512 path's rows; the AVX2 path zero-fills
 * past its own). */
#define PA_PD ((D + 15) / 16 * 16)
/* Partial result of one item, per query head: max, sum, unnormalised row. */
#define PA_PART (PA_PD + 16)
#define PA_PART_BYTES ((size_t)NS * PA_NCH * HQ * PA_PART * 4)

/* One unit of work: pages [pg0, pg1) of sequence seq, the part-th of its
 * nparts items. */
typedef struct {
    int32_t seq, pg0, pg1, part, nparts;
} pa__item;

/* The items of every sequence with a valid key, longest first: a counting
 * sort on the page count (no qsort: see DESIGN). Returns how many. */
__attribute__((unused)) static int64_t pa__items(const int32_t *kv_lens, pa__item *it, int32_t *nparts)
{
    int64_t n = 0;
    for (int64_t c = PA_SPLIT; c >= 1; c--)
        for (int64_t i = 0; i < NS; i++) {
            const int64_t len = pa__len(kv_lens, i);
            const int64_t npg = len > 0 ? (len + PS - 1) / PS : 0;
            nparts[i] = (int32_t)((npg + PA_SPLIT - 1) / PA_SPLIT);
            for (int64_t part = 0; part * PA_SPLIT < npg; part++) {
                int64_t pg0 = part * PA_SPLIT, pg1 = pg0 + PA_SPLIT < npg ? pg0 + PA_SPLIT : npg;
                if (pg1 - pg0 == c)
                    it[n++] = (pa__item){(int32_t)i, (int32_t)pg0, (int32_t)pg1, (int32_t)part,
                                         nparts[i]};
            }
        }
    return n;
}

/* Merges the nparts partials of sequence i, query head h, into out. */
__attribute__((unused)) static void pa__merge(const float *part, int64_t i, int64_t h, int64_t nparts, ckb_bf16 *out)
{
    float mx = -INFINITY;
    for (int64_t c = 0; c < nparts; c++) {
        float m = part[((i * PA_NCH + c) * HQ + h) * PA_PART];
        mx = m > mx ? m : mx;
    }
    float sum = 0.0f, acc[PA_PD];
    for (int64_t d = 0; d < PA_PD; d++)
        acc[d] = 0.0f;
    for (int64_t c = 0; c < nparts; c++) {
        const float *src = part + ((i * PA_NCH + c) * HQ + h) * PA_PART;
        const float w = exp2f(src[0] - mx);
        sum += w * src[1];
        for (int64_t d = 0; d < PA_PD; d++)
            acc[d] += w * src[16 + d];
    }
    for (int64_t d = 0; d < D; d++)
        out[(i * HQ + h) * D + d] = ckb_f32_to_bf16(acc[d] / sum);
}

#ifdef PK_AVX512 /* AVX-512 F/BW/VL; vdpbf16ps only where MMA=0 */

#include <immintrin.h>

/* The packed layout is the paged kit's (expert-kit/ckb_kit_paged.h: PK_R
 * rows a tile, q and K rows PK_DP d pairs or PK_DQ f32, output rows PK_DO,
 * blocks of PK_BKS keys). */
#define PA_GP ((PA_G + PK_R - 1) / PK_R * PK_R) /* rows per kv head, padded */
#define PA_BKEYS (NPB * PS)           /* keys per block */
#define PA_BK PK_BKS
#define PA_EB (MMA ? 4 : 2)           /* bytes of a packed q, K, V or P value */
#define PA_ROWS (HKV * PA_GP)         /* state rows of an item */

/* Online softmax of one row tile (state rows row0..row0+3) over nk valid
 * keys of a block of width w16: writes P (bf16, or its value in f32 where
 * MMA, zero past nk), updates m and l, returns in alpha how much each
 * row's old output shrinks. */
static inline __attribute__((always_inline)) void pa__softmax(pk__state *sc, int64_t row0,
                                                              int64_t nk, int64_t w16,
                                                              float *alpha)
{
    for (int r = 0; r < PK_R; r++) {
        const float *s = sc->s + r * PA_BK;
        alpha[r] = ckb_kit_attn_row16(s, (char *)sc->p + r * PA_BK * PA_EB, nk, w16,
                                      ckb_kit_attn_max16(s, nk), PK_C2, sc->m + row0 + r,
                                      sc->l + 16 * (row0 + r), MMA != 0, 0);
    }
}

/* One block of nk keys from position j0 of sequence i, kv head kh, against
 * that head's PA_GP query rows. */
static void pa__block(const ckb_bf16 *k_pages, const ckb_bf16 *v_pages, const int32_t *pages,
                      int64_t i, int64_t kh, int64_t j0, int64_t nk, pk__state *sc)
{
    const int64_t w16 = (nk + 15) / 16 * 16, nv = w16 / 16;
    for (int64_t g = 0; g < nv; g++) {
        const ckb_bf16 *kr[16];
        for (int jj = 0; jj < 16; jj++) {
            int64_t j = 16 * g + jj;
            kr[jj] = j < nk ? k_pages + (pk__slot(pages, i, j0 + j) * HKV + kh) * D : NULL;
        }
#if MMA
        /* pairs first, then each pair split into its two f32 */
        uint32_t pairs[PK_DP * 16] __attribute__((aligned(64)));
        pk__pack_k16(kr, pairs);
        ckb_kit_pairs_f32(pairs, PK_DP, (float *)sc->kp + g * PK_DQ * 16);
        for (int jj = 0; jj < 16; jj++) {
            const int64_t j = 16 * g + jj;
            const ckb_bf16 *vr = j < nk ? v_pages + (pk__slot(pages, i, j0 + j) * HKV + kh) * D : NULL;
            float *vf = (float *)sc->vp + j * PK_DO;
            for (int64_t d = 0; d < PK_DO; d += 16) {
                __m256i x = vr ? _mm256_maskz_loadu_epi16(ckb_kit_mask16(D - d), vr + d)
                               : _mm256_setzero_si256();
                _mm512_store_si512(vf + d, _mm512_slli_epi32(_mm512_cvtepu16_epi32(x), 16));
            }
        }
#else
        pk__pack_k16(kr, sc->kp + g * PK_DP * 16);
        for (int t = 0; t < 8; t++) {
            int64_t j = 16 * g + 2 * t;
            const ckb_bf16 *a = j < nk ? v_pages + (pk__slot(pages, i, j0 + j) * HKV + kh) * D : NULL;
            const ckb_bf16 *b =
                j + 1 < nk ? v_pages + (pk__slot(pages, i, j0 + j + 1) * HKV + kh) * D : NULL;
            ckb_kit_attn_pack_v2(a, b, D, PK_DO, sc->vp + (8 * g + t) * 2 * PK_DO);
        }
#endif
    }
    for (int64_t rt = 0; rt < PA_GP; rt += PK_R) {
        const int64_t row0 = kh * PA_GP + rt;
        /* a 16-key group of K, a 16-wide d chunk of V: 64 bytes a row in
         * both units' layouts */
#define PA_QK(n) pk__qk((const char *)sc->q + row0 * PK_DQ * PA_EB, (const char *)sc->kp + v * PK_DQ * 16 * PA_EB, sc->s + 16 * v, n)
#define PA_PV(n) pk__pv(sc->p, (const char *)sc->vp + 64 * c, ot + 16 * c, alpha, nv * 16, n)
        int64_t v = 0;
        CKB_KIT_ATTN_TILES(v, nv, 4, PA_QK);
        float alpha[PK_R];
        pa__softmax(sc, row0, nk, w16, alpha);
        float *ot = sc->o + row0 * PK_DO;
        int c = 0;
        CKB_KIT_ATTN_TILES(c, PK_DV, 4, PA_PV);
#undef PA_QK
#undef PA_PV
    }
}

/* One item: pages [pg0, pg1) of sequence i. Writes out directly when the
 * item is the whole sequence, else its partial. */
static void pa__item_run(const ckb_bf16 *queries, const ckb_bf16 *k_pages, const ckb_bf16 *v_pages,
                         const int32_t *kv_lens, const int32_t *pages, const int32_t *cu_q_lens,
                         ckb_bf16 *out, float *part, const pa__item *it, pk__state *sc)
{
    const int64_t i = it->seq, len = pa__len(kv_lens, i);
    const ckb_bf16 *q = queries + pk__clamp(cu_q_lens[i], NT - 1) * HQ * D;
    memset(sc->q, 0, PK_SZ_Q);
    for (int64_t kh = 0; kh < HKV; kh++)
        for (int64_t g = 0; g < PA_G; g++)
        {
            const ckb_bf16 *src = q + (kh * PA_G + g) * D;
#if MMA
            for (int64_t d = 0; d < D; d++)
                ((float *)sc->q)[(kh * PA_GP + g) * PK_DQ + d] = ckb_bf16_to_f32(src[d]);
#else
            memcpy(sc->q + (kh * PA_GP + g) * PK_DP, src, (size_t)D * 2);
#endif
        }
    ckb_kit_attn_reset(sc->o, PK_DO, sc->l, 16, sc->m, PA_ROWS);

    const int64_t jend = (int64_t)it->pg1 * PS < len ? (int64_t)it->pg1 * PS : len;
    for (int64_t j0 = (int64_t)it->pg0 * PS; j0 < jend; j0 += PA_BKEYS) {
        const int64_t nk = jend - j0 < PA_BKEYS ? jend - j0 : PA_BKEYS;
        for (int64_t kh = 0; kh < HKV; kh++)
            pa__block(k_pages, v_pages, pages, i, kh, j0, nk, sc);
    }

    for (int64_t kh = 0; kh < HKV; kh++)
        for (int64_t g = 0; g < PA_G; g++) {
            const int64_t row = kh * PA_GP + g, h = kh * PA_G + g;
            const float sum = ckb_kit_attn_sum16(sc->l + 16 * row);
            if (it->nparts > 1) {
                float *dst = part + ((i * PA_NCH + it->part) * HQ + h) * PA_PART;
                dst[0] = sc->m[row];
                dst[1] = sum;
                memcpy(dst + 16, sc->o + row * PK_DO, (size_t)PK_DO * 4);
                continue;
            }
            ckb_kit_attn_out16(sc->o + row * PK_DO, sum, D, out + (i * HQ + h) * D);
        }
}

#elif defined(PK_AVX2)

/* AVX2 + FMA: the paged kit's f32 core (expert-kit/ckb_kit_paged.h). An
 * item's state rows are each kv head's G query rows padded to whole 4-row
 * tiles (pad rows are zero queries, computed and never stored); each block
 * of NPB pages is packed and attended one kv head at a time. */
#define PA_GP ((PA_G + 3) / 4 * 4)

/* One item: pages [pg0, pg1) of sequence i. Writes out directly when the
 * item is the whole sequence, else its partial. */
static void pa__item_run(const ckb_bf16 *queries, const ckb_bf16 *k_pages, const ckb_bf16 *v_pages,
                         const int32_t *kv_lens, const int32_t *pages, const int32_t *cu_q_lens,
                         ckb_bf16 *out, float *part, const pa__item *it, pk__state *sc)
{
    const int64_t i = it->seq, len = pa__len(kv_lens, i);
    const ckb_bf16 *q = queries + pk__clamp(cu_q_lens[i], NT - 1) * HQ * D;
    for (int64_t kh = 0; kh < HKV; kh++)
        for (int64_t g = 0; g < PA_GP; g++) {
            ckb_kit_widen8(g < PA_G ? q + (kh * PA_G + g) * D : NULL, D, PK_DO,
                           sc->q + (kh * PA_GP + g) * PK_DO);
            sc->n[kh * PA_GP + g] = len;
        }
    pk__reset(sc, PK_ROWS);

    const ckb_bf16 *kr[PK_BK], *vr[PK_BK];
    const int64_t jend = (int64_t)it->pg1 * PS < len ? (int64_t)it->pg1 * PS : len;
    for (int64_t j0 = (int64_t)it->pg0 * PS; j0 < jend; j0 += PK_BK) {
        const int64_t nk = jend - j0 < PK_BK ? jend - j0 : PK_BK;
        for (int64_t kh = 0; kh < HKV; kh++) {
            for (int64_t j = 0; j < nk; j++) {
                const int64_t row = pk__slot(pages, i, j0 + j) * HKV + kh;
                kr[j] = k_pages + row * D;
                vr[j] = v_pages + row * D;
            }
            pk__pack(kr, vr, nk, sc);
            pk__attend(sc, kh * PA_GP, PA_GP, j0, nk);
        }
    }

    for (int64_t kh = 0; kh < HKV; kh++)
        for (int64_t g = 0; g < PA_G; g++) {
            const int64_t row = kh * PA_GP + g, h = kh * PA_G + g;
            if (it->nparts > 1) {
                float *dst = part + ((i * PA_NCH + it->part) * HQ + h) * PA_PART;
                dst[0] = sc->m[row];
                dst[1] = pk__row_sum(sc, row);
                for (int64_t d = 0; d < PA_PD; d++)
                    dst[16 + d] = d < PK_DO ? sc->o[row * PK_DO + d] : 0.0f;
                continue;
            }
            pk__row_out(sc, row, out + (i * HQ + h) * D);
        }
}

#endif /* ISA sections */

#if defined(PK_AVX512) || defined(PK_AVX2)

void workload(const ckb_bf16 *queries, const ckb_bf16 *k_pages, const ckb_bf16 *v_pages,
              const int32_t *kv_lens, const int32_t *page_indices, const int32_t *cu_q_lens,
              ckb_bf16 *out)
{
    const int nthreads = omp_get_max_threads();
    const size_t item_bytes = PK_ROUND64((size_t)NS * PA_NCH * sizeof(pa__item));
    const size_t nparts_bytes = PK_ROUND64((size_t)NS * sizeof(int32_t));
    char *mem = ckb_kit_alloc64(item_bytes + nparts_bytes + (size_t)nthreads * PK_STATE_BYTES);
    if (!mem)
        return; /* out of memory: the output stays as it was and fails the check */
    pa__item *items = (pa__item *)mem;
    int32_t *nparts = (int32_t *)(mem + item_bytes);
    char *scratch = mem + item_bytes + nparts_bytes;
    const int64_t nitems = pa__items(kv_lens, items, nparts);
    int split = 0;
    for (int64_t i = 0; i < NS; i++)
        split |= nparts[i] > 1;
    /* Partials only where some sequence is cut in several items. */
    float *part = split ? ckb_kit_alloc64(PA_PART_BYTES) : NULL;
    if (split && !part) {
        free(mem);
        return;
    }

#pragma omp parallel num_threads(nthreads)
    {
        pk__state sc;
        pk__state_carve(scratch + (size_t)omp_get_thread_num() * PK_STATE_BYTES, &sc);
#pragma omp for schedule(dynamic, 1) nowait
        for (int64_t x = 0; x < nitems; x++)
            pa__item_run(queries, k_pages, v_pages, kv_lens, page_indices, cu_q_lens, out, part,
                         &items[x], &sc);
#pragma omp for schedule(dynamic, 1)
        for (int64_t i = 0; i < NS; i++)
            if (pa__len(kv_lens, i) <= 0)
                pa__uniform(v_pages, page_indices, i, out);
        if (split) {
#pragma omp for schedule(static)
            for (int64_t x = 0; x < NS * HQ; x++)
                if (nparts[x / HQ] > 1)
                    pa__merge(part, x / HQ, x % HQ, nparts[x / HQ], out);
        }
    }
    free(part);
    free(mem);
}

#else /* portable path: no AVX-512, no AVX2 */

/* One query head of one sequence: the paged kit's portable row (pk__row1)
 * over its K and V pages. */
static void pa__row(const ckb_bf16 *queries, const ckb_bf16 *k_pages, const ckb_bf16 *v_pages,
                    const int32_t *kv_lens, const int32_t *pages, const int32_t *cu_q_lens,
                    ckb_bf16 *out, int64_t i, int64_t h, float *p)
{
    const int64_t kh = h / PA_G;
    pk__row1(queries + (pk__clamp(cu_q_lens[i], NT - 1) * HQ + h) * D, k_pages + kh * D,
             v_pages + kh * D, HKV * D, pages, i, pa__len(kv_lens, i), p, out + (i * HQ + h) * D);
}

void workload(const ckb_bf16 *queries, const ckb_bf16 *k_pages, const ckb_bf16 *v_pages,
              const int32_t *kv_lens, const int32_t *page_indices, const int32_t *cu_q_lens,
              ckb_bf16 *out)
{
    const int nthreads = omp_get_max_threads();
    float *mem = malloc((size_t)nthreads * PA_L * sizeof *mem);
    if (!mem)
        return; /* out of memory: the output stays as it was and fails the check */
#pragma omp parallel num_threads(nthreads)
    {
        float *p = mem + (size_t)omp_get_thread_num() * PA_L;
#pragma omp for schedule(dynamic, 1)
        for (int64_t x = 0; x < NS * HQ; x++) {
            const int64_t i = x / HQ;
            if (pa__len(kv_lens, i) > 0)
                pa__row(queries, k_pages, v_pages, kv_lens, page_indices, cu_q_lens, out, i,
                        x % HQ, p);
            else if (x % HQ == 0)
                pa__uniform(v_pages, page_indices, i, out);
        }
    }
    free(mem);
}

#endif /* PK_AVX512 || PK_AVX2 */
