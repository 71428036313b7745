/*
 * sandbox.h — the trusted side's handle on one sandboxed process.
 *
 * A sandbox is cloned into new user, PID, network, mount, IPC and UTS
 * namespaces: it is PID 1 of its own PID namespace (when it ends, the
 * kernel ends everything it could have started), root of its namespace
 * but `nobody` on the host (or the invoking user, when ckbench does not
 * run as root), with no network, and it dies with ckbench
 * (PR_SET_PDEATHSIG). It execs this binary (`ckbench __sandbox`) through a
 * descriptor, with a minimal environment, resource limits and only the
 * protocol's descriptors open (protocol.h). A candidate's sandbox then
 * confines itself before the object is opened (child.c): chroot into a
 * folder holding only the object, every capability dropped,
 * no_new_privs, the seccomp filter on every thread.
 *
 * Between its calls the trusted side keeps a sandbox stopped (SIGSTOP,
 * waited for): no thread of it runs while inputs are written, outputs
 * copied, or the other process is timed.
 */
#ifndef CKB_SANDBOX_H
#define CKB_SANDBOX_H

#include <stddef.h>
#include <sys/types.h>

#include "core/cputime.h"

typedef struct {
    size_t mem_bytes;  /* address-space limit (skipped under AddressSanitizer) */
    double cpu_s;      /* CPU seconds, all threads together */
    int threads;
} ckb_sandbox_limits;

typedef struct {
    pid_t pid;         /* on the host */
    int cmd_fd, reply_fd, err_fd;
    char err[4096];    /* the start of the sandbox's stderr */
    size_t err_len;
    int dead;          /* reaped: see exit_code / term_signal */
    int exit_code, term_signal;
    int timed_out;     /* killed by us at a wall-clock limit */
    int stopped;       /* stopped by ckb_sandbox_pause */
    double reply_stamp; /* when the last reply was sent (kernel stamp, CLOCK_REALTIME s) */
    int reply_len;     /* bytes in the last reply packet */
    unsigned char reply_arg; /* its second byte */
    int no_stamps;     /* the kernel gives no stamps: the trusted side's clock instead */
} ckb_sandbox;

/* Runs fn(arg) in a process cloned into new user, PID, network, mount, IPC
 * and UTS namespaces: PID 1 of its PID namespace (SIGKILL to it ends
 * everything it started), root of its user namespace and `nobody` on the
 * host (the invoking user when ckbench is not root), with
 * PR_SET_PDEATHSIG(SIGKILL). fn starts once the id maps are written, runs
 * on a copy of our memory and may make async-signal-safe calls only; what
 * it returns is the exit status. new_mount_ns = 0 leaves the mount
 * namespace to fn, which must unshare(CLONE_NEWNS) itself: a folder it
 * fchdir's into first stays its working directory in the new namespace,
 * even one whose path `nobody` could not walk. The run-time sandboxes and
 * the compile (confine.c) both start here. Returns the pid (the caller
 * reaps it), or -1 with errno and why filled: hosts without user
 * namespaces end here. */
pid_t ckb_ns_spawn(int (*fn)(void *), void *arg, int new_mount_ns, char *why, size_t why_len);

/* Starts a sandbox. root_fd: the folder a candidate's sandbox is confined
 * to (-1 for a baseline's); so_name: the object's name inside it (NULL: no
 * candidate). 0 on success, -1 with errno (and why in `why`) otherwise. */
int ckb_sandbox_start(ckb_sandbox *sb, int in_fd, int out_fd, int root_fd, const char *workload,
                      const char *size, const char *so_name, const ckb_sandbox_limits *lim,
                      char *why, size_t why_len);
int ckb_sandbox_send(ckb_sandbox *sb, char cmd, unsigned char arg);
/* Waits for the sandbox's next reply byte. Returns it (0..255) and sets
 * reply_stamp to when it was sent; -1 when the sandbox died first (reaped;
 * fields set), -2 when timeout_s passed (killed and reaped, timed_out set). */
int ckb_sandbox_wait(ckb_sandbox *sb, double timeout_s);
/* Stops every thread of the sandbox and waits until they are stopped; 0,
 * or -1 when it died (reaped; fields set). */
int ckb_sandbox_pause(ckb_sandbox *sb);
void ckb_sandbox_resume(ckb_sandbox *sb);
/* Asks the sandbox to quit, then kills and reaps it. Idempotent. */
void ckb_sandbox_stop(ckb_sandbox *sb);


#endif /* CKB_SANDBOX_H */
