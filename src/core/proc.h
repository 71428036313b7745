/*
 * proc.h — child processes with a wall-clock limit: run a command in its
 * own process group, capture its output, kill the whole group on timeout.
 */
#ifndef CKB_PROC_H
#define CKB_PROC_H

#include <stddef.h>
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
} ckb_proc_result;

/* Runs argv (argv[0] looked up in PATH) with stdin from /dev/null, waits at
 * most timeout_s, keeps at most max_output bytes of output. 0 when the
 * command ran (whatever its exit status), -1 when it could not be started. */
int ckb_proc_run(char *const argv[], double timeout_s, size_t max_output, ckb_proc_result *out);
void ckb_proc_result_free(ckb_proc_result *r);

/* Kills a process group and reaps its leader (pid); safe if already gone. */
void ckb_proc_kill_group(pid_t pid);

/* Seconds on the monotonic clock. */
double ckb_now(void);

#endif /* CKB_PROC_H */
