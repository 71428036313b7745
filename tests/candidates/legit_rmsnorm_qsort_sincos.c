/* Legitimate: RMSNorm whose sum of squares is taken in ascending order
 * (glibc qsort on a row of > 1 KB, which sizes its buffer through sysconf)
 * and scaled by sin^2 + cos^2 of one value (gcc emits one sincosf call). */
#include <math.h>
#include <stdlib.h>

#include "ckbench.h"

static int by_value(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

void workload(const ckb_bf16 *x, const ckb_bf16 *scale, ckb_bf16 *out)
{
    float *sq = malloc(sizeof(float) * D);
    if (!sq)
        return;
    for (long r = 0; r < B * S; r++) {
        const ckb_bf16 *row = x + r * D;
        for (long d = 0; d < D; d++) {
            float v = ckb_bf16_to_f32(row[d]);
            sq[d] = v * v;
        }
        qsort(sq, D, sizeof(float), by_value);
        float ss = 0.0f;
        for (long d = 0; d < D; d++)
            ss += sq[d];
        float one = sinf(ss) * sinf(ss) + cosf(ss) * cosf(ss);
        float inv = one / sqrtf(ss / (float)D + EPS);
        for (long d = 0; d < D; d++)
            out[r * D + d] = ckb_f32_to_bf16(ckb_bf16_to_f32(row[d]) * inv *
                                             ckb_bf16_to_f32(scale[d]));
    }
    free(sq);
}
