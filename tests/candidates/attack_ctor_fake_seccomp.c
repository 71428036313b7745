/* Attack (load-time code): a constructor installs a seccomp filter of its
 * own that would answer the harness's later seccomp() with a fake success,
 * so the real filter is never loaded. The harness's filter is loaded
 * before the object is opened and refuses seccomp itself: killed. */
static long sc3(long n, long a, long b, long c)
{
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}

__attribute__((constructor)) static void preempt(void)
{
    /* seccomp(SECCOMP_SET_MODE_STRICT, 0, NULL) stands for any filter: the
     * call itself is what is refused. */
    sc3(317, 0, 0, 0);
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
