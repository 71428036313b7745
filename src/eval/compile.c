#include "eval/compile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/fsutil.h"
#include "core/proc.h"
#include "core/strbuf.h"
#include "eval/sandbox.h"
#include "machine/isa.h"

enum { COMPILE_TIMEOUT_S = 120, COMPILE_MAX_OUTPUT = 1 << 20, COMPILE_KEEP_LINES = 30,
       COMPILE_KEEP_CHARS = 4000, COMPILE_MAX_DEFINES = 32, COMPILE_MAX_STEPS = 24 };

/* Where the compiler's root puts the folders it may see. */
#define COMPILE_WORK "/ckbench/work"
#define COMPILE_INCLUDE "/ckbench/include"
#define COMPILE_KIT "/ckbench/expert-kit"
/* The confined compile's own /tmp and every file it writes are capped. */
#define COMPILE_MAX_FILE_BYTES (1ull << 30)

const char *ckb_compiler(void)
{
    const char *cc = getenv("CKBENCH_CC");
    return cc && *cc ? cc : "cc";
}

const char *ckb_compiler_version(void)
{
    static char version[128];
    if (version[0])
        return version;
    char *argv[] = {(char *)ckb_compiler(), "--version", NULL};
    ckb_proc_result r;
    snprintf(version, sizeof version, "unknown");
    if (ckb_proc_run(argv, 10, 4096, &r) == 0) {
        if (r.exited && r.exit_code == 0) {
            char *nl = strchr(r.output, '\n');
            if (nl)
                *nl = '\0';
            snprintf(version, sizeof version, "%s", r.output);
        }
        ckb_proc_result_free(&r);
    }
    return version;
}

/* Keeps the first lines of the output and drops the work directory from
 * paths, so feedback to a model is short and has no harness details. */
static char *compile__trim(const char *out, const char *workdir)
{
    ckb_strbuf sb = {0};
    const char *drop[] = {workdir, COMPILE_WORK};
    int lines = 0;
    for (const char *p = out; *p && lines < COMPILE_KEEP_LINES && sb.len < COMPILE_KEEP_CHARS;) {
        int skipped = 0;
        for (int i = 0; i < 2 && !skipped; i++) {
            size_t len = strlen(drop[i]);
            if (len && strncmp(p, drop[i], len) == 0 && p[len] == '/') {
                p += len + 1;
                skipped = 1;
            }
        }
        if (skipped)
            continue;
        if (*p == '\n')
            lines++;
        ckb_strbuf_append(&sb, p, 1);
        p++;
    }
    return ckb_strbuf_take(&sb);
}

static const char *compile__classify(const char *msg)
{
    if (strstr(msg, "conflicting types for 'workload'") ||
        strstr(msg, "conflicting types for \xe2\x80\x98workload\xe2\x80\x99"))
        return "wrong_signature";
    if ((strstr(msg, "implicit declaration of function") && strstr(msg, "_mm")) ||
        strstr(msg, "undefined reference to `_mm"))
        return "unknown_intrinsic";
    if (strstr(msg, "undefined reference") || strstr(msg, "ld returned"))
        return "link";
    if (strstr(msg, "undeclared") || strstr(msg, "implicit declaration"))
        return "undeclared";
    if (strstr(msg, "expected") || strstr(msg, "syntax"))
        return "syntax";
    return "other";
}

/* ---- the compiler's confinement ------------------------------------------
 *
 * The compiler reads whatever the source names: `#include "/etc/shadow"`
 * quotes the file's first tokens in the error that is fed back to the
 * model, and `.incbin "/path"` puts its bytes into the object, whose kernel
 * can copy them into its outputs. So the whole compiler (driver, cc1, as,
 * ld) runs in namespaces of its own (ckb_ns_spawn: no network, PID 1 of its
 * PID namespace, `nobody` on the host) under a root of its own, where the
 * file system is only: /usr and the merged-usr links (or the folders, on a
 * host without merged /usr) read-only, /dev/null, an empty private /tmp, the
 * compile folder's work/ read-write at COMPILE_WORK, a copy of ckbench's
 * include/ read-only and, for an expert's compile only, a copy of
 * expert-kit/ read-only. The old root is detached (pivot_root), so no path
 * leads back to the host's files.
 *
 * The child is `nobody` on the host when ckbench runs as root, and the
 * work folder's parent is private to root: it walks to none of ckbench's
 * folders by path. It starts in the compile folder instead (fchdir before
 * its own mount namespace, see ckb_ns_spawn), which holds everything of
 * ckbench's it may see, copied there: the headers are a few small files.
 */

