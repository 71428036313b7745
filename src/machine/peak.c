/*
 * peak.c — the three measurements of a machine profile: f32 FMA peak, bf16
 * dot peak, triad bandwidth. Each is a best case: enough independent
 * accumulators that throughput, not latency, binds, and the best of a few
 * repetitions, since a peak is what no kernel can beat.
 */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__) && defined(__GNUC__)
/* Every kernel is compiled for its own ISA (target attributes), whatever
 * -march built ckbench, and the one run is chosen at run time by the ISA
 * level in force: CKBENCH_ISA can hide a unit the CPU has. */
#define PEAK__X86 1
#include <immintrin.h>
#endif

#include "machine/isa.h"
#include "machine/profile.h"

enum {
    PEAK__REPS = 5,
    /* a stream is short (~20 ms) and its time easily lost to a neighbour */
    PEAK__BW_REPS = 10,
    /* >= 2 x FMA latency (4-6 cycles) x 2 ports, so no port waits for a result */
    PEAK__ACC = 16, /* as spelled out in PEAK__DECL16 */
};
#define PEAK__TARGET_S 0.04 /* one repetition: long enough for the clock, short overall */
#define PEAK__CALIB_S 0.004

/* The accumulators are named variables, spelled out: an array indexed in a
 * loop stays in memory at -O2, and a load/store per FMA would bind first. */
#define PEAK__DECL12(T, set1)                                                       \
    T a0 = set1(0), a1 = set1(1), a2 = set1(2), a3 = set1(3), a4 = set1(4),        \
      a5 = set1(5), a6 = set1(6), a7 = set1(7), a8 = set1(8), a9 = set1(9),        \
      a10 = set1(10), a11 = set1(11)
#define PEAK__DECL16(T, set1)                                                       \
    PEAK__DECL12(T, set1);                                                          \
    T a12 = set1(12), a13 = set1(13), a14 = set1(14), a15 = set1(15)
#define PEAK__STEP12(op)                                                            \
    do {                                                                            \
        a0 = op(a0, x, y), a1 = op(a1, x, y), a2 = op(a2, x, y), a3 = op(a3, x, y); \
        a4 = op(a4, x, y), a5 = op(a5, x, y), a6 = op(a6, x, y), a7 = op(a7, x, y); \
        a8 = op(a8, x, y), a9 = op(a9, x, y), a10 = op(a10, x, y);                 \
        a11 = op(a11, x, y);                                                        \
    } while (0)
#define PEAK__STEP16(op)                                                            \
    do {                                                                            \
        PEAK__STEP12(op);                                                           \
        a12 = op(a12, x, y), a13 = op(a13, x, y), a14 = op(a14, x, y);             \
        a15 = op(a15, x, y);                                                        \
    } while (0)
#define PEAK__SUM12(add)                                                            \
    add(add(add(add(a0, a1), add(a2, a3)), add(add(a4, a5), add(a6, a7))),         \
        add(add(a8, a9), add(a10, a11)))
#define PEAK__SUM16(add) add(PEAK__SUM12(add), add(add(a12, a13), add(a14, a15)))

/* A kernel runs `iters` iterations on the calling thread and returns a value
 * that depends on every instruction, so the compiler must keep them all. */
typedef float (*peak__kernel)(long iters);

#if PEAK__X86
enum { PEAK__F32_512_FLOP = PEAK__ACC * 16 * 2 }; /* 16 lanes, multiply + add */

__attribute__((noinline, target("avx512f"))) static float peak__f32_512(long iters)
{
    __m512 x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-6f);
    /* opaque to the optimiser: no folding of the chain into a closed form */
    __asm__("" : "+v"(x), "+v"(y));
    PEAK__DECL16(__m512, _mm512_set1_ps);
    for (long i = 0; i < iters; i++)
        PEAK__STEP16(_mm512_fmadd_ps);
    return _mm512_reduce_add_ps(PEAK__SUM16(_mm512_add_ps));
}

/* 16 ymm registers: 12 accumulators + the two operands, no spills */
enum { PEAK__F32_256_FLOP = 12 /* PEAK__DECL12 */ * 8 * 2 };

__attribute__((noinline, target("avx2,fma"))) static float peak__f32_256(long iters)
{
    __m256 x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-6f);
    __asm__("" : "+x"(x), "+x"(y));
    PEAK__DECL12(__m256, _mm256_set1_ps);
    for (long i = 0; i < iters; i++)
        PEAK__STEP12(_mm256_fmadd_ps);
    float out[8], r = 0;
    _mm256_storeu_ps(out, PEAK__SUM12(_mm256_add_ps));
    for (int k = 0; k < 8; k++)
        r += out[k];
    return r;
}
#define PEAK__PORTABLE_TARGET __attribute__((target("no-avx")))

