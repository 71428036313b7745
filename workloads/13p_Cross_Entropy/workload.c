/*
 * 13p_Cross_Entropy — the fused linear + softmax cross-entropy loss of the
 * Llama-3.1-8B LM head (JAXBench benchmark/13p_Cross_Entropy, from Tokamax):
 * logits = hidden @ weight (f32), losses[b] = logsumexp(logits[b]) -
 * logits[b, labels[b]] (0 for a label outside [0, V), as one_hot gives),
 * loss = mean(losses). hidden, weight bf16; labels int32; loss, losses f32.
 */
#include <math.h>
#include <stdlib.h>

#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/scratch.h"
#include "workloads/workload.h"

enum { B, H, V };
enum { T_HIDDEN, T_WEIGHT, T_LABELS, T_LOSS, T_LOSSES, STREAM_BOOST };

/* The label logit a token is steered to: uniform in [0, CE_MAX_LABEL_LOGIT). */
#define CE_MAX_LABEL_LOGIT 14.0f

static void ce_create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench: hidden ~ N(0, 1), weight ~ 0.02 N(0, 1), random labels: the
     * logits of a token are N(0, ~1.3^2) whatever its label, every loss is
     * ~log(V) + 0.8, and a kernel that mixed up tokens or labels would
     * still get the mean. Here weight ~ N(0, 1.5^2 / H) (logits N(0, ~1.5^2)),
     * random labels, and each token's hidden row is then moved along its
     * label's weight column so that the label logit is a chosen value in
     * [0, 14): losses spread from ~0 (a confident, right prediction) to
     * ~log(V) + 1, as a trained model's do, and each one depends on its own
     * label and row. The move is ~10% of the row's norm. */
    const int64_t nb = d[B], nh = d[H], nv = d[V];
    ckb_fill_normal_bf16(t[T_WEIGHT], nh * nv, seed, T_WEIGHT, 0.0f, 1.5f / sqrtf((float)nh));
    ckb_fill_normal_bf16(t[T_HIDDEN], nb * nh, seed, T_HIDDEN, 0.0f,
                         ckb_seed_factor(seed, T_HIDDEN, 0.8f, 1.25f));
    const ckb_bf16 *w = t[T_WEIGHT];
    ckb_bf16 *x = t[T_HIDDEN];
    int32_t *labels = t[T_LABELS];
#pragma omp parallel for schedule(static)
    for (int64_t b = 0; b < nb; b++) {
        const int64_t label =
            (int64_t)(ckb_hash64(ckb_hash64(seed, T_LABELS), (uint64_t)b) % (uint64_t)nv);
        labels[b] = (int32_t)label;
        const float target =
            CE_MAX_LABEL_LOGIT * ckb_uniform(ckb_hash64(seed, STREAM_BOOST), (uint64_t)b);
        double logit = 0.0, norm2 = 0.0;
        for (int64_t h = 0; h < nh; h++) {
            const double wv = ckb_bf16_to_f32(w[h * nv + label]);
            logit += ckb_bf16_to_f32(x[b * nh + h]) * wv;
            norm2 += wv * wv;
        }
        const double c = (target - logit) / norm2;
        for (int64_t h = 0; h < nh; h++)
            x[b * nh + h] = ckb_f32_to_bf16(
                (float)(ckb_bf16_to_f32(x[b * nh + h]) + c * ckb_bf16_to_f32(w[h * nv + label])));
    }
}

/* One row's loss from its f32 logits: logsumexp minus the label's logit. */
static float ce_row_loss(const float *logits, int64_t nv, int32_t label)
{
    if (label < 0 || label >= nv)
        return 0.0f; /* one_hot of an out-of-range label is all zeros */
    float mx = logits[0];
    for (int64_t j = 1; j < nv; j++)
        mx = logits[j] > mx ? logits[j] : mx;
    float sum = 0.0f;
    for (int64_t j = 0; j < nv; j++)
        sum += expf(logits[j] - mx);
    return mx + logf(sum) - logits[label];
}

/*
 * As XLA materialises it: one oneDNN matmul writes every logit (f32, the
 * accumulator as produced; JAX rounds them to bf16, see the README), a row
 * loop takes each row's logsumexp and label logit, a last sum takes the mean.
 */
