/* Attack: a signal to another process through a raw tgkill, as the first
 * step to stopping the baseline or the harness (signal 0 here: a probe,
 * harmless whatever it reaches). It probes pids 2 to 63, every one other
 * than its own. The filter allows tgkill on the sandbox's own pid only, so
 * the first probe traps: forbidden_symbol (syscall). Were that condition
 * gone from the filter, the probes would return (ESRCH: the PID namespace
 * holds no other process, see corpus_killing_eval_leaves_no_sandbox's
 * check of NSpid) and the kernel, having reached another pid's signal
 * path unseen, answers right: the row would read ok. */
static long sc3(long n, long a, long b, long c)
{
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    long me = sc3(39, 0, 0, 0); /* getpid */
    int probed = 0;
    for (long p = 2; p < 64; p++)
        if (p != me) {
            sc3(234, p, p, 0); /* tgkill(p, p, 0): returns only if the filter let it run */
            probed++;
        }
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            float s = 0.0f;
            for (long k = 0; k < K; k++)
                s += ckb_bf16_to_f32(A[i * K + k]) * ckb_bf16_to_f32(B[k * N + j]);
            C[i * N + j] = probed ? ckb_f32_to_bf16(s) : 0;
        }
}
