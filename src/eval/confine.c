/*
 * confine.c — the compiler's confinement (eval/confine.h).
 *
 * The compiler reads whatever the source names: `#include "/etc/shadow"`
 * quotes the file's first tokens in the error that is fed back to the
 * model, and `.incbin "/path"` puts its bytes into the object, whose kernel
 * can copy them into its outputs. So the whole compiler (driver, cc1, as,
 * ld) runs in namespaces of its own (ckb_ns_spawn: no network, PID 1 of its
 * PID namespace, `nobody` on the host) under a root of its own, where the
 * file system is only: /usr and the merged-usr links (or the folders, on a
 * host without merged /usr) read-only, /dev/null, an empty private /tmp, the
 * compile folder's work/ read-write at CKB_CONFINED_WORK, a copy of ckbench's
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

#include "eval/confine.h"

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

#include "core/proc.h"
#include "eval/compile.h"
#include "eval/sandbox.h"

enum { CONFINE_MAX_OUTPUT = 1 << 20, COMPILE_MAX_STEPS = 24 };
/* The confined compile's own /tmp and every file it writes are capped. */
#define COMPILE_MAX_FILE_BYTES (1ull << 30)


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
    if (chdir(CKB_CONFINED_WORK) != 0)
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
    case COMPILE__S_CHDIR: return "enter " CKB_CONFINED_WORK;
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

int ckb_confined_cc(char **argv, const char *dir, int expert_kit, ckb_proc_result *out,
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
        compile__bind(pl, dir, "./work", CKB_CONFINED_WORK, 1, 0, why, n) != 0 ||
        compile__bind(pl, dir, "./include", CKB_CONFINED_INCLUDE, 0, 0, why, n) != 0 ||
        (expert_kit &&
         compile__bind(pl, dir, "./expert-kit", CKB_CONFINED_KIT, 0, 0, why, n) != 0) ||
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
    /* until EOF: every process of the compile is gone */
    if (ckb_proc_collect(outp[0], t0, CKB_CONFINED_TIMEOUT_S, CONFINE_MAX_OUTPUT, out) != 0) {
        snprintf(why, n, "out of memory");
        goto done;
    }
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
        ckb_proc_set_status(out, status);
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

