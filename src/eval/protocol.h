/*
 * protocol.h — what the trusted side (the `ckbench eval` process) and a
 * sandboxed process share. Two memfds per evaluation:
 *   - IN: one input set, written by the trusted side while every sandboxed
 *     process is stopped, sealed against writes (F_SEAL_FUTURE_WRITE) and
 *     mapped read-only by the sandboxes: no mprotect can make it writable;
 *   - OUT (one per sandboxed process): a header page and the outputs of one
 *     call, copied out by the trusted side while that process is stopped.
 * One-byte commands travel on a pipe; replies are packets on a socket whose
 * kernel send stamps give the trusted side its own clock on every call.
 * Nothing the verdict or the figures depend on is in a sandbox's memory.
 */
#ifndef CKB_PROTOCOL_H
#define CKB_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>

#include "workloads/instance.h"

enum {
    CKB_PROTO_MAGIC = 0x636b6232, /* "ckb2" */
    CKB_PROTO_HEADER_BYTES = 4096,
    CKB_PROTO_MAX_SEEDS = 8,      /* checked input sets before timing */
    CKB_PROTO_MAX_CALLS = 512,    /* warm-up + timed calls */
    /* The sandbox's fixed file descriptors after exec. */
    CKB_PROTO_FD_IN = 3,
    CKB_PROTO_FD_OUT = 4,
    CKB_PROTO_FD_CMD = 5,
    CKB_PROTO_FD_REPLY = 6,
    CKB_PROTO_FD_ROOT = 7,        /* the folder it is confined to (candidate only) */
    /* The sandbox's exit code when the filter refused a system call (its
     * number is on stderr as "syscall N"). */
    CKB_PROTO_EXIT_SYSCALL = 159,
};

/* Commands (trusted side -> sandbox): one byte, then an operand byte. */
enum {
    CKB_CMD_CALL = 'C', /* run the kernel once on IN, outputs into OUT; operand: the
                           call's sequence number, echoed in DONE */
    CKB_CMD_QUIT = 'Q',
};

/* Replies (sandbox -> trusted side). */
enum {
    CKB_REPLY_OPENING = 'O', /* confined, about to open the candidate: from here on
                                how the process ends is the candidate's doing */
    CKB_REPLY_READY = 'R',
    CKB_REPLY_LOAD_ERROR = 'L',
    CKB_REPLY_DONE = 'D', /* two bytes: 'D' and the call's sequence number */
};

/* What a sandboxed process runs when told to call. */
enum {
    CKB_MODE_CANDIDATE = 0, /* the candidate against the baseline */
    CKB_MODE_BASELINE = 1,  /* no candidate: time the baseline alone */
    CKB_MODE_SELF = 2,      /* the baseline against itself: the timing noise */
};

/* Process state a kernel must leave as it found it. */
enum {
    CKB_VIOLATION_NONE = 0,
    CKB_VIOLATION_OMP = 1, /* OpenMP settings: thread count, dynamic teams, nesting */
    CKB_VIOLATION_FP = 2,  /* the SSE control register: rounding, flush-to-zero */
};

/* The header page of a sandbox's OUT memfd. The sandbox writes it and the
 * candidate can too: the trusted side reads only what the sandbox says
 * about itself (its stage, why it failed to load), never a figure. */
typedef struct {
    uint32_t magic;
    int32_t stage;          /* the last stage the sandbox entered (ckb_stage) */
    int32_t runs_candidate; /* 1: this process runs the candidate object */
    int32_t threads;
    int32_t load_error;     /* 1: dlopen/dlsym failed; message in `msg` */
    int32_t violation;      /* CKB_VIOLATION_*: the first state the kernel changed */
    char msg[512];
} ckb_proto_header;

_Static_assert(sizeof(ckb_proto_header) <= CKB_PROTO_HEADER_BYTES, "protocol header too large");

/* Where tensor i lives in its memfd (IN for inputs, OUT for outputs): a
 * 4 KiB-aligned chunk of `chunk` bytes, the tensor ending `slack` bytes
 * before the chunk's end (64-byte aligned), so an overrun meets the guard
 * page the sandbox maps after the chunk, or the canary in the slack. */
typedef struct {
    uint64_t chunk_off, chunk, data_off, bytes, slack;
} ckb_proto_place;

typedef struct {
    ckb_proto_place t[CKB_MAX_TENSORS];
    uint64_t in_bytes, out_bytes; /* each memfd's size */
} ckb_proto_layout;

void ckb_proto_layout_of(const ckb_instance *in, ckb_proto_layout *l);

enum { CKB_PROTO_CANARY = 0xa5 };

#endif /* CKB_PROTOCOL_H */
