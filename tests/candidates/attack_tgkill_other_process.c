/* A signal to another process through tgkill (signal 0 only probes for a
 * live pid): the filter allows tgkill only to the sandbox itself, so this
 * is killed as a forbidden system call. */
static long sc3(long n, long a, long b, long c)
{
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    long me = sc3(39, 0, 0, 0); /* getpid */
    int found = 0;
    for (long p = me - 1; p > me - 200 && p > 1 && !found; p--)
        if (sc3(234, p, p, 0) == 0) /* tgkill(p, p, 0) */
            found = 1;
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            float s = 0.0f;
            for (long k = 0; k < K; k++)
                s += ckb_bf16_to_f32(A[i * K + k]) * ckb_bf16_to_f32(B[k * N + j]);
            C[i * N + j] = found ? ckb_f32_to_bf16(s) : 0;
        }
}
