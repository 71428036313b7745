/*
 * The definitions ckbench took from upstream JAXBench (AI-Hypercomputer/
 * accelerator-agents, JAXBench/benchmark/) where they changed after the
 * first port, each checked on a tiny input against an answer worked out
 * apart from workload.c, for the reference and the baseline alike:
 *   - 3p: RoPE on split halves, [x1 cos - x2 sin, x2 cos + x1 sin] with
 *     x1 = x[:ROPE/2], x2 = x[ROPE/2:] (upstream 5d39d1a), not on
 *     interleaved pairs;
 *   - 4p: a batch axis, q/k/v/out [B, H, S, D], rows independent (5d39d1a);
 *   - 42k: out = gelu(z - max over z's row), [B, OUT] (aa6005e);
 *   - 7p: one serving step, each sequence with its own q_len =
 *     cu_q_lens[i + 1] - cu_q_lens[i], causal at offset kv_len - q_len,
 *     its answer in the packed rows from cu_q_lens[i], the rest zero
 *     (c736bd8, 92c0c5f), not TPS rows per sequence at rows i * TPS.
 * Each test also shows that the earlier definition's answer fails the
 * check, so the test fails on it. And the serving workloads' two
 * configurations (issue 33): 7p's prefill step at paper is upstream's,
 * and both mixes of 6p and 7p are valid steps of the same operator.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/check.h"
#include "harness.h"
#include "workloads/workload.h"

static float jd_bf16(double v) { return ckb_bf16_to_f32(ckb_f32_to_bf16((float)v)); }

/* jax.nn.gelu(approximate=True), in double, from its formula. */
static double jd_gelu(double t)
{
    return 0.5 * t * (1.0 + tanh(sqrt(2.0 / M_PI) * (t + 0.044715 * t * t * t)));
}

/* Runs w's reference (which = 0) or baseline (1) on inputs set by fill. */
static void jd_run(const ckb_workload *w, const int64_t *dims, void **t, int which)
{
    if (which == 0)
        w->reference(dims, t);
    else
        w->baseline(dims, t);
}

CKBT_TEST(workload_42k_reference_is_upstreams_formula, "quick")
{
    /* B = 2, IN = 2, OUT = 3, by hand:
     *   x = [[1, 0], [0, 2]], weight = [[1, 2, 0], [0.5, -1, 1]],
     *   bias = [0, 0.5, -0.25]
     *   z = [[1, 2.5, -0.25], [1, -1.5, 1.75]], row maxima 2.5 and 1.75
     *   z - max = [[-1.5, 0, -2.75], [-0.75, -3.25, 0]]
     * out = gelu of that, [B, OUT]. The earlier formula (each column's max
     * over the batch, [1, 2.5, 1.75], minus their mean 1.75, [OUT]) gives
     * gelu([-0.75, 0.75, 0]) = [-0.170, 0.580, 0]. */
    const ckb_workload *w = ckb_workload_find("42k");
    CKBT_EXPECT(w && w->tensors[3].rank == 2, "42k's out is [B, OUT]");
    if (!w)
        return;
    const int64_t dims[3] = {2, 2, 3};
    const float x[] = {1, 0, 0, 2}, wt[] = {1, 2, 0, 0.5f, -1, 1}, b[] = {0, 0.5f, -0.25f};
    const double t_hand[] = {-1.5, 0, -2.75, -0.75, -3.25, 0};
    const double old_hand[] = {-0.75, 0.75, 0};
    for (int which = 0; which < 2; which++) {
        void *t[CKB_MAX_TENSORS];
        CKBT_EXPECT(ckb_tensors_alloc(w, dims, t) == 0, "allocation");
        for (int i = 0; i < 4; i++)
            ((ckb_bf16 *)t[0])[i] = ckb_f32_to_bf16(x[i]);
        for (int i = 0; i < 6; i++)
            ((ckb_bf16 *)t[1])[i] = ckb_f32_to_bf16(wt[i]);
        for (int i = 0; i < 3; i++)
            ((ckb_bf16 *)t[2])[i] = ckb_f32_to_bf16(b[i]);
        jd_run(w, dims, t, which);
        const ckb_bf16 *out = t[3];
        ckb_bf16 want[6], old[6];
        for (int i = 0; i < 6; i++) {
            want[i] = ckb_f32_to_bf16((float)jd_gelu(t_hand[i]));
            old[i] = ckb_f32_to_bf16((float)jd_gelu(old_hand[i % 3]));
            const double got = ckb_bf16_to_f32(out[i]), exp = ckb_bf16_to_f32(want[i]);
            CKBT_EXPECT(fabs(got - exp) <= 1e-3 + 8e-3 * fabs(exp),
                        "%s out[%d] = %g, by hand gelu(%g) = %g", which ? "baseline" : "reference",
                        i, got, t_hand[i], exp);
        }
        /* The earlier formula's answer (its [OUT] in the first row, or
         * repeated in both) is rejected by the check: out[0], [1], [4]. */
        ckb_check k;
        ckb_check_allclose(CKB_BF16, old, want, 6, ckb_workload_atol(w), ckb_workload_rtol(w), &k);
        CKBT_EXPECT(!k.ok && k.nbad >= 3, "the earlier formula's answer fails: %lld bad",
                    (long long)k.nbad);
        ckb_tensors_free(w, t);
    }
}

