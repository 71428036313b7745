/*
 * ckbench.h — the one header a candidate kernel may include besides the C
 * standard headers, <immintrin.h> and <omp.h>.
 *
 * A candidate is one C file that defines
 *
 *     void workload(<the workload's tensors, inputs first, then outputs>);
 *
 * The harness compiles it with -O3 -march=native -fopenmp and force-includes a
 * generated header that defines the workload's dims as macros (e.g. M, N, K,
 * with an L suffix so index arithmetic is 64-bit) and declares the prototype
 * of workload(), so a wrong signature is a compile error.
 *
 * Everything here is static inline: a candidate links against nothing of ours.
 */
#ifndef CKBENCH_H
#define CKBENCH_H

#include <stdint.h>
#include <string.h>

/* bf16 is stored as its raw 16 bits: the top half of an IEEE f32. */
typedef uint16_t ckb_bf16;

static inline float ckb_bf16_to_f32(ckb_bf16 h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Round to nearest even, as hardware (vcvtneps2bf16) and JAX do. NaN stays NaN. */
static inline ckb_bf16 ckb_f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (ckb_bf16)((u >> 16) | 0x0040u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (ckb_bf16)(u >> 16);
}

/*
 * The counter-based hash behind every random number a workload specifies
 * (dropout masks): a kernel reproduces a mask exactly from (key, index).
 * It is the splitmix64 finalizer applied to key + (index+1) * golden ratio.
 */
static inline uint64_t ckb_hash64(uint64_t key, uint64_t index)
{
    uint64_t z = key + (index + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A uniform float in [0, 1) from the top 24 bits of ckb_hash64. */
static inline float ckb_uniform(uint64_t key, uint64_t index)
{
    return (float)(ckb_hash64(key, index) >> 40) * (1.0f / 16777216.0f);
}

#endif /* CKBENCH_H */
