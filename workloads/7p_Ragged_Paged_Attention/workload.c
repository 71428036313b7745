/*
 * 7p_Ragged_Paged_Attention — mixed prefill + decode attention over a paged
 * KV cache, Llama-3.1-70B GQA shapes, one fixed continuous-batching step
 * (JAXBench benchmark/7p_Ragged_Paged_Attention after upstream c736bd8 and
 * 92c0c5f). Sequence i < num_seqs owns the packed query rows [cu_q_lens[i],
 * cu_q_lens[i + 1]) (q_len of them: 1 for a decode, up to a chunk for a
 * prefill); they are the newest q_len of its kv_lens[i] tokens, so its row
 * t sits at position kv_lens[i] - q_len + t and attends the cached keys at
 * positions <= its own (causal) and < kv_lens[i], gathered through
 * page_indices[i] from kv_pages, whose head axis interleaves K (even) and V
 * (odd). Query head h reads kv head h / G (G = HQ / HKV). Masked scores are
 * -0.7 * FLT_MAX. The answer goes to the same packed rows of out; every
 * other row (past the packed total, or of sequences >= num_seqs) is zero.
 * bf16 queries/pages/out, int32 tables. Two configurations, two mixes of
 * the step (ragged_scenario): prefill (upstream's) and decode.
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

enum { NS, NT, HQ, HKV, HKV2, D, PS, PPS, NP, NS1, NDEC, CHUNK };
enum { T_QUERIES, T_KV_PAGES, T_KV_LENS, T_PAGE_INDICES, T_CU_Q_LENS, T_NUM_SEQS, T_OUT };

/* JAX's DEFAULT_MASK_VALUE: finite, so a row with every key masked is a
 * constant row and its softmax is uniform, not NaN. */
#define RAGGED_MASK_VALUE (-0.7f * FLT_MAX)

/* ---- the scenario ---------------------------------------------------------- */

/* The prefill chunks of a step: what the NDEC decodes leave of the NT-row
 * budget, CHUNK rows each, the last one the remainder. */
static int64_t ragged_nchunks(const int64_t *d)
{
    return (d[NT] - d[NDEC] + d[CHUNK] - 1) / d[CHUNK];
}

/*
 * One serving step as a function of the dims (at paper, configuration
 * prefill, exactly upstream's ACTIVE_Q_LENS / ACTIVE_KV_LENS): slots 0 ..
 * NDEC - 1 are one-token decodes, the next ragged_nchunks(d) prefill chunks
 * of CHUNK rows filling the rest of the NT-row budget (the last the
 * remainder), the others inactive. Decode i has kv_len B PS + 1 + ((73 i)
 * mod (PPS - B)) PS with B = max(1, PPS / 16) pages (spanning the cache,
 * ending on a partial page: upstream's 257 + ((73 i) mod 240) 16 at
 * paper); full chunk k of n has kv_len (k + 2) L / n - 1 (the context
 * after that chunk: 1023, 1535, ... at paper), the remainder L - 1. Writes
 * q_len and kv_len of every slot (zero for the inactive ones) and returns
 * the active count.
 */
static int64_t ragged_scenario(const int64_t *d, int32_t *q_len, int32_t *kv_len)
{
    const int64_t ns = d[NS], len = d[PPS] * d[PS], ndec = d[NDEC];
    const int64_t npre = ragged_nchunks(d), chunk = d[CHUNK];
    const int64_t base = d[PPS] / 16 > 1 ? d[PPS] / 16 : 1, steps = d[PPS] - base;
    for (int64_t i = 0; i < ns; i++) {
        q_len[i] = kv_len[i] = 0;
        if (i < ndec) {
            q_len[i] = 1;
            kv_len[i] = (int32_t)(base * d[PS] + 1 + (73 * i) % steps * d[PS]);
        } else if (i < ndec + npre) {
            const int64_t k = i - ndec, last = k == npre - 1;
            q_len[i] = (int32_t)(last ? d[NT] - ndec - (npre - 1) * chunk : chunk);
            kv_len[i] = (int32_t)(last ? len - 1 : (k + 2) * len / npre - 1);
        }
    }
    return ndec + npre;
}

