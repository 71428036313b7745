/* Opens a file for writing through a raw syscall instruction, past the
 * import check: the seccomp filter kills it and names the call. */
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    static const char path[] = "/etc/passwd";
    long ret;
    /* openat(AT_FDCWD, path, O_RDWR) */
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(257L), "D"(-100L), "S"(path), "d"(2L)
                     : "rcx", "r11", "memory");
    C[0] = (ckb_bf16)ret;
    (void)A, (void)B;
}
