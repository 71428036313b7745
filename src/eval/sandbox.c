#include "eval/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/proc.h"
#include "eval/protocol.h"

#if defined(__SANITIZE_ADDRESS__)
#define SANDBOX_ASAN 1
#else
#define SANDBOX_ASAN 0
#endif

extern char **environ;

static void sandbox__limit(int res, rlim_t v)
{
    struct rlimit r = {v, v};
    setrlimit(res, &r);
}

/* Environment variables the child may see: none of the user's, except what
 * the sanitizers and the loader need. */
static int sandbox__env_passes(const char *kv)
{
    static const char *const keep[] = {"ASAN_OPTIONS=", "UBSAN_OPTIONS=", "LSAN_OPTIONS=",
                                       "LD_LIBRARY_PATH=", "CKBENCH_HOME="};
    for (size_t i = 0; i < sizeof keep / sizeof *keep; i++)
        if (strncmp(kv, keep[i], strlen(keep[i])) == 0)
            return 1;
    return 0;
}

int ckb_sandbox_start(ckb_sandbox *sb, int shm_fd, const char *workload, const char *size,
                      const char *so_path, const ckb_sandbox_limits *lim)
{
    memset(sb, 0, sizeof *sb);
    sb->pid = -1;
    int cmd[2], reply[2], err[2];
    if (pipe2(cmd, O_CLOEXEC) != 0)
        return -1;
    /* Replies travel as packets on a socket with kernel receive stamps:
     * the time each was sent, whatever the parent's own wake-up delay. */
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, reply) != 0) {
        close(cmd[0]), close(cmd[1]);
        return -1;
    }
    if (pipe2(err, O_CLOEXEC) != 0) {
        close(cmd[0]), close(cmd[1]), close(reply[0]), close(reply[1]);
        return -1;
    }
    /* Everything the child needs is prepared before fork: after it, only
     * async-signal-safe calls. */
    char threads_env[32], *envp[16];
    int ne = 0;
    snprintf(threads_env, sizeof threads_env, "OMP_NUM_THREADS=%d", lim->threads);
    envp[ne++] = threads_env;
    envp[ne++] = "OMP_STACKSIZE=64M";
    for (char **e = environ; *e && ne < 15; e++)
        if (sandbox__env_passes(*e))
            envp[ne++] = *e;
    envp[ne] = NULL;
    char *argv[] = {"ckbench", "__sandbox", (char *)workload, (char *)size,
                    (char *)(so_path ? so_path : "-"), NULL};

    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(cmd[0]), close(cmd[1]), close(reply[0]), close(reply[1]), close(err[0]),
            close(err[1]);
        errno = e;
        return -1;
    }
    if (pid == 0) {
        setpgid(0, 0);
        /* Move the protocol's descriptors to their fixed numbers; dup2
         * clears close-on-exec on the copies. Order matters: the sources
         * may sit on the targets' numbers. */
        int src[3] = {shm_fd, cmd[0], reply[1]};
        for (int i = 0; i < 3; i++) {
            int tmp = fcntl(src[i], F_DUPFD_CLOEXEC, 10);
            if (tmp < 0)
                _exit(120);
            src[i] = tmp;
        }
        if (dup2(src[0], CKB_PROTO_FD_SHM) < 0 || dup2(src[1], CKB_PROTO_FD_CMD) < 0 ||
            dup2(src[2], CKB_PROTO_FD_REPLY) < 0)
            _exit(121);
        int devnull = open("/dev/null", O_RDWR);
        if (devnull >= 0) {
            dup2(devnull, 0);
            dup2(devnull, 1);
        }
        dup2(err[1], 2);
        if (!SANDBOX_ASAN && lim->mem_bytes)
            sandbox__limit(RLIMIT_AS, lim->mem_bytes);
        sandbox__limit(RLIMIT_CPU, (rlim_t)(lim->cpu_s + 1));
        sandbox__limit(RLIMIT_FSIZE, 0);
        sandbox__limit(RLIMIT_CORE, 0);
        sandbox__limit(RLIMIT_STACK, 64u << 20);
        execve("/proc/self/exe", argv, envp);
        _exit(127);
    }
    setpgid(pid, pid);
    close(cmd[0]);
    close(reply[1]);
    close(err[1]);
    sb->pid = pid;
    sb->cmd_fd = cmd[1];
    sb->reply_fd = reply[0];
    int on = 1;
    if (setsockopt(sb->reply_fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) != 0)
        sb->no_stamps = 1;
    sb->err_fd = err[0];
    return 0;
}

int ckb_sandbox_send(ckb_sandbox *sb, char cmd, unsigned char arg)
{
    unsigned char b[2] = {(unsigned char)cmd, arg};
    if (sb->dead)
        return -1;
    /* A child that died leaves a closed pipe: no SIGPIPE, an error. */
    struct sigaction ign = {.sa_handler = SIG_IGN}, old;
    sigaction(SIGPIPE, &ign, &old);
    ssize_t n = write(sb->cmd_fd, b, 2);
    sigaction(SIGPIPE, &old, NULL);
    return n == 2 ? 0 : -1;
}

static void sandbox__reap(ckb_sandbox *sb)
{
    if (sb->dead || sb->pid <= 0)
        return;
    int status = 0;
    while (waitpid(sb->pid, &status, 0) < 0 && errno == EINTR) {
    }
    kill(-sb->pid, SIGKILL); /* anything it left in its group */
    sb->dead = 1;
    if (WIFEXITED(status))
        sb->exit_code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
        sb->term_signal = WTERMSIG(status);
}

