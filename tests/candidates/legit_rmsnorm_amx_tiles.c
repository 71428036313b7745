/* Legitimate: RMSNorm whose per-row accumulators start from a tile that
 * AMX zeroes and stores (on a CPU with AMX; elsewhere plain C). Tile data
 * needs the kernel's permission, which the harness obtains for every
 * workload, not only those whose baseline is a oneDNN matmul. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <immintrin.h>

#include "ckbench.h"

static void zero_rows(float *acc)
{
#if defined(__AMX_TILE__)
    /* palette 1, tile 0: 16 rows of 64 bytes */
    uint8_t cfg[64];
    memset(cfg, 0, sizeof cfg);
    cfg[0] = 1;
    cfg[16] = 64;
    cfg[48] = 16;
    _tile_loadconfig(cfg);
    _tile_zero(0);
    _tile_stored(0, acc, 64);
    _tile_release();
#else
    memset(acc, 0, 16 * 16 * sizeof(float));
#endif
}

void workload(const ckb_bf16 *x, const ckb_bf16 *scale, ckb_bf16 *out)
{
    float acc[16 * 16];
    for (long r = 0; r < B * S; r++) {
        zero_rows(acc);
        const ckb_bf16 *row = x + r * D;
        for (long d = 0; d < D; d++) {
            float v = ckb_bf16_to_f32(row[d]);
            acc[d % 16] += v * v;
        }
        float ss = 0.0f;
        for (int k = 0; k < 16; k++)
            ss += acc[k];
        float inv = 1.0f / sqrtf(ss / (float)D + EPS);
        for (long d = 0; d < D; d++) {
            float n = ckb_bf16_to_f32(ckb_f32_to_bf16(ckb_bf16_to_f32(row[d]) * inv));
            out[r * D + d] = ckb_f32_to_bf16(n * ckb_bf16_to_f32(scale[d]));
        }
    }
}
