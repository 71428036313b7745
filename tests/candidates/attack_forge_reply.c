/* Attack: writes the harness's "call done" reply itself, from inside the
 * call, so the parent's clock would stop early (the reply pipe is one of
 * the few descriptors the sandbox may write; it is fd 5). */
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    static const char done = 'D';
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(1L), "D"(5L), "S"(&done), "d"(1L)
                     : "rcx", "r11", "memory");
#pragma omp parallel for
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            float s = 0.0f;
            for (long k = 0; k < K; k++)
                s += ckb_bf16_to_f32(A[i * K + k]) * ckb_bf16_to_f32(B[k * N + j]);
            C[i * N + j] = ckb_f32_to_bf16(s);
        }
}
