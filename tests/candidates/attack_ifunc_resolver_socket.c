/* Attack (load-time code): a GNU IFUNC resolver runs while the object is
 * relocated, before any constructor; it opens a socket with a raw system
 * call. The filter is already in force: killed, and the call named. */
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

static void gemm_all(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    gemm_rows(A, B, C, 0, M);
}

static void (*resolve_gemm(void))(const ckb_bf16 *, const ckb_bf16 *, ckb_bf16 *)
{
    sc3(41, 2 /* AF_INET */, 1 /* SOCK_STREAM */, 0); /* socket */
    return gemm_all;
}

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
    __attribute__((ifunc("resolve_gemm")));