static void sandbox__drain_err(ckb_sandbox *sb)
{
    char buf[1024];
    ssize_t n = read(sb->err_fd, buf, sizeof buf);
    if (n <= 0)
        return;
    size_t room = sizeof sb->err - 1 - sb->err_len;
    size_t keep = (size_t)n < room ? (size_t)n : room;
    memcpy(sb->err + sb->err_len, buf, keep);
    sb->err_len += keep;
    sb->err[sb->err_len] = '\0';
}

/* The kernel's send time of a reply, in seconds of CLOCK_REALTIME (0 when
 * the message carries none). */
static double sandbox__stamp(struct msghdr *msg)
{
    for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
            struct timespec t;
            memcpy(&t, CMSG_DATA(c), sizeof t);
            return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
        }
    return 0.0;
}

int ckb_sandbox_wait(ckb_sandbox *sb, double timeout_s)
{
    double t0 = ckb_now();
    int err_open = 1;
    for (;;) {
        double left = timeout_s - (ckb_now() - t0);
        if (left <= 0) {
            sb->timed_out = 1;
            ckb_proc_kill_group(sb->pid);
            sandbox__reap(sb);
            return -2;
        }
        struct pollfd p[2] = {{.fd = sb->reply_fd, .events = POLLIN},
                              {.fd = err_open ? sb->err_fd : -1, .events = POLLIN}};
        int r = poll(p, 2, (int)(left * 1000) + 1);
        if (r < 0 && errno != EINTR)
            return -1;
        if (r <= 0)
            continue;
        if (p[1].revents) {
            char probe;
            if (p[1].revents & POLLIN)
                sandbox__drain_err(sb);
            else if (read(sb->err_fd, &probe, 0) <= 0)
                err_open = 0;
            if (p[1].revents & (POLLHUP | POLLERR) && !(p[1].revents & POLLIN))
                err_open = 0;
        }
        if (p[0].revents) {
            unsigned char c;
            char control[CMSG_SPACE(sizeof(struct timespec))];
            struct iovec iov = {.iov_base = &c, .iov_len = 1};
            struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
                                 .msg_controllen = sizeof control};
            ssize_t n = recvmsg(sb->reply_fd, &msg, 0);
            if (n == 1) {
                sb->reply_stamp = sandbox__stamp(&msg);
                return c;
            }
            if (n < 0 && errno == EINTR)
                continue;
            /* EOF: the child is gone. Collect what it said, then reap it. */
            for (int i = 0; i < 8; i++)
                sandbox__drain_err(sb);
            ckb_proc_kill_group(sb->pid);
            sandbox__reap(sb);
            return -1;
        }
    }
}

void ckb_sandbox_stop(ckb_sandbox *sb)
{
    if (sb->pid <= 0)
        return;
    if (!sb->dead) {
        ckb_sandbox_send(sb, CKB_CMD_QUIT, 0);
        /* A well-behaved child quits at once; no need to wait long. */
        for (int i = 0; i < 50 && !sb->dead; i++) {
            int status;
            pid_t r = waitpid(sb->pid, &status, WNOHANG);
            if (r == sb->pid) {
                sb->dead = 1;
                if (WIFEXITED(status))
                    sb->exit_code = WEXITSTATUS(status);
                else if (WIFSIGNALED(status))
                    sb->term_signal = WTERMSIG(status);
                break;
            }
            usleep(2000);
        }
        ckb_proc_kill_group(sb->pid);
        sandbox__reap(sb);
    }
    kill(-sb->pid, SIGKILL);
    close(sb->cmd_fd);
    close(sb->reply_fd);
    close(sb->err_fd);
    sb->pid = -1;
}

void ckb_cpu_times_read(pid_t pid, ckb_cpu_times *out)
{
    memset(out, 0, sizeof *out);
    out->ncpu = 1;
    const double tick = (double)sysconf(_SC_CLK_TCK);
    FILE *f = fopen("/proc/stat", "r");
    if (f) {
        char line[512];
        int n = 0;
        while (fgets(line, sizeof line, f) && strncmp(line, "cpu", 3) == 0) {
            unsigned long long v[8] = {0};
            if (line[3] != ' ') {
                n++;
                continue;
            }
            /* user nice system idle iowait irq softirq steal */
            if (sscanf(line + 4, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                       &v[3], &v[4], &v[5], &v[6], &v[7]) == 8) {
                out->busy = (double)(v[0] + v[1] + v[2] + v[5] + v[6]) / tick;
                out->steal = (double)v[7] / tick;
            }
        }
        fclose(f);
        out->ncpu = n ? n : 1;
    }
    if (pid > 0) {
        char path[64], buf[1024];
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        FILE *p = fopen(path, "r");
        if (p) {
            size_t len = fread(buf, 1, sizeof buf - 1, p);
            buf[len] = '\0';
            fclose(p);
            /* Fields after the command name, which may hold spaces: utime and
             * stime are the 12th and 13th after ')'. */
            char *q = strrchr(buf, ')');
            unsigned long long ut = 0, st = 0;
            if (q && sscanf(q + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
                            &st) == 2)
                out->pid_cpu = (double)(ut + st) / tick;
        }
        /* The main thread's run delay: how long it waited for a CPU. */
        snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", (int)pid, (int)pid);
        FILE *ss = fopen(path, "r");
        unsigned long long on_cpu = 0, waited = 0;
        if (ss) {
            if (fscanf(ss, "%llu %llu", &on_cpu, &waited) == 2)
                out->main_wait = (double)waited * 1e-9;
            fclose(ss);
        }
    }
}
