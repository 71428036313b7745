/*
 * syscalls.h — the seccomp filter of a sandboxed process, installed before
 * the candidate object is opened, so that its load-time code (constructors,
 * .init_array entries, IFUNC resolvers) already runs under it, and
 * synchronised to every thread of the process (TSYNC: the OpenMP pool made
 * just before is covered).
 *
 * What it allows: what dlopen needs (read-only opens, which the chroot
 * limits to the candidate object; mmap/mprotect), memory, the existing
 * pool's futexes, clocks, signals to itself, reading commands, writing
 * replies and stderr, dying. What it refuses, killing the process with
 * SIGSYS: new threads or processes (clone, clone3, fork), seccomp and prctl
 * (so no filter of the candidate's can ever stand in for this one),
 * signals to anyone else, sockets, ptrace, process_vm_*, exec, any write
 * outside the two descriptors.
 */
#ifndef CKB_SYSCALLS_H
#define CKB_SYSCALLS_H

/* 0 when the filter is in place; -1 when it could not be installed. Under
 * AddressSanitizer it installs nothing (the sanitizer's runtime needs
 * system calls the filter refuses) and returns 0. */
int ckb_syscalls_restrict(int cmd_fd, int reply_fd);

/* 1 when the process runs under exactly one seccomp filter with
 * no_new_privs set, read from /proc/PID/status by the trusted side; 0
 * otherwise; -1 when the status cannot be read. */
int ckb_syscalls_verify(int pid);

/* The name of system call number nr on x86-64 ("syscall 435" when unknown);
 * a static buffer for unknown numbers. */
const char *ckb_syscall_name(long nr);

#endif /* CKB_SYSCALLS_H */
