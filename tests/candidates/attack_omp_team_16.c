/* Attack: an OpenMP team of 16 threads, over the 2-thread budget. The
 * import is allowed (GOMP_parallel) and libgomp may clone the threads, but
 * they run on the budget's CPUs only (the sandbox's affinity): no faster. */
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
#pragma omp parallel for num_threads(16)
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            float s = 0.0f;
            for (long k = 0; k < K; k++)
                s += ckb_bf16_to_f32(A[i * K + k]) * ckb_bf16_to_f32(B[k * N + j]);
            C[i * N + j] = ckb_f32_to_bf16(s);
        }
}
