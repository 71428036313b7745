/* kit_gemm.h — the kit's GEMM driver, one function per unit (kit_gemm_case.h). */
#ifndef CKBT_KIT_GEMM_H
#define CKBT_KIT_GEMM_H
#include <stdint.h>

#include "ckbench.h"

typedef int (*ckbt_kit_gemm_fn)(const ckb_bf16 *a, const ckb_bf16 *b, int bt, int64_t m,
                                int64_t n, int64_t k, int64_t mc, int64_t nc, int64_t kc,
                                int use_epi, int prepack, float *c);
int ckbt_kit_gemm_dot(const ckb_bf16 *a, const ckb_bf16 *b, int bt, int64_t m, int64_t n,
                      int64_t k, int64_t mc, int64_t nc, int64_t kc, int use_epi, int prepack,
                      float *c);
int ckbt_kit_gemm_dot_odd(const ckb_bf16 *a, const ckb_bf16 *b, int bt, int64_t m, int64_t n,
                          int64_t k, int64_t mc, int64_t nc, int64_t kc, int use_epi,
                          int prepack, float *c);
int ckbt_kit_gemm_fma(const ckb_bf16 *a, const ckb_bf16 *b, int bt, int64_t m, int64_t n,
                      int64_t k, int64_t mc, int64_t nc, int64_t kc, int use_epi, int prepack,
                      float *c);
#endif