/* Portable on x86-64: the SSE2 every x86-64 has, 4 lanes, a multiply and an
 * add (no FMA), which is what the auto-vectoriser makes of plain C at the
 * x86-64-v2 of CKBENCH_ISA=portable. GCC vector types, not intrinsics: the
 * intrinsics carry the build's -march and do not inline into a no-avx
 * function. */
typedef float peak__v4 __attribute__((vector_size(16)));
enum { PEAK__F32_128_FLOP = 12 * 4 * 2 };

#define PEAK__V4(v) ((peak__v4){(v), (v), (v), (v)})
#define PEAK__MULADD128(a, x, y) ((a) * (x) + (y))
#define PEAK__ADD128(a, b) ((a) + (b))

__attribute__((noinline)) PEAK__PORTABLE_TARGET static float peak__f32_128(long iters)
{
    /* -ffp-contract would fuse a*x+y into an FMA where the target has one;
     * no-avx has none, so these stay a multiply and an add */
    peak__v4 x = PEAK__V4(0.999999f), y = PEAK__V4(1e-6f);
    __asm__("" : "+x"(x), "+x"(y));
    PEAK__DECL12(peak__v4, PEAK__V4);
    for (long i = 0; i < iters; i++)
        PEAK__STEP12(PEAK__MULADD128);
    peak__v4 t = PEAK__SUM12(PEAK__ADD128);
    return t[0] + t[1] + t[2] + t[3];
}
#else
#define PEAK__PORTABLE_TARGET
#endif

/* Portable elsewhere: whatever the compiler makes of independent
 * multiply-adds. */
enum { PEAK__F32_ACC = 8, PEAK__F32_FLOP = PEAK__F32_ACC * 2 };

__attribute__((noinline, unused)) PEAK__PORTABLE_TARGET static float peak__f32_portable(long iters)
{
    volatile float vx = 0.999999f, vy = 1e-6f;
    float x = vx, y = vy, a[PEAK__F32_ACC], r = 0;
    for (int k = 0; k < PEAK__F32_ACC; k++)
        a[k] = (float)k;
    for (long i = 0; i < iters; i++)
        for (int k = 0; k < PEAK__F32_ACC; k++)
            a[k] = a[k] * x + y;
    for (int k = 0; k < PEAK__F32_ACC; k++)
        r += a[k];
    return r;
}

#if PEAK__X86
enum { PEAK__BF16_FLOP = PEAK__ACC * 16 * 2 * 2 }; /* 16 lanes x 2 pairs x (mul + add) */

__attribute__((noinline, target("avx512f,avx512bf16"))) static float peak__bf16(long iters)
{
    /* small products: the sums stay far from overflow for any iters */
    __m512bh x = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3f), _mm512_set1_ps(2e-3f));
    __m512bh y = _mm512_cvtne2ps_pbh(_mm512_set1_ps(3e-3f), _mm512_set1_ps(1e-3f));
    __asm__("" : "+v"(x), "+v"(y));
    PEAK__DECL16(__m512, _mm512_set1_ps);
    for (long i = 0; i < iters; i++)
        PEAK__STEP16(_mm512_dpbf16_ps);
    return _mm512_reduce_add_ps(PEAK__SUM16(_mm512_add_ps));
}
#endif

#if PEAK__X86
/* 4 accumulator tiles of 16 x 16 f32 fed by 2 + 2 operand tiles of 16 rows
 * x 32 bf16: each tdpbf16ps is 16 x 16 x 32 multiply-adds. */
enum { PEAK__AMX_FLOP = 4 * 16 * 16 * 32 * 2 };

__attribute__((noinline, target("amx-tile,amx-bf16"))) static float peak__amx(long iters)
{
    uint8_t cfg[64];
    memset(cfg, 0, sizeof cfg);
    cfg[0] = 1; /* palette 1 */
    for (int t = 0; t < 8; t++) {
        cfg[16 + 2 * t] = 64; /* bytes per row */
        cfg[48 + t] = 16;     /* rows */
    }
    /* small bf16 values (0x3a00 ~ 4.9e-4): no overflow for any iters */
    static __thread uint16_t a[16 * 32] __attribute__((aligned(64)));
    float c[16 * 16] __attribute__((aligned(64)));
    for (int i = 0; i < 16 * 32; i++)
        a[i] = 0x3a00;
    _tile_loadconfig(cfg);
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    _tile_loadd(4, a, 64);
    _tile_loadd(5, a, 64);
    _tile_loadd(6, a, 64);
    _tile_loadd(7, a, 64);
    for (long i = 0; i < iters; i++) {
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    float r = 0;
    _tile_stored(0, c, 64);
    r += c[0];
    _tile_stored(3, c, 64);
    r += c[255];
    _tile_release();
    return r;
}

/* Linux hands out AMX tile state only on request (once per process). */
static int peak__amx_permitted(void)
{
    static int state = -1;
    if (state < 0)
        state = syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */,
                        18 /* XFEATURE_XTILEDATA */) == 0;
    return state;
}
#endif

