/*
 * 7p_Ragged_Paged_Attention — mixed prefill + decode attention over a paged
 * KV cache, Llama-3.1-70B GQA shapes (JAXBench
 * benchmark/7p_Ragged_Paged_Attention, JAX's ref_ragged_paged_attention
 * with static shapes). Sequence i < num_seqs takes the TPS query tokens
 * from row cu_q_lens[i] of queries; they are the last TPS of its kv_lens[i]
 * tokens, so row t sits at position kv_lens[i] - TPS + t and attends the
 * cached keys at positions <= its own (causal) and < kv_lens[i], gathered
 * through page_indices[i] from kv_pages, whose head axis interleaves K (even)
 * and V (odd). Query head h reads kv head h / G (G = HQ / HKV). Masked
 * scores are -0.7 * FLT_MAX; sequences >= num_seqs give zeros.
 * out[i * TPS + t, h] for every i < NS. bf16 queries/pages/out, int32 tables.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/ops.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

enum { NS, TPS, NT, HQ, HKV, HKV2, D, PS, PPS, NP, NS1 };
enum { T_QUERIES, T_KV_PAGES, T_KV_LENS, T_PAGE_INDICES, T_CU_Q_LENS, T_NUM_SEQS, T_OUT };

/* JAX's DEFAULT_MASK_VALUE: finite, so a row with every key masked is a
 * constant row and its softmax is uniform, not NaN. */
#define RAGGED_MASK_VALUE (-0.7f * FLT_MAX)

/* ---- inputs -------------------------------------------------------------- */

static uint64_t ragged_draw(uint64_t seed, uint64_t stream, uint64_t i)
{
    return ckb_hash64(ckb_hash64(seed, 0x7a99edull + stream), i);
}

/* n lengths in [lo, hi] summing to exactly `total` (n*lo <= total <= n*hi):
 * uniform draws, then the difference spread over the entries from a
 * seed-dependent start, at most about |diff|/n per entry and pass. */
static void ragged_lengths(int32_t *len, int64_t n, int64_t lo, int64_t hi, int64_t total,
                           uint64_t seed, uint64_t stream)
{
    int64_t diff = total;
    for (int64_t i = 0; i < n; i++) {
        len[i] = (int32_t)(lo + (int64_t)(ragged_draw(seed, stream, (uint64_t)i) %
                                          (uint64_t)(hi - lo + 1)));
        diff -= len[i];
    }
    for (uint64_t pass = 0; diff != 0; pass++) {
        const int64_t cap = llabs(diff) / n + 1;
        const int64_t start = (int64_t)(ragged_draw(seed, stream, (uint64_t)n + pass) % (uint64_t)n);
        for (int64_t k = 0; k < n && diff != 0; k++) {
            int32_t *l = &len[(start + k) % n];
            int64_t step = diff > 0 ? hi - *l : lo - *l; /* the room, signed like diff */
            if (llabs(step) > llabs(diff))
                step = diff;
            if (llabs(step) > cap)
                step = step > 0 ? cap : -cap;
            *l += (int32_t)step;
            diff -= step;
        }
    }
}

