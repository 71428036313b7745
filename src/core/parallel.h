/* parallel.h — a plain parallel-for over threads, for work items that each
 * take seconds to hours (a workload's generation, a suite run's Slurm
 * submissions), not for arithmetic. */
#ifndef CKB_PARALLEL_H
#define CKB_PARALLEL_H

/* Runs fn(ctx, i) for i in [0, n), at most width at once (threads); in the
 * caller's thread when width <= 1 or no thread can be started. Returns once
 * every call has returned. */
void ckb_parallel_for(int n, int width, void (*fn)(void *ctx, int i), void *ctx);

#endif /* CKB_PARALLEL_H */
