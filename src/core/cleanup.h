/*
 * cleanup.h — nothing ckbench started outlives it. Two lists, kept in
 * fixed arrays that a signal handler may read: the process groups of the
 * children we started (a model command, the compiler) and the work folders
 * we made (/tmp/ckbench-<pid>-XXXXXX, a run's tmp/ folder).
 *
 * The first registration installs handlers for SIGINT, SIGTERM and SIGHUP.
 * The handler first stops every other thread of ours (a real-time signal
 * whose handler never returns), so that none makes a folder or a child
 * behind its back; then it kills every child of ours and the group it leads (read from
 * /proc/self/task/N/children: the evaluator's sandbox too), every listed
 * group (SIGKILL: what a child left behind in it), removes every listed
 * folder with async-signal-safe calls only, then dies of the same signal
 * with its default action (so the exit status still says which signal).
 * A process forked from ours that receives the signal before its exec does
 * nothing of this (the lists are the parent's).
 *
 * kill -9 runs no handler: there the children end by themselves
 * (ckb_proc_spawn_kept in proc.h: a keeper with PR_SET_PDEATHSIG that
 * kills its group), and the folders are swept by the next ckbench
 * (ckb_tmpdir_sweep), since their names carry the pid that owned them.
 */
#ifndef CKB_CLEANUP_H
#define CKB_CLEANUP_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

/* Installs the handlers (once; later calls do nothing). */
void ckb_cleanup_init(void);

/* The signals the handlers take, the freeze included: block them around a
 * step that must not be cut between making a thing and listing it. */
void ckb_cleanup_sigset(sigset_t *set);

/* Lists / forgets the process group pgid. 0, or -1 when the list is full
 * (the group is then only killed by its own keeper). */
int ckb_cleanup_add_group(pid_t pgid);
void ckb_cleanup_forget_group(pid_t pgid);

/* Lists / forgets a folder to remove on a signal. Paths up to 511 bytes. */
int ckb_cleanup_add_dir(const char *path);
void ckb_cleanup_forget_dir(const char *path);

/* Makes $TMPDIR/ckbench-<pid>-XXXXXX (or /tmp/...), lists it, and once per
 * process sweeps stale ones first. 0 with the path in buf, or -1 (errno). */
int ckb_tmpdir_make(char *buf, size_t n);

/* Removes the ckbench-<pid>-* folders of $TMPDIR (or /tmp) whose pid is no
 * longer a live process; the number removed. */
int ckb_tmpdir_sweep(void);

#endif /* CKB_CLEANUP_H */
