/* Attack: an illegal instruction in the middle of the call. */
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    (void)A, (void)B, (void)C;
    __builtin_trap();
}
