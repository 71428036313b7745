/* What ckbench started ends with it (see cleanup.h). */
#include "core/cleanup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/say.h"

#define CLEANUP_SLOTS 128
#define CLEANUP_PATH 512

enum { SLOT_FREE = 0, SLOT_BUSY, SLOT_READY };

static pid_t cleanup__groups[CLEANUP_SLOTS];
static struct {
    int state;
    char path[CLEANUP_PATH];
} cleanup__dirs[CLEANUP_SLOTS];
static pid_t cleanup__owner;
static pthread_once_t cleanup__once = PTHREAD_ONCE_INIT;
static const int cleanup__signals[] = {SIGINT, SIGTERM, SIGHUP};
/* The handler first stops every other thread of ours with this signal: a
 * thread that keeps running could make a work folder, or a file in one,
 * after the handler removed them. */
static int cleanup__freeze_sig;
static int cleanup__dying;  /* set by the one handler that cleans up */
static int cleanup__frozen; /* threads stopped so far */
#define CLEANUP_MAX_THREADS 1024

/* One record of getdents64 (linux_dirent64): readdir is not
 * async-signal-safe, the raw system call is. */
typedef struct {
    unsigned long long ino;
    long long off;
    unsigned short reclen;
    unsigned char type;
    char name[];
} cleanup__dirent;

/* rm -rf with async-signal-safe calls only (openat, getdents64, unlinkat). */
static void cleanup__rm_at(int dirfd, const char *name, int depth)
{
    if (unlinkat(dirfd, name, 0) == 0 || depth > 12)
        return;
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    char buf[4096];
    /* Entries go while we read: a few passes from the start, until one
     * finds nothing left to remove. */
    for (int pass = 0, removed = 1; pass < 4 && removed; pass++) {
        removed = 0;
        lseek(fd, 0, SEEK_SET);
        long n;
        while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
            for (long off = 0; off < n;) {
                cleanup__dirent *d = (void *)(buf + off);
                off += d->reclen;
                if (strcmp(d->name, ".") && strcmp(d->name, "..")) {
                    cleanup__rm_at(fd, d->name, depth + 1);
                    removed = 1;
                }
            }
    }
    close(fd);
    unlinkat(dirfd, name, AT_REMOVEDIR);
}

/* Kills every child of every thread of ours, and its group where it leads
 * one (the evaluator's sandbox, which is not listed): the children are in
 * /proc/self/task/<tid>/children. Async-signal-safe calls only. */
static void cleanup__kill_children(void)
{
    int dir = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return;
    char buf[4096], text[4096];
    long n;
    while ((n = syscall(SYS_getdents64, dir, buf, sizeof buf)) > 0)
        for (long off = 0; off < n;) {
            cleanup__dirent *d = (void *)(buf + off);
            off += d->reclen;
            if (d->name[0] < '0' || d->name[0] > '9')
                continue;
            char path[64] = "";
            size_t len = strlen(d->name);
            if (len > 20)
                continue;
            memcpy(path, d->name, len);
            memcpy(path + len, "/children", 10);
            int fd = openat(dir, path, O_RDONLY | O_CLOEXEC);
            if (fd < 0)
                continue;
            ssize_t got = read(fd, text, sizeof text - 1);
            close(fd);
            for (ssize_t i = 0; i < got;) {
                long pid = 0;
                while (i < got && text[i] >= '0' && text[i] <= '9')
                    pid = pid * 10 + (text[i++] - '0');
                if (pid > 0) {
                    kill(-(pid_t)pid, SIGKILL);
                    kill((pid_t)pid, SIGKILL);
                }
                while (i < got && (text[i] < '0' || text[i] > '9'))
                    i++;
            }
        }
    close(dir);
}

/* A stopped thread stays here until the process dies. */
static void cleanup__on_freeze(int sig)
{
    (void)sig;
    if (getpid() != cleanup__owner)
        return;
    __atomic_add_fetch(&cleanup__frozen, 1, __ATOMIC_SEQ_CST);
    for (;;)
        pause(); /* every signal is blocked here (sa_mask) */
}

/* Sends the freeze signal to every other thread, and to those a thread
 * made meanwhile, then waits (at most ~0.5 s: a thread may be leaving, or
 * hold the signal blocked for a moment) until all of them have stopped. */
