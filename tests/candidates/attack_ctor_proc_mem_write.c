/* Attack (load-time code): a constructor opens its parent's memory for
 * writing (/proc/PID/mem, to patch the checker). Opening anything for
 * writing is refused by the filter already in force: killed, and the
 * system call named. */
static long sc3(long n, long a, long b, long c)
{
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}

__attribute__((constructor)) static void patch(void)
{
    static const char path[] = "/proc/1/mem";
    sc3(257, -100, (long)path, 2); /* openat(..., O_RDWR) */
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
