#include "eval/syscalls.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

const char *ckb_syscall_name(long nr)
{
    static char buf[64];
    char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, (int)nr);
    if (name)
        snprintf(buf, sizeof buf, "%s", name);
    else
        snprintf(buf, sizeof buf, "syscall %ld", nr);
    free(name);
    return buf;
}

int ckb_syscalls_verify(int pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int mode = -1, filters = -1, nnp = -1;
    while (fgets(line, sizeof line, f)) {
        sscanf(line, "Seccomp: %d", &mode);
        sscanf(line, "Seccomp_filters: %d", &filters);
        sscanf(line, "NoNewPrivs: %d", &nnp);
    }
    fclose(f);
    /* Mode 2 is filter mode. Exactly one filter: ours, installed before any
     * of the candidate's code ran, which refuses seccomp() itself. */
    return mode == 2 && filters == 1 && nnp == 1;
}

#if defined(__SANITIZE_ADDRESS__)
int ckb_syscalls_restrict(int cmd_fd, int reply_fd)
{
    (void)cmd_fd, (void)reply_fd;
    return 0;
}
#else
int ckb_syscalls_restrict(int cmd_fd, int reply_fd)
{
    /* A refused call traps: the harness's SIGSYS handler names it and
     * exits. A candidate that replaces the handler only gets a call that
     * did not run. */
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_TRAP);
    if (!ctx)
        return -1;
    static const int allowed[] = {
        /* dlopen of the candidate (the chroot holds nothing else) */
        SCMP_SYS(close),          SCMP_SYS(fstat),          SCMP_SYS(newfstatat),
        SCMP_SYS(pread64),        SCMP_SYS(lseek),          SCMP_SYS(mmap),
        SCMP_SYS(mprotect),
        /* memory */
        SCMP_SYS(munmap),         SCMP_SYS(mremap),         SCMP_SYS(madvise),
        SCMP_SYS(brk),
        /* the existing OpenMP pool, time */
        SCMP_SYS(futex),          SCMP_SYS(sched_yield),    SCMP_SYS(sched_getaffinity),
        SCMP_SYS(getcpu),         SCMP_SYS(clock_gettime),  SCMP_SYS(clock_nanosleep),
        SCMP_SYS(nanosleep),      SCMP_SYS(gettid),         SCMP_SYS(getpid),
        SCMP_SYS(getrandom),
        /* own signals (abort, a handler of its own), dying */
        SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigaction),   SCMP_SYS(rt_sigreturn),
        SCMP_SYS(sigaltstack),    SCMP_SYS(exit),           SCMP_SYS(exit_group),
        SCMP_SYS(restart_syscall), SCMP_SYS(set_robust_list), SCMP_SYS(rseq),
        /* glibc's qsort sizes its buffer against physical memory */
        SCMP_SYS(sysinfo),
    };
    int rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
    for (size_t i = 0; i < sizeof allowed / sizeof *allowed && rc == 0; i++)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed[i], 0);
    /* Opening read-only: dlopen needs it; the chroot leaves nothing but the
     * candidate object to open. */
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(openat), 1,
                              SCMP_A2(SCMP_CMP_MASKED_EQ, O_ACCMODE | O_CREAT | O_TRUNC, O_RDONLY));
    /* Reading: the command pipe, and files it opened (dlopen). Writing: the
     * reply socket and stderr only. */
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(read), 0);
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(write), 1,
                              SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)reply_fd));
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(write), 1, SCMP_A0(SCMP_CMP_EQ, 2));
    /* Signals to itself only (abort raises SIGABRT on itself). */
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1,
                              SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)getpid()));
    /* Reading its own limits (glibc asks for the stack's). */
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), 2,
                              SCMP_A0(SCMP_CMP_EQ, 0), SCMP_A2(SCMP_CMP_EQ, 0));
    /* A new thread of this process, as pthread_create makes it (libgomp
     * regrowing its pool after a smaller team retired some): CLONE_THREAD
     * set and no flag outside glibc's set, so no new process, namespace or
     * tracer. It inherits this filter, is stopped with the process between
     * calls, and runs on the CPUs of the budget only (the affinity the
     * sandbox set, which the filter does not let it change). clone3's flags
     * sit in memory the filter cannot read: ENOSYS makes glibc use clone. */
    const scmp_datum_t thread_flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
                                      CLONE_THREAD | CLONE_SYSVSEM | CLONE_SETTLS |
                                      CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID;
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                              SCMP_A0(SCMP_CMP_MASKED_EQ, ~thread_flags | CLONE_THREAD,
                                      CLONE_THREAD));
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    (void)cmd_fd;
    if (rc == 0)
        rc = seccomp_load(ctx);
    seccomp_release(ctx);
    return rc == 0 ? 0 : -1;
}
#endif
