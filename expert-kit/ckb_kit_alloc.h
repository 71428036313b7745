/*
 * ckb_kit_alloc.h — the one allocator of every expert's buffers.
 * aligned_alloc wants a size that is a multiple of the alignment (C11;
 * ASan reports any other size as an error), which a buffer sized by the
 * dims rarely is: the size is rounded up here, once, for every expert.
 */
#pragma once

#include <stdlib.h>

static inline void *ckb_kit_alloc64(size_t bytes)
{
    return aligned_alloc(64, (bytes + 63) / 64 * 64);
}