/* ---- inputs -------------------------------------------------------------- */

static uint64_t ragged_draw(uint64_t seed, uint64_t stream, uint64_t i)
{
    return ckb_hash64(ckb_hash64(seed, 0x7a99edull + stream), i);
}

static void ragged_create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    const int64_t ns = d[NS], np = d[NP];
    int32_t *kv_lens = t[T_KV_LENS], *pages = t[T_PAGE_INDICES], *cu = t[T_CU_Q_LENS];

    /* q, kv ~ N(0, 1) as upstream's (q with a per-seed scale in [0.75,
     * 1.25)); the lengths are the scenario's, the same for every seed. */
    ckb_fill_normal_bf16(t[T_QUERIES], d[NT] * d[HQ] * d[D], seed, T_QUERIES, 0.0f,
                         ckb_seed_factor(seed, T_QUERIES, 0.75f, 1.25f));
    ckb_fill_normal_bf16(t[T_KV_PAGES], np * d[PS] * d[HKV2] * d[D], seed, T_KV_PAGES, 0.0f,
                         1.0f);

    int32_t *q_len = malloc((size_t)ns * sizeof *q_len);
    if (!q_len)
        abort();
    const int64_t nact = ragged_scenario(d, q_len, kv_lens);
    *(int32_t *)t[T_NUM_SEQS] = (int32_t)nact;
    /* cu_q_lens: the prefix sums of q_len, packed from row 0; the inactive
     * slots repeat the total (q_len 0). */
    cu[0] = 0;
    for (int64_t i = 0; i < ns; i++)
        cu[i + 1] = cu[i] + q_len[i];
    free(q_len);

    /* The page table: a random permutation of all NP pages (Fisher-Yates),
     * as upstream's (which fixes its key). */
    for (int64_t i = 0; i < np; i++)
        pages[i] = (int32_t)i;
    for (int64_t i = np - 1; i > 0; i--) {
        const int64_t j = (int64_t)(ragged_draw(seed, T_PAGE_INDICES, (uint64_t)i) % (uint64_t)(i + 1));
        const int32_t tmp = pages[i];
        pages[i] = pages[j];
        pages[j] = tmp;
    }
}

/* ---- kernels --------------------------------------------------------------- */

/* Index clamping as JAX does it: the gather clamps a page index and a
 * query row (upstream's minimum(q_start + offset, NT - 1)), so a zeroed or
 * reversed table is still read in bounds. */
static int64_t ragged_clamp(int64_t x, int64_t hi) { return x < 0 ? 0 : x > hi ? hi : x; }

/* Sequence i's query rows: cu_q_lens[i + 1] - cu_q_lens[i], none when
 * negative, at most NT. */
static int64_t ragged_qlen(const int64_t *d, const int32_t *cu, int64_t i)
{
    return ragged_clamp((int64_t)cu[i + 1] - cu[i], d[NT]);
}

static int64_t ragged_nvalid(const int64_t *d, const void *num_seqs)
{
    return ragged_clamp(*(const int32_t *)num_seqs, d[NS]);
}

/*
 * As XLA materialises upstream's program, whose Python loop over the slots
 * is unrolled into one einsum pair per sequence: here the consecutive valid
 * sequences of equal q_len are one batch (the decodes one, the full chunks
 * another, the remainder a third). Per batch: the gather of
 * its query rows (to [seq, HKV, G * q_len, D]), the gather of every one of a
 * sequence's PPS pages into contiguous [HKV, L, D] copies of K and V (all L
 * positions, the masked ones too), one batched matmul writing every score
 * in f32, a row loop that masks and normalises, a batched P @ V, and the
 * scatter into the packed rows of out, which starts zeroed (upstream's
 * zeros_like(queries) and .at[q_positions].add). jnp.repeat is not copied:
 * the G query heads of kv head g are the G * q_len rows of one matmul
 * against that head's keys. Scores f32 and P bf16, exactly JAX's precision.
 */