static void ragged_create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    const int64_t ns = d[NS], tps = d[TPS], np = d[NP], len = d[PPS] * d[PS];
    int32_t *kv_lens = t[T_KV_LENS], *pages = t[T_PAGE_INDICES], *cu = t[T_CU_Q_LENS];
    int32_t *num_seqs = t[T_NUM_SEQS];

    /* JAXBench: q, kv ~ N(0, 1) (kept), every sequence full length and
     * valid, page table = arange, cu_q_lens = arange * TPS: a kernel that
     * ignored the lengths, the page table, cu_q_lens or num_seqs would
     * pass. Here q gets a per-seed scale in [0.75, 1.25) and the tables
     * below. */
    ckb_fill_normal_bf16(t[T_QUERIES], d[NT] * d[HQ] * d[D], seed, T_QUERIES, 0.0f,
                         ckb_seed_factor(seed, T_QUERIES, 0.75f, 1.25f));
    ckb_fill_normal_bf16(t[T_KV_PAGES], np * d[PS] * d[HKV2] * d[D], seed, T_KV_PAGES, 0.0f,
                         1.0f);

    /* num_seqs: an even count in [NS/2, NS - 2], different for consecutive
     * seeds; the sequences after it are padding (no tokens, kv_len 0). */
    const int64_t nchoice = (ns / 2 - 2) / 2 + 1, n = ns / 2 + 2 * (int64_t)(seed % (uint64_t)nchoice);
    num_seqs[0] = (int32_t)n;

    /* Lengths: about a quarter of the valid sequences are prefills
     * (kv_len = TPS: the window is the whole prompt, a causal triangle),
     * the rest continue a cached sequence (kv_len in [TPS, L]). The sum is
     * chosen so that the number of unmasked (query, key) pairs is exactly
     * TPS * NS * L / 4 for every even n (flops, below). */
    const int64_t total = ns * len / 4 + n * (tps - 1) / 2;
    const int64_t prefill = (int64_t)(seed % 4); /* every 4th valid one, from here */
    int64_t nadj = 0, rest = total;
    for (int64_t i = 0; i < n; i++)
        if (i % 4 == prefill)
            rest -= tps;
        else
            nadj++;
    int32_t *adj = malloc((size_t)nadj * sizeof *adj);
    if (!adj)
        abort();
    ragged_lengths(adj, nadj, tps, len, rest, seed, T_KV_LENS);
    for (int64_t i = 0, k = 0; i < ns; i++)
        kv_lens[i] = i >= n ? 0 : i % 4 == prefill ? (int32_t)tps : adj[k++];
    free(adj);

    /* The page table: a random permutation of all NP pages (Fisher-Yates). */
    for (int64_t i = 0; i < np; i++)
        pages[i] = (int32_t)i;
    for (int64_t i = np - 1; i > 0; i--) {
        const int64_t j = (int64_t)(ragged_draw(seed, T_PAGE_INDICES, (uint64_t)i) % (uint64_t)(i + 1));
        const int32_t tmp = pages[i];
        pages[i] = pages[j];
        pages[j] = tmp;
    }

    /* The windows: sequence i's TPS tokens start at cu_q_lens[i], increasing
     * from 0 with 0..TPS/4 padding slots after each window (the buffer has
     * room: the padding sequences hold none of its NT = NS * TPS rows), so
     * a kernel must read them through cu_q_lens. Padding sequences repeat
     * the end offset (q_len 0). */
    int64_t spare = d[NT] - n * tps;
    cu[0] = 0;
    for (int64_t i = 0; i < ns; i++) {
        if (i >= n) {
            cu[i + 1] = cu[i];
            continue;
        }
        int64_t gap = (int64_t)(ragged_draw(seed, T_CU_Q_LENS, (uint64_t)i) % (uint64_t)(tps / 4 + 1));
        gap = gap < spare ? gap : spare;
        spare -= gap;
        cu[i + 1] = cu[i] + (int32_t)(tps + gap);
    }
}

/* ---- kernels --------------------------------------------------------------- */

/* Index clamping as JAX does it: dynamic_slice moves a start into bounds,
 * and the gather clamps a page index, so a zeroed or reversed table is
 * still read in bounds. */
static int64_t ragged_clamp(int64_t x, int64_t hi) { return x < 0 ? 0 : x > hi ? hi : x; }

/*
 * As XLA materialises it (for all NS sequences at once, where JAX unrolls a
 * loop over them): the dynamic_slice of each window of queries, the gather
 * of every one of a sequence's PPS pages into contiguous [HKV, L, D] copies
 * of K and V (all L positions, the masked ones too), one batched matmul
 * writing every score in f32, a row loop that masks and normalises, a
 * batched P @ V, and the transpose into the output with the padding
 * sequences zeroed. jnp.repeat is not copied: the G query heads of kv head
 * g are the G*TPS rows of one matmul against that head's keys (a copy
 * would multiply the K/V traffic by G). Scores f32 and P bf16, exactly
 * JAX's precision here.
 */
