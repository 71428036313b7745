/*
 * expert.c — the hand-tuned kernel for 11p_Megablox_GMM: grouped matmul,
 * the M rows of lhs sorted by expert into G contiguous groups of
 * group_sizes[g] rows, out[rows of g] = bf16(lhs[rows of g] @ rhs[g]), bf16
 * in, f32 accumulation, rows past the last group zero.
 *
 * Tiled per group, with no padding: where JAX (and the baseline) computes
 * every group over a static window of CAP rows, this kernel computes each
 * group's rows exactly — an empty group costs nothing, and only the last
 * sliver of a group is ragged.
 *   - A work item is NCB column panels (64 columns each) of one group.
 *     Items go out heaviest group first (dynamic): the groups are uneven,
 *     and a big group's panels are spread over every thread, so the threads
 *     finish together.
 *   - AMX (MMA=2, the default where the compiler targets it): K goes in
 *     chunks of KC. The item's thread packs a chunk of rhs[g] into the pair
 *     layout tdpbf16ps reads as B tiles (dword j of pair p holds rhs[2p][j]
 *     low, rhs[2p+1][j] high, 16 columns a tile row), then runs every
 *     32-row block of the group past each 32 columns of it: a 2 x 2 grid of
 *     16 x 16 f32 accumulator tiles, A tiles loaded straight from lhs (two
 *     consecutive k of a row are already a pair). Between chunks the
 *     accumulators wait in a per-thread f32 buffer (the group's rows x the
 *     item's columns, in L2), so items can be wide and lhs is read few
 *     times; after the last chunk they are rounded to bf16 (vcvtneps2bf16,
 *     nearest even). A last sliver of up to 16 rows uses one row of tiles;
 *     a block that would run past row M is moved back to end at M and its
 *     rows outside the group are computed but not written, so no tile reads
 *     or writes out of bounds. Each thread configures its tiles before its
 *     items and releases them after; the harness grants AMX permission.
 *     Where AMX is not targeted (or K % 32 != 0, or M < 32) MMA=2 runs as 1.
 *   - MMA=0/1 (AVX-512): the item's panels are packed whole (all of K) in
 *     the pair layout vdpbf16ps reads, or widened to f32; every MR-row
 *     sliver of the group runs past them in an MR x 64 micro-kernel that
 *     keeps its f32 tile in zmm registers over all of K and writes it once
 *     as bf16.
 * Sizes are clamped as the baseline's layout clamps them (to [0, CAP], the
 * running offset to M), so no input makes the kernel read or write out of
 * bounds. Without __AVX512BF16__ the kit's f32 AVX2 + FMA GEMM runs the same
 * work items; below AVX2 a portable path computes row by row in f32.
 *
 * Tunable (ckbench tune passes -DNAME=VALUE):
 *   MMA  2: AMX tiles as above; 1: f32 FMA on operands widened exactly (a
 *        bf16 is the top half of an f32); 0: vdpbf16ps. On the Xeon this
 *        was tuned on AMX does ~10x the FMA rate, and one vdpbf16ps issues
 *        at a quarter of the FMA rate (measured), so FMA beats it.
 *   NCB  column panels per work item: for AMX, lhs re-reads (N / item
 *        width) against the accumulator buffer's size and balance; for
 *        MMA=0/1, packed-panel reuse against balance
 *   KC   AMX: k per packed chunk (a multiple of 32): fewer accumulator
 *        round trips against the packed chunk's share of L2
 *   MR   MMA=0/1: rows of the micro-kernel tile (MR x 64 accumulators,
 *        MR <= 6)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "ckbench.h"

#ifndef MR
#define MR 4
#endif
#ifndef NCB
#define NCB 4
#endif
#ifndef KC
#define KC 256
#endif
/* MMA: the matmul unit (bench: the host's fastest); the default is AMX
 * where the compiler targets it, else f32 FMA, which beat the dot here */
#define CKB_KIT_UNIT_NO_DOT
#include "ckb_kit_unit.h"

#if MR < 1 || MR > 6
#error "MR must be in 1..6: MR x 4 accumulators, 4 panel vectors and a broadcast fit 32 zmm"
#endif
#if NCB < 1
#error "NCB must be at least 1"
#endif
#if KC < 32 || KC % 32 != 0
#error "KC must be a positive multiple of 32"
#endif

/* AMX tiles when asked for, targeted, and the sizes allow: an A tile row
 * holds 32 k, and a ragged row block is moved back to end at row M, so M
 * must hold one whole block (32 rows). Otherwise MMA=2 runs as MMA=1. */
#if MMA == 2 && CKB_KIT_AMX && K % 32 == 0 && M >= 32
#define GM_AMX 1
#define GM_FMA 0
#else
#define GM_AMX 0
#define GM_FMA (MMA != 0)
#endif

