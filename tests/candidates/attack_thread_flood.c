/* Attack: a flood of threads (raw clone, no import), each asleep for good on
 * a futex: thousands of tasks on the host, its PIDs and kernel memory. The
 * sandbox's RLIMIT_NPROC stops the clones long before: the kernel then
 * computes as usual, and answers wrongly only if every clone succeeded. */
static int sleeper_word;

static long clone_sleeper(void)
{
    /* CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
     * CLONE_SYSVSEM: the child shares this stack but never touches it, it
     * only waits on the futex, in this same block */
    long flags = 0x100 | 0x200 | 0x400 | 0x800 | 0x10000 | 0x40000, ret;
    __asm__ volatile("syscall\n\t"
                     "test %%rax, %%rax\n\t"
                     "jnz 2f\n"
                     "1:\n\t"
                     "mov $202, %%eax\n\t"
                     "mov %[word], %%rdi\n\t"
                     "xor %%esi, %%esi\n\t"
                     "xor %%edx, %%edx\n\t"
                     "xor %%r10d, %%r10d\n\t"
                     "syscall\n\t"
                     "jmp 1b\n"
                     "2:"
                     : "=a"(ret)
                     : "a"(56L), "D"(flags), "S"(0L), "d"(0L), [word] "r"(&sleeper_word)
                     : "rcx", "r10", "r11", "memory");
    return ret;
}

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    static int made;
    for (int t = 0; t < 20000 && made < 20000; t++) {
        if (clone_sleeper() <= 0)
            break;
        made++;
    }
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            float s = 0.0f;
            for (long k = 0; k < K; k++)
                s += ckb_bf16_to_f32(A[i * K + k]) * ckb_bf16_to_f32(B[k * N + j]);
            C[i * N + j] = made >= 20000 ? 0 : ckb_f32_to_bf16(s);
        }
}
