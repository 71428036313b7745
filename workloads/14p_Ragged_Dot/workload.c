/*
 * 14p_Ragged_Dot — the ragged dot (grouped matmul) of a Mixtral-8x7B MoE
 * layer (JAXBench benchmark/14p_Ragged_Dot, from Tokamax): the M rows of x
 * are sorted by expert into G contiguous groups of group_sizes[g] rows, and
 * out[rows of g] = bf16(x[rows of g] @ w[g]) — jax.lax.ragged_dot. JAXBench
 * computes it for equal groups as einsum('gmk,gkn->gmn'); the baseline
 * keeps that einsum over groups padded to CAP rows. bf16 x/w/out, int32 sizes.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

enum { M, K, N, G, CAP };
enum { T_X, T_W, T_SIZES, T_OUT };

/*
 * Uneven group sizes for (seed): each in [1, cap], summing to m (Mixtral's
 * eight experts all get tokens, some up to cap, some ~2/3 of their share).
 * They start even, then 3g random transfers of up to an eighth of a share
 * make them uneven; a palindrome is broken by one more transfer, so that
 * the reversed sizes (still valid) assign rows to other groups. Needs
 * g * cap >= m.
 */
static void ragged_group_sizes(int64_t m, int64_t g, int64_t cap, uint64_t seed, int32_t *sizes)
{
    const uint64_t key = ckb_hash64(seed, T_SIZES);
    for (int64_t i = 0; i < g; i++)
        sizes[i] = (int32_t)(m / g + (i < m % g));
    for (int64_t r = 1; r <= 3 * g; r++) {
        const uint64_t h = ckb_hash64(key, (uint64_t)r);
        const int64_t from = (int64_t)(h % (uint64_t)g), to = (int64_t)((h >> 20) % (uint64_t)g);
        int64_t amount = (int64_t)((h >> 40) % (uint64_t)(m / g / 8 + 1));
        if (amount > sizes[from] - 1)
            amount = sizes[from] - 1;
        if (amount > cap - sizes[to])
            amount = cap - sizes[to];
        if (from != to && amount > 0) {
            sizes[from] -= (int32_t)amount;
            sizes[to] += (int32_t)amount;
        }
    }
    int palindrome = 1;
    for (int64_t i = 0; i < g / 2; i++)
        palindrome &= sizes[i] == sizes[g - 1 - i];
    for (int64_t i = 0; palindrome && i < g / 2; i++)
        if (sizes[i] > 1 && sizes[g - 1 - i] < cap) {
            sizes[i]--, sizes[g - 1 - i]++;
            palindrome = 0;
        }
}

/*
 * Each group's first row and row count from the sizes, clamped so that no
 * input can make a kernel of ours read or write out of bounds: a size to
 * [0, cap], the running offset to m. Returns the rows covered; rows after
 * them belong to no group and are zero (as ragged_dot leaves them).
 */
static int64_t ragged_layout(const int32_t *sizes, int64_t g, int64_t m, int64_t cap,
                             int64_t *start, int64_t *count)
{
    int64_t at = 0;
    for (int64_t i = 0; i < g; i++) {
        int64_t c = sizes[i] < 0 ? 0 : sizes[i] > cap ? cap : sizes[i];
        if (c > m - at)
            c = m - at;
        start[i] = at;
        count[i] = c;
        at += c;
    }
    return at;
}

static void ragged_create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench: x ~ N(0, 1), w ~ 0.02 N(0, 1), and equal groups of M/G
     * rows, which hide every ragged-boundary bug. Here x ~ N(0, s^2) (per-seed
     * s), w ~ N(0, 1/K) (outputs ~N(0, s^2) at every size), and the groups are
     * uneven (ragged_group_sizes). */
    ckb_fill_normal_bf16(t[T_X], d[M] * d[K], seed, T_X, 0.0f,
                         ckb_seed_factor(seed, T_X, 0.8f, 1.25f));
    ckb_fill_normal_bf16(t[T_W], d[G] * d[K] * d[N], seed, T_W, 0.0f, 1.0f / sqrtf((float)d[K]));
    ragged_group_sizes(d[M], d[G], d[CAP], seed, t[T_SIZES]);
}

/*
 * JAXBench's einsum('gmk,gkn->gmn') on groups padded to CAP rows, the
 * capacity layout of a dense MoE dispatch: the rows of each group are
 * gathered into a zero-padded [G, CAP, K] buffer, one batched oneDNN matmul
 * multiplies it by w, and the group's rows are scattered back into out.
 */
