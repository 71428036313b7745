/*
 * reference.h — the plain loops the workloads' references share. A
 * reference is the op as its formula says, used only at small size to
 * validate the baseline, so these favour obviousness over speed.
 */
#ifndef CKB_REFERENCE_H
#define CKB_REFERENCE_H

#include <stdint.h>

#include "ckbench.h"

/* Z[M, N] = A[M, K] @ B in f32 from bf16 A and B, where B is [K, N], or
 * [N, K] when b_transposed (x @ W.T). Returns a malloc'd buffer the caller
 * frees; aborts when out of memory (a reference that cannot run is a
 * broken test, not a verdict). */
float *ckb_ref_matmul(const ckb_bf16 *A, const ckb_bf16 *B, int64_t M, int64_t K, int64_t N,
                      int b_transposed);

#endif /* CKB_REFERENCE_H */