/* The host's /tmp holds the new root while it is built: it exists on every
 * Linux, and the mount is private to the compile's mount namespace. */
#define COMPILE__STAGE "/tmp"

typedef enum { COMPILE__LINK, COMPILE__BIND, COMPILE__TMPFS } compile__op;

typedef struct {
    compile__op op;
    char path[PATH_MAX];   /* under COMPILE__STAGE */
    char src[PATH_MAX];    /* LINK: the link's text; BIND: a host path, or one
                              relative to the compile folder */
    unsigned long remount; /* BIND: flags of the remount after the bind */
    int file;              /* BIND: the mount point is a file */
} compile__step;

/* Steps that are not in the plan, for compile__step_name. */
enum { COMPILE__S_ENTER = 100, COMPILE__S_PRIVATE, COMPILE__S_ROOT, COMPILE__S_PIVOT,
       COMPILE__S_DETACH, COMPILE__S_RDONLY, COMPILE__S_CHDIR, COMPILE__S_STDIO, COMPILE__S_EXEC };

/* Everything the confined child needs, prepared by the parent: after the
 * clone only async-signal-safe calls run. Freed by the parent. */
typedef struct {
    compile__step step[COMPILE_MAX_STEPS];
    int nsteps;
    int dir_fd;    /* the compile folder (O_PATH), the child's first directory */
    int out_fd;    /* the compiler's stdout and stderr */
    int status_fd; /* a failed step writes {step, errno}; the exec closes it */
    char cc[PATH_MAX];
    char **argv, **envp;
} compile__plan;

static int compile__mkdirs(char *path, int last)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        int rc = mkdir(path, 0755);
        *p = '/';
        if (rc != 0 && errno != EEXIST)
            return -1;
    }
    return last && mkdir(path, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

static __attribute__((noreturn)) void compile__fail(const compile__plan *pl, int step)
{
    int msg[2] = {step, errno};
    if (write(pl->status_fd, msg, sizeof msg) != (ssize_t)sizeof msg)
        _exit(125);
    _exit(126);
}

static void compile__close_others(int keep)
{
    if (syscall(SYS_close_range, 3u, (unsigned)keep - 1, 0) == 0 &&
        syscall(SYS_close_range, (unsigned)keep + 1, ~0u, 0) == 0)
        return;
    for (int fd = 3; fd < 4096; fd++)
        if (fd != keep)
            close(fd);
}

static int compile__child(void *arg)
{
    compile__plan *pl = arg;
    if (fchdir(pl->dir_fd) != 0 || unshare(CLONE_NEWNS) != 0)
        compile__fail(pl, COMPILE__S_ENTER);
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        compile__fail(pl, COMPILE__S_PRIVATE);
    if (mount("tmpfs", COMPILE__STAGE, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m") != 0)
        compile__fail(pl, COMPILE__S_ROOT);
    for (int i = 0; i < pl->nsteps; i++) {
        compile__step *s = &pl->step[i];
        int ok = 0;
        if (s->op == COMPILE__LINK) {
            ok = compile__mkdirs(s->path, 0) == 0 && symlink(s->src, s->path) == 0;
        } else if (s->op == COMPILE__TMPFS) {
            ok = compile__mkdirs(s->path, 1) == 0 &&
                 mount("tmpfs", s->path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                       "mode=1777,size=1g") == 0;
        } else {
            int made;
            if (s->file) {
                int fd = compile__mkdirs(s->path, 0) == 0
                             ? open(s->path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)
                             : -1;
                made = fd >= 0 && close(fd) == 0;
            } else {
                made = compile__mkdirs(s->path, 1) == 0;
            }
            ok = made && mount(s->src, s->path, NULL, MS_BIND | MS_REC, NULL) == 0 &&
                 (!s->remount || mount(NULL, s->path, NULL, s->remount, NULL) == 0);
        }
        if (!ok)
            compile__fail(pl, i);
    }
    if (chdir(COMPILE__STAGE) != 0 || syscall(SYS_pivot_root, ".", ".") != 0)
        compile__fail(pl, COMPILE__S_PIVOT);
    /* The old root sits on top of the new one: detach it, and with it every
     * path to the host's files. */
    if (umount2(".", MNT_DETACH) != 0 || chdir("/") != 0)
        compile__fail(pl, COMPILE__S_DETACH);
    if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) != 0)
        compile__fail(pl, COMPILE__S_RDONLY);
    if (chdir(COMPILE_WORK) != 0)
        compile__fail(pl, COMPILE__S_CHDIR);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(pl->out_fd, 1) < 0 || dup2(pl->out_fd, 2) < 0)
        compile__fail(pl, COMPILE__S_STDIO);
    struct rlimit fsize = {COMPILE_MAX_FILE_BYTES, COMPILE_MAX_FILE_BYTES}, core = {0, 0};
    setrlimit(RLIMIT_FSIZE, &fsize);
    setrlimit(RLIMIT_CORE, &core);
    compile__close_others(pl->status_fd);
    /* ckbench died before our PDEATHSIG was set: its end of the status pipe
     * is closed. Do not outlive it. */
    struct pollfd p = {.fd = pl->status_fd, .events = POLLOUT};
    if (poll(&p, 1, 0) == 1 && (p.revents & POLLERR))
        _exit(125);
    execve(pl->cc, pl->argv, pl->envp);
    compile__fail(pl, COMPILE__S_EXEC);
}