static void cleanup__freeze_others(void)
{
    static pid_t sent[CLEANUP_MAX_THREADS];
    int nsent = 0;
    pid_t self = (pid_t)syscall(SYS_gettid);
    char buf[4096];
    for (int round = 0; round < 50; round++) {
        int fresh = 0;
        int dir = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0)
            return;
        long n;
        while ((n = syscall(SYS_getdents64, dir, buf, sizeof buf)) > 0)
            for (long off = 0; off < n;) {
                cleanup__dirent *d = (void *)(buf + off);
                off += d->reclen;
                pid_t tid = 0;
                for (const char *c = d->name; *c >= '0' && *c <= '9'; c++)
                    tid = tid * 10 + (*c - '0');
                int known = tid <= 0 || tid == self;
                for (int i = 0; i < nsent && !known; i++)
                    known = sent[i] == tid;
                if (known || nsent == CLEANUP_MAX_THREADS)
                    continue;
                if (syscall(SYS_tgkill, cleanup__owner, tid, cleanup__freeze_sig) == 0)
                    sent[nsent++] = tid;
                fresh = 1;
            }
        close(dir);
        if (!fresh && __atomic_load_n(&cleanup__frozen, __ATOMIC_SEQ_CST) >= nsent)
            return;
        struct timespec pause = {0, 10 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
}

static void cleanup__on_signal(int sig)
{
    int saved = errno;
    if (getpid() == cleanup__owner) {
        /* Two signals in two threads: the first cleans up, the second stops
         * like any other thread. */
        if (__atomic_exchange_n(&cleanup__dying, 1, __ATOMIC_SEQ_CST))
            cleanup__on_freeze(sig);
        cleanup__freeze_others();
        cleanup__kill_children();
        for (int i = 0; i < CLEANUP_SLOTS; i++) {
            pid_t g = __atomic_load_n(&cleanup__groups[i], __ATOMIC_ACQUIRE);
            if (g > 0)
                kill(-g, SIGKILL);
        }
        /* SIGKILL is not instant: a child killed above may still write a
         * file into a folder being removed. Again until none is left (at
         * most ~1 s). */
        for (int attempt = 0; attempt < 100; attempt++) {
            int left = 0;
            for (int i = 0; i < CLEANUP_SLOTS; i++)
                if (__atomic_load_n(&cleanup__dirs[i].state, __ATOMIC_ACQUIRE) == SLOT_READY) {
                    cleanup__rm_at(AT_FDCWD, cleanup__dirs[i].path, 0);
                    left += faccessat(AT_FDCWD, cleanup__dirs[i].path, F_OK,
                                      AT_SYMLINK_NOFOLLOW) == 0;
                }
            if (!left)
                break;
            struct timespec pause = {0, 10 * 1000 * 1000};
            nanosleep(&pause, NULL);
        }
    }
    /* Die of the signal, as if we had no handler. */
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigaction(sig, &dfl, NULL);
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, sig);
    sigprocmask(SIG_UNBLOCK, &s, NULL);
    raise(sig);
    errno = saved;
}

