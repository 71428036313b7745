/*
 * sandbox.h — the parent's handle on a sandboxed child: started by exec of
 * this binary (`ckbench __sandbox`) in its own process group with resource
 * limits, a minimal environment and the protocol's descriptors; driven by
 * one-byte commands under a wall-clock limit; killed as a group at the end,
 * so that nothing it started is left running.
 */
#ifndef CKB_SANDBOX_H
#define CKB_SANDBOX_H

#include <stddef.h>
#include <sys/types.h>

typedef struct {
    size_t mem_bytes;  /* address-space limit (skipped under AddressSanitizer) */
    double cpu_s;      /* CPU seconds, all threads together */
    int threads;
} ckb_sandbox_limits;

typedef struct {
    pid_t pid;
    int cmd_fd, reply_fd, err_fd;
    char err[4096];    /* the start of the child's stderr */
    size_t err_len;
    int dead;          /* reaped: see exit_code / term_signal */
    int exit_code, term_signal;
    int timed_out;     /* killed by us at a wall-clock limit */
    double reply_stamp; /* when the last reply was sent (kernel stamp, CLOCK_REALTIME s) */
    int no_stamps;     /* the kernel gives no stamps: the parent's clock instead */
} ckb_sandbox;

/* Starts the child. 0 on success, -1 (errno) when it could not be started. */
int ckb_sandbox_start(ckb_sandbox *sb, int shm_fd, const char *workload, const char *size,
                      const char *so_path, const ckb_sandbox_limits *lim);
int ckb_sandbox_send(ckb_sandbox *sb, char cmd, unsigned char arg);
/* Waits for the child's next reply byte. Returns it (0..255) and sets
 * reply_stamp to when the child sent it; -1 when the
 * child died first (reaped; fields set), -2 when timeout_s passed (the
 * group is killed and reaped, timed_out set). */
int ckb_sandbox_wait(ckb_sandbox *sb, double timeout_s);
/* Asks the child to quit, then kills its group and reaps it. Idempotent. */
void ckb_sandbox_stop(ckb_sandbox *sb);

/* Where this machine's CPU time has gone so far, in seconds summed over
 * CPUs: stolen by the hypervisor (our vCPUs taken away), busy in any
 * process, and used by process `pid` (all its threads; 0 when pid <= 0). */
typedef struct {
    double steal, busy, pid_cpu;
    double main_wait; /* seconds pid's main thread has been runnable but not
                         running (scheduler's run delay; 0 when unknown) */
    int ncpu;
} ckb_cpu_times;

void ckb_cpu_times_read(pid_t pid, ckb_cpu_times *out);

#endif /* CKB_SANDBOX_H */
