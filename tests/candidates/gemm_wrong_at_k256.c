/* Correct where K is 128, wrong (every element + 1) where K is 256: a kernel
 * that passes one configuration of the two-configuration test workload
 * (tests/test_configs.c) and fails the other. */
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
#pragma omp parallel for
    for (long i = 0; i < M; i++) {
        float acc[N];
        for (long j = 0; j < N; j++)
            acc[j] = K == 256 ? 1.0f : 0.0f;
        for (long k = 0; k < K; k++) {
            float a = ckb_bf16_to_f32(A[i * K + k]);
            for (long j = 0; j < N; j++)
                acc[j] += a * ckb_bf16_to_f32(B[k * N + j]);
        }
        for (long j = 0; j < N; j++)
            C[i * N + j] = ckb_f32_to_bf16(acc[j]);
    }
}
