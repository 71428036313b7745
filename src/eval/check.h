/*
 * check.h — the correctness verdict (DESIGN §4 stage 4): allclose against
 * the oracle, |got - want| <= atol + rtol * |want|, with NaN/Inf in `got`
 * that the oracle lacks counted as wrong (never a wildcard, CHEATS.md #10).
 */
#ifndef CKB_CHECK_H
#define CKB_CHECK_H

#include <stdint.h>

#include "workloads/workload.h"

typedef struct {
    int ok;              /* 1: every element within tolerance */
    int64_t nbad;        /* elements outside tolerance */
    int64_t worst;       /* index of the element with the largest violation */
    double got, want;    /* values at `worst` */
    double max_abs_err;  /* over all elements (finite ones) */
    double max_tol_share; /* the largest |got - want| / (atol + rtol*|want|) over the
                             finite ones: at most 1 when every element passes */
    double max_rel_err;  /* the largest |got - want| / |want| over the finite ones whose
                            want is not 0 (the max_rel_diff of upstream's MaxKernel
                            harness, which divides by those zeros too: Inf or NaN) */
    int64_t nonfinite;   /* NaN/Inf in got where want is finite */
} ckb_check;

/* Compares n elements of dtype t. */
void ckb_check_allclose(ckb_dtype t, const void *got, const void *want, int64_t n, double atol,
                        double rtol, ckb_check *out);

/* Folds b into a (a is the running verdict over several tensors/seeds). */
void ckb_check_merge(ckb_check *a, const ckb_check *b);

#endif /* CKB_CHECK_H */
