/* Attack (the verdict): a constructor exits with the code the sandbox uses
 * for its own set-up failures, hoping for harness_error (an infrastructure
 * failure, not counted against the model). The sandbox says when it is
 * about to open the object; an exit after that is the candidate's: crash. */
__attribute__((constructor)) static void quit(void)
{
    __asm__ volatile("syscall" : : "a"(231L), "D"(4L) : "rcx", "r11", "memory"); /* exit_group(4) */
}

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    (void)A, (void)B, (void)C;
}
