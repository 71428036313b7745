/*
 * guard.h — (tests) buffers between inaccessible guard pages, as the
 * sandbox maps tensors. The usable bytes end
 * at the upper guard page (up to 63 bytes of 64-byte alignment slack before
 * it, which is filled with a canary), so an overrun faults or is seen.
 */
#ifndef CKB_GUARD_H
#define CKB_GUARD_H

#include <stddef.h>

typedef struct {
    void *base;       /* the whole mapping, guards included */
    size_t map_bytes;
    void *ptr;        /* 64-byte aligned, `bytes` usable */
    size_t bytes;
    size_t slack;     /* canary bytes after ptr + bytes */
} ckb_guard;

int ckb_guard_alloc(ckb_guard *g, size_t bytes); /* 0, or -1 when out of memory */
void ckb_guard_free(ckb_guard *g);
int ckb_guard_protect(ckb_guard *g, int read_only); /* 0 on success */
/* 1 when the canary after the buffer is intact. */
int ckb_guard_canary_ok(const ckb_guard *g);

#endif /* CKB_GUARD_H */