static const char *compile__step_name(const compile__plan *pl, int step)
{
    static char name[PATH_MAX + 32];
    switch (step) {
    case COMPILE__S_ENTER: return "enter the compile folder in a mount namespace of its own";
    case COMPILE__S_PRIVATE: return "make the mounts private";
    case COMPILE__S_ROOT: return "mount the new root's tmpfs";
    case COMPILE__S_PIVOT: return "pivot_root into the new root";
    case COMPILE__S_DETACH: return "detach the old root";
    case COMPILE__S_RDONLY: return "make the new root read-only";
    case COMPILE__S_CHDIR: return "enter " COMPILE_WORK;
    case COMPILE__S_STDIO: return "open /dev/null";
    case COMPILE__S_EXEC: return "exec the compiler";
    default: break;
    }
    if (step < 0 || step >= pl->nsteps)
        return "an unknown step";
    const compile__step *s = &pl->step[step];
    snprintf(name, sizeof name, "%s %s", s->op == COMPILE__LINK ? "link" : "mount",
             s->path + strlen(COMPILE__STAGE));
    return name;
}

/* The flags of the remount that makes a bind of `path` read-only (or not):
 * inside a user namespace the mount's locked flags (nodev, noexec, the
 * atime mode) must stay as they are, or the remount is refused. */
static unsigned long compile__remount_flags(const char *path, int writable, int device)
{
    struct statvfs v;
    unsigned long f = MS_REMOUNT | MS_BIND | MS_NOSUID;
    if (statvfs(path, &v) != 0)
        v.f_flag = ST_RELATIME;
    if (!writable)
        f |= MS_RDONLY;
    if (!device || (v.f_flag & ST_NODEV))
        f |= MS_NODEV;
    if (v.f_flag & ST_NOEXEC)
        f |= MS_NOEXEC;
    if (v.f_flag & ST_NODIRATIME)
        f |= MS_NODIRATIME;
    if (v.f_flag & ST_NOATIME)
        f |= MS_NOATIME;
    else if (v.f_flag & ST_RELATIME)
        f |= MS_RELATIME;
    else
        f |= MS_STRICTATIME;
    return f;
}