CKBT_TEST(workload_4p_batch_rows_are_independent, "quick")
{
    /* B = 2, HQ = 2, HKV = 1 (G = 2), S = 2, D = 1, by hand: in both rows
     * k = [0, 1]; v = [1, 3] in row 0, [-2, 2] in row 1; query head 0 has
     * q = 0, head 1 q = bf16(ln 3). Query 0 sees only key 0: out = v[0].
     * Query 1: head 0 weighs the keys 1/2, 1/2; head 1 1/4, 3/4 (P in bf16:
     * 0.25098, 0.75). So out[b=0] = [[1, 2], [1, 2.5]], out[b=1] =
     * [[-2, 0], [-2, 1]]. Without the batch axis (row 1 reading row 0's k and
     * v, or no row 1) the second half is [[1, 2], [1, 2.5]]. */
    const ckb_workload *w = ckb_workload_find("4p");
    CKBT_EXPECT(w && w->ndims == 5 && strcmp(w->dims[0].name, "B") == 0 &&
                    w->tensors[0].rank == 4,
                "4p has a batch axis: q [B, HQ, S, D]");
    if (!w || w->ndims != 5)
        return;
    const int64_t dims[5] = {2, 2, 1, 2, 1};
    const float q[] = {0, 0, (float)log(3.0), (float)log(3.0), 0, 0, (float)log(3.0),
                       (float)log(3.0)};
    const float k[] = {0, 1, 0, 1}, v[] = {1, 3, -2, 2};
    const double want[] = {1, 2, 1, 2.5, -2, 0, -2, 1};
    const double batchless[] = {1, 2, 1, 2.5, 1, 2, 1, 2.5};
    for (int which = 0; which < 2; which++) {
        void *t[CKB_MAX_TENSORS];
        CKBT_EXPECT(ckb_tensors_alloc(w, dims, t) == 0, "allocation");
        for (int i = 0; i < 8; i++)
            ((ckb_bf16 *)t[0])[i] = ckb_f32_to_bf16(q[i]);
        for (int i = 0; i < 4; i++) {
            ((ckb_bf16 *)t[1])[i] = ckb_f32_to_bf16(k[i]);
            ((ckb_bf16 *)t[2])[i] = ckb_f32_to_bf16(v[i]);
        }
        jd_run(w, dims, t, which);
        const ckb_bf16 *out = t[3];
        ckb_bf16 wb[8], bl[8];
        for (int i = 0; i < 8; i++) {
            const double got = ckb_bf16_to_f32(out[i]);
            CKBT_EXPECT(fabs(got - want[i]) <= 0.01, "%s out[%d] = %g, by hand %g",
                        which ? "baseline" : "reference", i, got, want[i]);
            wb[i] = ckb_f32_to_bf16((float)want[i]);
            bl[i] = ckb_f32_to_bf16((float)batchless[i]);
        }
        ckb_check c;
        ckb_check_allclose(CKB_BF16, bl, wb, 8, ckb_workload_atol(w), ckb_workload_rtol(w), &c);
        CKBT_EXPECT(!c.ok && c.nbad == 4, "the batch-less answer fails: %lld bad",
                    (long long)c.nbad);
        ckb_tensors_free(w, t);
    }
}