#define GM_NR 64                          /* columns per panel */
#define GM_NV (GM_NR / 16)                /* zmm per tile row */
#define GM_NPANEL ((N + GM_NR - 1) / GM_NR)
#define GM_NQB ((GM_NPANEL + NCB - 1) / NCB) /* items per group */
#define GM_KC (KC < K ? KC : K)           /* AMX: k per packed chunk */
#define GM_ROWS (((CAP < M ? CAP : M) + 31) / 32 * 32) /* a group's rows, in whole blocks */

/* The kit's resident driver on the unit MMA asks for (AMX: its tile block
 * and packer only, under this file's k-chunked loop). Its packer
 * prefetches rhs rows 16 pairs ahead: into L1 for the micro-kernels, into
 * L2 for AMX (into L1 measured slower: the lines evict the tiles'
 * operands). */
#define CKB_KIT_GEMM16_MR MR
#define CKB_KIT_GEMM16_NR GM_NR
#define CKB_KIT_GEMM16_UNIT (GM_AMX ? 2 : GM_FMA ? 1 : 0)
#define CKB_KIT_GEMM16_PREFETCH 16
#define CKB_KIT_GEMM16_HINT (GM_AMX ? _MM_HINT_T1 : _MM_HINT_T0)
#include "ckb_kit_gemm.h"

/* Each group's first row and row count, clamped as the baseline's layout
 * does; returns the rows covered (the rest are zero). */
static int64_t gm__layout(const int32_t *sizes, int64_t *start, int64_t *count)
{
    int64_t at = 0;
    for (int64_t g = 0; g < G; g++) {
        int64_t c = sizes[g] < 0 ? 0 : sizes[g] > CAP ? CAP : sizes[g];
        if (c > M - at)
            c = M - at;
        start[g] = at;
        count[g] = c;
        at += c;
    }
    return at;
}

/* The groups that have rows into order, the most rows first (the work
 * items go out heaviest group first); returns how many. Insertion sort: G
 * is small. Inline: the portable path has no use for it. */
static inline int64_t gm__order(const int64_t *count, int64_t *order)
{
    int64_t ngroups = 0;
    for (int64_t g = 0; g < G; g++) {
        if (count[g] == 0)
            continue;
        int64_t at = ngroups++;
        for (; at > 0 && count[order[at - 1]] < count[g]; at--)
            order[at] = order[at - 1];
        order[at] = g;
    }
    return ngroups;
}

/* Rows past the last group: zero. */
static void gm__zero_tail(int64_t covered, ckb_bf16 *out)
{
#pragma omp for schedule(static)
    for (int64_t r = covered; r < M; r++)
        memset(out + r * N, 0, (size_t)N * sizeof *out);
}

#if defined(__AVX512BF16__) && defined(__AVX512BW__)

#include <immintrin.h>

#if GM_AMX

/* The last k chunk's epilogue: rows [s0, s1), columns [0, nr) of a 32 x 32
 * block of f32 sums rounded to bf16 (vcvtneps2bf16: nearest even) into c. */
static inline void gm__store_amx(const float *acc, ckb_bf16 *c, int64_t s0, int64_t s1, int64_t nr)
{
    const __mmask32 m = nr >= 32 ? ~(__mmask32)0 : (__mmask32)((1u << nr) - 1);
    for (int64_t r = s0; r < s1; r++) {
        /* 32 columns in one: the second argument gives the low half */
        __m512bh y = _mm512_cvtne2ps_pbh(_mm512_load_ps(acc + r * 32 + 16),
                                         _mm512_load_ps(acc + r * 32));
        _mm512_mask_storeu_epi16((void *)(c + r * N), m, (__m512i)y);
    }
}

/*
 * One item on AMX: columns [q0 * 64, (q0 + np) * 64) of a group (the
 * job's B), rows [r0, r0 + nrows). K goes in chunks of KC: each chunk of
 * rhs is packed into 32-column panels (small enough to stay in L2), then
 * every 32-row block of the group runs past them, a 2 x 2 grid of tiles
 * (ckb_kit_amx_2x2), the f32 accumulators kept in acc (the group's rows x the
 * item's columns, in L2) from one chunk to the next. A wide item reads
 * each row of lhs from memory few times (N / item width) over the call.
 * The last block, of up to 16 rows, uses one row of tiles; a block that
 * would run past row M is moved back to end at M, its rows outside the
 * group computed, not written, so no tile reads or writes out of bounds.
 */
