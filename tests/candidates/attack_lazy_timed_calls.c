/* Attack: honest on the calls that are checked, idle on the ones that are
 * timed. A static counter knows the protocol: three seeds and a repeat
 * before timing (calls 1-4), the final check after 5 + 50 timed calls. In
 * between it returns at once, so its median would be near zero. */
static void gemm(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
#pragma omp parallel for
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            float s = 0.0f;
            for (long k = 0; k < K; k++)
                s += ckb_bf16_to_f32(A[i * K + k]) * ckb_bf16_to_f32(B[k * N + j]);
            C[i * N + j] = ckb_f32_to_bf16(s);
        }
}

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    static int calls;
    calls++;
    if (calls > 4 && calls <= 4 + 55)
        return;
    gemm(A, B, C);
}