static void ragged_batch(const int64_t *d, void *const *t, int64_t i0, int64_t nb, int64_t q)
{
    const int64_t hq = d[HQ], hkv = d[HKV], hkv2 = d[HKV2], hd = d[D], ps = d[PS], pps = d[PPS];
    const int64_t len = pps * ps, g = hq / hkv, nt = d[NT];
    const int64_t rows = g * q; /* query rows per (sequence, kv head) */
    const ckb_bf16 *queries = t[T_QUERIES], *kvp = t[T_KV_PAGES];
    const int32_t *kv_lens = t[T_KV_LENS], *pages = t[T_PAGE_INDICES], *cu = t[T_CU_Q_LENS];
    ckb_bf16 *out = t[T_OUT];
    /* Sized for the largest batch before the first (ragged_baseline). */
    float *scores = ckb_scratch(0, 0);
    ckb_bf16 *p = ckb_scratch(1, 0), *qg = ckb_scratch(2, 0), *kg = ckb_scratch(3, 0);
    ckb_bf16 *vg = ckb_scratch(4, 0), *og = ckb_scratch(5, 0);
    const size_t row = (size_t)hd * sizeof(ckb_bf16);

    /* Query rows [q_len, HQ, D] -> [HKV, G * q_len, D] per sequence. */
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t s = 0; s < nb; s++)
        for (int64_t tk = 0; tk < q; tk++) {
            const int64_t pos = ragged_clamp(cu[i0 + s] + tk, nt - 1);
            for (int64_t h = 0; h < hq; h++)
                memcpy(qg + ((s * hkv + h / g) * rows + h % g * q + tk) * hd,
                       queries + (pos * hq + h) * hd, row);
        }
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t s = 0; s < nb; s++)
        for (int64_t pg = 0; pg < pps; pg++) {
            const int64_t page = ragged_clamp(pages[(i0 + s) * pps + pg], d[NP] - 1);
            for (int64_t tok = 0; tok < ps; tok++)
                for (int64_t h = 0; h < hkv; h++) {
                    const int64_t src = ((page * ps + tok) * hkv2 + 2 * h) * hd;
                    const int64_t dst = ((s * hkv + h) * len + pg * ps + tok) * hd;
                    memcpy(kg + dst, kvp + src, row);
                    memcpy(vg + dst, kvp + src + hd, row);
                }
        }

    ckb_matmul_spec qk = {0};
    qk.batch = nb * hkv, qk.M = rows, qk.K = hd, qk.N = len;
    qk.a_type = qk.b_type = CKB_BF16, qk.c_type = CKB_F32;
    qk.b_transposed = 1;
    qk.out_scale = (float)(1.0 / sqrt((double)hd));
    ckb_dnnl_matmul(&qk, qg, kg, NULL, scores);

    /* Row r is query row r % q of sequence i0 + r / (HQ * q). Key j is
     * valid iff j <= kv_len - q_len + t (and j < kv_len, implied); masked
     * scores contribute exactly 0 beside a valid one, and a row with none
     * valid (kv_len < q_len - t) is uniform over all L, as in JAX. */
#pragma omp parallel for schedule(dynamic, 16)
    for (int64_t r = 0; r < nb * hq * q; r++) {
        const int64_t last = (int64_t)kv_lens[i0 + r / (hq * q)] - q + r % q;
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
    pv.batch = nb * hkv, pv.M = rows, pv.K = len, pv.N = hd;
    pv.a_type = pv.b_type = pv.c_type = CKB_BF16;
    ckb_dnnl_matmul(&pv, p, vg, NULL, og);

    /* [HKV, G * q_len, D] -> the packed rows [q_len, HQ, D]. */
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t s = 0; s < nb; s++)
        for (int64_t tk = 0; tk < q; tk++) {
            const int64_t pos = ragged_clamp(cu[i0 + s] + tk, nt - 1);
            for (int64_t h = 0; h < hq; h++)
                memcpy(out + (pos * hq + h) * hd,
                       og + ((s * hkv + h / g) * rows + h % g * q + tk) * hd, row);
        }
}