static void ragged_baseline(const int64_t *d, void *const *t)
{
    const int64_t ns = d[NS], tps = d[TPS], hq = d[HQ], hkv = d[HKV], hkv2 = d[HKV2];
    const int64_t hd = d[D], ps = d[PS], pps = d[PPS], len = pps * ps, g = hq / hkv;
    const int64_t rows = g * tps; /* query rows per (sequence, kv head) */
    const ckb_bf16 *queries = t[T_QUERIES], *kvp = t[T_KV_PAGES];
    const int32_t *kv_lens = t[T_KV_LENS], *pages = t[T_PAGE_INDICES], *cu = t[T_CU_Q_LENS];
    const int64_t nvalid = *(const int32_t *)t[T_NUM_SEQS];
    ckb_bf16 *out = t[T_OUT];
    /* Reused between calls, as XLA's buffer assignment reuses temporaries. */
    float *scores = ckb_scratch(0, (size_t)(ns * hq * tps * len) * sizeof(float));
    ckb_bf16 *p = ckb_scratch(1, (size_t)(ns * hq * tps * len) * sizeof(ckb_bf16));
    ckb_bf16 *qg = ckb_scratch(2, (size_t)(ns * hq * tps * hd) * sizeof(ckb_bf16));
    ckb_bf16 *kg = ckb_scratch(3, (size_t)(ns * hkv * len * hd) * sizeof(ckb_bf16));
    ckb_bf16 *vg = ckb_scratch(4, (size_t)(ns * hkv * len * hd) * sizeof(ckb_bf16));
    ckb_bf16 *og = ckb_scratch(5, (size_t)(ns * hq * tps * hd) * sizeof(ckb_bf16));
    const size_t row = (size_t)hd * sizeof(ckb_bf16);

    /* Windows [TPS, HQ, D] -> [HKV, G * TPS, D] per sequence. */
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t i = 0; i < ns; i++)
        for (int64_t tk = 0; tk < tps; tk++) {
            const int64_t start = ragged_clamp(cu[i], d[NT] - tps);
            for (int64_t h = 0; h < hq; h++)
                memcpy(qg + ((i * hkv + h / g) * rows + h % g * tps + tk) * hd,
                       queries + ((start + tk) * hq + h) * hd, row);
        }
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t i = 0; i < ns; i++)
        for (int64_t pg = 0; pg < pps; pg++) {
            const int64_t page = ragged_clamp(pages[i * pps + pg], d[NP] - 1);
            for (int64_t tok = 0; tok < ps; tok++)
                for (int64_t h = 0; h < hkv; h++) {
                    const int64_t src = ((page * ps + tok) * hkv2 + 2 * h) * hd;
                    const int64_t dst = ((i * hkv + h) * len + pg * ps + tok) * hd;
                    memcpy(kg + dst, kvp + src, row);
                    memcpy(vg + dst, kvp + src + hd, row);
                }
        }

    ckb_matmul_spec qk = {0};
    qk.batch = ns * hkv, qk.M = rows, qk.K = hd, qk.N = len;
    qk.a_type = qk.b_type = CKB_BF16, qk.c_type = CKB_F32;
    qk.b_transposed = 1;
    qk.out_scale = (float)(1.0 / sqrt((double)hd));
    ckb_dnnl_matmul(&qk, qg, kg, NULL, scores);

    /* Row r is window token r % TPS of sequence r / (HQ * TPS). Key j is
     * valid iff j <= kv_len - TPS + t (and j < kv_len, implied); masked
     * scores contribute exactly 0 beside a valid one, and a row with none
     * valid (kv_len < TPS - t) is uniform over all L, as in JAX. */
