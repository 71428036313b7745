/* Defines the kernel under another name. */
void kernel(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    (void)A, (void)B, (void)C;
}
