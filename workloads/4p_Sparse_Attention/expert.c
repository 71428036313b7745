/*
 * expert.c — the hand-tuned kernel for 4p_Sparse_Attention: splash
 * (block-sparse) attention with a causal mask and GQA, q/out bf16
 * [B, HQ, S, D], k/v bf16 [B, HKV, S, D]; query head h of batch row b reads
 * kv head h / G of the same row (G = HQ / HKV), q arrives pre-scaled,
 * out = softmax(mask(q k^T)) v.
 *
 * The flash-attention core (online softmax, packing, the AVX-512 BF16 /
 * AMX / AVX2 / portable paths and their tunables BQ, BK, SCHED, MMA) is
 * expert-kit/ckb_kit_flash.h, shared with 1p and 2p. What makes it splash
 * attention, and what is 4p's own:
 *   - the block mask: the causal mask is evaluated per block, not per
 *     element (the kit's ckb_kit_attn_block_kind). A tile of query rows
 *     against a block of keys is fully masked (skipped: no q k^T, no exp, no
 *     P v, no load of its K or V), fully visible (computed with no mask at
 *     all) or partial (the diagonal blocks: the only ones where element
 *     masks are applied). About half of the S x S blocks are skipped, which the
 *     baseline computes and then multiplies by zeros;
 *   - no score scale (q is pre-scaled) and GQA over head-major
 *     [B, H, S, D] tensors: the B * HKV (batch row, kv head) pairs are the
 *     kit's kv heads, each packed once, its G query heads run against the
 *     packed copy while it is hot. [B, HQ, S, D] is [B * HKV, G, S, D], so
 *     the offsets below need no batch term. FA_G (kv heads per packed
 *     group, default 1) can be set but is not searched.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "ckbench.h"

#define FA_GQ (HQ / HKV) /* query heads per kv head */
#define FA_BKV (B * HKV) /* kv heads over the batch */
#define FA_QS D          /* stride between positions of one query head */
#define FA_KS D          /* stride between positions of one kv head */
#define FA_SCALE 1.0     /* q is pre-scaled */

/* Where kv head kvh (= b * HKV + kv head) starts in k/v, and where query
 * head qh of its group starts in q/out. */
static inline int64_t fa__kv_off(int64_t kvh) { return kvh * S * D; }
static inline int64_t fa__q_off(int64_t kvh, int64_t qh) { return (kvh * FA_GQ + qh) * S * D; }

#include "ckb_kit_flash.h"

void workload(const ckb_bf16 *q, const ckb_bf16 *k, const ckb_bf16 *v, ckb_bf16 *out)
{
    fa__attention(q, k, v, out);
}