/* 3p's dims, in workload.c's order. */
enum { P3_B, P3_S, P3_E, P3_H, P3_QL, P3_KVL, P3_NOPE, P3_ROPE, P3_VD, P3_QKD, P3_KVR };

/* C[m, n] = bf16(A[m, k] @ B[k, n]) in double, A with row stride lda. */
static void jd_mm(int64_t m, int64_t k, int64_t n, const float *a, int64_t lda, const float *b,
                  float *c)
{
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double acc = 0;
            for (int64_t l = 0; l < k; l++)
                acc += (double)a[i * lda + l] * b[l * n + j];
            c[i * n + j] = jd_bf16(acc);
        }
}

/* RoPE of x[0..r) at position pos, from upstream's formulas: _compute_rope
 * (freq_i = theta^(-2i/r), f32 angle, cos and sin cast to bf16) and
 * _apply_rope, on split halves (interleaved = 0: 5d39d1a's form) or on
 * interleaved pairs (1: the form before it). One bf16 rounding. */
static void jd_rope(float *x, int64_t r, int64_t pos, int interleaved)
{
    float y[64];
    const int64_t h = r / 2;
    for (int64_t i = 0; i < h; i++) {
        const float freq = 1.0f / powf(10000.0f, (float)(2 * i) / (float)r);
        const float ang = (float)pos * freq;
        const double c = jd_bf16(cosf(ang)), s = jd_bf16(sinf(ang));
        const int64_t i1 = interleaved ? 2 * i : i, i2 = interleaved ? 2 * i + 1 : h + i;
        y[i1] = jd_bf16(x[i1] * c - x[i2] * s);
        y[i2] = jd_bf16(x[i2] * c + x[i1] * s);
    }
    memcpy(x, y, (size_t)r * sizeof *x);
}

/* 3p's whole layer in double with the bf16 roundings where JAX's program
 * has them (each dot's output, RoPE's, P), RoPE as jd_rope. out: f32. */
