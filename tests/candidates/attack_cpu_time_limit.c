/* A correct GEMM that then burns CPU on every call: until the process has
 * used CKBT_SPIN_CPU_MS more milliseconds of CPU, or the call has lasted
 * CKBT_SPIN_WALL_MS, so that each call stays well inside its wall-clock
 * limit while the sandbox's CPU seconds (RLIMIT_CPU, summed over every
 * call) run out. The limit's soft and hard values are equal, so the kernel
 * ends the process with SIGKILL: resource_limit (SIGKILL). The clocks are
 * read with a raw clock_gettime, which the filter allows (no import). */
#ifndef CKBT_SPIN_CPU_MS
#define CKBT_SPIN_CPU_MS 150
#endif
#ifndef CKBT_SPIN_WALL_MS
#define CKBT_SPIN_WALL_MS 150
#endif

struct ckbt_ts {
    long s, ns;
};

static long ckbt_ms(int clock)
{
    struct ckbt_ts t = {0, 0};
    long r;
    /* clock_gettime(clock, &t) */
    __asm__ volatile("syscall" : "=a"(r) : "a"(228L), "D"((long)clock), "S"(&t)
                     : "rcx", "r11", "memory");
    return t.s * 1000 + t.ns / 1000000;
}

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    long wall0 = ckbt_ms(1 /* CLOCK_MONOTONIC */), cpu0 = ckbt_ms(2 /* CLOCK_PROCESS_CPUTIME_ID */);
#pragma omp parallel for
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            float s = 0.0f;
            for (long k = 0; k < K; k++)
                s += ckb_bf16_to_f32(A[i * K + k]) * ckb_bf16_to_f32(B[k * N + j]);
            C[i * N + j] = ckb_f32_to_bf16(s);
        }
    while (ckbt_ms(2) - cpu0 < CKBT_SPIN_CPU_MS && ckbt_ms(1) - wall0 < CKBT_SPIN_WALL_MS)
        __asm__ volatile("pause");
}
