#include "workloads/inputs.h"

#include <math.h>

/* Keeps the streams of (seed, stream) pairs apart: distinct keys per pair. */
static uint64_t inputs__key(uint64_t seed, uint64_t stream)
{
    return ckb_hash64(seed * 0x100000001b3ull + 0x632be59bd9b4e019ull, stream);
}

float ckb_normal(uint64_t seed, uint64_t stream, uint64_t index)
{
    uint64_t h = ckb_hash64(inputs__key(seed, stream), index);
    /* Two 32-bit uniforms; u1 in (0, 1] so log() is finite. */
    double u1 = ((double)(h >> 32) + 1.0) / 4294967296.0;
    double u2 = (double)(h & 0xffffffffu) / 4294967296.0;
    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

static float inputs__uniform(uint64_t key, uint64_t index, float lo, float hi)
{
    return lo + (hi - lo) * (float)((double)(ckb_hash64(key, index) >> 11) / 9007199254740992.0);
}

void ckb_fill_normal_bf16(ckb_bf16 *x, int64_t n, uint64_t seed, uint64_t stream, float mean,
                          float std)
{
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++)
        x[i] = ckb_f32_to_bf16(mean + std * ckb_normal(seed, stream, (uint64_t)i));
}

void ckb_fill_uniform_bf16(ckb_bf16 *x, int64_t n, uint64_t seed, uint64_t stream, float lo,
                           float hi)
{
    uint64_t key = inputs__key(seed, stream);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++)
        x[i] = ckb_f32_to_bf16(inputs__uniform(key, (uint64_t)i, lo, hi));
}

void ckb_fill_normal_f32(float *x, int64_t n, uint64_t seed, uint64_t stream, float mean,
                         float std)
{
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++)
        x[i] = mean + std * ckb_normal(seed, stream, (uint64_t)i);
}

void ckb_fill_uniform_f32(float *x, int64_t n, uint64_t seed, uint64_t stream, float lo,
                          float hi)
{
    uint64_t key = inputs__key(seed, stream);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++)
        x[i] = inputs__uniform(key, (uint64_t)i, lo, hi);
}

float ckb_seed_factor(uint64_t seed, uint64_t stream, float lo, float hi)
{
    return inputs__uniform(inputs__key(seed, stream ^ 0xfac7011ull), 0, lo, hi);
}