static int compile__add(compile__plan *pl, compile__op op, const char *at, char *why, size_t n)
{
    if (pl->nsteps == COMPILE_MAX_STEPS) {
        snprintf(why, n, "too many mounts in the compiler's root");
        return -1;
    }
    compile__step *s = &pl->step[pl->nsteps];
    memset(s, 0, sizeof *s);
    s->op = op;
    if (snprintf(s->path, sizeof s->path, "%s%s", COMPILE__STAGE, at) >= (int)sizeof s->path) {
        snprintf(why, n, "path too long: %.400s", at);
        return -1;
    }
    pl->nsteps++;
    return 0;
}

/* Binds `host` (a folder or a file: a host path, or one relative to the
 * compile folder, `dir`) at `at` in the new root. */
static int compile__bind(compile__plan *pl, const char *dir, const char *host, const char *at,
                         int writable, int device, char *why, size_t n)
{
    char full[PATH_MAX];
    struct stat st;
    if (snprintf(full, sizeof full, "%s%s%s", host[0] == '/' ? "" : dir,
                 host[0] == '/' ? "" : "/", host) >= (int)sizeof full ||
        stat(full, &st) != 0) {
        snprintf(why, n, "cannot find %.400s: %s", full, strerror(errno));
        return -1;
    }
    if (compile__add(pl, COMPILE__BIND, at, why, n) != 0)
        return -1;
    compile__step *s = &pl->step[pl->nsteps - 1];
    snprintf(s->src, sizeof s->src, "%s", host);
    s->file = !S_ISDIR(st.st_mode);
    s->remount = compile__remount_flags(full, writable, device);
    if (writable)
        s->remount |= MS_NOEXEC | MS_NODEV;
    return 0;
}

/* /usr, and /bin /sbin /lib* as this host has them: links on a merged-usr
 * system (made again, with the same text), folders bound otherwise. */
static int compile__add_system(compile__plan *pl, char *why, size_t n)
{
    static const char *const top[] = {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};
    if (compile__bind(pl, NULL, "/usr", "/usr", 0, 0, why, n) != 0)
        return -1;
    for (size_t i = 0; i < sizeof top / sizeof *top; i++) {
        struct stat st;
        if (lstat(top[i], &st) != 0)
            continue;
        if (S_ISLNK(st.st_mode)) {
            if (compile__add(pl, COMPILE__LINK, top[i], why, n) != 0)
                return -1;
            compile__step *s = &pl->step[pl->nsteps - 1];
            ssize_t len = readlink(top[i], s->src, sizeof s->src - 1);
            if (len <= 0) {
                pl->nsteps--;
                continue;
            }
            s->src[len] = '\0';
        } else if (S_ISDIR(st.st_mode) &&
                   compile__bind(pl, NULL, top[i], top[i], 0, 0, why, n) != 0) {
            return -1;
        }
    }
    return compile__bind(pl, NULL, "/dev/null", "/dev/null", 0, 1, why, n);
}

/* Is path inside one of the folders the system binds already show? */
static int compile__in_system(const char *path)
{
    static const char *const top[] = {"/usr/", "/bin/", "/sbin/", "/lib/", "/lib32/", "/lib64/",
                                      "/libx32/"};
    for (size_t i = 0; i < sizeof top / sizeof *top; i++)
        if (strncmp(path, top[i], strlen(top[i])) == 0)
            return 1;
    return 0;
}

/* The compiler's real file: $CKBENCH_CC or cc, looked up in PATH as a
 * shell would, links resolved (the new root has no /etc/alternatives). */
static int compile__find_cc(char *real, char *why, size_t n)
{
    const char *cc = ckb_compiler();
    char cand[PATH_MAX];
    if (strchr(cc, '/')) {
        if (realpath(cc, real))
            return 0;
    } else {
        const char *path = getenv("PATH");
        if (!path || !*path)
            path = "/usr/bin:/bin";
        for (const char *p = path; *p;) {
            size_t len = strcspn(p, ":");
            if (len && (int)len < PATH_MAX - 2 &&
                snprintf(cand, sizeof cand, "%.*s/%s", (int)len, p, cc) < (int)sizeof cand &&
                access(cand, X_OK) == 0 && realpath(cand, real))
                return 0;
            p += len + (p[len] == ':');
        }
    }
    snprintf(why, n, "cannot find the compiler %.400s", cc);
    return -1;
}