static void gm__item(const ckb_kit_gemm16_job *g, ckb_bf16 *out, int64_t r0, int64_t nrows,
                     int64_t q0, int64_t np, uint32_t *bp, float *acc)
{
    const int64_t c0 = q0 * GM_NR, w = (N - c0 < np * GM_NR ? N - c0 + 31 : np * GM_NR) / 32 * 32;
    const int64_t rows_pad = (nrows + 31) / 32 * 32;
    for (int64_t k0 = 0; k0 < K; k0 += GM_KC) {
        const int64_t kc = K - k0 < GM_KC ? K - k0 : GM_KC;
        const int first = k0 == 0, last = k0 + kc == K;
        ckb_kit_gemm16_pack(g, k0, kc, c0, w / 32, 32, bp);
        for (int64_t i = 0; i < nrows; i += 32) {
            const int64_t rows = nrows - i < 32 ? nrows - i : 32, rb = rows > 16 ? 32 : 16;
            const int64_t at = r0 + i < M - rb ? r0 + i : M - rb, s0 = r0 + i - at;
            const ckb_bf16 *a = g->a + at * K + k0;
            for (int64_t v = 0; v < w; v += 32) {
                const uint32_t *bc = bp + v / 32 * (kc / 2) * 32;
                float *ac = acc + (v / 32 * rows_pad + i) * 32;
                const int64_t nr = N - c0 - v < 32 ? N - c0 - v : 32;
                if (rb == 32)
                    ckb_kit_amx_2x2(a, K, bc, bc + 16, 32, kc, 2, first, ac, 32);
                else
                    ckb_kit_amx_2x2(a, K, bc, bc + 16, 32, kc, 1, first, ac, 32);
                if (last)
                    gm__store_amx(ac, out + at * N + c0 + v, s0, s0 + rows, nr);
            }
        }
    }
}

#else

/* One item: panels [q0, q0 + np) of a group (the job's B), rows [r0, r0 +
 * nrows), packed whole (all of K) and every MR-row sliver of the group run
 * past them. */
static void gm__item(const ckb_kit_gemm16_job *g, ckb_bf16 *out, int64_t r0, int64_t nrows,
                     int64_t q0, int64_t np, uint32_t *bp, float *acc)
{
    (void)out, (void)acc; /* the AMX path's; here the job's epilogue writes out */
    ckb_kit_gemm16_panels(g, r0, r0 + nrows, q0, q0 + np, np, bp);
}

#endif /* GM_AMX */

void workload(const ckb_bf16 *lhs, const ckb_bf16 *rhs, const int32_t *group_sizes,
              ckb_bf16 *out)
{
    const int nthreads = omp_get_max_threads();
#if GM_AMX
    /* a packed k chunk of the item's columns, and its f32 accumulators */
    const size_t chunk_bytes = (size_t)GM_KC * NCB * GM_NR * 2;
    const size_t bp_bytes = chunk_bytes + (size_t)GM_ROWS * NCB * GM_NR * 4;
#else
    const size_t bp_bytes = (size_t)(NCB * CKB_KIT_GEMM16_KP(K) * GM_NR * 4);
#endif
    const size_t head = ((size_t)3 * G * sizeof(int64_t) + 63) / 64 * 64;
    char *mem = ckb_kit_alloc64(head + (size_t)nthreads * bp_bytes);
    if (!mem)
        return; /* out of memory: the output stays as it was and fails the check */
    int64_t *start = (int64_t *)mem, *count = start + G, *order = count + G;
    const int64_t covered = gm__layout(group_sizes, start, count);
    const int64_t ngroups = gm__order(count, order);

#pragma omp parallel num_threads(nthreads)
    {
        uint32_t *bp = (uint32_t *)(mem + head + (size_t)omp_get_thread_num() * bp_bytes);
#if GM_AMX
        float *acc = (float *)((char *)bp + chunk_bytes);
#else
        float *acc = NULL;
#endif
        ckb_kit_gemm16_out o = {out, N};
        /* a group's rows run past its packed panels whole (mc unbounded) */
        ckb_kit_gemm16_job job = {
            .a = lhs, .lda = K, .ldb = N, .m = M, .n = N, .k = K, .mc = INT64_MAX, .ctx = &o};
        ckb_kit_gemm16_tiles_on();
#pragma omp for schedule(dynamic, 1) nowait
        for (int64_t x = 0; x < ngroups * GM_NQB; x++) {
            const int64_t g = order[x / GM_NQB], q0 = x % GM_NQB * NCB;
            const int64_t np = GM_NPANEL - q0 < NCB ? GM_NPANEL - q0 : NCB;
            job.b = rhs + g * K * N;
            gm__item(&job, out, start[g], count[g], q0, np, bp, acc);
        }
        ckb_kit_gemm16_tiles_off();
        gm__zero_tail(covered, out);
    }
    free(mem);
}

