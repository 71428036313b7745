#include "core/fsutil.h"
#include "core/cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *ckb_home(void)
{
    static char home[PATH_MAX];
    if (home[0])
        return home;
    const char *env = getenv("CKBENCH_HOME");
    if (env && *env) {
        snprintf(home, sizeof home, "%s", env);
        return home;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        snprintf(home, sizeof home, ".");
        return home;
    }
    exe[n] = '\0';
    /* build/ckbench or build-san/ckbench: the root is two levels up */
    snprintf(home, sizeof home, "%s", dirname(dirname(exe)));
    return home;
}

const char *ckb_cache_dir(void)
{
    static char dir[PATH_MAX];
    if (dir[0])
        return dir;
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *h = getenv("HOME");
    if (xdg && *xdg)
        snprintf(dir, sizeof dir, "%s/ckbench", xdg);
    else
        snprintf(dir, sizeof dir, "%s/.cache/ckbench", h && *h ? h : "/tmp");
    return dir;
}

int ckb_mkdirs(const char *path)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST)
        return -1;
    return 0;
}

int ckb_write_file_atomic(const char *path, const char *data, size_t len)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            goto fail;
        }
        off += (size_t)w;
    }
    if (fsync(fd) != 0)
        goto fail;
    if (close(fd) != 0) {
        fd = -1;
        goto fail;
    }
    if (rename(tmp, path) != 0) {
        fd = -1;
        goto fail;
    }
    return 0;
fail: {
    int e = errno;
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    errno = e;
    return -1;
}
}

char *ckb_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 8192;
            char *p = realloc(buf, cap);
            if (!p) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = p;
        }
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0)
            break;
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

static int fsutil__rm(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

int ckb_remove_tree(const char *path)
{
    int rc = nftw(path, fsutil__rm, 16, FTW_DEPTH | FTW_PHYS);
    ckb_cleanup_forget_dir(path); /* gone: no signal handler needs it any more */
    return rc;
}
