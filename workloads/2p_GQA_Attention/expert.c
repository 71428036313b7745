/*
 * expert.c — the hand-tuned kernel for 2p_GQA_Attention: causal grouped-query
 * attention, query/out bf16 [B, S, HQ, D], key/value bf16 [B, S, HKV, D];
 * query head h reads kv head h / G (G = HQ / HKV), out = softmax(mask(q k^T *
 * D^-0.5)) v.
 *
 * The flash-attention core (online softmax, block mask, packing, the
 * AVX-512 BF16 / AMX / AVX2 / portable paths and their tunables BQ, BK,
 * SCHED, MMA) is expert-kit/ckb_kit_flash.h, shared with 1p and 4p. What is
 * 2p's own is GQA's head mapping: each kv head is read from the strided
 * [B, S, HKV, D] layout and packed exactly once, then all G query heads of
 * its group run against the packed copy while it is hot in cache.
 * jnp.repeat's G copies of K and V, and the baseline's transposes to
 * head-major, never exist: query rows are gathered straight from
 * [B, S, HQ, D] (stride HQ*D) and output rows scattered back to it. FA_G
 * (kv heads per packed group, default 1) can be set but is not searched.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "ckbench.h"

#define FA_GQ (HQ / HKV) /* query heads per kv head */
#define FA_BKV (B * HKV) /* kv heads over the batch */
#define FA_QS (HQ * D)   /* stride between positions of one query head */
#define FA_KS (HKV * D)  /* stride between positions of one kv head */
#define FA_SCALE (1.0 / sqrt((double)D))

/* Where kv head kvh (over the batch) starts in key/value, and where query
 * head qh of its group starts in query/out. */
static inline int64_t fa__kv_off(int64_t kvh) { return (kvh / HKV * S * HKV + kvh % HKV) * D; }
static inline int64_t fa__q_off(int64_t kvh, int64_t qh)
{
    return (kvh / HKV * S * HQ + kvh % HKV * FA_GQ + qh) * D;
}

#include "ckb_kit_flash.h"

void workload(const ckb_bf16 *query, const ckb_bf16 *key, const ckb_bf16 *value, ckb_bf16 *out)
{
    fa__attention(query, key, value, out);
}
