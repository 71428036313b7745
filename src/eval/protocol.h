/*
 * protocol.h — what the harness (parent) and the sandboxed child share: a
 * memfd holding a header and one slot of tensors per input set, and one-byte
 * commands over a pipe. The verdict is always computed in the parent from
 * the raw outputs in the slots; the oracle never enters the child.
 */
#ifndef CKB_PROTOCOL_H
#define CKB_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>

#include "workloads/workload.h"

enum {
    CKB_PROTO_MAGIC = 0x636b6231, /* "ckb1" */
    CKB_PROTO_MAX_SETS = 8,       /* input sets: the seeds, then the final check's */
    CKB_PROTO_AUDITS = 4,         /* timed calls whose outputs the parent checks */
    CKB_PROTO_SLOTS = CKB_PROTO_MAX_SETS + CKB_PROTO_AUDITS,
    CKB_PROTO_MAX_CALLS = 512,    /* warm-up + timed calls */
    CKB_PROTO_HEADER_BYTES = 1 << 16,
    /* The child's fixed file descriptors after exec. */
    CKB_PROTO_FD_SHM = 3,
    CKB_PROTO_FD_CMD = 4,
    CKB_PROTO_FD_REPLY = 5,
};

/* Commands (parent -> child), each one byte followed by its operand byte. */
enum {
    CKB_CMD_CHECK = 'C', /* operand: the set; run the candidate once on it */
    CKB_CMD_TIME = 'T',  /* operand unused; the timing loop over sets 0..nsets_timing-1 */
    CKB_CMD_QUIT = 'Q',
    /* Inside the timing loop, after each candidate call: keep its outputs
     * in audit slot <operand>, or go on. Decided by the parent only after
     * the call has returned, so the kernel cannot know which calls count. */
    CKB_CMD_AUDIT = 'K',
    CKB_CMD_NEXT = 'N',
};

/* Replies inside the timing loop: each call is bracketed, so the parent
 * times it on its own clock too, out of the kernel's reach. */
enum {
    CKB_REPLY_CAND_START = 'S',
    CKB_REPLY_CAND_DONE = 'D',
    CKB_REPLY_BASE_START = 'B',
    CKB_REPLY_BASE_DONE = 'E',
};

/* Process state a kernel must leave as it found it (it is shared with the
 * baseline timed beside it and with the harness). */
enum {
    CKB_VIOLATION_NONE = 0,
    CKB_VIOLATION_OMP = 1, /* OpenMP settings: thread count, dynamic teams, nesting */
    CKB_VIOLATION_FP = 2,  /* the SSE control register: rounding, flush-to-zero */
};

/* What runs as "the candidate" in the child. */
enum {
    CKB_MODE_CANDIDATE = 0, /* the shared object's workload() against the baseline */
    CKB_MODE_BASELINE = 1,  /* no candidate: time the baseline alone */
    CKB_MODE_SELF = 2,      /* the baseline against itself: the timing noise */
};

typedef struct {
    uint32_t magic;
    int32_t stage;          /* the last stage the child entered (ckb_stage) */
    int32_t mode;
    int32_t threads;
    int32_t warmup, iters;  /* the timing loop: warmup + iters calls of each */
    int32_t nsets_timing;   /* timing rotates through sets 0..nsets_timing-1 */
    int32_t load_error;     /* 1: dlopen/dlsym failed; message in `msg` */
    int32_t violation;      /* CKB_VIOLATION_*: the first state the kernel changed */
    uint64_t perturb_key;   /* the timing loop's input swaps (eval/perturb.h) */
    uint64_t slot_bytes;    /* bytes per slot */
    uint64_t offset[CKB_MAX_TENSORS]; /* tensor offsets inside a slot */
    double check_ms;        /* the last CHECK call's time */
    double phase_ms;        /* the child's own clock over the whole timing loop */
    double cand_ms[CKB_PROTO_MAX_CALLS];
    double base_ms[CKB_PROTO_MAX_CALLS];
    char msg[512];
} ckb_proto_header;

_Static_assert(sizeof(ckb_proto_header) <= CKB_PROTO_HEADER_BYTES, "protocol header too large");

/* Bytes of one slot for w at dims, and the offsets of each tensor in it
 * (each 4 KiB-aligned). */
uint64_t ckb_proto_layout(const ckb_workload *w, const int64_t *dims, uint64_t *offset);

/* The address of tensor i of slot `set` in the mapped region (slots
 * CKB_PROTO_MAX_SETS.. hold audited outputs). */
static inline void *ckb_proto_tensor(void *base, const ckb_proto_header *h, int set, int i)
{
    return (char *)base + CKB_PROTO_HEADER_BYTES + (uint64_t)set * h->slot_bytes + h->offset[i];
}

#endif /* CKB_PROTOCOL_H */
