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
#include <grp.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
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

/* What the cloned process needs before it execs, prepared by the parent:
 * after clone only async-signal-safe calls run. */
typedef struct {
    int src[5];            /* in, out, cmd, reply, root (-1: none) */
    int err_fd, exe_fd;
    const ckb_sandbox_limits *lim;
    char **argv, **envp;
} sandbox__boot;

/* "what" and the number on stderr (the parent puts it in the verdict's
 * message): only write(2), as after clone nothing else is safe. */
static void sandbox__say_errno(const char *what, int e)
{
    char buf[160];
    size_t n = 0;
    for (const char *p = what; *p && n < sizeof buf - 16; p++)
        buf[n++] = *p;
    char digits[12];
    int k = 0;
    unsigned v = e > 0 ? (unsigned)e : 0;
    do
        digits[k++] = (char)('0' + v % 10);
    while ((v /= 10) && k < (int)sizeof digits);
    while (k > 0)
        buf[n++] = digits[--k];
    buf[n++] = '\n';
    ssize_t w = write(2, buf, n);
    (void)w;
}

static int sandbox__child(void *arg)
{
    sandbox__boot *b = arg;
    /* Move the protocol's descriptors to their fixed numbers; dup2 clears
     * close-on-exec on the copies. The sources may sit on the targets'
     * numbers: copy them high first. */
    int src[5];
    for (int i = 0; i < 5; i++) {
        src[i] = -1;
        if (b->src[i] >= 0 && (src[i] = fcntl(b->src[i], F_DUPFD_CLOEXEC, 20)) < 0)
            _exit(123);
    }
    for (int i = 0; i < 5; i++)
        if (src[i] >= 0 && dup2(src[i], CKB_PROTO_FD_IN + i) < 0)
            _exit(124);
    int devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0) {
        dup2(devnull, 0);
        dup2(devnull, 1);
    }
    dup2(b->err_fd, 2);
    if (!SANDBOX_ASAN && b->lim->mem_bytes)
        sandbox__limit(RLIMIT_AS, b->lim->mem_bytes);
    sandbox__limit(RLIMIT_CPU, (rlim_t)(b->lim->cpu_s + 1));
    sandbox__limit(RLIMIT_FSIZE, 0);
    sandbox__limit(RLIMIT_CORE, 0);
    sandbox__limit(RLIMIT_STACK, 64u << 20);
    /* Threads may be made (a team outgrowing a smaller one; the CPUs hold the
     * budget), but not without end: a flood of them would take the host's
     * PIDs and kernel memory. Counted per sandbox (its own user namespace). */
    sandbox__limit(RLIMIT_NPROC, (rlim_t)(1024 + 4 * (b->lim->threads > 0 ? b->lim->threads : 1)));
    /* ckbench's parent is gone already: do not outlive it. */
    struct pollfd p = {.fd = CKB_PROTO_FD_CMD, .events = 0};
    if (poll(&p, 1, 0) == 1 && (p.revents & POLLHUP))
        _exit(125);
    /* Through the descriptor: no path on the host needs to be reachable. */
    syscall(SYS_execveat, b->exe_fd, "", b->argv, b->envp, AT_EMPTY_PATH);
    sandbox__say_errno("cannot start the sandbox's program: execveat failed, errno ", errno);
    _exit(127);
}

static int sandbox__write_map(pid_t pid, const char *what, const char *text)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, what);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, strlen(text));
    close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* The sandbox's root is `nobody` on the host when ckbench runs as root,
 * else the invoking user (the only id an unprivileged user may map). */
static int sandbox__map_ids(pid_t pid)
{
    int root = geteuid() == 0;
    char map[64];
    if (!root && sandbox__write_map(pid, "setgroups", "deny") != 0)
        return -1;
    snprintf(map, sizeof map, "0 %u 1\n", root ? 65534u : (unsigned)geteuid());
    if (sandbox__write_map(pid, "uid_map", map) != 0)
        return -1;
    snprintf(map, sizeof map, "0 %u 1\n", root ? 65534u : (unsigned)getegid());
    return sandbox__write_map(pid, "gid_map", map);
}

/* What the cloned process needs before it runs the caller's function,
 * prepared by the parent: after clone only async-signal-safe calls run. */
