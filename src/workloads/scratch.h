/*
 * scratch.h — intermediate buffers for baselines, kept between calls.
 *
 * XLA assigns its temporaries once at compile time and reuses them; a
 * baseline that mallocs hundreds of MiB per call would instead time page
 * faults, and inflate every speedup against it. A baseline asks for
 * scratch slot n of at least `bytes`; the buffer grows when needed and is
 * never freed (the process ends first). Contents are undefined. Not
 * thread-safe: baselines are called from one thread.
 */
#ifndef CKB_SCRATCH_H
#define CKB_SCRATCH_H

#include <stddef.h>

enum { CKB_SCRATCH_SLOTS = 8 };

/* A 64-byte aligned buffer for slot (0..CKB_SCRATCH_SLOTS-1); aborts with a
 * message when memory runs out (a baseline that cannot run is a broken
 * harness, not a verdict). */
void *ckb_scratch(int slot, size_t bytes);

#endif /* CKB_SCRATCH_H */
