/* Legitimate 8p_GEMM: each thread accumulates a row in _Thread_local f32
 * scratch (in a shared object: __tls_get_addr). */
static _Thread_local float row[4096];

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
#pragma omp parallel for
    for (long i = 0; i < M; i++) {
        for (long j = 0; j < N; j++)
            row[j] = 0.0f;
        for (long k = 0; k < K; k++) {
            float a = ckb_bf16_to_f32(A[i * K + k]);
            for (long j = 0; j < N; j++)
                row[j] += a * ckb_bf16_to_f32(B[k * N + j]);
        }
        for (long j = 0; j < N; j++)
            C[i * N + j] = ckb_f32_to_bf16(row[j]);
    }
}