static void ce_baseline(const int64_t *d, void *const *t)
{
    const int64_t nb = d[B], nv = d[V];
    /* Reused between calls, as XLA's buffer assignment reuses temporaries. */
    float *logits = ckb_scratch(0, (size_t)(nb * nv) * sizeof(float));

    ckb_matmul_spec s = {0};
    s.M = nb, s.K = d[H], s.N = nv;
    s.a_type = s.b_type = CKB_BF16, s.c_type = CKB_F32;
    ckb_dnnl_matmul(&s, t[T_HIDDEN], t[T_WEIGHT], NULL, logits);

    const int32_t *labels = t[T_LABELS];
    float *losses = t[T_LOSSES];
#pragma omp parallel for schedule(static)
    for (int64_t b = 0; b < nb; b++) {
        const float *row = logits + b * nv;
        float mx = row[0];
#pragma omp simd reduction(max : mx)
        for (int64_t j = 0; j < nv; j++)
            mx = row[j] > mx ? row[j] : mx;
        float sum = 0.0f;
        for (int64_t j = 0; j < nv; j++)
            sum += expf(row[j] - mx);
        const int32_t label = labels[b];
        losses[b] = label >= 0 && label < nv ? mx + logf(sum) - row[label] : 0.0f;
    }
    double total = 0.0;
    for (int64_t b = 0; b < nb; b++)
        total += losses[b];
    *(float *)t[T_LOSS] = (float)(total / (double)nb);
}

static void ce_reference(const int64_t *d, void *const *t)
{
    const ckb_bf16 *x = t[T_HIDDEN], *w = t[T_WEIGHT];
    const int32_t *labels = t[T_LABELS];
    float *losses = t[T_LOSSES];
    const int64_t nb = d[B], nh = d[H], nv = d[V];
#pragma omp parallel for
    for (int64_t b = 0; b < nb; b++) {
        float *logits = malloc((size_t)nv * sizeof *logits);
        if (!logits)
            abort();
        for (int64_t j = 0; j < nv; j++) {
            float acc = 0.0f;
            for (int64_t h = 0; h < nh; h++)
                acc += ckb_bf16_to_f32(x[b * nh + h]) * ckb_bf16_to_f32(w[h * nv + j]);
            logits[j] = acc;
        }
        losses[b] = ce_row_loss(logits, nv, labels[b]);
        free(logits);
    }
    double total = 0.0;
    for (int64_t b = 0; b < nb; b++)
        total += losses[b];
    *(float *)t[T_LOSS] = (float)(total / (double)nb);
}

/* JAXBench's count: the matmul, and 3 flops per logit for softmax and loss. */
static double ce_flops(const int64_t *d)
{
    return 2.0 * d[B] * d[H] * d[V] + 3.0 * d[B] * d[V];
}

static double ce_bytes(const int64_t *d)
{
    return 2.0 * ((double)d[B] * d[H] + (double)d[H] * d[V]) + 4.0 * d[B] + 4.0 + 4.0 * d[B];
}

const ckb_workload ckb_wl_13p_Cross_Entropy = {
    .id = "13p_Cross_Entropy",
    .model = "Llama-3.1-8B",
    .op = "fused_cross_entropy",
    .tags = "matmul,softmax,loss",
    .summary = "losses[b] = logsumexp(hidden[b] @ weight) - (hidden[b] @ weight)[labels[b]], "
               "loss = mean(losses); bf16 in, f32 logits and out",
    .ndims = 3,
    .scale_dim = "B",
    .dims = {{"B", {64, 1024, 8192}}, {"H", {128, 2048, 4096}}, {"V", {1000, 32000, 128256}}},
    .ntensors = 5,
    .tensors = {{"hidden", CKB_BF16, CKB_IN, 2, {B, H}},
                {"weight", CKB_BF16, CKB_IN, 2, {H, V}},
                {"labels", CKB_I32, CKB_IN, 1, {B}},
                {"loss", CKB_F32, CKB_OUT, 0, {0}},
                {"losses", CKB_F32, CKB_OUT, 1, {B}}},
    .create_inputs = ce_create_inputs,
    .baseline = ce_baseline,
    .reference = ce_reference,
    .flops = ce_flops,
    .bytes = ce_bytes,
};