static void ragged_baseline(const int64_t *d, void *const *t)
{
    const int64_t hq = d[HQ], hkv = d[HKV], hd = d[D], len = d[PPS] * d[PS];
    const int32_t *cu = t[T_CU_Q_LENS];
    const int64_t nvalid = ragged_nvalid(d, t[T_NUM_SEQS]);
    ckb_bf16 *out = t[T_OUT];

#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < d[NT]; r++)
        memset(out + r * hq * hd, 0, (size_t)(hq * hd) * sizeof *out);

    /* The batches: runs of consecutive valid sequences of equal q_len > 0.
     * The buffers are sized for the largest first, so that no batch
     * reallocates them (reused between calls, as XLA's buffer assignment
     * reuses temporaries). */
    int64_t most_rows = 0, most_seqs = 0;
    for (int64_t i0 = 0, i1; i0 < nvalid; i0 = i1) {
        const int64_t q = ragged_qlen(d, cu, i0);
        for (i1 = i0 + 1; i1 < nvalid && ragged_qlen(d, cu, i1) == q; i1++)
            ;
        if (q > 0) {
            most_rows = (i1 - i0) * q > most_rows ? (i1 - i0) * q : most_rows;
            most_seqs = i1 - i0 > most_seqs ? i1 - i0 : most_seqs;
        }
    }
    if (most_rows == 0)
        return;
    ckb_scratch(0, (size_t)(most_rows * hq * len) * sizeof(float));
    ckb_scratch(1, (size_t)(most_rows * hq * len) * sizeof(ckb_bf16));
    ckb_scratch(2, (size_t)(most_rows * hq * hd) * sizeof(ckb_bf16));
    ckb_scratch(3, (size_t)(most_seqs * hkv * len * hd) * sizeof(ckb_bf16));
    ckb_scratch(4, (size_t)(most_seqs * hkv * len * hd) * sizeof(ckb_bf16));
    ckb_scratch(5, (size_t)(most_rows * hq * hd) * sizeof(ckb_bf16));
    for (int64_t i0 = 0, i1; i0 < nvalid; i0 = i1) {
        const int64_t q = ragged_qlen(d, cu, i0);
        for (i1 = i0 + 1; i1 < nvalid && ragged_qlen(d, cu, i1) == q; i1++)
            ;
        if (q > 0)
            ragged_batch(d, t, i0, i1 - i0, q);
    }
}

/* The JAX program literally (every position of every page, both masks at
 * -0.7 * FLT_MAX, softmax over the whole row), with its precision (f32
 * scores and softmax, bf16 P), into a zeroed output: the rows of sequence
 * i < num_seqs are its packed rows cu_q_lens[i] + t, t < q_len. */
static void ragged_reference(const int64_t *d, void *const *t)
{
    const int64_t hq = d[HQ], hkv = d[HKV], hkv2 = d[HKV2], hd = d[D], nt = d[NT];
    const int64_t ps = d[PS], pps = d[PPS], len = pps * ps, g = hq / hkv;
    const ckb_bf16 *queries = t[T_QUERIES], *kvp = t[T_KV_PAGES];
    const int32_t *kv_lens = t[T_KV_LENS], *pages = t[T_PAGE_INDICES], *cu = t[T_CU_Q_LENS];
    const int64_t nvalid = ragged_nvalid(d, t[T_NUM_SEQS]);
    ckb_bf16 *out = t[T_OUT];
    const float scale = (float)(1.0 / sqrt((double)hd));
    memset(out, 0, (size_t)(nt * hq * hd) * sizeof *out);
    for (int64_t i = 0; i < nvalid; i++) {
        const int64_t qn = ragged_qlen(d, cu, i), kvl = kv_lens[i];
#pragma omp parallel for
        for (int64_t r = 0; r < qn * hq; r++) {
            const int64_t tk = r / hq, h = r % hq, kh = h / g, qpos = kvl - qn + tk;
            const int64_t pos = ragged_clamp(cu[i] + tk, nt - 1);
            const ckb_bf16 *q = queries + (pos * hq + h) * hd;
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
                    acc += row[j] *
                           ckb_bf16_to_f32(kvp[((page * ps + j % ps) * hkv2 + 2 * kh + 1) * hd + c]);
                }
                out[(pos * hq + h) * hd + c] = ckb_f32_to_bf16(acc);
            }
            free(row);
        }
    }
}

/* Upstream's get_flops: QK^T and PV at 2 D per (query row, key) of each
 * active sequence and query head, 4 HQ D sum(q_len kv_len), the triangle
 * above each prefill chunk's diagonal included (masked: q_len (q_len - 1) / 2
 * pairs per sequence, 9% of the count at paper). */