static void jd_mla(const int64_t *d, void *const *t, int interleaved, float *out)
{
    const int64_t b_ = d[P3_B], s = d[P3_S], e = d[P3_E], h_ = d[P3_H], ql = d[P3_QL];
    const int64_t kvl = d[P3_KVL], nope = d[P3_NOPE], rope = d[P3_ROPE], vd = d[P3_VD];
    const int64_t qkd = d[P3_QKD], kvr = d[P3_KVR], rows = b_ * s;
    float *in[7];
    const int64_t n[7] = {rows * e, e * ql, ql * h_ * qkd, e * kvr, kvl * h_ * nope, kvl * h_ * vd,
                          h_ * vd * e};
    for (int i = 0; i < 7; i++) {
        in[i] = malloc((size_t)n[i] * sizeof(float));
        for (int64_t j = 0; j < n[i]; j++)
            in[i][j] = ckb_bf16_to_f32(((const ckb_bf16 *)t[i])[j]);
    }
    float *cq = malloc((size_t)(rows * ql) * sizeof(float));
    float *q = malloc((size_t)(rows * h_ * qkd) * sizeof(float));
    float *kv = malloc((size_t)(rows * kvr) * sizeof(float));
    float *kn = malloc((size_t)(rows * h_ * nope) * sizeof(float));
    float *v = malloc((size_t)(rows * h_ * vd) * sizeof(float));
    float *ao = malloc((size_t)(rows * h_ * vd) * sizeof(float));
    double *p = malloc((size_t)s * sizeof(double));
    jd_mm(rows, e, ql, in[0], e, in[1], cq);
    jd_mm(rows, ql, h_ * qkd, cq, ql, in[2], q);
    jd_mm(rows, e, kvr, in[0], e, in[3], kv);
    jd_mm(rows, kvl, h_ * nope, kv, kvr, in[4], kn);
    jd_mm(rows, kvl, h_ * vd, kv, kvr, in[5], v);
    for (int64_t r = 0; r < rows; r++) {
        jd_rope(kv + r * kvr + kvl, rope, r % s, interleaved);
        for (int64_t h = 0; h < h_; h++)
            jd_rope(q + (r * h_ + h) * qkd + nope, rope, r % s, interleaved);
    }
    for (int64_t r = 0; r < rows; r++)
        for (int64_t h = 0; h < h_; h++) {
            const int64_t bi = r / s, i = r % s;
            const float *qi = q + (r * h_ + h) * qkd;
            double mx = -INFINITY, sum = 0;
            for (int64_t j = 0; j <= i; j++) {
                const int64_t kt = bi * s + j;
                double acc = 0;
                for (int64_t c = 0; c < nope; c++)
                    acc += (double)qi[c] * kn[(kt * h_ + h) * nope + c];
                for (int64_t c = 0; c < rope; c++)
                    acc += (double)qi[nope + c] * kv[kt * kvr + kvl + c];
                p[j] = acc / sqrt((double)qkd);
                mx = fmax(mx, p[j]);
            }
            for (int64_t j = 0; j <= i; j++)
                sum += p[j] = exp(p[j] - mx);
            for (int64_t c = 0; c < vd; c++) {
                double acc = 0;
                for (int64_t j = 0; j <= i; j++)
                    acc += (double)jd_bf16(p[j] / sum) * v[((bi * s + j) * h_ + h) * vd + c];
                ao[(r * h_ + h) * vd + c] = jd_bf16(acc);
            }
        }
    jd_mm(rows, h_ * vd, e, ao, h_ * vd, in[6], out);
    for (int i = 0; i < 7; i++)
        free(in[i]);
    free(cq), free(q), free(kv), free(kn), free(v), free(ao), free(p);
}

CKBT_TEST(workload_3p_rope_rotates_split_halves, "quick")
{
    /* A tiny 3p (two batch rows of 16 positions, 2 heads, ROPE = 8: four
     * rotation pairs, which the two forms pair differently) on the
     * workload's own inputs: the reference and the baseline agree with the
     * layer computed apart with split-half RoPE, and the same computed with
     * interleaved pairs fails the check against them. */
    const ckb_workload *w = ckb_workload_find("3p");
    if (!w)
        return;
    const int64_t dims[11] = {2, 16, 32, 2, 16, 16, 8, 8, 8, 16, 24};
    const int64_t n_out = dims[P3_B] * dims[P3_S] * dims[P3_E];
    for (uint64_t seed = 1; seed <= 2; seed++) {
        void *t[CKB_MAX_TENSORS], *u[CKB_MAX_TENSORS];
        CKBT_EXPECT(ckb_tensors_alloc(w, dims, t) == 0 && ckb_tensors_alloc(w, dims, u) == 0,
                    "allocation");
        w->create_inputs(dims, seed, t);
        w->create_inputs(dims, seed, u);
        w->reference(dims, t);
        w->baseline(dims, u);
        float *split = malloc((size_t)n_out * sizeof(float));
        float *inter = malloc((size_t)n_out * sizeof(float));
        ckb_bf16 *sb = malloc((size_t)n_out * sizeof *sb), *ib = malloc((size_t)n_out * sizeof *ib);
        jd_mla(dims, t, 0, split);
        jd_mla(dims, t, 1, inter);
        for (int64_t i = 0; i < n_out; i++)
            sb[i] = ckb_f32_to_bf16(split[i]), ib[i] = ckb_f32_to_bf16(inter[i]);
        const double atol = ckb_workload_atol(w), rtol = ckb_workload_rtol(w);
        for (int which = 0; which < 2; which++) {
            const ckb_bf16 *got = which ? u[7] : t[7];
            ckb_check a, b;
            ckb_check_allclose(CKB_BF16, sb, got, n_out, atol, rtol, &a);
            ckb_check_allclose(CKB_BF16, ib, got, n_out, atol, rtol, &b);
            CKBT_EXPECT(a.ok, "seed %llu: the %s is not split-half RoPE's answer: %lld of %lld "
                              "bad, worst [%lld] %g vs %g",
                        (unsigned long long)seed, which ? "baseline" : "reference",
                        (long long)a.nbad, (long long)n_out, (long long)a.worst, a.want, a.got);
            CKBT_EXPECT(!b.ok && b.nbad * 10 >= n_out,
                        "seed %llu: interleaved RoPE's answer is rejected against the %s (%lld "
                        "of %lld bad)",
                        (unsigned long long)seed, which ? "baseline" : "reference",
                        (long long)b.nbad, (long long)n_out);
        }
        free(split), free(inter), free(sb), free(ib);
        ckb_tensors_free(w, t);
        ckb_tensors_free(w, u);
    }
}

