/* Attack (or tail bug): a correct product that also writes 4 bytes past
 * the end of C. At the small size C ends on a page boundary, so the write
 * hits the guard page behind it. */
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
#pragma omp parallel for
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            float s = 0.0f;
            for (long k = 0; k < K; k++)
                s += ckb_bf16_to_f32(A[i * K + k]) * ckb_bf16_to_f32(B[k * N + j]);
            C[i * N + j] = ckb_f32_to_bf16(s);
        }
    C[M * N] = 0;
    C[M * N + 1] = 0;
}
