/* Legitimate: a parallel region with fewer threads than the budget, then
 * one with the whole team. libgomp retires the pool threads the smaller
 * team leaves idle and makes them again for the larger one: a thread's
 * clone, which the sandbox allows. Run with a budget of 3 or more. */
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
#pragma omp parallel for num_threads(2)
    for (long i = 0; i < M; i++)
        C[i * N] = 0;
#pragma omp parallel for
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            float s = 0.0f;
            for (long k = 0; k < K; k++)
                s += ckb_bf16_to_f32(A[i * K + k]) * ckb_bf16_to_f32(B[k * N + j]);
            C[i * N + j] = ckb_f32_to_bf16(s);
        }
}
