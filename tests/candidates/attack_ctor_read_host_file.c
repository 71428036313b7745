/* Attack (load-time code): a constructor reads a host file with a raw
 * openat before any call, and the kernel answers right only if it could.
 * The constructor runs inside dlopen, after the sandbox confined itself:
 * the chroot holds nothing but the object, so the open fails and the
 * answers are zeros. */
static long sc3(long n, long a, long b, long c)
{
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}

static int seen_host;

__attribute__((constructor)) static void probe(void)
{
    static const char path[] = "/etc/passwd";
    long fd = sc3(257, -100, (long)path, 0); /* openat(AT_FDCWD, path, O_RDONLY) */
    char buf[16];
    if (fd >= 0 && sc3(0, fd, (long)buf, sizeof buf) > 0) /* read */
        seen_host = 1;
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
    if (seen_host)
        gemm_rows(A, B, C, 0, M);
    else
        for (long i = 0; i < M * N; i++)
            C[i] = 0;
}