/* One query row of attention in double, from the formula: weights
 * softmax(s) over the n keys, rounded to bf16 (JAX's P), out = bf16 of the
 * weighted sum of v. */
static double jd_attend(double q, const double *k, const double *v, int n)
{
    double s[8], mx = -INFINITY, sum = 0, acc = 0;
    for (int j = 0; j < n; j++)
        s[j] = q * k[j], mx = fmax(mx, s[j]);
    for (int j = 0; j < n; j++)
        sum += s[j] = exp(s[j] - mx);
    for (int j = 0; j < n; j++)
        acc += jd_bf16(s[j] / sum) * v[j];
    return jd_bf16(acc);
}

CKBT_TEST(workload_7p_each_sequence_has_its_own_q_len, "quick")
{
    /* NS = 2 slots, NT = 4 rows, one query and one kv head, D = 1, pages
     * of PS = 2 tokens, PPS = 2 (L = 4), NP = 4. By hand:
     *   sequence 0, a decode: q_len 1 (cu 0..1), kv_len 3, pages [1, 0];
     *   sequence 1, a whole 2-token prompt: q_len 2 (cu 1..3), kv_len 2,
     *   pages [3, 2]; num_seqs 2; row 3 is past the packed total.
     *   queries = [0.5, 1, 2, 7]; sequence 0's keys by position K = [1, 0,
     *   -1, 3], V = [3, 6, 9, 100]; sequence 1's K = [1, 2, 5, 5], V = [-2,
     *   4, 50, 50] (the 100s and 50s only a wrong mask would reach).
     * Row t of a sequence sits at kv_len - q_len + t:
     *   out[0] = decode at position 2 (keys 0..2), q 0.5: attend(0.5, [1 0
     *   -1], [3 6 9]) = 5.03; out[1] = sequence 1 row 0 at position 0, q 1:
     *   V[0] = -2; out[2] = its row 1 at position 1, q 2: attend(2, [1 2],
     *   [-2 4]) = 3.28; out[3] = 0.
     * The earlier definition (TPS = NT / NS = 2 rows per sequence from
     * cu_q_lens[i], at kv_len - TPS + t, written to rows i * TPS + t) gives
     * [attend(0.5, [1 0], [3 6]), attend(1, [1 0 -1], [3 6 9]), -2,
     * attend(2, [1 2], [-2 4])]: every row off. */
    const ckb_workload *w = ckb_workload_find("7p");
    CKBT_EXPECT(w && w->ndims == 12 && strcmp(w->dims[1].name, "NT") == 0,
                "7p's dims are NS, NT, ... (no TPS), NDEC, CHUNK");
    if (!w || w->ndims != 12)
        return;
    /* NDEC and CHUNK only shape the generated step; the tables below are
     * set by hand */
    const int64_t dims[12] = {2, 4, 1, 1, 2, 1, 2, 2, 4, 3, 1, 2};
    const double q[4] = {0.5, 1, 2, 7};
    const double k0[4] = {1, 0, -1, 3}, v0[4] = {3, 6, 9, 100};
    const double k1[4] = {1, 2, 5, 5}, v1[4] = {-2, 4, 50, 50};
    const int32_t pages[4] = {1, 0, 3, 2}, kv_lens[2] = {3, 2}, cu[3] = {0, 1, 3};
    const double want[4] = {jd_attend(0.5, k0, v0, 3), -2, jd_attend(2, k1, v1, 2), 0};
    const double old[4] = {jd_attend(0.5, k0, v0, 2), jd_attend(1, k0, v0, 3), -2,
                           jd_attend(2, k1, v1, 2)};
    for (int which = 0; which < 2; which++) {
        void *t[CKB_MAX_TENSORS];
        CKBT_EXPECT(ckb_tensors_alloc(w, dims, t) == 0, "allocation");
        ckb_bf16 *qs = t[0], *kvp = t[1], *out = t[6];
        for (int i = 0; i < 4; i++)
            qs[i] = ckb_f32_to_bf16((float)q[i]);
        /* kv_pages [NP][PS][K, V]: position j of sequence s is page
         * pages[2 s + j / 2], slot j % 2 */
        for (int s = 0; s < 2; s++)
            for (int j = 0; j < 4; j++) {
                const int64_t row = (int64_t)pages[2 * s + j / 2] * 2 + j % 2;
                kvp[row * 2] = ckb_f32_to_bf16((float)(s ? k1 : k0)[j]);
                kvp[row * 2 + 1] = ckb_f32_to_bf16((float)(s ? v1 : v0)[j]);
            }
        memcpy(t[2], kv_lens, sizeof kv_lens);
        memcpy(t[3], pages, sizeof pages);
        memcpy(t[4], cu, sizeof cu);
        *(int32_t *)t[5] = 2;
        for (int i = 0; i < 4; i++)
            out[i] = ckb_f32_to_bf16(-99.0f); /* stale: row 3 must be zeroed */
        jd_run(w, dims, t, which);
        ckb_bf16 wb[4], ob[4];
        for (int i = 0; i < 4; i++) {
            const double got = ckb_bf16_to_f32(out[i]);
            CKBT_EXPECT(fabs(got - want[i]) <= 1e-3 + 8e-3 * fabs(want[i]),
                        "%s out[%d] = %g, by hand %g", which ? "baseline" : "reference", i, got,
                        want[i]);
            wb[i] = ckb_f32_to_bf16((float)want[i]);
            ob[i] = ckb_f32_to_bf16((float)old[i]);
        }
        ckb_check c;
        ckb_check_allclose(CKB_BF16, ob, wb, 4, ckb_workload_atol(w), ckb_workload_rtol(w), &c);
        CKBT_EXPECT(!c.ok && c.nbad == 4, "the earlier definition's answer fails: %lld bad",
                    (long long)c.nbad);
        ckb_tensors_free(w, t);
    }
}