/* A compiler installed outside the system folders ($CKBENCH_CC) brings its
 * own prefix: the folder above its bin/, bound read-only at the same path.
 * Whatever else that prefix holds is then visible to a candidate's
 * compile: install such a compiler in a prefix of its own (never $HOME),
 * one that `nobody` can read when ckbench runs as root. */
static int compile__add_cc_prefix(compile__plan *pl, char *why, size_t n)
{
    if (compile__in_system(pl->cc))
        return 0;
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", pl->cc);
    char *prefix = dirname(dirname(buf));
    if (strcmp(prefix, "/") == 0 || strcmp(prefix, ".") == 0) {
        snprintf(why, n, "the compiler %.400s has no installation prefix of its own to show it",
                 pl->cc);
        return -1;
    }
    return compile__bind(pl, NULL, prefix, prefix, 0, 0, why, n);
}

static void compile__plan_free(compile__plan *pl)
{
    if (!pl)
        return;
    if (pl->dir_fd >= 0)
        close(pl->dir_fd);
    free(pl);
}

/* The environment of the compiler: the search path and the user's locale
 * (the message's language), nothing else of ours. */
static void compile__env(char **envp, int max, char *path_env, size_t path_len, const char *cc)
{
    extern char **environ;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", cc);
    int ne = 0;
    snprintf(path_env, path_len, "PATH=/usr/bin:/bin%s%s",
             compile__in_system(cc) ? "" : ":", compile__in_system(cc) ? "" : dirname(dir));
    envp[ne++] = path_env;
    for (char **e = environ; *e && ne < max - 1; e++)
        if (strncmp(*e, "LANG=", 5) == 0 || strncmp(*e, "LC_", 3) == 0)
            envp[ne++] = *e;
    envp[ne] = NULL;
}

/* Runs argv (argv[0] ignored: the compiler's real file runs) confined, in
 * dir, with a wall-clock limit. 0 when the compiler ran (out filled), -1
 * when the confinement or the compiler could not be set up (why). */
