/*
 * perturb.h — wide-range input sets. Every input set of an evaluation is
 * fresh (its own seed, drawn by the trusted side when the set is used), so
 * no two calls see the same values; for workloads whose output is a
 * product of two operands (ckb_workload.wide_range) every set is also
 * scaled, by a power of two drawn per set, so that no set can be told apart
 * by its magnitudes and a half-precision or fp8 data path overflows or
 * underflows on all of them.
 */
#ifndef CKB_PERTURB_H
#define CKB_PERTURB_H

#include <stdint.h>

#include "workloads/instance.h"

/* Scales the floating-point inputs by 2^e and 2^-e alternately (the first
 * by 2^e, the second by 2^-e, ...): exact in bf16 and f32, and for a
 * product of two operands the result keeps its magnitude and its bits. */
void ckb_widen_inputs(const ckb_instance *in, void *const *t, int e);

/* The exponent of one set, from a random draw: |e| in
 * [wide_range - 3, wide_range] with either sign (0 when the workload has
 * no wide range). */
int ckb_widen_exponent(const ckb_workload *w, uint64_t draw);

#endif /* CKB_PERTURB_H */