#pragma omp parallel for schedule(dynamic, 16)
    for (int64_t r = 0; r < ns * hq * tps; r++) {
        const int64_t last = (int64_t)kv_lens[r / (hq * tps)] - tps + r % tps;
        const int64_t n = last + 1 < len ? last + 1 : len;
        float *srow = scores + r * len;
        ckb_bf16 *prow = p + r * len;
        if (n <= 0) {
            const ckb_bf16 u = ckb_f32_to_bf16(1.0f / (float)len);
            for (int64_t j = 0; j < len; j++)
                prow[j] = u;
            continue;
        }
        ckb_op_softmax(srow, n);
#pragma omp simd
        for (int64_t j = 0; j < n; j++)
            prow[j] = ckb_f32_to_bf16(srow[j]);
        memset(prow + n, 0, (size_t)(len - n) * sizeof *prow);
    }

    ckb_matmul_spec pv = {0};
    pv.batch = ns * hkv, pv.M = rows, pv.K = len, pv.N = hd;
    pv.a_type = pv.b_type = pv.c_type = CKB_BF16;
    ckb_dnnl_matmul(&pv, p, vg, NULL, og);

    /* [HKV, G * TPS, D] -> [TPS, HQ, D] per sequence; padding ones zeroed. */
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t i = 0; i < ns; i++)
        for (int64_t tk = 0; tk < tps; tk++)
            for (int64_t h = 0; h < hq; h++) {
                ckb_bf16 *dst = out + ((i * tps + tk) * hq + h) * hd;
                if (i < nvalid)
                    memcpy(dst, og + ((i * hkv + h / g) * rows + h % g * tps + tk) * hd, row);
                else
                    memset(dst, 0, row);
            }
}

/* The JAX program literally (every position of every page, both masks at
 * -0.7 * FLT_MAX, softmax over the whole row, then where(i < num_seqs))
 * with its precision (f32 scores and softmax, bf16 P). */
static void ragged_reference(const int64_t *d, void *const *t)
{
    const int64_t tps = d[TPS], hq = d[HQ], hkv = d[HKV], hkv2 = d[HKV2], hd = d[D];
    const int64_t ps = d[PS], pps = d[PPS], len = pps * ps, g = hq / hkv;
    const ckb_bf16 *queries = t[T_QUERIES], *kvp = t[T_KV_PAGES];
    const int32_t *kv_lens = t[T_KV_LENS], *pages = t[T_PAGE_INDICES], *cu = t[T_CU_Q_LENS];
    const int64_t nvalid = *(const int32_t *)t[T_NUM_SEQS];
    ckb_bf16 *out = t[T_OUT];
    const float scale = (float)(1.0 / sqrt((double)hd));
#pragma omp parallel for
    for (int64_t r = 0; r < d[NS] * tps * hq; r++) {
        const int64_t i = r / (tps * hq), tk = r / hq % tps, h = r % hq, kh = h / g;
        const int64_t kvl = kv_lens[i], qpos = kvl - tps + tk;
        const ckb_bf16 *q = queries + ((ragged_clamp(cu[i], d[NT] - tps) + tk) * hq + h) * hd;
        float *row = malloc((size_t)len * sizeof *row);
        if (!row)
            abort();
        float mx = -INFINITY, sum = 0.0f;
        for (int64_t j = 0; j < len; j++) {
            const int64_t page = ragged_clamp(pages[i * pps + j / ps], d[NP] - 1);
            const ckb_bf16 *k = kvp + ((page * ps + j % ps) * hkv2 + 2 * kh) * hd;
            float acc = 0.0f;
            for (int64_t c = 0; c < hd; c++)
                acc += ckb_bf16_to_f32(q[c]) * ckb_bf16_to_f32(k[c]);
            row[j] = (qpos < j || j >= kvl) ? RAGGED_MASK_VALUE : acc * scale;
            mx = fmaxf(mx, row[j]);
        }
        for (int64_t j = 0; j < len; j++) {
            row[j] = expf(row[j] - mx);
            sum += row[j];
        }
        for (int64_t j = 0; j < len; j++)
            row[j] = ckb_bf16_to_f32(ckb_f32_to_bf16(row[j] / sum));
        for (int64_t c = 0; c < hd; c++) {
            float acc = 0.0f;
            for (int64_t j = 0; j < len; j++) {
                const int64_t page = ragged_clamp(pages[i * pps + j / ps], d[NP] - 1);
                acc += row[j] * ckb_bf16_to_f32(kvp[((page * ps + j % ps) * hkv2 + 2 * kh + 1) * hd + c]);
            }
            out[r * hd + c] = i < nvalid ? ckb_f32_to_bf16(acc) : 0;
        }
        free(row);
    }
}