static int compile__run(char **argv, const char *dir, int expert_kit, ckb_proc_result *out,
                        char *why, size_t n)
{
    memset(out, 0, sizeof *out);
    int outp[2] = {-1, -1}, stp[2] = {-1, -1}, rc = -1;
    pid_t pid = -1;
    compile__plan *pl = calloc(1, sizeof *pl);
    char path_env[PATH_MAX + 32], *envp[32];
    if (!pl) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    pl->dir_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (pl->dir_fd < 0) {
        snprintf(why, n, "cannot open %.400s: %s", dir, strerror(errno));
        goto done;
    }
    if (compile__find_cc(pl->cc, why, n) != 0 || compile__add_system(pl, why, n) != 0 ||
        compile__add(pl, COMPILE__TMPFS, "/tmp", why, n) != 0 ||
        compile__bind(pl, dir, "./work", COMPILE_WORK, 1, 0, why, n) != 0 ||
        compile__bind(pl, dir, "./include", COMPILE_INCLUDE, 0, 0, why, n) != 0 ||
        (expert_kit && compile__bind(pl, dir, "./expert-kit", COMPILE_KIT, 0, 0, why, n) != 0) ||
        compile__add_cc_prefix(pl, why, n) != 0)
        goto done;
    if (pipe2(outp, O_CLOEXEC) != 0 || pipe2(stp, O_CLOEXEC) != 0) {
        snprintf(why, n, "cannot create a pipe: %s", strerror(errno));
        goto done;
    }
    compile__env(envp, 32, path_env, sizeof path_env, pl->cc);
    argv[0] = pl->cc;
    pl->argv = argv;
    pl->envp = envp;
    pl->out_fd = outp[1];
    pl->status_fd = stp[1];
    double t0 = ckb_now();
    pid = ckb_ns_spawn(compile__child, pl, 0, why, n);
    close(outp[1]);
    close(stp[1]);
    outp[1] = stp[1] = -1;
    if (pid < 0)
        goto done;
    /* EOF on the status pipe: the exec happened. A record: a step failed. */
    int msg[2];
    ssize_t got;
    while ((got = read(stp[0], msg, sizeof msg)) < 0 && errno == EINTR) {
    }
    if (got == (ssize_t)sizeof msg) {
        snprintf(why, n, "cannot confine the compiler %.300s: %.300s: %s", pl->cc,
                 compile__step_name(pl, msg[0]), strerror(msg[1]));
        goto done;
    }
    size_t cap = COMPILE_MAX_OUTPUT;
    out->output = malloc(cap + 1);
    if (!out->output) {
        snprintf(why, n, "out of memory");
        goto done;
    }
    for (;;) {
        double left = COMPILE_TIMEOUT_S - (ckb_now() - t0);
        if (left <= 0) {
            out->timed_out = 1;
            break;
        }
        struct pollfd p = {.fd = outp[0], .events = POLLIN};
        int r = poll(&p, 1, (int)(left * 1000) + 1);
        if (r <= 0)
            continue; /* EINTR, or the deadline, which the check above sees */
        char buf[4096];
        ssize_t k = read(outp[0], buf, sizeof buf);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break; /* EOF: every process of the compile is gone */
        size_t keep = (size_t)k;
        if (out->output_len + keep > cap) {
            keep = cap - out->output_len;
            out->truncated = 1;
        }
        memcpy(out->output + out->output_len, buf, keep);
        out->output_len += keep;
    }
    out->output[out->output_len] = '\0';
    rc = 0;
done:
    if (pid > 0) {
        /* PID 1 of its namespace: whatever the compiler left running goes
         * with it. A compile that ended is only reaped. */
        int status = 0;
        if (rc != 0 || out->timed_out)
            kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        out->wall_s = ckb_now() - t0;
        if (WIFEXITED(status)) {
            out->exited = 1;
            out->exit_code = WEXITSTATUS(status);
        } else if (WIFSIGNALED(status)) {
            out->signal = WTERMSIG(status);
        }
    }
    int fds[] = {outp[0], outp[1], stp[0], stp[1]};
    for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    compile__plan_free(pl);
    if (rc != 0)
        ckb_proc_result_free(out);
    return rc;
}

/* ---- the compile folder ---------------------------------------------- */

static int compile__write(const char *path, const char *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            close(fd);
            return -1;
        }
        off += (size_t)w;
    }
    /* Readable by the compile's user, whatever our umask. */
    if (fchmod(fd, 0644) != 0) {
        close(fd);
        return -1;
    }
    return close(fd);
}

/* Copies folder `from` (its regular files, and its folders down to
 * `levels` deep; links followed) into `to`, which does not exist yet. */
static int compile__copy_tree(const char *from, const char *to, int levels)
{
    if (mkdir(to, 0755) != 0 || chmod(to, 0755) != 0)
        return -1;
    DIR *d = opendir(from);
    if (!d)
        return -1;
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        char src[PATH_MAX], dst[PATH_MAX];
        struct stat st;
        if (e->d_name[0] == '.' ||
            snprintf(src, sizeof src, "%s/%s", from, e->d_name) >= (int)sizeof src ||
            snprintf(dst, sizeof dst, "%s/%s", to, e->d_name) >= (int)sizeof dst ||
            stat(src, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            if (levels > 0)
                rc = compile__copy_tree(src, dst, levels - 1);
            continue;
        }
        if (!S_ISREG(st.st_mode))
            continue;
        size_t len = 0;
        char *data = ckb_read_file(src, &len);
        rc = data ? compile__write(dst, data, len) : -1;
        free(data);
    }
    closedir(d);
    return rc;
}

/* workdir/compile: work/ (all the compiler may write: the source, dims.h,
 * candidate.so), and copies of include/ and, for an expert, expert-kit/.
 * While the compiler runs, work/ belongs to the compile's user (`nobody`
 * when ckbench is root), then to us again. */
