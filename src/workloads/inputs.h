/*
 * inputs.h — deterministic, parallel fills for create_inputs().
 *
 * Every value is a pure function of (seed, stream, index) through
 * ckb_hash64, so inputs are identical whatever the thread count, and two
 * tensors of one workload draw from different streams.
 */
#ifndef CKB_INPUTS_H
#define CKB_INPUTS_H

#include <stdint.h>

#include "ckbench.h"

/* A standard normal sample for (seed, stream, index) (Box-Muller). */
float ckb_normal(uint64_t seed, uint64_t stream, uint64_t index);

/* The sample ckb_normal draws for the hash h of its (seed, stream, index):
 * sqrt(-2 ln u1) cos(2 pi u2), u1 = (h's high 32 bits + 1) / 2^32 and u2 =
 * its low 32 bits / 2^32. ckb_box_muller_libm is the same through libm's
 * log and cos, the definition the first is held to (tests/test_inputs.c)
 * and ten times slower in a fill. */
float ckb_box_muller(uint64_t h);
float ckb_box_muller_libm(uint64_t h);
/* The hash every fill of (seed, stream) draws element index from. */
uint64_t ckb_input_hash(uint64_t seed, uint64_t stream, uint64_t index);

void ckb_fill_normal_bf16(ckb_bf16 *x, int64_t n, uint64_t seed, uint64_t stream, float mean,
                          float std);
/* x[i] = scale * ckb_normal(seed, stream, first + i) in bf16, i < n, on
 * the calling thread (vectorised): one row of a fill whose rows have
 * scales of their own, for a workload's parallel loop over its rows. */
void ckb_normal_row_bf16(ckb_bf16 *x, int64_t n, uint64_t seed, uint64_t stream, uint64_t first,
                         float scale);
void ckb_fill_uniform_bf16(ckb_bf16 *x, int64_t n, uint64_t seed, uint64_t stream, float lo,
                           float hi);
void ckb_fill_normal_f32(float *x, int64_t n, uint64_t seed, uint64_t stream, float mean,
                         float std);
void ckb_fill_uniform_f32(float *x, int64_t n, uint64_t seed, uint64_t stream, float lo,
                          float hi);

/* A per-seed factor in [lo, hi): varies scales and offsets between seeds so
 * that no analytic shortcut holds for every input set (CHEATS.md #4). */
float ckb_seed_factor(uint64_t seed, uint64_t stream, float lo, float hi);

#endif /* CKB_INPUTS_H */
