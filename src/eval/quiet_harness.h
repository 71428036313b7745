/*
 * quiet_harness.h — ckbench's own OpenMP threads sleep as soon as they are
 * idle, so that none of them shares the cores of a kernel being timed.
 */
#ifndef CKB_EVAL_QUIET_HARNESS_H
#define CKB_EVAL_QUIET_HARNESS_H

/* Called first in main (not in a sandbox process, whose threads wait as the
 * kernel's runtime defaults): makes this process's OpenMP runtime passive.
 * libgomp reads its policy once, when it is loaded, so the first call
 * re-executes the program with OMP_WAIT_POLICY=passive; in the new image
 * it puts the caller's value back, so that the programs ckbench starts see
 * the environment they were given. Returns only in the passive image (or
 * when the re-exec failed, which the timing's harness_pct then shows). */
void ckb_harness_quiet_omp(char **argv);

#endif /* CKB_EVAL_QUIET_HARNESS_H */
