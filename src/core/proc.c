#include "core/proc.h"

#include "core/cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
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
    ckb_cleanup_forget_group(pid);
}

/* ---- the keeper: after fork, async-signal-safe calls only --------------- */

static void proc__keeper_signal(int sig)
{
    (void)sig;
    kill(0, SIGKILL); /* the whole group, the keeper last */
    _exit(137);
}

static void proc__close_from(int lo)
{
    if (syscall(SYS_close_range, (unsigned)lo, ~0u, 0) == 0)
        return;
    for (int fd = lo; fd < 4096; fd++)
        close(fd);
}

static __attribute__((noreturn)) void proc__keeper(const char *path, char *const argv[],
                                                   char *const envp[], const int fds[3],
                                                   const sigset_t *mask, pid_t parent)
{
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) /* the caller died before the line above */
        _exit(125);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    struct sigaction sa = {.sa_handler = proc__keeper_signal};
    sigfillset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    /* Move the three descriptors out of the way, then onto 0, 1, 2. */
    int tmp[3];
    for (int i = 0; i < 3; i++)
        if ((tmp[i] = fcntl(fds[i], F_DUPFD, 10)) < 0)
            _exit(126);
    for (int i = 0; i < 3; i++)
        if (dup2(tmp[i], i) < 0)
            _exit(126);
    proc__close_from(3); /* the caller's pipe ends too: EOF must work */
    sigset_t none;
    sigemptyset(&none);
    pid_t pid = fork();
    if (pid == 0) {
        struct sigaction dfl = {.sa_handler = SIG_DFL};
        sigaction(SIGTERM, &dfl, NULL);
        sigaction(SIGINT, &dfl, NULL);
        sigaction(SIGHUP, &dfl, NULL);
        sigprocmask(SIG_SETMASK, mask ? mask : &none, NULL);
        if (envp)
            execve(path, argv, envp);
        else
            execvp(path, argv);
        _exit(127);
    }
    close(0), close(1), close(2);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (pid < 0)
        _exit(126);
    int status = 0;
    for (;;) {
        int st;
        pid_t w = waitpid(-1, &st, 0);
        if (w == pid) {
            status = st;
            break;
        }
        if (w < 0 && errno != EINTR)
            break;
    }
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        struct sigaction dfl = {.sa_handler = SIG_DFL};
        sigaction(sig, &dfl, NULL);
        kill(getpid(), sig);
        _exit(128 + sig);
    }
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 126);
}

pid_t ckb_proc_spawn_kept(const char *path, char *const argv[], char *const envp[],
                          const int fds[3], const sigset_t *mask)
{
    sigset_t block, old;
    ckb_cleanup_sigset(&block);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0)
        proc__keeper(path, argv, envp, fds, mask, parent);
    int e = errno;
    if (pid > 0) {
        setpgid(pid, pid); /* also here: no race with a kill of the group */
        ckb_cleanup_add_group(pid);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = e;
    return pid;
}

int ckb_proc_run(char *const argv[], double timeout_s, size_t max_output, ckb_proc_result *out)
{
    return ckb_proc_run_cancellable(argv, timeout_s, max_output, NULL, out);
}

int ckb_proc_run_cancellable(char *const argv[], double timeout_s, size_t max_output,
                             const int *cancel, ckb_proc_result *out)
{
    memset(out, 0, sizeof *out);
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0)
        return -1;
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (devnull < 0) {
        close(pipefd[0]);
        close(pipefd[1]);
        return -1;
    }
    int fds[3] = {devnull, pipefd[1], pipefd[1]};
    pid_t pid = ckb_proc_spawn_kept(argv[0], argv, NULL, fds, NULL);
    close(devnull);
    close(pipefd[1]);
    if (pid < 0) {
        close(pipefd[0]);
        return -1;
    }
    double t0 = ckb_now();
    if (ckb_proc_collect_cancellable(pipefd[0], t0, timeout_s, max_output, 0, cancel, out) != 0) {
        ckb_proc_kill_group(pid);
        waitpid(pid, NULL, 0);
        close(pipefd[0]);
        return -1;
    }
    close(pipefd[0]);
    if (out->timed_out || out->cancelled)
        ckb_proc_kill_group(pid);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    /* Whatever the leader left behind in its group goes too. */
    ckb_proc_kill_group(pid);
    out->wall_s = ckb_now() - t0;
    ckb_proc_set_status(out, status);
    return 0;
}

int ckb_proc_collect(int fd, double t0, double timeout_s, size_t max_output, int stop_when_full,
                     ckb_proc_result *out)
{
    return ckb_proc_collect_cancellable(fd, t0, timeout_s, max_output, stop_when_full, NULL, out);
}

int ckb_proc_collect_cancellable(int fd, double t0, double timeout_s, size_t max_output,
                                 int stop_when_full, const int *cancel, ckb_proc_result *out)
{
    out->output = malloc(max_output + 1);
    if (!out->output)
        return -1;
    for (;;) {
        double left = timeout_s - (ckb_now() - t0);
        if (left <= 0) {
            out->timed_out = 1;
            break;
        }
        if (cancel && __atomic_load_n(cancel, __ATOMIC_ACQUIRE)) {
            out->cancelled = 1;
            break;
        }
        if (cancel && left > 0.1)
            left = 0.1;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, (int)(left * 1000) + 1) <= 0)
            continue; /* EINTR, or the deadline, which the check above sees */
        char buf[4096];
        ssize_t n = read(fd, buf, sizeof buf);
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
        if (out->truncated && stop_when_full)
            break;
    }
    out->output[out->output_len] = '\0';
    return 0;
}

void ckb_proc_set_status(ckb_proc_result *out, int status)
{
    if (WIFEXITED(status)) {
        out->exited = 1;
        out->exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        out->signal = WTERMSIG(status);
    }
}

void ckb_proc_result_free(ckb_proc_result *r)
{
    free(r->output);
    r->output = NULL;
}
