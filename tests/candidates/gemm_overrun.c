/* Writes one page past the end of its output: caught by the guard page. */
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    for (long i = 0; i < M * N + 4096; i++)
        C[i] = A[i % (M * K)];
    (void)B;
}
