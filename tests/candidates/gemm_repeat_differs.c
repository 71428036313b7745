/* Wrong only the fourth time: the three seeds pass, the repeat of the
 * first seed gives a different answer (a kernel whose result depends on
 * something besides its inputs). */
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    static int calls;
    float drift = ++calls == 4 ? 1.5f : 1.0f;
#pragma omp parallel for
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            float s = 0.0f;
            for (long k = 0; k < K; k++)
                s += ckb_bf16_to_f32(A[i * K + k]) * ckb_bf16_to_f32(B[k * N + j]);
            C[i * N + j] = ckb_f32_to_bf16(s * drift);
        }
}
