/*
 * syscalls.h — the seccomp filter of the sandboxed child, installed after
 * the candidate is loaded and the baseline has warmed up (so oneDNN's and
 * OpenMP's one-time set-up is done). From then on the process may compute,
 * allocate, synchronise threads of the existing OpenMP pool, and talk to
 * the parent over its two pipes; any other system call kills it (SIGSYS).
 */
#ifndef CKB_SYSCALLS_H
#define CKB_SYSCALLS_H

/* 0 when the filter is in place; -1 when it could not be installed. Under
 * AddressSanitizer it installs nothing (the sanitizer's reports need files)
 * and returns 0. */
int ckb_syscalls_restrict(int cmd_fd, int reply_fd);

#endif /* CKB_SYSCALLS_H */
