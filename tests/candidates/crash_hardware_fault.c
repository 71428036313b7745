/* A kernel that faults, one way per CKBT_FAULT: 1 an integer division by
 * zero (SIGFPE), 2 a breakpoint instruction (SIGTRAP), 3 a misaligned load
 * with the alignment-check flag set (SIGBUS). A fault's signal is forced on
 * the process, so it ends the sandbox even though the sandbox is PID 1 of
 * its namespace (a signal the kernel sent itself with tgkill would be
 * dropped there). The verdict is crash, named by the signal. */
#ifndef CKBT_FAULT
#define CKBT_FAULT 1
#endif

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
#if CKBT_FAULT == 1
    volatile int zero = 0;
    C[0] = (ckb_bf16)(1000 / zero);
#elif CKBT_FAULT == 2
    __asm__ volatile("int3");
#else
    static char bytes[16] __attribute__((aligned(16)));
    volatile int v;
    __asm__ volatile("pushf\n\torl $0x40000, (%%rsp)\n\tpopf" ::: "memory", "cc");
    v = *(volatile int *)(bytes + 1);
    (void)v;
#endif
    (void)A, (void)B, (void)C;
}