typedef struct {
    int sync_rd, sync_wr;  /* one byte arrives once the id maps are written */
    int drop_groups;       /* the parent is root: clear supplementary groups */
    int (*fn)(void *);
    void *arg;
} sandbox__ns_boot;

static int sandbox__ns_child(void *arg)
{
    sandbox__ns_boot *b = arg;
    char go;
    /* Our copy of the write end closed: a parent that dies before it
     * writes leaves EOF, not a child blocked forever. */
    close(b->sync_wr);
    if (read(b->sync_rd, &go, 1) != 1)
        _exit(120);
    close(b->sync_rd);
    if (b->drop_groups && setgroups(0, NULL) != 0)
        _exit(121);
    /* Root of the namespace: `nobody` (or the invoking user) on the host. */
    if (setresgid(0, 0, 0) != 0 || setresuid(0, 0, 0) != 0)
        _exit(122);
    /* Set after the id change, which clears it. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    _exit(b->fn(b->arg));
}

pid_t ckb_ns_spawn(int (*fn)(void *), void *arg, int new_mount_ns, char *why, size_t why_len)
{
    int sync[2] = {-1, -1}, saved = 0;
    pid_t pid = -1;
    const size_t stack_bytes = 256 << 10;
    void *stack = MAP_FAILED;
    snprintf(why, why_len, "cannot create a pipe");
    if (pipe2(sync, O_CLOEXEC) != 0)
        goto out;
    stack = mmap(NULL, stack_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (stack == MAP_FAILED)
        goto out;
    sandbox__ns_boot boot = {
        .sync_rd = sync[0],
        .sync_wr = sync[1],
        .drop_groups = geteuid() == 0,
        .fn = fn,
        .arg = arg,
    };
    int flags = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS |
                (new_mount_ns ? CLONE_NEWNS : 0) | SIGCHLD;
    pid = clone(sandbox__ns_child, (char *)stack + stack_bytes, flags, &boot);
    if (pid < 0) {
        saved = errno;
        snprintf(why, why_len,
                 "cannot create the sandbox's namespaces (%s): ckbench needs user namespaces "
                 "(kernel.unprivileged_userns_clone=1, or run as root)", strerror(saved));
        goto out;
    }
    if (sandbox__map_ids(pid) != 0) {
        saved = errno;
        snprintf(why, why_len, "cannot map the sandbox's user ids: %s", strerror(saved));
        goto kill;
    }
    if (write(sync[1], "g", 1) != 1) {
        saved = errno;
        snprintf(why, why_len, "cannot start the sandbox: %s", strerror(saved));
        goto kill;
    }
    why[0] = '\0';
    goto out;
kill:
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
    pid = -1;
out:
    if (!saved)
        saved = errno;
    for (int i = 0; i < 2; i++)
        if (sync[i] >= 0)
            close(sync[i]);
    /* The clone ran on its own copy of memory: the stack is ours to free. */
    if (stack != MAP_FAILED)
        munmap(stack, stack_bytes);
    errno = saved;
    return pid;
}

int ckb_sandbox_start(ckb_sandbox *sb, int in_fd, int out_fd, int root_fd, const char *workload,
                      const char *size, const char *so_name, const ckb_sandbox_limits *lim,
                      char *why, size_t why_len)
{
    memset(sb, 0, sizeof *sb);
    sb->pid = -1;
    sb->cmd_fd = sb->reply_fd = sb->err_fd = -1;
    int cmd[2] = {-1, -1}, reply[2] = {-1, -1}, err[2] = {-1, -1};
    int exe_fd = -1, rc = -1, saved = 0;
    snprintf(why, why_len, "cannot create the sandbox's pipes");
    if (pipe2(cmd, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
        goto out;
    /* Replies travel as packets on a socket with kernel send stamps: the
     * time each was sent, whatever the parent's own wake-up delay. */
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, reply) != 0)
        goto out;
    exe_fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (exe_fd < 0) {
        snprintf(why, why_len, "cannot open /proc/self/exe");
        goto out;
    }

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
                    (char *)(so_name ? so_name : "-"), NULL};
    sandbox__boot boot = {
        .src = {in_fd, out_fd, cmd[0], reply[1], root_fd},
        .err_fd = err[1],
        .exe_fd = exe_fd,
        .lim = lim,
        .argv = argv,
        .envp = envp,
    };
    pid_t pid = ckb_ns_spawn(sandbox__child, &boot, 1, why, why_len);
    if (pid < 0) {
        saved = errno;
        goto out;
    }
    sb->pid = pid;
    sb->cmd_fd = cmd[1], cmd[1] = -1;
    sb->reply_fd = reply[0], reply[0] = -1;
    sb->err_fd = err[0], err[0] = -1;
    int on = 1;
    if (setsockopt(sb->reply_fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) != 0)
        sb->no_stamps = 1;
    why[0] = '\0';
    rc = 0;