static double peak__now(void) { return omp_get_wtime(); }

/* One timed run of kernel on every thread of a team of `threads`; the
 * seconds from a common start to the last thread's end, or -1 when the team
 * came out smaller than asked (a peak for N threads measured on fewer would
 * be wrong). */
static double peak__run(peak__kernel kernel, int threads, long iters)
{
    double t0 = 0, t1 = 0;
    int team = 0;
    volatile float sink = 0;
#pragma omp parallel num_threads(threads)
    {
#pragma omp barrier
#pragma omp master
        t0 = peak__now();
#pragma omp barrier
        float r = kernel(iters);
#pragma omp barrier
#pragma omp master
        {
            t1 = peak__now();
            team = omp_get_num_threads();
        }
#pragma omp critical(peak__sink)
        sink = sink + r;
    }
    (void)sink;
    return team == threads ? t1 - t0 : -1.0;
}

/* Best GFLOP/s of PEAK__REPS runs sized to about PEAK__TARGET_S each. */
static double peak__measure(peak__kernel kernel, double flop_per_iter, int threads)
{
    if (threads < 1)
        return -1.0;
    /* Double the length until the clock can be trusted, then scale to the
     * target. On the calling thread alone: in a team, a vCPU the hypervisor
     * is slow to wake would pass for a slow core and shrink every run to
     * the noise of that wake-up. */
    long iters = 1L << 12;
    double t;
    volatile float sink;
    for (;;) {
        double t0 = peak__now();
        sink = kernel(iters);
        t = peak__now() - t0;
        if (t >= PEAK__CALIB_S || iters > (1L << 40))
            break;
        iters *= 2;
    }
    (void)sink;
    double scaled = (double)iters * PEAK__TARGET_S / t;
    iters = scaled < (double)(1L << 12) ? 1L << 12 : (long)scaled;
    double best = 0;
    for (int r = 0; r < PEAK__REPS; r++) {
        t = peak__run(kernel, threads, iters);
        if (t <= 0)
            return -1.0;
        double g = (double)threads * (double)iters * flop_per_iter / t * 1e-9;
        if (g > best)
            best = g;
    }
    return best;
}

double ckb_machine_peak_f32(int threads)
{
#if PEAK__X86
    ckb_isa level = ckb_isa_level();
    if (level >= CKB_ISA_AVX512)
        return peak__measure(peak__f32_512, PEAK__F32_512_FLOP, threads);
    if (level >= CKB_ISA_AVX2)
        return peak__measure(peak__f32_256, PEAK__F32_256_FLOP, threads);
    return peak__measure(peak__f32_128, PEAK__F32_128_FLOP, threads);
#else
    return peak__measure(peak__f32_portable, PEAK__F32_FLOP, threads);
#endif
}

int ckb_machine_has_bf16_kernel(void)
{
#if PEAK__X86
    return ckb_isa_level() >= CKB_ISA_AVX512BF16;
#else
    return 0;
#endif
}

double ckb_machine_peak_bf16_amx(int threads)
{
#if PEAK__X86
    if (ckb_isa_level() >= CKB_ISA_AMX && peak__amx_permitted())
        return peak__measure(peak__amx, PEAK__AMX_FLOP, threads);
#endif
    (void)threads;
    return 0.0;
}

double ckb_machine_peak_bf16_dot(int threads)
{
#if PEAK__X86
    if (ckb_isa_level() >= CKB_ISA_AVX512BF16)
        return peak__measure(peak__bf16, PEAK__BF16_FLOP, threads);
#endif
    (void)threads;
    return 0.0;
}

/* ---- cache bandwidth: a streaming read over a buffer that fits a level --- */

/* A reader sums n floats (n a multiple of 128) with enough independent
 * accumulators that the loads, not the adds, bind. */
typedef float (*peak__reader)(const float *p, size_t n);

