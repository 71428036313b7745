/*
 * proc.h — child processes with a wall-clock limit: run a command in its
 * own process group, capture its output, kill the whole group on timeout.
 */
#ifndef CKB_PROC_H
#define CKB_PROC_H

#include <stddef.h>
#include <signal.h>
#include <sys/types.h>

typedef struct {
    int exited;        /* 1: exited normally with exit_code */
    int exit_code;
    int signal;        /* the terminating signal, 0 if none */
    int timed_out;     /* 1: killed by us at the wall-clock limit */
    double wall_s;
    char *output;      /* stdout and stderr interleaved, NUL-terminated; caller frees */
    size_t output_len; /* capped at the capture limit; `truncated` says if cut */
    int truncated;
    int cancelled;     /* 1: killed by us because the caller cancelled it */
} ckb_proc_result;

/* Runs argv (argv[0] looked up in PATH) with stdin from /dev/null, waits at
 * most timeout_s, keeps at most max_output bytes of output. 0 when the
 * command ran (whatever its exit status), -1 when it could not be started. */
int ckb_proc_run(char *const argv[], double timeout_s, size_t max_output, ckb_proc_result *out);
/* The same, and the whole group is killed as soon as *cancel (read
 * atomically, checked at least every 0.1 s) is non-zero: then
 * out->cancelled = 1. cancel may be NULL. */
int ckb_proc_run_cancellable(char *const argv[], double timeout_s, size_t max_output,
                             const int *cancel, ckb_proc_result *out);
void ckb_proc_result_free(ckb_proc_result *r);
/* Reads fd into out->output (allocated here, NUL-terminated, the first
 * max_output bytes kept: out->truncated past them) until EOF or until
 * timeout_s after t0 (ckb_now()'s clock; out->timed_out). With
 * stop_when_full it returns at the first byte past max_output instead of
 * draining the rest (the caller then ends the writer). 0, or -1 when out
 * of memory. */
int ckb_proc_collect(int fd, double t0, double timeout_s, size_t max_output, int stop_when_full,
                     ckb_proc_result *out);
/* The same, stopping early with out->cancelled when *cancel becomes
 * non-zero (cancel may be NULL). */
int ckb_proc_collect_cancellable(int fd, double t0, double timeout_s, size_t max_output,
                                 int stop_when_full, const int *cancel, ckb_proc_result *out);
/* out's exited / exit_code / signal from a wait status. */
void ckb_proc_set_status(ckb_proc_result *out, int status);

/* Kills a process group (SIGKILL) and drops it from the cleanup list
 * (cleanup.h); safe if already gone. The caller still reaps the leader. */
void ckb_proc_kill_group(pid_t pid);

/* Starts a program in a new process group whose leader is a keeper: a
 * forked copy of us that starts the program, waits for it and exits with
 * its status (or dies of its signal). The keeper has PR_SET_PDEATHSIG, so
 * when the thread that called this dies (kill -9 of ckbench included) it
 * kills its whole group: the program and everything the program forked
 * that stayed in the group. It is also a child subreaper, so orphans the
 * program leaves are its children, not init's.
 *   fds: the program's stdin, stdout and stderr; mask: the signal mask it
 *   starts with (NULL: none blocked); envp NULL: our environment and a
 *   PATH search (execvp), else execve of path with envp.
 * The group is listed for cleanup (cleanup.h) before any signal can come.
 * Returns the keeper's pid, which is the group's id, or -1 (errno). The
 * caller reaps it with waitpid and then calls ckb_proc_kill_group. */
pid_t ckb_proc_spawn_kept(const char *path, char *const argv[], char *const envp[],
                          const int fds[3], const sigset_t *mask);

/* Seconds on the monotonic clock. */
double ckb_now(void);

#endif /* CKB_PROC_H */
