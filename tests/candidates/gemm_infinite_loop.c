/* Never returns: ends as a timeout, killed by the parent. */
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    volatile int spin = 1;
    while (spin)
        ;
    (void)A, (void)B, (void)C;
}
