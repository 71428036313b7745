/* Attack (load-time code): a constructor clones a helper thread that
 * would give a kernel run with a budget of one thread a second core. The
 * thread is made under the filter and runs on the budget's CPUs only (the
 * sandbox's affinity): it takes time from the kernel, never adds any. */
static long sc3(long n, long a, long b, long c)
{
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}

static char stack[1 << 16];

__attribute__((constructor)) static void spawn(void)
{
    /* CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD */
    long flags = 0x100 | 0x200 | 0x400 | 0x800 | 0x10000;
    long r;
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "a"(56L), "D"(flags), "S"(stack + sizeof stack), "d"(0L)
                     : "rcx", "r11", "memory");
    if (r == 0)
        for (;;)
            __asm__ volatile("pause");
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
