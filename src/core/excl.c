/* Exclusive timing across threads and processes (see excl.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

#include "core/excl.h"

static pthread_mutex_t excl__mutex = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local int excl__depth; /* this thread's nested holds */
static int excl__fd = -1;
static char excl__file[512];

const char *ckb_excl_path(void)
{
    if (!excl__file[0]) {
        const char *dir = getenv("XDG_RUNTIME_DIR");
        if (!dir || access(dir, W_OK) != 0)
            dir = "/tmp";
        snprintf(excl__file, sizeof excl__file, "%s/ckbench-timing.lock", dir);
    }
    return excl__file;
}

void ckb_excl_lock(void)
{
    if (excl__depth++ > 0)
        return;
    pthread_mutex_lock(&excl__mutex);
    if (excl__fd < 0)
        excl__fd = open(ckb_excl_path(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    /* Without the file (a read-only /tmp) the process-wide mutex still holds. */
    if (excl__fd >= 0)
        while (flock(excl__fd, LOCK_EX) != 0 && errno == EINTR) {
        }
}

void ckb_excl_unlock(void)
{
    if (--excl__depth > 0)
        return;
    if (excl__fd >= 0)
        flock(excl__fd, LOCK_UN);
    pthread_mutex_unlock(&excl__mutex);
}
