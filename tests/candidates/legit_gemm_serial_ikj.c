/* Legitimate: plain serial C, i-k-j loop order with an f32 row accumulator. */
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    static float acc[N];
    for (long i = 0; i < M; i++) {
        for (long j = 0; j < N; j++)
            acc[j] = 0.0f;
        for (long k = 0; k < K; k++) {
            float a = ckb_bf16_to_f32(A[i * K + k]);
            const ckb_bf16 *b = B + k * N;
            for (long j = 0; j < N; j++)
                acc[j] += a * ckb_bf16_to_f32(b[j]);
        }
        for (long j = 0; j < N; j++)
            C[i * N + j] = ckb_f32_to_bf16(acc[j]);
    }
}