/* ---- the serving configurations of 6p and 7p ------------------------------- */

/* w's dim called name in dims; -1 when none. */
static int64_t jd_dim(const ckb_workload *w, const int64_t *dims, const char *name)
{
    for (int i = 0; i < w->ndims; i++)
        if (strcmp(w->dims[i].name, name) == 0)
            return dims[i];
    return -1;
}

static void jd_set_dim(const ckb_workload *w, int64_t *dims, const char *name, int64_t v)
{
    for (int i = 0; i < w->ndims; i++)
        if (strcmp(w->dims[i].name, name) == 0)
            dims[i] = v;
}

/* The tables create_inputs makes for configuration cf at size s, with the
 * head dims shrunk to 1 (the lengths, the page table and cu_q_lens depend
 * on none of them), so that even paper size costs little. The caller frees
 * t; dims get the configuration's true dims. */
static int jd_serving_tables(const ckb_workload *w, ckb_size s, int cf, int64_t *dims, void **t)
{
    int64_t small[CKB_MAX_DIMS];
    ckb_workload_config_dims(w, s, cf, dims);
    memcpy(small, dims, sizeof small);
    jd_set_dim(w, small, "HQ", 1);
    jd_set_dim(w, small, "HKV", 1);
    jd_set_dim(w, small, "HKV2", 2);
    jd_set_dim(w, small, "D", 1);
    if (ckb_tensors_alloc(w, small, t) != 0)
        return -1;
    w->create_inputs(small, 1, t);
    return 0;
}

