/* Attack (inputs): maps fresh private memory over the inputs (mmap
 * MAP_FIXED, which the filter allows) and computes on zeros, so that the
 * answer is trivially zero. A private mapping changes the kernel's own view
 * only: the baseline's inputs and the oracle are elsewhere, and the zeros
 * are wrong. */
static long sc3(long n, long a, long b, long c)
{
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}

static long sc6(long n, long a, long b, long c, long d, long e, long f)
{
    long r;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return r;
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
    long page = (long)A & ~4095L;
    long len = ((long)(A + M * K) - page + 4095) & ~4095L;
    /* mmap(page, len, RW, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) */
    sc6(9, page, len, 3, 0x02 | 0x20 | 0x10, -1, 0);
    gemm_rows(A, B, C, 0, M);
    (void)sc3;
}
