#include "core/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double ckb_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void ckb_proc_kill_group(pid_t pid)
{
    if (pid <= 0)
        return;
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
}

int ckb_proc_run(char *const argv[], double timeout_s, size_t max_output, ckb_proc_result *out)
{
    memset(out, 0, sizeof *out);
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(pipefd[0]);
        close(pipefd[1]);
        return -1;
    }
    if (pid == 0) {
        setpgid(0, 0);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, 0);
        dup2(pipefd[1], 1);
        dup2(pipefd[1], 2);
        execvp(argv[0], argv);
        _exit(127);
    }
    setpgid(pid, pid);
    close(pipefd[1]);
    double t0 = ckb_now();
    size_t cap = max_output + 1;
    out->output = malloc(cap);
    if (!out->output) {
        ckb_proc_kill_group(pid);
        waitpid(pid, NULL, 0);
        close(pipefd[0]);
        return -1;
    }
    for (;;) {
        double left = timeout_s - (ckb_now() - t0);
        if (left <= 0) {
            out->timed_out = 1;
            break;
        }
        struct pollfd p = {.fd = pipefd[0], .events = POLLIN};
        int r = poll(&p, 1, (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            continue; /* the deadline check above ends the loop */
        char buf[4096];
        ssize_t n = read(pipefd[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break; /* EOF: every writer is gone */
        size_t keep = (size_t)n;
        if (out->output_len + keep > max_output) {
            keep = max_output - out->output_len;
            out->truncated = 1;
        }
        memcpy(out->output + out->output_len, buf, keep);
        out->output_len += keep;
    }
    close(pipefd[0]);
    if (out->timed_out)
        ckb_proc_kill_group(pid);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    /* Whatever the leader left behind in its group goes too. */
    kill(-pid, SIGKILL);
    out->output[out->output_len] = '\0';
    out->wall_s = ckb_now() - t0;
    if (WIFEXITED(status)) {
        out->exited = 1;
        out->exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        out->signal = WTERMSIG(status);
    }
    return 0;
}

void ckb_proc_result_free(ckb_proc_result *r)
{
    free(r->output);
    r->output = NULL;
}
