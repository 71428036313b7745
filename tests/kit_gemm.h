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
/* The kit's resident driver (ckb_kit_gemm16_run), one function per unit
 * (kit_gemm16_case.h): c[m][n] = a[m][k] @ b[k][n] in f32; returns the unit
 * that ran, -2 where the build has no AVX-512 BF16. The AMX one runs on the
 * emulated tiles of tests/amx_emu.h; ckbt_kit_amx_products counts their
 * products. */
typedef int (*ckbt_kit_gemm16_fn)(const ckb_bf16 *a, const ckb_bf16 *b, int64_t m, int64_t n,
                                  int64_t k, int64_t mc, int64_t nc, int tn, float *c);
int ckbt_kit_gemm16_dot(const ckb_bf16 *a, const ckb_bf16 *b, int64_t m, int64_t n, int64_t k,
                        int64_t mc, int64_t nc, int tn, float *c);
int ckbt_kit_gemm16_fma(const ckb_bf16 *a, const ckb_bf16 *b, int64_t m, int64_t n, int64_t k,
                        int64_t mc, int64_t nc, int tn, float *c);
int ckbt_kit_gemm16_amx(const ckb_bf16 *a, const ckb_bf16 *b, int64_t m, int64_t n, int64_t k,
                        int64_t mc, int64_t nc, int tn, float *c);
long ckbt_kit_amx_products(void);
/* The kit's panel GEMM (ckb_kit_panel_*, 29k's and 32k's), one function per
 * unit (kit_panel_case.h; AMX on the emulated tiles): c[m][16 np] =
 * a[m][k] @ B in f32, B given as b[k][16 np] (bt 0) or its transpose (bt 1),
 * k in passes of kc, row blocks of mb on a team; m a multiple of mb, mb of
 * 32, np of 2, k of 32. The unit that ran, -1 out of memory, -2 without
 * AVX-512 BF16. */
typedef int ckbt_kit_panel_fn(const ckb_bf16 *a, const ckb_bf16 *b, int bt, int64_t m, int64_t np,
                              int64_t k, int64_t kc, int64_t mb, float *c);
ckbt_kit_panel_fn ckbt_kit_panel_dot, ckbt_kit_panel_amx;
/* The kit's thread grid (ckb_kit_gemm_grid_make / _share): the team's size and
 * thread t's rows and columns of C [m][n]. */
void ckbt_kit_grid_share(int nthr, int tn_want, int t, int64_t m, int64_t rstep, int64_t n,
                         int64_t unit, int *nteam, int64_t *m0, int64_t *m1, int64_t *n0,
                         int64_t *n1);
/* The kit's portable GEMM (ckb_kit_gemm_rows): c[m][n] = init (a bf16 row
 * added to every row; NULL: zero) + a[m][k] @ b[k][n] in f32. */
void ckbt_kit_gemm_rows(const ckb_bf16 *a, const ckb_bf16 *b, int64_t m, int64_t n, int64_t k,
                        const ckb_bf16 *init, float *c);
/* 16 f32 rounded to bf16 by expert-kit/ckb_kit_simd.h: form 0 what the
 * experts call (the instruction where the target has AVX-512 BF16), 1 its
 * integer form, 2 the form kept as f32 (-1 if a low half is not zero). -2
 * where the target has no AVX-512: nothing to test. */
int ckbt_kit_bf16x16(const float *in, ckb_bf16 *out, int form);
/* expert-kit/ckb_kit_simd.h's primitives over in[0:n) (n a multiple of the
 * lanes): the odd ones the 16-lane (zmm) forms. -2 where the build lacks
 * the form's instructions. */
typedef enum {
    CKBT_KIT_EXP8 = 0,
    CKBT_KIT_EXP16 = 1,
    CKBT_KIT_EXP2_8 = 2,
    CKBT_KIT_EXP2_16 = 3,
    CKBT_KIT_TANH8 = 4,
    CKBT_KIT_TANH16 = 5,
    CKBT_KIT_GELU8 = 6,
    CKBT_KIT_GELU16 = 7,
    CKBT_KIT_BF16X8 = 8,      /* ckb_kit_bf16x8, widened back */
    CKBT_KIT_BF16X8_TOP = 10, /* ckb_kit_bf16x8_top as an f32 */
} ckbt_kit_fn;
int ckbt_kit_simd(ckbt_kit_fn fn, const float *in, float *out, int64_t n);
/* src[0:n) through ckb_kit_load8_n and ckb_kit_store8_n into back, and
 * ckb_kit_widen8 into wide (n rounded up to 8, zero past n). */
int ckbt_kit_bf16_io(const ckb_bf16 *src, int64_t n, float *wide, ckb_bf16 *back);
#endif