out:
    if (!saved)
        saved = errno;
    int fds[] = {cmd[0], cmd[1], reply[0], reply[1], err[0], err[1], exe_fd};
    for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    errno = saved;
    return rc;
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

static void sandbox__note_status(ckb_sandbox *sb, int status)
{
    sb->dead = 1;
    if (WIFEXITED(status))
        sb->exit_code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
        sb->term_signal = WTERMSIG(status);
}

static void sandbox__reap(ckb_sandbox *sb)
{
    if (sb->dead || sb->pid <= 0)
        return;
    int status = 0;
    /* PID 1 of its namespace: when it is gone, the kernel ends everything
     * else in it. */
    kill(sb->pid, SIGKILL);
    while (waitpid(sb->pid, &status, 0) < 0 && errno == EINTR) {
    }
    sandbox__note_status(sb, status);
}

/* The reply socket closed: the sandbox is exiting (or closed it itself;
 * then it is killed). Its own exit status is what counts. */
static void sandbox__wait_exit(ckb_sandbox *sb)
{
    for (int i = 0; i < 200 && !sb->dead; i++) {
        int status;
        if (waitpid(sb->pid, &status, WNOHANG) == sb->pid) {
            sandbox__note_status(sb, status);
            return;
        }
        usleep(1000);
    }
    sandbox__reap(sb);
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
            unsigned char c[2] = {0, 0};
            char control[CMSG_SPACE(sizeof(struct timespec))];
            struct iovec iov = {.iov_base = c, .iov_len = sizeof c};
            struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
                                 .msg_controllen = sizeof control};
            ssize_t n = recvmsg(sb->reply_fd, &msg, 0);
            if (n >= 1) {
                sb->reply_stamp = sandbox__stamp(&msg);
                sb->reply_len = (int)n;
                sb->reply_arg = c[1];
                return c[0];
            }
            if (n < 0 && errno == EINTR)
                continue;
            /* EOF: the child is gone. Collect what it said, then reap it. */
            for (int i = 0; i < 8; i++)
                sandbox__drain_err(sb);
            sandbox__wait_exit(sb);
            return -1;
        }
    }
}

int ckb_sandbox_pause(ckb_sandbox *sb)
{
    if (sb->dead)
        return -1;
    kill(sb->pid, SIGSTOP);
    for (;;) {
        int status;
        pid_t r = waitpid(sb->pid, &status, WUNTRACED);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == sb->pid && WIFSTOPPED(status)) {
            sb->stopped = 1;
            return 0;
        }
        if (r == sb->pid) {
            sandbox__note_status(sb, status);
            for (int i = 0; i < 8; i++)
                sandbox__drain_err(sb);
        }
        return -1;
    }
}

void ckb_sandbox_resume(ckb_sandbox *sb)
{
    if (!sb->dead)
        kill(sb->pid, SIGCONT);
    sb->stopped = 0;
}

void ckb_sandbox_stop(ckb_sandbox *sb)
{
    if (sb->pid <= 0)
        return;
    if (!sb->dead) {
        if (sb->stopped)
            ckb_sandbox_resume(sb);
        ckb_sandbox_send(sb, CKB_CMD_QUIT, 0);
        /* A well-behaved sandbox quits at once; no need to wait long. */
        for (int i = 0; i < 50 && !sb->dead; i++) {
            int status;
            pid_t r = waitpid(sb->pid, &status, WNOHANG);
            if (r == sb->pid) {
                sandbox__note_status(sb, status);
                break;
            }
            usleep(2000);
        }
        sandbox__reap(sb);
    }
    if (sb->cmd_fd >= 0)
        close(sb->cmd_fd);
    if (sb->reply_fd >= 0)
        close(sb->reply_fd);
    if (sb->err_fd >= 0)
        close(sb->err_fd);
    sb->cmd_fd = sb->reply_fd = sb->err_fd = -1;
    sb->pid = -1;
}

