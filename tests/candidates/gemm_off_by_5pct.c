/* Correct but for a factor 1.05 on every element: a wrong result. */
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            float acc = 0.0f;
            for (long k = 0; k < K; k++)
                acc += ckb_bf16_to_f32(A[i * K + k]) * ckb_bf16_to_f32(B[k * N + j]);
            C[i * N + j] = ckb_f32_to_bf16(acc * 1.05f);
        }
}
