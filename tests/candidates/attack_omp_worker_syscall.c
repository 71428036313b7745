/* Attack (an OpenMP worker): thread 1 of the team, made before the filter,
 * makes a raw system call inside workload(). The filter is synchronised to
 * every thread of the process (TSYNC): killed, and the call named. */
#include <omp.h>
static long sc3(long n, long a, long b, long c)
{
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}

static void gemm_rows(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C, long lo, long hi)
{
    for (long i = lo; i < hi; i++)
        for (long j = 0; j < N; j++) {
            float s = 0.0f;
            for (long k = 0; k < K; k++)
                s += ckb_bf16_to_f32(A[i * K + k]) * ckb_bf16_to_f32(B[k * N + j]);
            C[i * N + j] = ckb_f32_to_bf16(s);
        }
}

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
#pragma omp parallel
    {
        if (omp_get_thread_num() == 1)
            sc3(41, 2, 1, 0); /* socket */
    }
    gemm_rows(A, B, C, 0, M);
}