#elif defined(__AVX2__) && defined(__FMA__)
/*
 * AVX2 + FMA path (no AVX-512 BF16): the kit's f32 GEMM (ckb_kit_gemm.h:
 * both operands widened to f32 while packed, BLIS's loops, a 6 x 16
 * micro-kernel of ymm accumulators) runs each work item as above (NCB
 * panels of 64 columns of one group, heaviest group first): the group's
 * rows x the item's columns, KC deep, the partial sums between k blocks in
 * a per-thread f32 tile (CAP rows x the item's columns), and the last k
 * block's epilogue rounds each finished tile to bf16 into out. MR and
 * MMA are the AVX-512 micro-kernels' and do not apply here.
 */

#ifndef GM_MC8 /* rows of lhs packed per block (the kit clamps it to L2) */
#define GM_MC8 240
#endif

/* The tile's epilogue: round to bf16 into out. */
static inline __attribute__((always_inline)) void gm__store8(void *ctx, const float *tile,
                                                             int64_t i, int64_t j, int mr, int nr)
{
    ckb_bf16 *c = (ckb_bf16 *)ctx + i * N + j;
    for (int r = 0; r < mr; r++)
#pragma GCC unroll 4
        for (int v = 0; v < CKB_KIT_GEMM8_NR / 8; v++)
            ckb_kit_store8_n(c + r * N + 8 * v, _mm256_load_ps(tile + r * CKB_KIT_GEMM8_NR + 8 * v),
                             nr - 8 * v);
}

void workload(const ckb_bf16 *lhs, const ckb_bf16 *rhs, const int32_t *group_sizes,
              ckb_bf16 *out)
{
    int64_t start[G], count[G], order[G];
    const int64_t covered = gm__layout(group_sizes, start, count);
    const int64_t ngroups = gm__order(count, order);

#pragma omp parallel
    {
        ckb_kit_gemm8_job job = {.a = lhs, .lda = K, .ldb = N, .k = K, .n = N, .mc = GM_MC8,
                                 .nc = NCB * GM_NR, .kc = KC, .epi = gm__store8, .ctx = out};
        job.ldt = ckb_kit_gemm8_nc(&job);
        const int64_t rows =
            ((CAP < M ? CAP : M) + CKB_KIT_GEMM8_MR - 1) / CKB_KIT_GEMM8_MR * CKB_KIT_GEMM8_MR;
        /* one allocation per thread per call: packed lhs, rhs, partial sums */
        const size_t a_n = ckb_kit_gemm8_ap_floats(&job) + 64, b_n = ckb_kit_gemm8_bp_floats(&job);
        const size_t t_n = K > ckb_kit_gemm8_kc(&job) ? (size_t)(rows * job.ldt) : 0;
        float *buf = ckb_kit_alloc64((a_n + b_n + t_n) * sizeof(float));
        job.t = buf && t_n ? buf + a_n + b_n : NULL;
#pragma omp for schedule(dynamic, 1) nowait
        for (int64_t x = 0; x < ngroups * GM_NQB; x++) {
            const int64_t g = order[x / GM_NQB], q0 = x % GM_NQB * NCB;
            const int64_t c1 = (q0 + NCB) * GM_NR < N ? (q0 + NCB) * GM_NR : N;
            if (!buf) /* out of memory: no way to report, out stays unwritten */
                continue;
            job.b = rhs + g * K * N;
            ckb_kit_gemm8_run(&job, start[g], start[g] + count[g], q0 * GM_NR, c1, buf, buf + a_n);
        }
        free(buf);
        gm__zero_tail(covered, out);
    }
}

#else /* portable path: neither AVX-512 BF16 nor AVX2 + FMA */

/* One row of out at a time: an f32 row accumulator, k outer so the inner
 * loop over columns is an axpy the compiler vectorises. */
void workload(const ckb_bf16 *lhs, const ckb_bf16 *rhs, const int32_t *group_sizes,
              ckb_bf16 *out)
{
    int64_t start[G], count[G];
    const int64_t covered = gm__layout(group_sizes, start, count);
#pragma omp parallel
    {
        float *acc = malloc((size_t)N * sizeof(float));
#pragma omp for schedule(dynamic, 8)
        for (int64_t r = 0; r < covered; r++) {
            int64_t g = 0;
            while (r >= start[g] + count[g])
                g++;
            for (int64_t j = 0; acc && j < N; j++)
                acc[j] = 0.0f;
            if (acc)
                ckb_kit_gemm_row(lhs + r * K, K, rhs + g * K * N, N, N, acc);
            for (int64_t j = 0; acc && j < N; j++)
                out[r * N + j] = ckb_f32_to_bf16(acc[j]);
        }
        free(acc);
        gm__zero_tail(covered, out);
    }
}

#endif