static int jd_tensor(const ckb_workload *w, const char *name)
{
    for (int i = 0; i < w->ntensors; i++)
        if (strcmp(w->tensors[i].name, name) == 0)
            return i;
    return -1;
}

/* Both serving workloads are judged on a decode-heavy and a prefill-heavy
 * step: the same operator (no head dim, head size or page size differs
 * between them), each step valid at every size, the flops those of its own
 * tables, and the mixes what their names say. */
CKBT_TEST(workload_serving_configurations_are_the_mixes_they_name, "quick")
{
    static const char *const model_dims[] = {"HQ", "HKV", "HKV2", "D", "PS"};
    static const char *const ids[] = {"6p", "7p"};
    for (int k = 0; k < 2; k++) {
        const ckb_workload *w = ckb_workload_find(ids[k]);
        CKBT_EXPECT(w && w->nconfigs == 2, "%s: two configurations", ids[k]);
        if (!w || w->nconfigs != 2)
            continue;
        int has[2] = {0, 0};
        for (int cf = 0; cf < 2; cf++) {
            const ckb_config *c = &w->configs[cf];
            has[strcmp(c->name, "decode") == 0 ? 0 : strcmp(c->name, "prefill") == 0 ? 1 : 0]++;
            for (int j = 0; j < c->nset; j++)
                for (size_t m = 0; m < sizeof model_dims / sizeof *model_dims; m++)
                    CKBT_EXPECT(strcmp(c->set[j].dim, model_dims[m]) != 0,
                                "%s/%s sets %s: the model's shape is the same in both mixes",
                                w->id, c->name, model_dims[m]);
        }
        CKBT_EXPECT(has[0] == 1 && has[1] == 1, "%s: one decode, one prefill configuration",
                    w->id);
        for (int s = CKB_SIZE_SMALL; s < CKB_SIZE_COUNT; s++)
            for (int cf = 0; cf < 2; cf++) {
                const char *name = ckb_workload_config_name(w, cf), *size = ckb_size_name(s);
                const int decode = strcmp(name, "decode") == 0;
                int64_t d[CKB_MAX_DIMS];
                void *t[CKB_MAX_TENSORS];
                if (jd_serving_tables(w, (ckb_size)s, cf, d, t) != 0)
                    abort();
                const int64_t ns = jd_dim(w, d, "NS"), nt = jd_dim(w, d, "NT");
                const int64_t len = jd_dim(w, d, "PPS") * jd_dim(w, d, "PS");
                const int32_t *kv = t[jd_tensor(w, "kv_lens")];
                const int32_t *cu = t[jd_tensor(w, "cu_q_lens")];
                CKBT_EXPECT(jd_dim(w, d, "NS1") == ns + 1 &&
                                jd_dim(w, d, "NP") == ns * jd_dim(w, d, "PPS"),
                            "%s/%s at %s: NS1 = NS + 1 and NP = NS * PPS", w->id, name, size);
                double pairs = 0, decode_rows = 0;
                int64_t bad = 0, nseq = ns;
                if (k == 0) { /* one query row per sequence, lengths NS * L / 2 in all */
                    CKBT_EXPECT(nt == 2 * ns, "%s/%s at %s: NT = 2 NS", w->id, name, size);
                    for (int64_t i = 0; i < ns; i++)
                        pairs += kv[i], bad += kv[i] < 1 || kv[i] > len;
                    bad += pairs != (double)(ns * len / 2);
                    decode_rows = (double)ns;
                } else {
                    nseq = *(const int32_t *)t[jd_tensor(w, "num_seqs")];
                    bad += cu[0] != 0 || cu[ns] != nt || nseq > ns;
                    for (int64_t i = 0; i < ns; i++) {
                        const int64_t q = cu[i + 1] - cu[i];
                        bad += i < nseq ? q < 1 || q > kv[i] || kv[i] > len : q != 0 || kv[i];
                        pairs += (double)q * kv[i];
                        decode_rows += q == 1;
                    }
                }
                /* QK^T and PV: 2 D each per (query row, valid key, query head) */
                const double want = 4.0 * (double)jd_dim(w, d, "HQ") * jd_dim(w, d, "D") * pairs;
                CKBT_EXPECT(bad == 0, "%s/%s at %s: %lld entries off a valid step", w->id, name,
                            size, (long long)bad);
                CKBT_EXPECT(fabs(w->flops(d) - want) <= 1e-9 * want,
                            "%s/%s at %s: flops %g, its tables give %g", w->id, name, size,
                            w->flops(d), want);
                if (k == 1) /* decode-heavy: most rows decodes; prefill-heavy: most in chunks */
                    CKBT_EXPECT(decode ? decode_rows >= 0.85 * nt : decode_rows <= 0.1 * nt,
                                "7p/%s at %s: %g of %lld rows are decodes", name, size,
                                decode_rows, (long long)nt);
                ckb_tensors_free(w, t);
            }
        /* 6p: the prefill-heavy step leaves fewer decodes over longer contexts */
        for (int s = CKB_SIZE_SMALL; k == 0 && s < CKB_SIZE_COUNT; s++) {
            int64_t dd[CKB_MAX_DIMS], dp[CKB_MAX_DIMS];
            const int dec = strcmp(w->configs[0].name, "decode") == 0 ? 0 : 1;
            ckb_workload_config_dims(w, (ckb_size)s, dec, dd);
            ckb_workload_config_dims(w, (ckb_size)s, 1 - dec, dp);
            CKBT_EXPECT(jd_dim(w, dp, "NS") * 2 <= jd_dim(w, dd, "NS") &&
                            jd_dim(w, dp, "PPS") >= 2 * jd_dim(w, dd, "PPS"),
                        "6p at %s: prefill NS %lld, PPS %lld against decode NS %lld, PPS %lld",
                        ckb_size_name((ckb_size)s), (long long)jd_dim(w, dp, "NS"),
                        (long long)jd_dim(w, dp, "PPS"), (long long)jd_dim(w, dd, "NS"),
                        (long long)jd_dim(w, dd, "PPS"));
        }
    }
}

