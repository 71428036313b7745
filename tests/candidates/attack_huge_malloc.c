/* Attack: 9 GiB of scratch, used without checking (one byte touched), then
 * a correct GEMM. The sandbox's address-space limit (its buffers + 8 GiB)
 * makes malloc fail, and the write through the null pointer faults: crash
 * (SIGSEGV). Without the limit the allocation succeeds on any host with
 * 9 GiB of memory and swap to promise (one page is touched), and the kernel
 * passes. The volatile pointer keeps the compiler from eliding it. */
#include <stdlib.h>

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    size_t n = (size_t)9 << 30;
    char *volatile p = malloc(n);
    p[n - 1] = 1;
#pragma omp parallel for
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            float s = 0.0f;
            for (long k = 0; k < K; k++)
                s += ckb_bf16_to_f32(A[i * K + k]) * ckb_bf16_to_f32(B[k * N + j]);
            C[i * N + j] = ckb_f32_to_bf16(s + (float)p[n - 1] - 1.0f);
        }
    free(p);
}
