/* Attack: a thread of its own through the clone system call issued
 * directly (no import to see), to keep working after the call returns. It
 * runs (a thread's clone is allowed), but the process is stopped at the
 * reply and the outputs copied then: what it would finish later is lost. */
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    (void)A, (void)B, (void)C;
    /* CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD */
    long flags = 0x100 | 0x200 | 0x400 | 0x800 | 0x10000, ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(56L), "D"(flags), "S"(0L), "d"(0L)
                     : "rcx", "r11", "memory");
    if (ret == 0)
        for (;;) {
        }
}
