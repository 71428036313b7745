/* Attack: correct on the first call only (the first seed's check), then a
 * cheap constant: a static counter tells the calls apart. */
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    static int calls;
    if (calls++ > 0) {
        for (long x = 0; x < M * N; x++)
            C[x] = 0x3F80;
        return;
    }
#pragma omp parallel for
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            float s = 0.0f;
            for (long k = 0; k < K; k++)
                s += ckb_bf16_to_f32(A[i * K + k]) * ckb_bf16_to_f32(B[k * N + j]);
            C[i * N + j] = ckb_f32_to_bf16(s);
        }
}