/* 7p's prefill configuration at paper size is upstream's step exactly
 * (c736bd8): ACTIVE_Q_LENS = 48 x 1 + 7 x 512 + 464, ACTIVE_KV_LENS = 257 +
 * ((73 i) mod 240) 16 for the decodes and 1023, 1535, ..., 4095, 4095 for
 * the chunks, 56 of 64 slots active, the rest zero. */
CKBT_TEST(workload_7p_prefill_at_paper_is_upstreams_step, "quick")
{
    const ckb_workload *w = ckb_workload_find("7p");
    int cf = -1;
    for (int c = 0; w && c < w->nconfigs; c++)
        if (strcmp(w->configs[c].name, "prefill") == 0)
            cf = c;
    CKBT_EXPECT(cf == 0, "7p's first configuration is prefill, upstream's step (%d)", cf);
    if (cf < 0)
        return;
    int64_t d[CKB_MAX_DIMS];
    void *t[CKB_MAX_TENSORS];
    if (jd_serving_tables(w, CKB_SIZE_PAPER, cf, d, t) != 0)
        abort();
    int32_t q[64] = {0}, kv[64] = {0};
    for (int i = 0; i < 48; i++)
        q[i] = 1, kv[i] = 257 + ((i * 73) % 240) * 16;
    for (int i = 48; i < 56; i++)
        q[i] = i < 55 ? 512 : 464, kv[i] = i < 55 ? 1023 + 512 * (i - 48) : 4095;
    const int32_t *kvl = t[jd_tensor(w, "kv_lens")], *cu = t[jd_tensor(w, "cu_q_lens")];
    int bad = *(const int32_t *)t[jd_tensor(w, "num_seqs")] != 56 || cu[0] != 0 ||
              jd_dim(w, d, "NS") != 64 || jd_dim(w, d, "NT") != 4096;
    for (int i = 0; !bad && i < 64; i++)
        bad += cu[i + 1] - cu[i] != q[i] || kvl[i] != kv[i];
    CKBT_EXPECT(!bad, "7p/prefill at paper differs from upstream's ACTIVE_Q_LENS/ACTIVE_KV_LENS");
    ckb_tensors_free(w, t);
}
