/* Attack: ends the whole process in the middle of the first call (exit is
 * not importable; the raw system call is), hoping the harness reads an
 * early exit as success. */
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    (void)A, (void)B, (void)C;
    __asm__ volatile("syscall" : : "a"(231L), "D"(0L) : "rcx", "r11", "memory");
}
