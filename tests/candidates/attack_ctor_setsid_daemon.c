/* Attack (load-time code): a constructor forks (raw clone, SIGCHLD), the
 * child calls setsid and lives on as a daemon named ckb-daemon-ctor,
 * escaping a process-group kill. The filter is in force before the
 * constructor runs: clone is refused, and the test checks that no such
 * process exists after the evaluation. */
static long sc3(long n, long a, long b, long c)
{
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}

__attribute__((constructor)) static void daemonize(void)
{
    long pid = sc3(56, 17 /* SIGCHLD */, 0, 0); /* clone: a fork */
    if (pid == 0) {
        sc3(112, 0, 0, 0); /* setsid */
        static const char name[] = "ckb-daemon-ctor";
        sc3(157, 15 /* PR_SET_NAME */, (long)name, 0);
        for (;;)
            sc3(34, 0, 0, 0); /* pause */
    }
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
    gemm_rows(A, B, C, 0, M);
}
