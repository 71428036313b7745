/* Attack (the results channel): after an honest call, writes a second
 * "call done" reply on the harness's socket, so that the next call would
 * seem to end at once. The trusted side sees a reply stamped before that
 * call began: caught. */
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
    static const char done = 'D';
    gemm_rows(A, B, C, 0, M);
    sc3(1, 6 /* the reply socket */, (long)&done, 1);
}
