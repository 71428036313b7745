/* Legitimate: split-k. For each block of 8 rows the team divides k and
 * sums its partial rows with an array-section `reduction(+ : ...)`. */
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    for (long i = 0; i < M; i += 8) {
        float acc[8][N];
        long rows = M - i < 8 ? M - i : 8;
        for (long r = 0; r < 8; r++)
            for (long j = 0; j < N; j++)
                acc[r][j] = 0.0f;
#pragma omp parallel for reduction(+ : acc[:8][:N])
        for (long k = 0; k < K; k++)
            for (long r = 0; r < rows; r++) {
                float a = ckb_bf16_to_f32(A[(i + r) * K + k]);
                for (long j = 0; j < N; j++)
                    acc[r][j] += a * ckb_bf16_to_f32(B[k * N + j]);
            }
        for (long r = 0; r < rows; r++)
            for (long j = 0; j < N; j++)
                C[(i + r) * N + j] = ckb_f32_to_bf16(acc[r][j]);
    }
}