#if PEAK__X86
__attribute__((noinline, target("avx512f"))) static float peak__read_512(const float *p, size_t n)
{
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0,
           a7 = a0;
    for (size_t i = 0; i < n; i += 128) {
        a0 = _mm512_add_ps(a0, _mm512_load_ps(p + i));
        a1 = _mm512_add_ps(a1, _mm512_load_ps(p + i + 16));
        a2 = _mm512_add_ps(a2, _mm512_load_ps(p + i + 32));
        a3 = _mm512_add_ps(a3, _mm512_load_ps(p + i + 48));
        a4 = _mm512_add_ps(a4, _mm512_load_ps(p + i + 64));
        a5 = _mm512_add_ps(a5, _mm512_load_ps(p + i + 80));
        a6 = _mm512_add_ps(a6, _mm512_load_ps(p + i + 96));
        a7 = _mm512_add_ps(a7, _mm512_load_ps(p + i + 112));
    }
    a0 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                       _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
    return _mm512_reduce_add_ps(a0);
}

__attribute__((noinline, target("avx2"))) static float peak__read_256(const float *p, size_t n)
{
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0,
           a7 = a0;
    for (size_t i = 0; i < n; i += 64) {
        a0 = _mm256_add_ps(a0, _mm256_load_ps(p + i));
        a1 = _mm256_add_ps(a1, _mm256_load_ps(p + i + 8));
        a2 = _mm256_add_ps(a2, _mm256_load_ps(p + i + 16));
        a3 = _mm256_add_ps(a3, _mm256_load_ps(p + i + 24));
        a4 = _mm256_add_ps(a4, _mm256_load_ps(p + i + 32));
        a5 = _mm256_add_ps(a5, _mm256_load_ps(p + i + 40));
        a6 = _mm256_add_ps(a6, _mm256_load_ps(p + i + 48));
        a7 = _mm256_add_ps(a7, _mm256_load_ps(p + i + 56));
    }
    a0 = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                       _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
    float out[8], r = 0;
    _mm256_storeu_ps(out, a0);
    for (int k = 0; k < 8; k++)
        r += out[k];
    return r;
}

/* SSE2: 16-byte loads, as plain C vectorised for x86-64-v2 makes them. */
__attribute__((noinline)) PEAK__PORTABLE_TARGET static float peak__read_128(const float *p,
                                                                            size_t n)
{
    const peak__v4 *v = (const peak__v4 *)p; /* p is 64-byte aligned */
    peak__v4 a0 = PEAK__V4(0.0f), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    for (size_t i = 0; i < n / 4; i += 8) {
        a0 += v[i], a1 += v[i + 1], a2 += v[i + 2], a3 += v[i + 3];
        a4 += v[i + 4], a5 += v[i + 5], a6 += v[i + 6], a7 += v[i + 7];
    }
    a0 = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));
    return a0[0] + a0[1] + a0[2] + a0[3];
}
#endif

__attribute__((noinline, unused)) PEAK__PORTABLE_TARGET static float
peak__read_portable(const float *p, size_t n)
{
    float a[8] = {0}, r = 0;
    for (size_t i = 0; i < n; i += 8)
        for (int k = 0; k < 8; k++)
            a[k] += p[i + k];
    for (int k = 0; k < 8; k++)
        r += a[k];
    return r;
}

enum { PEAK__CACHE_REPS = 7 };
#define PEAK__CACHE_TARGET_S 0.01 /* one repetition: many passes over the buffer */

double ckb_machine_read_bandwidth(int threads, int64_t bytes_per_thread)
{
#if PEAK__X86
    ckb_isa level = ckb_isa_level();
    peak__reader rd = level >= CKB_ISA_AVX512 ? peak__read_512
                      : level >= CKB_ISA_AVX2 ? peak__read_256
                                              : peak__read_128;
#else
    peak__reader rd = peak__read_portable;
#endif
    if (threads < 1 || bytes_per_thread < 4096)
        return -1.0;
    size_t n = (size_t)bytes_per_thread / sizeof(float) / 128 * 128;
    size_t bytes = n * sizeof(float);
    double t0 = 0, tbest = 0;
    long passes = 1;
    int team = 0, failed = 0;
    volatile float sink = 0;
    /* One team throughout; each thread streams a buffer it allocated and
     * touched itself, so it sits in that core's caches (and NUMA node). */
#pragma omp parallel num_threads(threads)
    {
        float *buf = aligned_alloc(64, bytes);
        if (buf)
            for (size_t i = 0; i < n; i++)
                buf[i] = 1.0f;
        else {
#pragma omp atomic write
            failed = 1;
        }
        float r = buf ? rd(buf, n) : 0; /* warm the level */
#pragma omp barrier
#pragma omp master
        {
            team = omp_get_num_threads();
            /* passes for about PEAK__CACHE_TARGET_S, timed on this thread */
            double c0 = peak__now();
            r += buf ? rd(buf, n) : 0;
            double t = peak__now() - c0;
            passes = t > 0 ? (long)(PEAK__CACHE_TARGET_S / t) : 1000;
            if (passes < 1)
                passes = 1;
        }
        for (int rep = 0; rep < PEAK__CACHE_REPS; rep++) {
#pragma omp barrier
#pragma omp master
            t0 = peak__now();
#pragma omp barrier
            for (long k = 0; buf && k < passes; k++)
                r += rd(buf, n);
#pragma omp barrier
#pragma omp master
            {
                double t = peak__now() - t0;
                if (t > 0 && (tbest == 0 || t < tbest))
                    tbest = t;
            }
        }
#pragma omp critical(peak__sink)
        sink = sink + r;
        free(buf);
    }
    (void)sink;
    if (failed || team != threads || !(tbest > 0))
        return -1.0;
    return (double)threads * (double)passes * (double)bytes / tbest * 1e-9;
}