static void cleanup__install(void)
{
    cleanup__owner = getpid();
    cleanup__freeze_sig = SIGRTMIN + 2;
    struct sigaction freeze = {.sa_handler = cleanup__on_freeze};
    sigfillset(&freeze.sa_mask);
    sigaction(cleanup__freeze_sig, &freeze, NULL);
    struct sigaction sa = {.sa_handler = cleanup__on_signal};
    sigfillset(&sa.sa_mask); /* one handler at a time, nothing in between */
    for (size_t i = 0; i < sizeof cleanup__signals / sizeof *cleanup__signals; i++) {
        struct sigaction old;
        /* A signal the caller ignores (nohup) stays ignored. */
        if (sigaction(cleanup__signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(cleanup__signals[i], &sa, NULL);
    }
}

void ckb_cleanup_init(void) { pthread_once(&cleanup__once, cleanup__install); }

void ckb_cleanup_sigset(sigset_t *set)
{
    ckb_cleanup_init();
    sigemptyset(set);
    for (size_t i = 0; i < sizeof cleanup__signals / sizeof *cleanup__signals; i++)
        sigaddset(set, cleanup__signals[i]);
    sigaddset(set, cleanup__freeze_sig);
}

int ckb_cleanup_add_group(pid_t pgid)
{
    ckb_cleanup_init();
    for (int i = 0; i < CLEANUP_SLOTS; i++) {
        pid_t zero = 0;
        if (__atomic_compare_exchange_n(&cleanup__groups[i], &zero, pgid, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED))
            return 0;
    }
    return -1;
}

void ckb_cleanup_forget_group(pid_t pgid)
{
    for (int i = 0; i < CLEANUP_SLOTS; i++) {
        pid_t g = pgid;
        if (__atomic_compare_exchange_n(&cleanup__groups[i], &g, 0, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED))
            return;
    }
}

int ckb_cleanup_add_dir(const char *path)
{
    if (strlen(path) >= CLEANUP_PATH)
        return -1;
    ckb_cleanup_init();
    for (int i = 0; i < CLEANUP_SLOTS; i++) {
        int fr = SLOT_FREE;
        if (__atomic_compare_exchange_n(&cleanup__dirs[i].state, &fr, SLOT_BUSY, 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
            snprintf(cleanup__dirs[i].path, CLEANUP_PATH, "%s", path);
            __atomic_store_n(&cleanup__dirs[i].state, SLOT_READY, __ATOMIC_RELEASE);
            return 0;
        }
    }
    return -1;
}

void ckb_cleanup_forget_dir(const char *path)
{
    for (int i = 0; i < CLEANUP_SLOTS; i++) {
        int ready = SLOT_READY;
        if (__atomic_load_n(&cleanup__dirs[i].state, __ATOMIC_ACQUIRE) != SLOT_READY ||
            strcmp(cleanup__dirs[i].path, path) != 0)
            continue;
        if (__atomic_compare_exchange_n(&cleanup__dirs[i].state, &ready, SLOT_BUSY, 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
            cleanup__dirs[i].path[0] = '\0';
            __atomic_store_n(&cleanup__dirs[i].state, SLOT_FREE, __ATOMIC_RELEASE);
            return;
        }
    }
}

static const char *cleanup__tmp(void)
{
    const char *tmp = getenv("TMPDIR");
    return tmp && *tmp ? tmp : "/tmp";
}

static int cleanup__rm(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

/* Removes the tree at path: ckb_remove_tree of fsutil.h less its forgetting
 * (a stale folder was another process's, never in this one's list); here
 * so that cleanup.c needs nothing of fsutil.c, which calls it. */
static int cleanup__remove_tree(const char *path)
{
    return nftw(path, cleanup__rm, 16, FTW_DEPTH | FTW_PHYS);
}

/* Whether pid is a process that still runs (a zombie does not). */
static int cleanup__alive(long pid)
{
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
        return 0;
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 1; /* no /proc: trust kill() */
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    return !(p && (p[2] == 'Z' || p[2] == 'X'));
}

int ckb_tmpdir_sweep(void)
{
    const char *tmp = cleanup__tmp();
    DIR *d = opendir(tmp);
    int removed = 0;
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        long pid;
        int end = 0;
        if (sscanf(e->d_name, "ckbench-%ld-%n", &pid, &end) != 1 || end == 0 || pid <= 0 ||
            pid == (long)getpid() || cleanup__alive(pid))
            continue;
        char path[1024];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", tmp, e->d_name);
        if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid())
            continue;
        if (cleanup__remove_tree(path) == 0)
            removed++;
    }
    closedir(d);
    return removed;
}

static pthread_once_t cleanup__swept = PTHREAD_ONCE_INIT;
static void cleanup__sweep_once(void)
{
    int n = ckb_tmpdir_sweep();
    if (n > 0)
        ckb_say("ckbench: removed %d work folder%s left in %s by ckbench processes "
                "that are gone\n",
                n, n == 1 ? "" : "s", cleanup__tmp());
}

int ckb_tmpdir_make(char *buf, size_t n)
{
    pthread_once(&cleanup__swept, cleanup__sweep_once);
    /* Signals (and the freeze) wait until the folder is listed: none is
     * made unlisted. */
    sigset_t all, old;
    ckb_cleanup_sigset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int len = snprintf(buf, n, "%s/ckbench-%ld-XXXXXX", cleanup__tmp(), (long)getpid());
    int rc = -1;
    if (len > 0 && (size_t)len < n && mkdtemp(buf)) {
        ckb_cleanup_add_dir(buf);
        rc = 0;
    }
    int e = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = e;
    return rc;
}