static int compile__make_dir(const char *workdir, int expert_kit, char *dir, size_t n)
{
    char work[PATH_MAX], sub[PATH_MAX], from[PATH_MAX];
    struct stat st;
    if (snprintf(dir, n, "%s/compile", workdir) >= (int)n ||
        snprintf(work, sizeof work, "%s/work", dir) >= (int)sizeof work) {
        errno = ENAMETOOLONG;
        return -1;
    }
    const char *paths[] = {dir, work};
    for (int i = 0; i < 2; i++) {
        if (mkdir(paths[i], 0755) != 0 && errno != EEXIST)
            return -1;
        if (lstat(paths[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
            errno = ENOTDIR;
            return -1;
        }
        if (chmod(paths[i], 0755) != 0)
            return -1;
    }
    /* EINVAL: we are root of a user namespace without `nobody`, where the
     * compile's own namespace cannot map it either: ckb_ns_spawn says so. */
    if (geteuid() == 0 && chown(work, 65534, 65534) != 0 && errno != EINVAL)
        return -1;
    /* include/ flat: it holds ckbench.h alone, and ckb_home() could be a
     * prefix such as /usr/local whose include/ is much more. */
    const char *copies[] = {"include", expert_kit ? "expert-kit" : NULL};
    const int levels[] = {0, 8};
    for (int i = 0; i < 2 && copies[i]; i++) {
        if (snprintf(from, sizeof from, "%s/%s", ckb_home(), copies[i]) >= (int)sizeof from ||
            snprintf(sub, sizeof sub, "%s/%s", dir, copies[i]) >= (int)sizeof sub ||
            (ckb_remove_tree(sub) != 0 && errno != ENOENT) ||
            compile__copy_tree(from, sub, levels[i]) != 0)
            return -1;
    }
    return 0;
}

static void compile__own_again(const char *work, const char *so_path)
{
    if (geteuid() != 0)
        return;
    /* Best effort: the work folder above is private to us anyway. */
    int rc = lchown(so_path, 0, 0);
    rc |= chown(work, 0, 0);
    (void)rc;
}

/* The source as the compiler sees it, relative to the compile folder:
 * the file itself when it lies there already, else a copy under its own
 * name (a plain *.c name, so messages name the file the author wrote) or
 * candidate.c. */
static int compile__place_source(const char *src, const char *dir, char *rel, size_t n)
{
    char real_src[PATH_MAX], real_dir[PATH_MAX], dst[PATH_MAX + 64];
    if (!realpath(src, real_src) || !realpath(dir, real_dir))
        return -1;
    size_t dlen = strlen(real_dir);
    if (strncmp(real_src, real_dir, dlen) == 0 && real_src[dlen] == '/') {
        /* never read as an option */
        snprintf(rel, n, "%s%s", real_src[dlen + 1] == '-' ? "./" : "", real_src + dlen + 1);
        return 0;
    }
    const char *base = strrchr(real_src, '/') + 1;
    size_t blen = strlen(base);
    int plain = blen > 2 && blen < 100 && strcmp(base + blen - 2, ".c") == 0 && base[0] != '.' &&
                base[0] != '-';
    for (const char *p = base; plain && *p; p++)
        plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                *p == '_' || *p == '-' || *p == '.';
    snprintf(rel, n, "%s", plain ? base : "candidate.c");
    if (snprintf(dst, sizeof dst, "%s/%s", dir, rel) >= (int)sizeof dst) {
        errno = ENAMETOOLONG;
        return -1;
    }
    size_t len = 0;
    char *data = ckb_read_file(real_src, &len);
    if (!data)
        return -1;
    int rc = compile__write(dst, data, len);
    free(data);
    return rc;
}

int ckb_compile_candidate(const ckb_workload *w, ckb_size s, const char *src, const char *workdir,
                          const char *const *defines, int ndefines, int expert_kit,
                          ckb_compile_result *out)
{
    memset(out, 0, sizeof *out);
    if (ndefines > COMPILE_MAX_DEFINES) {
        snprintf(out->error, sizeof out->error, "more than %d defines", COMPILE_MAX_DEFINES);
        return -1;
    }
    char dir[PATH_MAX], work[PATH_MAX + 8], dims_path[PATH_MAX + 16], rel[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/include/ckbench.h", ckb_home());
    if (access(dir, R_OK) != 0) {
        snprintf(out->error, sizeof out->error,
                 "no ckbench.h at %.400s: set CKBENCH_HOME to ckbench's folder", dir);
        return -1;
    }
    if (compile__make_dir(workdir, expert_kit, dir, sizeof dir) != 0) {
        snprintf(out->error, sizeof out->error, "cannot make the compile folder in %.400s: %s",
                 workdir, strerror(errno));
        return -1;
    }
    snprintf(work, sizeof work, "%s/work", dir);
    snprintf(dims_path, sizeof dims_path, "%s/dims.h", work);
    if (snprintf(out->so_path, sizeof out->so_path, "%s/candidate.so", work) >=
        (int)sizeof out->so_path) {
        snprintf(out->error, sizeof out->error, "the work folder's path is too long");
        return -1;
    }
    char *header = ckb_workload_candidate_header(w, s);
    int rc = compile__write(dims_path, header, strlen(header));
    free(header);
    if (rc != 0 || compile__place_source(src, work, rel, sizeof rel) != 0) {
        snprintf(out->error, sizeof out->error, "cannot write the compile folder %.400s: %s", work,
                 strerror(errno));
        return -1;
    }

    char def_buf[COMPILE_MAX_DEFINES][128];
    char *argv[64];
    int n = 0;
    argv[n++] = NULL; /* the compiler's real file, found by compile__run */
    argv[n++] = "-O3";
    /* -march=native, or the level CKBENCH_ISA lowers it to (machine/isa.h) */
    const char *march[CKB_ISA_MAX_FLAGS];
    int nmarch = ckb_isa_march(ckb_isa_level(), march);
    for (int i = 0; i < nmarch; i++)
        argv[n++] = (char *)march[i];
    argv[n++] = "-fopenmp";
    argv[n++] = "-shared";
    argv[n++] = "-fPIC";
    argv[n++] = "-std=gnu11";
    /* A call to an intrinsic the compiler does not know must not become an
     * implicit int function that fails at run time: make it an error. */
    argv[n++] = "-Werror=implicit-function-declaration";
    argv[n++] = "-Wl,--no-undefined";
    argv[n++] = "-Wl,-z,now";
    argv[n++] = "-I" COMPILE_INCLUDE;
    if (expert_kit)
        argv[n++] = "-I" COMPILE_KIT;
    /* Paths relative to the compile folder, the compiler's working
     * directory: messages name the files as the author knows them. */
    argv[n++] = "-include";
    argv[n++] = "dims.h";
    for (int i = 0; i < ndefines; i++) {
        snprintf(def_buf[i], sizeof def_buf[i], "-D%s", defines[i]);
        argv[n++] = def_buf[i];
    }
    argv[n++] = rel;
    argv[n++] = "-o";
    argv[n++] = "candidate.so";
    argv[n++] = "-lm";
    argv[n++] = "-latomic";
    argv[n] = NULL;

    ckb_proc_result r;
    rc = compile__run(argv, dir, expert_kit, &r, out->error, sizeof out->error);
    compile__own_again(work, out->so_path);
    if (rc != 0)
        return -1;
    /* The confinement's own exits (sandbox.c, compile__child) with nothing
     * said: the compiler never started. */
    if (r.exited && r.exit_code >= 120 && r.exit_code <= 127 && r.output_len == 0) {
        snprintf(out->error, sizeof out->error,
                 "the compiler's sandbox ended before the compiler started (exit %d)",
                 r.exit_code);
        ckb_proc_result_free(&r);
        return -1;
    }
    out->seconds = r.wall_s;
    out->message = compile__trim(r.output, workdir);
    if (r.timed_out) {
        out->kind = "timeout";
    } else if (!r.exited || r.exit_code != 0) {
        out->kind = compile__classify(r.output);
    } else {
        out->ok = 1;
    }
    ckb_proc_result_free(&r);
    return 0;
}

void ckb_compile_result_free(ckb_compile_result *r)
{
    free(r->message);
    r->message = NULL;
}