/* Array length (elements) per triad array: >= 8 x L3 each and >= 256 MiB in
 * all, so no cache level holds a useful part; at most a quarter of the RAM
 * for the three, so a small machine does not swap. */
static size_t peak__triad_len(int64_t l3)
{
    size_t each = (size_t)256 << 20;
    each /= 3;
    if (l3 > 0 && (size_t)l3 * 8 > each)
        each = (size_t)l3 * 8;
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    if (pages > 0 && psz > 0) {
        size_t cap = (size_t)pages * (size_t)psz / 4 / 3;
        if (each > cap)
            each = cap;
    }
    return each / sizeof(float) / 16 * 16;
}

double ckb_machine_bandwidth(int threads, int64_t l3)
{
    double best = -1.0;
    size_t n = peak__triad_len(l3);
    float *a = NULL, *b = NULL, *c = NULL;
    if (threads < 1 || n == 0)
        goto cleanup;
    /* 2 MiB alignment lets transparent huge pages back the arrays */
    size_t bytes = (n * sizeof(float) + (2u << 20) - 1) / (2u << 20) * (2u << 20);
    a = aligned_alloc(2u << 20, bytes);
    b = aligned_alloc(2u << 20, bytes);
    c = aligned_alloc(2u << 20, bytes);
    if (!a || !b || !c)
        goto cleanup;
    /* huge pages where the kernel offers them only on request: fewer TLB
     * misses in the stream, and far fewer faults in the first touch */
    madvise(a, bytes, MADV_HUGEPAGE);
    madvise(b, bytes, MADV_HUGEPAGE);
    madvise(c, bytes, MADV_HUGEPAGE);
    int team = 0;
    /* first touch by the thread that will stream each part (same schedule) */
#pragma omp parallel num_threads(threads)
    {
#pragma omp master
        team = omp_get_num_threads();
#pragma omp for simd schedule(static)
        for (size_t i = 0; i < n; i++) {
            a[i] = 0.0f;
            b[i] = 1.0f;
            c[i] = 2.0f;
        }
    }
    if (team != threads)
        goto cleanup;
    volatile float vs = 3.0f;
    float s = vs;
    double t0 = 0, tbest = 0;
    /* One team for every repetition, each timed from a barrier: a worker
     * woken for each new region can start a scheduler tick late (4-8 ms on
     * an 18 ms stream, measured here), which would count as slow memory. */
#pragma omp parallel num_threads(threads)
    for (int r = 0; r < PEAK__BW_REPS; r++) {
#pragma omp barrier
#pragma omp master
        t0 = peak__now();
#pragma omp barrier
#pragma omp for simd schedule(static)
        for (size_t i = 0; i < n; i++)
            a[i] = b[i] + s * c[i];
        /* the loop's implicit barrier: every thread is done */
#pragma omp master
        {
            double t = peak__now() - t0;
            if (t > 0 && (tbest == 0 || t < tbest))
                tbest = t;
        }
    }
    /* STREAM's convention: 3 arrays x n x 4 bytes (read b, read c, write a).
     * The write-allocate read of a that the caches add is real traffic (4/3
     * of this) but is not counted, as workloads count their bytes the same
     * way: each tensor read or written once. */
    best = tbest > 0 ? 3.0 * (double)n * sizeof(float) / tbest * 1e-9 : -1.0;
    /* check before trusting the time (STREAM's checkSTREAMresults) */
    if (a[0] != 7.0f || a[n / 2] != 7.0f || a[n - 1] != 7.0f)
        best = -1.0;
cleanup:
    free(a);
    free(b);
    free(c);
    return best;
}
