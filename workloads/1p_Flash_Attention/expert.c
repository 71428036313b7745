/*
 * expert.c — the hand-tuned kernel for 1p_Flash_Attention: causal multi-head
 * attention, q, k, v, out bf16 [B, H, S, D], out = softmax(mask(q k^T * D^-0.5)) v.
 *
 * The flash-attention core (online softmax, block mask, packing, the
 * AVX-512 BF16 / AMX / AVX2 / portable paths and their tunables BQ, BK,
 * SCHED, MMA) is expert-kit/ckb_kit_flash.h, shared with 2p and 4p. What is
 * 1p's own: one kv head per query head, heads contiguous [S, D] blocks, and
 * FA_G = 4 heads packed per group (more blocks to balance between barriers,
 * at FA_G * 4 * S * D bytes of packed K and V in each of two rings; can be
 * set with -DFA_G but is not searched).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "ckbench.h"

#define FA_BKV (B * H) /* kv heads = query heads */
#define FA_GQ 1
#define FA_QS D
#define FA_KS D
#define FA_SCALE (1.0 / sqrt((double)D))
#ifndef FA_G
#define FA_G 4
#endif

static inline int64_t fa__kv_off(int64_t kvh) { return kvh * S * D; }
static inline int64_t fa__q_off(int64_t kvh, int64_t qh) { return (kvh + qh) * S * D; }

#include "ckb_kit_flash.h"

void workload(const ckb_bf16 *q, const ckb_bf16 *k, const ckb_bf16 *v, ckb_bf16 *out)
{
    fa__attention(q, k, v, out);
}
