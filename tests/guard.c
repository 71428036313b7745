#include "guard.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { GUARD_CANARY = 0xa5 };

static size_t guard__page(void) { return (size_t)sysconf(_SC_PAGESIZE); }

int ckb_guard_alloc(ckb_guard *g, size_t bytes)
{
    memset(g, 0, sizeof *g);
    size_t page = guard__page();
    size_t aligned = (bytes + 63) / 64 * 64;
    if (aligned == 0)
        aligned = 64;
    size_t body = (aligned + page - 1) / page * page;
    g->map_bytes = body + 2 * page;
    g->base = mmap(NULL, g->map_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (g->base == MAP_FAILED) {
        g->base = NULL;
        return -1;
    }
    char *body_start = (char *)g->base + page;
    if (mprotect(body_start, body, PROT_READ | PROT_WRITE) != 0) {
        munmap(g->base, g->map_bytes);
        g->base = NULL;
        return -1;
    }
    g->ptr = body_start + body - aligned;
    g->bytes = bytes;
    g->slack = aligned - bytes;
    memset((char *)g->ptr + bytes, GUARD_CANARY, g->slack);
    return 0;
}

void ckb_guard_free(ckb_guard *g)
{
    if (g->base)
        munmap(g->base, g->map_bytes);
    memset(g, 0, sizeof *g);
}

int ckb_guard_protect(ckb_guard *g, int read_only)
{
    size_t page = guard__page();
    return mprotect((char *)g->base + page, g->map_bytes - 2 * page,
                    read_only ? PROT_READ : PROT_READ | PROT_WRITE);
}

int ckb_guard_canary_ok(const ckb_guard *g)
{
    const unsigned char *p = (const unsigned char *)g->ptr + g->bytes;
    for (size_t i = 0; i < g->slack; i++)
        if (p[i] != GUARD_CANARY)
            return 0;
    return 1;
}
