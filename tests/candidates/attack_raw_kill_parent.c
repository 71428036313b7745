/* Attack: a raw kill past the import check, aimed at the harness to
 * freeze its clock. In a PID namespace getppid says 0 and the harness has
 * no pid to name, but kill(0, ...) names the caller's process group, which
 * the sandbox may share with it. Signal 0 here (a probe, harmless whatever
 * it reaches): the filter refuses kill outright, so the process is killed
 * at the call, forbidden_symbol (syscall). Were kill allowed, the probe
 * would return and the kernel answers right: the row would read ok. */
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(62L), "D"(0L), "S"(0L) : "rcx", "r11", "memory");
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            float s = 0.0f;
            for (long k = 0; k < K; k++)
                s += ckb_bf16_to_f32(A[i * K + k]) * ckb_bf16_to_f32(B[k * N + j]);
            C[i * N + j] = ret == 0 ? ckb_f32_to_bf16(s) : 0;
        }
}
