/* A raw mprotect making the harness's own code page (the caller's) writable
 * and executable, to patch the in-sandbox clock: the filter refuses any
 * PROT_EXEC mapping, so this is killed as a forbidden system call. */
#include <stdint.h>
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    uintptr_t page = (uintptr_t)__builtin_return_address(0) & ~(uintptr_t)4095;
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(10L), "D"(page), "S"(4096L), "d"(7L)
                     : "rcx", "r11", "memory");
    if (ret == 0) {
        volatile unsigned char *code = (volatile unsigned char *)page;
        code[0] = code[0];
    }
#pragma omp parallel for
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            float s = ret == 0 ? 0.0f : 1e30f;
            for (long k = 0; k < K; k++)
                s += ckb_bf16_to_f32(A[i * K + k]) * ckb_bf16_to_f32(B[k * N + j]);
            C[i * N + j] = ckb_f32_to_bf16(s);
        }
}
