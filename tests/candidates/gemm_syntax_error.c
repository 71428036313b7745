/* Does not compile: a missing semicolon. */
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    int x = 1
    (void)A, (void)B, (void)C, (void)x;
}
