/* Attack (inputs): makes the input pages writable with a raw mprotect
 * (allowed without PROT_EXEC before) and zeroes B, so that a baseline timed
 * next would run on inputs the kernel chose. The inputs are a sealed memfd
 * mapped read-only: mprotect fails, and the write faults. */
static long sc3(long n, long a, long b, long c)
{
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
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
    long page = (long)B & ~4095L;
    sc3(10, page, 4096, 3); /* mprotect(PROT_READ | PROT_WRITE) */
    ((volatile ckb_bf16 *)B)[0] = 0;
    gemm_rows(A, B, C, 0, M);
}
