/*
 * amx_emu.h — the AMX tile intrinsics in plain C, force-included by
 * tests/test_docs.c (docs_amx_examples_emulated) into an AMX example
 * compiled with -D__AMX_TILE__ -D__AMX_BF16__ on a host without AMX, so
 * that the example's tile path (its configuration, layouts, strides and
 * blocking) is run against the workload's reference here. It checks what
 * the hardware would fault on (no configuration, a tile past its shape, a
 * product of mismatched shapes) by trapping. It says nothing of speed, and
 * it is no proof for the hardware: tdpbf16ps's rounding of its internal
 * sums is modelled as f32 additions.
 */
#ifndef CKB_TESTS_AMX_EMU_H
#define CKB_TESTS_AMX_EMU_H

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "ckbench.h"

#undef _tile_loadd
#undef _tile_stored
#undef _tile_zero
#undef _tile_dpbf16ps
#undef _tile_release
#define _tile_loadconfig amx_emu_loadconfig
#define _tile_release amx_emu_release
#define _tile_loadd amx_emu_loadd
#define _tile_stored amx_emu_stored
#define _tile_zero amx_emu_zero
#define _tile_dpbf16ps amx_emu_dpbf16ps

typedef struct {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} amx_emu_cfg;

static __thread amx_emu_cfg amx_emu_c;
static __thread unsigned char amx_emu_t[8][16][64];
static __thread int amx_emu_on;
/* how many tdpbf16ps ran (the test reads it with dlsym: the tile path was
 * taken, not the example's fallback) */
long amx_emu_products;

static inline void amx_emu_loadconfig(const void *p)
{
    memcpy(&amx_emu_c, p, sizeof amx_emu_c);
    if (amx_emu_c.palette != 1 || amx_emu_c.start_row != 0)
        __builtin_trap();
    amx_emu_on = 1;
}

static inline void amx_emu_release(void) { amx_emu_on = 0; }

static inline void amx_emu_tile(int t)
{
    if (!amx_emu_on || t < 0 || t > 7 || amx_emu_c.rows[t] > 16 || amx_emu_c.colsb[t] > 64 ||
        amx_emu_c.rows[t] == 0 || amx_emu_c.colsb[t] == 0)
        __builtin_trap();
}

static inline void amx_emu_loadd(int t, const void *base, long stride)
{
    amx_emu_tile(t);
    memset(amx_emu_t[t], 0, sizeof amx_emu_t[t]);
    for (int r = 0; r < amx_emu_c.rows[t]; r++)
        memcpy(amx_emu_t[t][r], (const char *)base + r * stride, amx_emu_c.colsb[t]);
}

static inline void amx_emu_stored(int t, void *base, long stride)
{
    amx_emu_tile(t);
    for (int r = 0; r < amx_emu_c.rows[t]; r++)
        memcpy((char *)base + r * stride, amx_emu_t[t][r], amx_emu_c.colsb[t]);
}

static inline void amx_emu_zero(int t)
{
    amx_emu_tile(t);
    memset(amx_emu_t[t], 0, sizeof amx_emu_t[t]);
}

/* c[m][n] += sum over pairs p of a[m][2p]*b[p][n].lo + a[m][2p+1]*b[p][n].hi */
static inline void amx_emu_dpbf16ps(int c, int a, int b)
{
    amx_emu_tile(c);
    amx_emu_tile(a);
    amx_emu_tile(b);
    __atomic_fetch_add(&amx_emu_products, 1, __ATOMIC_RELAXED);
    int m_ = amx_emu_c.rows[a], k_ = amx_emu_c.colsb[a] / 4, n_ = amx_emu_c.colsb[b] / 4;
    if (amx_emu_c.rows[b] != k_ || amx_emu_c.rows[c] != m_ || amx_emu_c.colsb[c] != n_ * 4)
        __builtin_trap();
    for (int m = 0; m < m_; m++)
        for (int n = 0; n < n_; n++) {
            float acc;
            memcpy(&acc, &amx_emu_t[c][m][4 * n], 4);
            for (int p = 0; p < k_; p++) {
                ckb_bf16 a0, a1, b0, b1;
                memcpy(&a0, &amx_emu_t[a][m][4 * p], 2);
                memcpy(&a1, &amx_emu_t[a][m][4 * p + 2], 2);
                memcpy(&b0, &amx_emu_t[b][p][4 * n], 2);
                memcpy(&b1, &amx_emu_t[b][p][4 * n + 2], 2);
                acc += ckb_bf16_to_f32(a0) * ckb_bf16_to_f32(b0) +
                       ckb_bf16_to_f32(a1) * ckb_bf16_to_f32(b1);
            }
            memcpy(&amx_emu_t[c][m][4 * n], &acc, 4);
        }
}


#endif /* CKB_TESTS_AMX_EMU_H */
