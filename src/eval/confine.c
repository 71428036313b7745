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
 * host without merged /usr) read-only, /dev/null, the compile's tmpfs at
 * CKB_CONFINED_WORK (its /tmp is a folder of it), a copy of ckbench's
 * include/ read-only and, for an expert's compile only, a copy of
 * expert-kit/ read-only. The old root is detached (pivot_root), so no path
 * leads back to the host's files.
 *
 * The child is `nobody` on the host when ckbench runs as root, and the
 * work folder's parent is private to root: it walks to none of ckbench's
 * folders by path. It starts in the compile folder instead (fchdir before
 * its own mount namespace, see ckb_ns_spawn), which holds everything of
 * ckbench's it may see, copied there: the headers are a few small files.
 *
 * Resources (the limits in confine.h). A compile's memory and CPU are
 * bounded per process by rlimits, which fork and exec keep, so cc1, as and
 * ld each get their own. Its disk: the compiler writes only into one tmpfs
 * of CKB_CONFINED_DISK_BYTES, its work folder, whose folder .tmp is its
 * /tmp and $TMPDIR; the assembler file and the object file that gcc puts
 * there can be GBs for a huge initialiser, and a tmpfs's size bounds all of
 * its files together, which RLIMIT_FSIZE (one file) cannot. The host's
 * work folder is not in the root at all: the compile's first process (PID
 * 1 of its namespace, a copy of ckbench that never execs) copies the source
 * and dims.h into the tmpfs, runs the compiler as its child, and copies the
 * object back out, so the host's disk gets one file no larger than the
 * tmpfs. The tmpfs goes when the namespace does. Its pages are memory, not
 * disk: what a compile can take of the host's memory is the tmpfs plus two
 * processes' limits (gcc runs cc1 and as one after the other; collect2
 * waits for ld).
 */

#include "eval/confine.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
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

#include "core/alloc.h"
#include "core/proc.h"
#include "eval/sandbox.h"

enum { COMPILE_MAX_STEPS = 24, COMPILE_MAX_INPUTS = 4, COMPILE_MAX_INODES = 1024 };

/* The host's /tmp holds the new root while it is built: it exists on every
 * Linux, and the mount is private to the compile's mount namespace. */
#define COMPILE__STAGE "/tmp"
/* The compile's /tmp and $TMPDIR: a folder of its tmpfs. */
#define COMPILE__TMP CKB_CONFINED_WORK "/.tmp"

typedef enum { COMPILE__LINK, COMPILE__BIND, COMPILE__SCRATCH, COMPILE__DIR } compile__op;

typedef struct {
    compile__op op;
    char path[PATH_MAX];   /* under COMPILE__STAGE */
    char src[PATH_MAX];    /* LINK: the link's text; BIND: a host path, or one
                              relative to the compile folder; SCRATCH: the
                              tmpfs's mount options */
    unsigned long remount; /* BIND: flags of the remount after the bind */
    int file;              /* BIND: the mount point is a file */
} compile__step;

/* Steps that are not in the plan, for compile__step_name; COMPILE__S_DONE
 * is no failure: its record carries the compiler's wait status. */
enum { COMPILE__S_ENTER = 100, COMPILE__S_PRIVATE, COMPILE__S_ROOT, COMPILE__S_PIVOT,
       COMPILE__S_DETACH, COMPILE__S_RDONLY, COMPILE__S_CHDIR, COMPILE__S_COPY_IN,
       COMPILE__S_FORK, COMPILE__S_STDIO, COMPILE__S_EXEC, COMPILE__S_COPY_OUT, COMPILE__S_DONE };

/* Everything the confined child needs, prepared by the parent: after the
 * clone only async-signal-safe calls run. Freed by the parent. */
