/* Attack: raw syscall instructions past the import check: getppid, then
 * kill(parent, SIGSTOP) to freeze the harness's clock. The seccomp filter
 * kills the process at getppid. */
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    long ppid, ret;
    __asm__ volatile("syscall" : "=a"(ppid) : "a"(110L) : "rcx", "r11", "memory");
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(62L), "D"(ppid), "S"(19L)
                     : "rcx", "r11", "memory");
    C[0] = (ckb_bf16)ret;
    (void)A, (void)B;
}