static double ragged_flops(const int64_t *d)
{
    int32_t q[256], kv[256];
    if (d[NS] > 256)
        return 0.0;
    const int64_t n = ragged_scenario(d, q, kv);
    double pairs = 0.0;
    for (int64_t i = 0; i < n; i++)
        pairs += (double)q[i] * kv[i];
    return 4.0 * d[HQ] * d[D] * pairs;
}

/* Queries and out once (bf16), the K and V pages the active sequences read
 * (their kv_len rounded up to whole pages), the int32 tables. */
static double ragged_bytes(const int64_t *d)
{
    int32_t q[256], kv[256];
    if (d[NS] > 256)
        return 0.0;
    const int64_t n = ragged_scenario(d, q, kv);
    double pages = 0.0;
    for (int64_t i = 0; i < n; i++)
        pages += (double)((kv[i] + d[PS] - 1) / d[PS]);
    return 2.0 * (2.0 * d[NT] * d[HQ] * d[D] + pages * d[PS] * d[HKV2] * d[D]) +
           4.0 * ((double)d[NS] + (double)d[NS] * d[PPS] + (double)d[NS1] + 1.0);
}

const ckb_workload ckb_wl_7p_Ragged_Paged_Attention = {
    .id = "7p_Ragged_Paged_Attention",
    .model = "Llama-3.1-70B",
    .op = "ragged_paged_attention",
    .tags = "attention,paged",
    .summary = "one continuous-batching step of GQA attention over a paged KV cache: one-token "
               "decodes and chunked prefills, sequence i's q_len query rows packed at "
               "cu_q_lens[i], causal at offset kv_lens[i] - q_len, keys gathered through "
               "page_indices[i] from interleaved K/V pages; bf16 in/out, int32 tables, f32 "
               "scores, bf16 P",
    .ndims = 12,
    .dims = {{"NS", {16, 32, 64}},
             {"NT", {128, 1024, 4096}},
             {"HQ", {4, 32, 64}},
             {"HKV", {2, 4, 8}},
             {"HKV2", {4, 8, 16}},
             {"D", {128, 128, 128}},
             {"PS", {16, 16, 16}},
             {"PPS", {8, 64, 256}},
             {"NP", {128, 2048, 16384}},
             {"NS1", {17, 33, 65}},
             {"NDEC", {12, 24, 48}},
             {"CHUNK", {64, 256, 512}}},
    /* prefill: upstream's step (the dims above), the NT-row budget mostly
     * in long chunks. decode: the same slots on a step of decodes over
     * twice the cache, with a few prompt rows left over; NT is that step's
     * own row count, as a step's query buffer holds its own tokens. */
    .nconfigs = 2,
    .configs = {{.name = "prefill"},
                {.name = "decode",
                 .nset = 5,
                 .set = {{"NT", {16, 32, 64}},
                         {"PPS", {16, 128, 512}},
                         {"NP", {256, 4096, 32768}},
                         {"NDEC", {14, 30, 60}},
                         {"CHUNK", {2, 2, 4}}}}},
    .ntensors = 7,
    .tensors = {{"queries", CKB_BF16, CKB_IN, 3, {NT, HQ, D}},
                {"kv_pages", CKB_BF16, CKB_IN, 4, {NP, PS, HKV2, D}},
                {"kv_lens", CKB_I32, CKB_IN, 1, {NS}, .fixed = 1},
                {"page_indices", CKB_I32, CKB_IN, 2, {NS, PPS}},
                {"cu_q_lens", CKB_I32, CKB_IN, 1, {NS1}, .fixed = 1},
                {"num_seqs", CKB_I32, CKB_IN, 0, {0}, .fixed = 1},
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
    .params = {{"BQ", CKB_PARAM_HOST_BQ, 3, {64, 128, 256}, .multiple = 4, .head = 256},
               {"BK", CKB_PARAM_HOST_BK, 2, {64, 128}, .multiple = 16, .head = 256},
               {"MMA", CKB_PARAM_HOST_UNIT, 3, {0, 1, 2}}},
};
