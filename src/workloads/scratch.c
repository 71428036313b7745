#include "workloads/scratch.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/error.h"

static struct {
    void *p;
    size_t bytes;
} scratch__slot[CKB_SCRATCH_SLOTS];

void *ckb_scratch(int slot, size_t bytes)
{
    if (slot < 0 || slot >= CKB_SCRATCH_SLOTS)
        ckb_fatal("scratch slot %d out of range", slot);
    if (scratch__slot[slot].bytes >= bytes && scratch__slot[slot].p)
        return scratch__slot[slot].p;
    free(scratch__slot[slot].p);
    size_t n = (bytes + 63) / 64 * 64;
    scratch__slot[slot].p = aligned_alloc(64, n ? n : 64);
    if (!scratch__slot[slot].p)
        ckb_fatal("out of memory for %zu bytes of baseline scratch", bytes);
    scratch__slot[slot].bytes = bytes;
    return scratch__slot[slot].p;
}
