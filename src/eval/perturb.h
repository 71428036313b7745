/*
 * perturb.h — why no two timed calls see the same inputs. A kernel that
 * remembers answers by the inputs' address or content would be timed on
 * cache hits; instead each call of the timing loop gets its input set with
 * about half the neighbouring pairs of elements of every floating-point
 * input swapped, a different choice per call. Swapping keeps each tensor's multiset of values (signs, ranges,
 * positivity of variances) and never touches the integer tensors that give
 * a workload its structure (lengths, page tables, labels), so the cost of a
 * call does not change. The parent repeats the same swaps to compute the
 * oracle of an audited call.
 */
#ifndef CKB_PERTURB_H
#define CKB_PERTURB_H

#include <stdint.h>

#include "workloads/workload.h"

/* Swaps elements of every bf16/f32 input in t (the workload's tensors at
 * dims), as chosen by (key, call). Deterministic. */
void ckb_perturb_inputs(const ckb_workload *w, const int64_t *dims, void *const *t, uint64_t key,
                        int call);

/* Scales the floating-point inputs by 2^e and 2^-e alternately (the
 * first by 2^e, the second by 2^-e, ...): exact in bf16 and f32, and for
 * a product of two operands the result keeps its magnitude and its bits,
 * while each operand lies far outside the range of half precision or
 * fp8 (ckb_workload.wide_range). */
void ckb_widen_inputs(const ckb_workload *w, const int64_t *dims, void *const *t, int e);

#endif /* CKB_PERTURB_H */
