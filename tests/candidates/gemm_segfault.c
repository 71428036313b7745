/* Dereferences a null pointer: a crash, contained. */
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    volatile ckb_bf16 *p = 0;
    *p = A[0];
    (void)B, (void)C;
}
