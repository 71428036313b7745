/*
 * cputime.h — how much of the machine other work took: the disturbance
 * check of a timing run (eval) and of a machine measurement (profile).
 */
#ifndef CKB_CORE_CPUTIME_H
#define CKB_CORE_CPUTIME_H

#include <sys/types.h>

/* Where this machine's CPU time has gone so far, in seconds summed over
 * CPUs: stolen by the hypervisor (our vCPUs taken away), busy in any
 * process, and used by the given processes (all their threads). */
typedef struct {
    double steal, busy, ours;
    int ncpu;
} ckb_cpu_times;

void ckb_cpu_times_read(const pid_t *pids, int npids, ckb_cpu_times *out);

/* The share (%) of the machine's capacity between a and b (elapsed_s
 * apart) that went to the hypervisor (steal) or to processes other than
 * the pids the samples were taken with (other). */
void ckb_cpu_times_disturbance(const ckb_cpu_times *a, const ckb_cpu_times *b, double elapsed_s,
                               double *steal_pct, double *other_pct);

/* Nanoseconds the threads of the given processes have run and have waited
 * runnable on a run queue (another task had their CPU), from each thread's
 * /proc/PID/task/TID/schedstat: exact, unlike the 10 ms ticks above, so it
 * judges a timing run of any length. ok = 0 where the kernel keeps no
 * schedstat (CONFIG_SCHED_INFO off). */
typedef struct {
    double run_ns, wait_ns;
    int ok;
} ckb_sched_times;

void ckb_sched_times_read(const pid_t *pids, int npids, ckb_sched_times *out);

/* The share (%) of the CPU time those threads wanted between a and b that
 * they spent waiting for it: other work on their cores. -1 when either
 * sample has no schedstat. */
double ckb_sched_wait_pct(const ckb_sched_times *a, const ckb_sched_times *b);

#endif /* CKB_CORE_CPUTIME_H */