/* Useful flops: QK^T and PV at 2*D per unmasked (query, key) pair and query
 * head; the inputs make the pairs exactly TPS * NS * L / 4. JAXBench counts
 * every sequence valid and every key unmasked, 4*NS*HQ*TPS*L*D, four times
 * this. */
static double ragged_flops(const int64_t *d)
{
    return (double)d[HQ] * d[D] * d[TPS] * d[NS] * d[PPS] * d[PS];
}

static double ragged_bytes(const int64_t *d)
{
    return 2.0 * (2.0 * d[NT] * d[HQ] * d[D] + (double)d[NP] * d[PS] * d[HKV2] * d[D]) +
           4.0 * ((double)d[NS] + (double)d[NS] * d[PPS] + (double)d[NS1] + 1.0);
}

const ckb_workload ckb_wl_7p_Ragged_Paged_Attention = {
    .id = "7p_Ragged_Paged_Attention",
    .model = "Llama-3.1-70B",
    .op = "ragged_paged_attention",
    .tags = "attention,paged",
    .summary = "mixed prefill/decode GQA attention over a paged KV cache: per valid sequence a "
               "window of TPS query rows from cu_q_lens[i], causal at offset kv_lens[i] - TPS, "
               "keys gathered through page_indices[i] from interleaved K/V pages; bf16 in/out, "
               "int32 tables, f32 scores, bf16 P",
    .ndims = 11,
    .dims = {{"NS", {8, 16, 64}},
             {"TPS", {16, 32, 64}},
             {"NT", {128, 512, 4096}},
             {"HQ", {4, 32, 64}},
             {"HKV", {2, 4, 8}},
             {"HKV2", {4, 8, 16}},
             {"D", {128, 128, 128}},
             {"PS", {16, 16, 16}},
             {"PPS", {8, 128, 256}},
             {"NP", {64, 2048, 16384}},
             {"NS1", {9, 17, 65}}},
    .ntensors = 7,
    .tensors = {{"queries", CKB_BF16, CKB_IN, 3, {NT, HQ, D}},
                {"kv_pages", CKB_BF16, CKB_IN, 4, {NP, PS, HKV2, D}},
                {"kv_lens", CKB_I32, CKB_IN, 1, {NS}},
                {"page_indices", CKB_I32, CKB_IN, 2, {NS, PPS}},
                {"cu_q_lens", CKB_I32, CKB_IN, 1, {NS1}},
                {"num_seqs", CKB_I32, CKB_IN, 0, {0}},
                {"out", CKB_BF16, CKB_OUT, 3, {NT, HQ, D}}},
    .create_inputs = ragged_create_inputs,
    .baseline = ragged_baseline,
    .reference = ragged_reference,
    .flops = ragged_flops,
    .bytes = ragged_bytes,
    /* expert.c: query rows per work item, keys per block, the matmul
     * instructions (0: vdpbf16ps, 1: f32 FMA on widened operands, 2: AMX
     * tiles, the FMA path where the compiler does not target AMX). */
    .nparams = 3,
    .params = {{"BQ", 256, 3, {64, 128, 256}},
               {"BK", 64, 2, {64, 128}},
               {"MMA", CKB_PARAM_HOST_UNIT, 3, {0, 1, 2}}},
};