typedef struct {
    compile__step step[COMPILE_MAX_STEPS];
    int nsteps;
    int dir_fd;    /* the compile folder (O_PATH), the child's first directory */
    int work_fd;   /* its work/ (O_PATH): the inputs' source, the output's target */
    int out_fd;    /* the compiler's stdout and stderr */
    int status_fd; /* records {step, errno} of a failed step, then {COMPILE__S_DONE,
                      the compiler's wait status} */
    char cc[PATH_MAX];
    char **argv, **envp;
    const char *inputs[COMPILE_MAX_INPUTS + 1]; /* relative to work/, NULL-ended */
    const char *output;                         /* the same */
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

static void compile__record(const compile__plan *pl, int step, int value)
{
    int msg[2] = {step, value};
    /* 8 bytes into an empty pipe: written whole, or the reader is gone. */
    if (write(pl->status_fd, msg, sizeof msg) != (ssize_t)sizeof msg)
        _exit(125);
}

static __attribute__((noreturn)) void compile__fail(const compile__plan *pl, int step)
{
    compile__record(pl, step, errno);
    _exit(126);
}

/* Closes every descriptor from 3 up but the nkeep (at most 3) in keep. */
static void compile__close_except(const int *keep_in, int nkeep)
{
    int keep[3];
    for (int i = 0; i < nkeep; i++) { /* ascending, for the ranges between them */
        int k = i;
        for (; k > 0 && keep[k - 1] > keep_in[i]; k--)
            keep[k] = keep[k - 1];
        keep[k] = keep_in[i];
    }
    unsigned lo = 3;
    int ok = 1;
    for (int i = 0; i < nkeep && ok; i++) {
        if (keep[i] < (int)lo)
            continue;
        if (keep[i] > (int)lo)
            ok = syscall(SYS_close_range, lo, (unsigned)keep[i] - 1, 0) == 0;
        lo = (unsigned)keep[i] + 1;
    }
    if (ok && syscall(SYS_close_range, lo, ~0u, 0) == 0)
        return;
    for (int fd = 3; fd < 4096; fd++) {
        int kept = 0;
        for (int i = 0; i < nkeep; i++)
            kept |= keep[i] == fd;
        if (!kept)
            close(fd);
    }
}

/* Copies file `from` (relative to from_dir) to `to` (relative to to_dir):
 * at most max bytes, else EFBIG. The copy is left behind on failure: it
 * lies in a tmpfs that goes with the compile, or is the object, which
 * ckb_compile_candidate removes. */
static int compile__copy(int from_dir, const char *from, int to_dir, const char *to, mode_t mode,
                         unsigned long long max)
{
    int in = openat(from_dir, from, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (in < 0)
        return -1;
    int out = openat(to_dir, to, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
    int rc = out < 0 ? -1 : 0;
    unsigned long long total = 0;
    char buf[16384];
    while (rc == 0) {
        ssize_t got = read(in, buf, sizeof buf);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            rc = got < 0 ? -1 : 0;
            break;
        }
        if ((total += (unsigned long long)got) > max) {
            errno = EFBIG;
            rc = -1;
        }
        for (ssize_t off = 0; rc == 0 && off < got;) {
            ssize_t w = write(out, buf + off, (size_t)(got - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                rc = -1;
            else
                off += w;
        }
    }
    /* Whatever our umask: readable by the object's later readers. */
    if (rc == 0 && fchmod(out, mode) != 0)
        rc = -1;
    int e = errno;
    close(in);
    if (out >= 0 && close(out) != 0 && rc == 0)
        rc = -1, e = errno;
    errno = e;
    return rc;
}

/* The inputs, from the host's work folder into the tmpfs (the working
 * directory), under the same relative names. */
static void compile__copy_in(const compile__plan *pl)
{
    char name[PATH_MAX];
    for (int i = 0; pl->inputs[i]; i++) {
        size_t len = strlen(pl->inputs[i]);
        if (len >= sizeof name) {
            errno = ENAMETOOLONG;
            compile__fail(pl, COMPILE__S_COPY_IN);
        }
        memcpy(name, pl->inputs[i], len + 1);
        if (compile__mkdirs(name, 0) != 0 ||
            compile__copy(pl->work_fd, name, AT_FDCWD, name, 0644, CKB_CONFINED_DISK_BYTES) != 0)
            compile__fail(pl, COMPILE__S_COPY_IN);
    }
}

/* Lowers a limit to `soft` (and its hard limit to `hard`), never raising
 * one that is lower already. */
static void compile__cap(int res, rlim_t soft, rlim_t hard)
{
    struct rlimit r;
    if (getrlimit(res, &r) != 0)
        return;
    if (r.rlim_max != RLIM_INFINITY && r.rlim_max < hard)
        hard = r.rlim_max;
    if (soft > hard)
        soft = hard;
    r.rlim_cur = soft;
    r.rlim_max = hard;
    setrlimit(res, &r);
}

/* The compiler's own process: its limits, its descriptors, then exec. */
static __attribute__((noreturn)) void compile__exec_cc(const compile__plan *pl)
{
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(pl->out_fd, 1) < 0 || dup2(pl->out_fd, 2) < 0)
        compile__fail(pl, COMPILE__S_STDIO);
    compile__cap(RLIMIT_AS, CKB_CONFINED_MEM_BYTES, CKB_CONFINED_MEM_BYTES);
    /* SIGXCPU at the limit, SIGKILL 5 s later for a process that catches it. */
    compile__cap(RLIMIT_CPU, CKB_CONFINED_CPU_S, CKB_CONFINED_CPU_S + 5);
    compile__cap(RLIMIT_FSIZE, CKB_CONFINED_DISK_BYTES, CKB_CONFINED_DISK_BYTES);
    compile__cap(RLIMIT_NPROC, CKB_CONFINED_PROCS, CKB_CONFINED_PROCS);
    compile__cap(RLIMIT_CORE, 0, 0);
    /* The limits' signals must end the process, whatever the thread that
     * started the compile had blocked. */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    int keep[] = {pl->status_fd};
    compile__close_except(keep, 1);
    execve(pl->cc, pl->argv, pl->envp);
    compile__fail(pl, COMPILE__S_EXEC);
}

/* Waits for the compiler and reaps whatever it orphaned meanwhile (we are
 * PID 1 of the namespace). Its wait status. */
static int compile__wait_cc(pid_t cc)
{
    for (;;) {
        int st;
        pid_t w = waitpid(-1, &st, 0);
        if (w == cc)
            return st;
        if (w < 0 && errno != EINTR)
            return W_EXITCODE(127, 0); /* cannot happen: the compiler is our child */
    }
}

/* Mounts the plan's steps under the stage, pivots into it and enters the
 * tmpfs at CKB_CONFINED_WORK. */
static void compile__enter_root(compile__plan *pl)
{
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
        } else if (s->op == COMPILE__SCRATCH) {
            ok = compile__mkdirs(s->path, 1) == 0 &&
                 mount("tmpfs", s->path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, s->src) == 0;
        } else if (s->op == COMPILE__DIR) {
            ok = compile__mkdirs(s->path, 1) == 0;
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
}

/* PID 1 of the compile's namespaces: builds the root, fills the tmpfs,
 * runs the compiler as its child, copies the object out and says how the
 * compiler ended. It never execs, so it is a copy of ckbench: only
 * async-signal-safe calls. */
static int compile__child(void *arg)
{
    compile__plan *pl = arg;
    compile__enter_root(pl);
    compile__copy_in(pl);
    /* Only the pipes and the host's work folder stay open: a descriptor of
     * ckbench's held here for the whole compile would hold its reader. */
    int keep[3] = {pl->out_fd, pl->status_fd, pl->work_fd};
    compile__close_except(keep, 3);
    /* ckbench died before our PDEATHSIG was set: its end of the status pipe
     * is closed. Do not outlive it. */
    struct pollfd p = {.fd = pl->status_fd, .events = POLLOUT};
    if (poll(&p, 1, 0) == 1 && (p.revents & POLLERR))
        _exit(125);
    /* fork(3) could wait forever on a lock another thread of ckbench held
     * at the clone: the system call itself. */
    long cc = syscall(SYS_clone, (unsigned long)SIGCHLD, 0UL, 0UL, 0UL, 0UL);
    if (cc < 0)
        compile__fail(pl, COMPILE__S_FORK);
    if (cc == 0)
        compile__exec_cc(pl);
    /* The output pipe's end of EOF: only the compiler's processes hold it. */
    close(pl->out_fd);
    int status = compile__wait_cc((pid_t)cc);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
        compile__copy(AT_FDCWD, pl->output, pl->work_fd, pl->output, 0755,
                      CKB_CONFINED_DISK_BYTES) != 0)
        compile__fail(pl, COMPILE__S_COPY_OUT);
    compile__record(pl, COMPILE__S_DONE, status);
    return 0;
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
    case COMPILE__S_COPY_IN: return "copy the source into " CKB_CONFINED_WORK;
    case COMPILE__S_FORK: return "start the compiler's process";
    case COMPILE__S_STDIO: return "open /dev/null";
    case COMPILE__S_EXEC: return "exec the compiler";
    case COMPILE__S_COPY_OUT: return "copy the object out of " CKB_CONFINED_WORK;
    default: break;
    }
    if (step < 0 || step >= pl->nsteps)
        return "an unknown step";
    const compile__step *s = &pl->step[step];
    const char *verb[] = {[COMPILE__LINK] = "link", [COMPILE__BIND] = "mount",
                          [COMPILE__SCRATCH] = "mount the tmpfs", [COMPILE__DIR] = "make"};
    snprintf(name, sizeof name, "%s %s", verb[s->op], s->path + strlen(COMPILE__STAGE));
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

/* The real file of the compiler cc (ckb_compiler(): $CKBENCH_CC or cc),
 * looked up in PATH as a shell would, links resolved (the new root has no
 * /etc/alternatives). */
static int compile__find_cc(const char *cc, char *real, char *why, size_t n)
{
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
    if (pl->work_fd >= 0)
        close(pl->work_fd);
    free(pl);
}

/* The environment of the compiler: the search path, $TMPDIR (its /tmp,
 * named, so that no tool looks elsewhere: gcc, as and ld all take the
 * first of $TMPDIR, $TMP, $TEMP, /var/tmp, /usr/tmp, /tmp that is
 * writable) and the user's locale (the message's language), nothing else
 * of ours. */
static void compile__env(char **envp, int max, char *path_env, size_t path_len, const char *cc)
{
    extern char **environ;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", cc);
    int ne = 0;
    snprintf(path_env, path_len, "PATH=/usr/bin:/bin%s%s",
             compile__in_system(cc) ? "" : ":", compile__in_system(cc) ? "" : dirname(dir));
    envp[ne++] = path_env;
    envp[ne++] = "TMPDIR=/tmp";
    for (char **e = environ; *e && ne < max - 1; e++)
        if (strncmp(*e, "LANG=", 5) == 0 || strncmp(*e, "LC_", 3) == 0)
            envp[ne++] = *e;
    envp[ne] = NULL;
}

/* The compile's tmpfs at CKB_CONFINED_WORK, of CKB_CONFINED_DISK_BYTES
 * (and few inodes: each costs kernel memory outside the size), and its
 * folder COMPILE__TMP bound at /tmp: one budget for all it writes. */
static int compile__add_scratch(compile__plan *pl, char *why, size_t n)
{
    if (compile__add(pl, COMPILE__SCRATCH, CKB_CONFINED_WORK, why, n) != 0)
        return -1;
    snprintf(pl->step[pl->nsteps - 1].src, sizeof pl->step[0].src,
             "size=%llu,nr_inodes=%d,mode=0755", (unsigned long long)CKB_CONFINED_DISK_BYTES,
             COMPILE_MAX_INODES);
    if (compile__add(pl, COMPILE__DIR, COMPILE__TMP, why, n) != 0 ||
        compile__add(pl, COMPILE__BIND, "/tmp", why, n) != 0)
        return -1;
    /* The bind keeps the tmpfs's own flags (nosuid, nodev, noexec). */
    snprintf(pl->step[pl->nsteps - 1].src, sizeof pl->step[0].src, "%s", COMPILE__STAGE COMPILE__TMP);
    return 0;
}

static int compile__add_files(compile__plan *pl, const char *dir, const char *const *inputs,
                              const char *output, char *why, size_t n)
{
    int k = 0;
    for (; inputs && inputs[k]; k++) {
        if (k == COMPILE_MAX_INPUTS) {
            snprintf(why, n, "more than %d inputs to the compile", COMPILE_MAX_INPUTS);
            return -1;
        }
        pl->inputs[k] = inputs[k];
    }
    pl->inputs[k] = NULL;
    pl->output = output;
    pl->work_fd = openat(pl->dir_fd, "work", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (pl->work_fd < 0) {
        snprintf(why, n, "cannot open %.400s/work: %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}

/* The first record of the status pipe (all its writers are gone): 1 and
 * msg filled, or 0 when there is none. */
static int compile__read_record(int fd, int msg[2])
{
    ssize_t got;
    while ((got = read(fd, msg, 2 * sizeof *msg)) < 0 && errno == EINTR) {
    }
    return got == (ssize_t)(2 * sizeof *msg);
}

/* How the compile ended, once PID 1 of its namespace is reaped (status):
 * the compiler's status from its record, or PID 1's own when it left none
 * (killed by us at a limit, or dead before the compiler started). -1 when
 * a step failed (why). */
static int compile__outcome(const compile__plan *pl, int stp, int status, ckb_confined_result *out,
                            char *why, size_t n)
{
    int msg[2];
    if (!compile__read_record(stp, msg)) {
        ckb_proc_set_status(&out->proc, status);
        return 0;
    }
    if (msg[0] == COMPILE__S_DONE) {
        ckb_proc_set_status(&out->proc, msg[1]);
        return 0;
    }
    /* The source alone does not fit in the tmpfs: the source's doing, a
     * compile that failed at the disk limit like any other. */
    if (msg[0] == COMPILE__S_COPY_IN && (msg[1] == ENOSPC || msg[1] == EFBIG)) {
        snprintf(out->proc.output, CKB_CONFINED_OUTPUT_BYTES + 1,
                 "ckbench: cannot copy the source into the compile's folder: %s\n",
                 strerror(msg[1]));
        out->proc.output_len = strlen(out->proc.output);
        out->proc.exited = 1;
        out->proc.exit_code = 1;
        return 0;
    }
    snprintf(why, n, "cannot confine the compiler %.300s: %.300s: %s", pl->cc,
             compile__step_name(pl, msg[0]), strerror(msg[1]));
    return -1;
}

int ckb_confined_cc(char **argv, const char *dir, int expert_kit, const char *const *inputs,
                    const char *output, ckb_confined_result *out, char *why, size_t n)
{
    memset(out, 0, sizeof *out);
    int outp[2] = {-1, -1}, stp[2] = {-1, -1}, rc = -1;
    pid_t pid = -1;
    compile__plan *pl = ckb_xcalloc(1, sizeof *pl);
    char path_env[PATH_MAX + 32], *envp[32];
    pl->work_fd = -1;
    pl->dir_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (pl->dir_fd < 0) {
        snprintf(why, n, "cannot open %.400s: %s", dir, strerror(errno));
        goto done;
    }
    if (compile__add_files(pl, dir, inputs, output, why, n) != 0 ||
        compile__find_cc(argv[0], pl->cc, why, n) != 0 || compile__add_system(pl, why, n) != 0 ||
        compile__add_scratch(pl, why, n) != 0 ||
        compile__bind(pl, dir, "./include", CKB_CONFINED_INCLUDE, 0, 0, why, n) != 0 ||
        (expert_kit &&
         compile__bind(pl, dir, "./expert-kit", CKB_CONFINED_KIT, 0, 0, why, n) != 0) ||
        compile__add_cc_prefix(pl, why, n) != 0)
        goto done;
    /* The status pipe is read once its writers are gone: never blocking. */
    if (pipe2(outp, O_CLOEXEC) != 0 || pipe2(stp, O_CLOEXEC | O_NONBLOCK) != 0) {
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
    /* Until EOF (every process of the compile is gone), the time limit, or
     * the output limit. A step that fails before the compiler runs ends
     * PID 1, and with it the pipe. */
    if (ckb_proc_collect(outp[0], t0, CKB_CONFINED_TIMEOUT_S, CKB_CONFINED_OUTPUT_BYTES, 1,
                         &out->proc) != 0) {
        snprintf(why, n, "out of memory");
        goto done;
    }
    out->output_limit = out->proc.truncated;
    rc = 0;
done:
    if (pid > 0) {
        /* PID 1 of its namespace: whatever the compiler left running goes
         * with it. A compile that ended is only reaped. Its rusage is that
         * of every process of the compile: each was reaped inside. */
        int status = 0;
        struct rusage ru = {0};
        if (rc != 0 || out->proc.timed_out || out->output_limit)
            kill(pid, SIGKILL);
        while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
        }
        out->proc.wall_s = ckb_now() - t0;
        out->cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
                     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
        if (rc == 0)
            rc = compile__outcome(pl, stp[0], status, out, why, n);
    }
    int fds[] = {outp[0], outp[1], stp[0], stp[1]};
    for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    compile__plan_free(pl);
    if (rc != 0)
        ckb_proc_result_free(&out->proc);
    return rc;
}
