/* Attack: returns (a tiled copy of) the input unchanged. */
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++)
            C[i * N + j] = A[i * K + j % K];
    (void)B;
}
