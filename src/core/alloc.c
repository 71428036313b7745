#include "core/alloc.h"

#include "core/error.h"

#include <stdlib.h>
#include <string.h>

void ckb__oom(const char *file, int line)
{
    ckb_fatal("out of memory at %s:%d", file, line);
}

void *ckb__xmalloc(size_t n, const char *file, int line)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        ckb__oom(file, line);
    return p;
}

void *ckb__xcalloc(size_t n, size_t size, const char *file, int line)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        ckb__oom(file, line);
    return p;
}

void *ckb__xrealloc(void *p, size_t n, const char *file, int line)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        ckb__oom(file, line);
    return q;
}

char *ckb__xstrdup(const char *s, const char *file, int line)
{
    char *p = strdup(s);
    if (!p)
        ckb__oom(file, line);
    return p;
}

char *ckb__xstrndup(const char *s, size_t n, const char *file, int line)
{
    char *p = strndup(s, n);
    if (!p)
        ckb__oom(file, line);
    return p;
}
