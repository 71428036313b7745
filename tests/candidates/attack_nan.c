/* Attack: NaN everywhere, hoping NaN compares as "don't care". */
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    for (long x = 0; x < M * N; x++)
        C[x] = 0x7FC0;
    (void)A, (void)B;
}
