#include "eval/syscalls.h"

#include <seccomp.h>
#include <stddef.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
int ckb_syscalls_restrict(int cmd_fd, int reply_fd)
{
    (void)cmd_fd, (void)reply_fd;
    return 0;
}
#else
int ckb_syscalls_restrict(int cmd_fd, int reply_fd)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
    if (!ctx)
        return -1;
    /* Memory, threads of the existing pool, time, and dying. No open, no
     * socket, no clone: a candidate cannot add threads or processes, and a
     * team larger than the pool makes libgomp fail. */
    static const int allowed[] = {
        SCMP_SYS(munmap),        SCMP_SYS(mremap),
        SCMP_SYS(madvise),       SCMP_SYS(brk),
        SCMP_SYS(futex),         SCMP_SYS(sched_yield),  SCMP_SYS(sched_getaffinity),
        SCMP_SYS(getcpu),        SCMP_SYS(clock_gettime), SCMP_SYS(clock_nanosleep),
        SCMP_SYS(nanosleep),     SCMP_SYS(gettid),       SCMP_SYS(getpid),
        SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigreturn),
        SCMP_SYS(exit),          SCMP_SYS(exit_group),   SCMP_SYS(restart_syscall),
        SCMP_SYS(set_robust_list), SCMP_SYS(rseq),
        /* glibc's qsort sizes its buffer against physical memory
         * (sysconf(_SC_PHYS_PAGES)); a candidate cannot name sysinfo itself. */
        SCMP_SYS(sysinfo),
    };
    int rc = 0;
    for (size_t i = 0; i < sizeof allowed / sizeof *allowed && rc == 0; i++)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed[i], 0);
    /* Memory, but never executable: no new code, no patching of the
     * harness's own code (the in-sandbox clock) through a raw mprotect. */
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
                              SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1,
                              SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
    /* Signals only to this process (abort() raises SIGABRT on itself); we
     * run as root without a PID namespace, so any pid would be reachable. */
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1,
                              SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)getpid()));
    /* Reading commands, replying, and stderr for a dying message. */
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(read), 1,
                              SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)cmd_fd));
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(write), 1,
                              SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)reply_fd));
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(write), 1, SCMP_A0(SCMP_CMP_EQ, 2));
    if (rc == 0)
        rc = seccomp_load(ctx);
    seccomp_release(ctx);
    return rc == 0 ? 0 : -1;
}
#endif
