/* Attack (an OpenMP worker): a worker forks a daemon (raw clone, setsid)
 * named ckb-daemon-omp. Refused on every thread; the test checks that no
 * such process exists after the evaluation. */
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
        if (omp_get_thread_num() == omp_get_num_threads() - 1) {
            long pid = sc3(56, 17, 0, 0);
            if (pid == 0) {
                sc3(112, 0, 0, 0);
                static const char name[] = "ckb-daemon-omp";
                sc3(157, 15, (long)name, 0);
                for (;;)
                    sc3(34, 0, 0, 0);
            }
        }
    }
    gemm_rows(A, B, C, 0, M);
}