static void ragged_baseline(const int64_t *d, void *const *t)
{
    const int64_t m = d[M], k = d[K], n = d[N], g = d[G], cap = d[CAP];
    const ckb_bf16 *x = t[T_X];
    ckb_bf16 *out = t[T_OUT];
    /* Reused between calls, as XLA's buffer assignment reuses temporaries. */
    ckb_bf16 *xp = ckb_scratch(0, (size_t)(g * cap * k) * sizeof(ckb_bf16));
    ckb_bf16 *yp = ckb_scratch(1, (size_t)(g * cap * n) * sizeof(ckb_bf16));
    int64_t *start = ckb_scratch(2, (size_t)(2 * g) * sizeof(int64_t)), *count = start + g;
    const int64_t covered = ragged_layout(t[T_SIZES], g, m, cap, start, count);

#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < g; i++) {
        ckb_bf16 *dst = xp + i * cap * k;
        memcpy(dst, x + start[i] * k, (size_t)(count[i] * k) * sizeof(ckb_bf16));
        memset(dst + count[i] * k, 0, (size_t)((cap - count[i]) * k) * sizeof(ckb_bf16));
    }

    ckb_matmul_spec s = {0};
    s.batch = g, s.M = cap, s.K = k, s.N = n;
    s.a_type = s.b_type = s.c_type = CKB_BF16;
    ckb_dnnl_matmul(&s, xp, t[T_W], NULL, yp);

#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < g; i++)
        memcpy(out + start[i] * n, yp + i * cap * n, (size_t)(count[i] * n) * sizeof(ckb_bf16));
    memset(out + covered * n, 0, (size_t)((m - covered) * n) * sizeof(ckb_bf16));
}

static void ragged_reference(const int64_t *d, void *const *t)
{
    const int64_t m = d[M], k = d[K], n = d[N], g = d[G];
    const ckb_bf16 *x = t[T_X], *w = t[T_W];
    ckb_bf16 *out = t[T_OUT];
    int64_t *start = malloc((size_t)(2 * g) * sizeof *start), *count = start + g;
    if (!start)
        abort();
    ragged_layout(t[T_SIZES], g, m, d[CAP], start, count);
#pragma omp parallel for
    for (int64_t r = 0; r < m; r++) {
        int64_t grp = -1;
        for (int64_t i = 0; i < g; i++)
            if (r >= start[i] && r < start[i] + count[i])
                grp = i;
        for (int64_t j = 0; j < n; j++) {
            float acc = 0.0f;
            for (int64_t q = 0; grp >= 0 && q < k; q++)
                acc += ckb_bf16_to_f32(x[r * k + q]) * ckb_bf16_to_f32(w[(grp * k + q) * n + j]);
            out[r * n + j] = ckb_f32_to_bf16(acc);
        }
    }
    free(start);
}

/* JAXBench's count: every row through one K x N matmul, 2*M*K*N. */
static double ragged_flops(const int64_t *d) { return 2.0 * d[M] * d[K] * d[N]; }

static double ragged_bytes(const int64_t *d)
{
    return 2.0 * ((double)d[M] * d[K] + (double)d[G] * d[K] * d[N] + (double)d[M] * d[N]) +
           4.0 * d[G];
}

const ckb_workload ckb_wl_14p_Ragged_Dot = {
    .id = "14p_Ragged_Dot",
    .model = "Mixtral-8x7B",
    .op = "ragged_dot",
    .tags = "matmul,moe",
    .summary = "out[rows of group g] = x[rows of g] @ w[g] (jax.lax.ragged_dot), rows sorted "
               "into G uneven groups (int32 group_sizes, each <= CAP), bf16 in/out, f32 "
               "accumulate",
    .ndims = 5,
    .scale_dim = "N",
    .dims = {{"M", {256, 2048, 8192}},
             {"K", {128, 2048, 4096}},
             {"N", {256, 7168, 14336}},
             {"G", {8, 8, 8}},
             {"CAP", {40, 320, 1280}}},
    .ntensors = 4,
    .tensors = {{"x", CKB_BF16, CKB_IN, 2, {M, K}},
                {"w", CKB_BF16, CKB_IN, 3, {G, K, N}},
                {"group_sizes", CKB_I32, CKB_IN, 1, {G}},
                {"out", CKB_BF16, CKB_OUT, 2, {M, N}}},
    .create_inputs = ragged_create_inputs,
    .baseline = ragged_baseline,
    .reference = ragged_reference,
    .flops = ragged_flops,
    .bytes = ragged_bytes,
};
