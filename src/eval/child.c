/*
 * child.c — the sandboxed side of an evaluation (`ckbench __sandbox`),
 * exec'd fresh by the parent with limits already applied. It loads the
 * candidate, then obeys one-byte commands: run the candidate on an input
 * set and copy the outputs out the instant it returns, or run the
 * interleaved timing loop. It computes no verdict and never sees an oracle.
 */
#include "eval/child.h"

#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <immintrin.h>

#include "eval/guard.h"
#include "eval/perturb.h"
#include "eval/protocol.h"
#include "eval/stage.h"
#include "eval/syscalls.h"

/* <asm/prctl.h> names these only in newer kernel headers. */
#define CHILD_ARCH_REQ_XCOMP_PERM 0x1023
#define CHILD_XFEATURE_XTILEDATA 18

typedef void (*child__fn)();

typedef struct {
    const ckb_workload *w;
    int64_t dims[CKB_MAX_DIMS];
    ckb_proto_header *h;
    void *shm;
    ckb_guard in[CKB_MAX_TENSORS];   /* inputs, read-only during calls */
    ckb_guard out[CKB_MAX_TENSORS];  /* the candidate's outputs */
    void *base_out[CKB_MAX_TENSORS]; /* the baseline's own outputs (timing only) */
    child__fn cand;
    /* What the kernel must leave as it found it, taken before the filter. */
    int omp_threads, omp_dynamic, omp_levels, omp_sched_chunk;
    omp_sched_t omp_sched;
    unsigned mxcsr;
} child__state;

static double child__ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* Calls workload() with the tensors as separate pointer arguments; every
 * argument is a data pointer, so the call matches the candidate's ABI. */
static void child__call(child__fn f, int n, void *const *t)
{
    switch (n) {
    case 1: f(t[0]); break;
    case 2: f(t[0], t[1]); break;
    case 3: f(t[0], t[1], t[2]); break;
    case 4: f(t[0], t[1], t[2], t[3]); break;
    case 5: f(t[0], t[1], t[2], t[3], t[4]); break;
    case 6: f(t[0], t[1], t[2], t[3], t[4], t[5]); break;
    case 7: f(t[0], t[1], t[2], t[3], t[4], t[5], t[6]); break;
    case 8: f(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7]); break;
    case 9: f(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8]); break;
    case 10: f(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9]); break;
    case 11: f(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9], t[10]); break;
    case 12: f(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9], t[10], t[11]); break;
    default: abort();
    }
}

/* Copies set `set`'s inputs into the guarded buffers, read-only again
 * after. A timed call (call >= 0) gets that call's swaps on top
 * (eval/perturb.h), so no two timed calls see the same inputs. */
static void child__load_inputs(child__state *s, int set, int call)
{
    void *t[CKB_MAX_TENSORS];
    for (int i = 0; i < s->w->ntensors; i++) {
        t[i] = s->in[i].ptr;
        if (s->w->tensors[i].role != CKB_IN)
            continue;
        ckb_guard_protect(&s->in[i], 0);
        memcpy(s->in[i].ptr, ckb_proto_tensor(s->shm, s->h, set, i), s->in[i].bytes);
    }
    if (call >= 0)
        ckb_perturb_inputs(s->w, s->dims, t, s->h->perturb_key, call);
    for (int i = 0; i < s->w->ntensors; i++)
        if (s->w->tensors[i].role == CKB_IN)
            ckb_guard_protect(&s->in[i], 1);
}

/* Poison: all-ones bytes are NaN in bf16 and f32, -1 in i32. */
static void child__poison_outputs(child__state *s)
{
    for (int i = 0; i < s->w->ntensors; i++)
        if (s->w->tensors[i].role == CKB_OUT)
            memset(s->out[i].ptr, 0xff, s->out[i].bytes);
}

static void child__tensors(child__state *s, void **t, int baseline_outputs)
{
    for (int i = 0; i < s->w->ntensors; i++)
        t[i] = s->w->tensors[i].role == CKB_IN ? s->in[i].ptr
               : baseline_outputs              ? s->base_out[i]
                                               : s->out[i].ptr;
}

static void child__save_state(child__state *s)
{
    s->omp_threads = omp_get_max_threads();
    s->omp_dynamic = omp_get_dynamic();
    s->omp_levels = omp_get_max_active_levels();
    omp_get_schedule(&s->omp_sched, &s->omp_sched_chunk);
    s->mxcsr = _mm_getcsr();
}

/* MXCSR's control bits (rounding, flush-to-zero, denormals-are-zero,
 * exception masks); the low six are sticky flags any arithmetic sets. */
enum { CHILD_MXCSR_CONTROL = 0xffc0 };

/* After a kernel call: puts back OpenMP's settings and the FP control
 * register, and records the first one found changed. A kernel that set
 * one thread would otherwise slow the baseline timed next to it. */
static void child__restore_state(child__state *s)
{
    omp_sched_t sched;
    int chunk;
    omp_get_schedule(&sched, &chunk);
    int omp_changed = omp_get_max_threads() != s->omp_threads ||
                      omp_get_dynamic() != s->omp_dynamic ||
                      omp_get_max_active_levels() != s->omp_levels || sched != s->omp_sched ||
                      chunk != s->omp_sched_chunk;
    int fp_changed = ((_mm_getcsr() ^ s->mxcsr) & CHILD_MXCSR_CONTROL) != 0;
    if (omp_changed) {
        omp_set_num_threads(s->omp_threads);
        omp_set_dynamic(s->omp_dynamic);
        omp_set_max_active_levels(s->omp_levels);
        omp_set_schedule(s->omp_sched, s->omp_sched_chunk);
    }
    if (fp_changed)
        _mm_setcsr(s->mxcsr);
    /* AVX-512 code left with dirty upper halves slows SSE code after it. */
    _mm256_zeroupper();
    if (s->h->violation == CKB_VIOLATION_NONE && (omp_changed || fp_changed)) {
        s->h->violation = omp_changed ? CKB_VIOLATION_OMP : CKB_VIOLATION_FP;
        snprintf(s->h->msg, sizeof s->h->msg, "%s",
                 omp_changed ? "the kernel changed OpenMP's settings (thread count, dynamic "
                               "teams, nesting or schedule) and left them changed"
                             : "the kernel changed the floating-point control register "
                               "(rounding mode, flush-to-zero or denormals-are-zero) and left "
                               "it changed");
    }
}

static void child__run_candidate(child__state *s, void **t)
{
    if (s->h->mode == CKB_MODE_CANDIDATE) {
        child__call(s->cand, s->w->ntensors, t);
        child__restore_state(s);
    } else {
        s->w->baseline(s->dims, t);
    }
}

static void child__check(child__state *s, int set)
{
    void *t[CKB_MAX_TENSORS];
    child__load_inputs(s, set, -1);
    child__tensors(s, t, 0);
    child__poison_outputs(s);
    double t0 = child__ms();
    child__run_candidate(s, t);
    double t1 = child__ms();
    /* Copied out the instant the call returns: later writes do not count. */
    for (int i = 0; i < s->w->ntensors; i++)
        if (s->w->tensors[i].role == CKB_OUT)
            memcpy(ckb_proto_tensor(s->shm, s->h, set, i), s->out[i].ptr, s->out[i].bytes);
    s->h->check_ms = t1 - t0;
    for (int i = 0; i < s->w->ntensors; i++)
        if (s->w->tensors[i].role == CKB_OUT && !ckb_guard_canary_ok(&s->out[i]))
            snprintf(s->h->msg, sizeof s->h->msg, "wrote past the end of output %s",
                     s->w->tensors[i].name);
}

static int child__reply(char c)
{
    return write(CKB_PROTO_FD_REPLY, &c, 1) == 1 ? 0 : -1;
}

/* After a candidate call: the parent says whether to keep its outputs for
 * an audit. Returns -1 when the parent is gone or speaks out of turn. */
static int child__audit_decision(child__state *s)
{
    unsigned char cmd[2];
    if (read(CKB_PROTO_FD_CMD, cmd, 2) != 2)
        return -1;
    if (cmd[0] == CKB_CMD_NEXT)
        return 0;
    if (cmd[0] != CKB_CMD_AUDIT || cmd[1] >= CKB_PROTO_AUDITS)
        return -1;
    for (int i = 0; i < s->w->ntensors; i++)
        if (s->w->tensors[i].role == CKB_OUT)
            memcpy(ckb_proto_tensor(s->shm, s->h, CKB_PROTO_MAX_SETS + cmd[1], i),
                   s->out[i].ptr, s->out[i].bytes);
    return 0;
}

/* The timing loop: baseline and candidate interleaved, their order
 * alternating, the input set rotating with fresh swaps every call, warm-up
 * calls identical to timed ones. Each call is bracketed by replies so the
 * parent clocks it too; after each candidate call the parent may take its
 * outputs for an audit. */
static int child__time(child__state *s)
{
    void *tc[CKB_MAX_TENSORS], *tb[CKB_MAX_TENSORS];
    child__tensors(s, tc, 0);
    child__tensors(s, tb, 1);
    int calls = s->h->warmup + s->h->iters;
    int time_baseline = s->h->mode != CKB_MODE_BASELINE;
    double p0 = child__ms();
    for (int it = 0; it < calls; it++) {
        child__load_inputs(s, it % s->h->nsets_timing, it);
        double cb = 0, cc = 0;
        for (int k = 0; k < 2; k++) {
            int cand_turn = (k == 0) == (it % 2 == 0);
            if (cand_turn) {
                child__poison_outputs(s);
                if (child__reply(CKB_REPLY_CAND_START) != 0)
                    return -1;
                double t0 = child__ms();
                child__run_candidate(s, tc);
                cc = child__ms() - t0;
                if (child__reply(CKB_REPLY_CAND_DONE) != 0 || child__audit_decision(s) != 0)
                    return -1;
            } else if (time_baseline) {
                if (child__reply(CKB_REPLY_BASE_START) != 0)
                    return -1;
                double t0 = child__ms();
                s->w->baseline(s->dims, tb);
                cb = child__ms() - t0;
                if (child__reply(CKB_REPLY_BASE_DONE) != 0)
                    return -1;
                /* The baseline's answer must not be left for the candidate. */
                for (int i = 0; i < s->w->ntensors; i++)
                    if (s->w->tensors[i].role == CKB_OUT)
                        memset(tb[i], 0, ckb_tensor_bytes(&s->w->tensors[i], s->dims));
            }
        }
        s->h->cand_ms[it] = cc;
        s->h->base_ms[it] = cb;
    }
    s->h->phase_ms = child__ms() - p0;
    return 0;
}

int ckb_child_main(int argc, char **argv)
{
    /* argv: __sandbox WORKLOAD SIZE SO_PATH */
    if (argc < 5)
        return 2;
    child__state s = {0};
    struct stat st;
    if (fstat(CKB_PROTO_FD_SHM, &st) != 0)
        return 2;
    s.shm = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, CKB_PROTO_FD_SHM,
                 0);
    if (s.shm == MAP_FAILED)
        return 2;
    s.h = s.shm;
    ckb_size size;
    s.w = ckb_workload_find(argv[2]);
    if (s.h->magic != CKB_PROTO_MAGIC || !s.w || ckb_size_parse(argv[3], &size) != 0)
        return 2;
    ckb_workload_dims(s.w, size, s.dims);
    omp_set_num_threads(s.h->threads);

    for (int i = 0; i < s.w->ntensors; i++) {
        size_t bytes = ckb_tensor_bytes(&s.w->tensors[i], s.dims);
        if (s.w->tensors[i].role == CKB_IN) {
            if (ckb_guard_alloc(&s.in[i], bytes) != 0)
                return 3;
        } else {
            if (ckb_guard_alloc(&s.out[i], bytes) != 0)
                return 3;
            s.base_out[i] = aligned_alloc(64, (bytes + 63) / 64 * 64);
            if (!s.base_out[i])
                return 3;
        }
    }

    s.h->stage = CKB_STAGE_LOAD;
    if (s.h->mode == CKB_MODE_CANDIDATE) {
        void *so = dlopen(argv[4], RTLD_NOW | RTLD_LOCAL);
        void *sym = so ? dlsym(so, "workload") : NULL;
        if (!sym) {
            s.h->load_error = 1;
            snprintf(s.h->msg, sizeof s.h->msg, "%s", so ? "no symbol workload" : dlerror());
            child__reply('L');
            return 0;
        }
        s.cand = (child__fn)sym;
    }
    /* AMX tile data needs the kernel's permission once per process, asked
     * with a system call the filter below refuses. oneDNN asks for it in
     * its first call; asking here gives every candidate what the library
     * baseline has, on every workload (a CPU without AMX says no: fine). */
    syscall(SYS_arch_prctl, CHILD_ARCH_REQ_XCOMP_PERM, CHILD_XFEATURE_XTILEDATA);
    /* One baseline call before the filter: oneDNN creates its primitives
     * and OpenMP its thread pool (the budget) while they still may. */
    {
        void *tb[CKB_MAX_TENSORS];
        child__load_inputs(&s, 0, -1);
        child__tensors(&s, tb, 1);
        s.w->baseline(s.dims, tb);
    }
    child__save_state(&s);
    if (ckb_syscalls_restrict(CKB_PROTO_FD_CMD, CKB_PROTO_FD_REPLY) != 0) {
        snprintf(s.h->msg, sizeof s.h->msg, "cannot install the seccomp filter");
        return 4;
    }
    if (child__reply('R') != 0)
        return 2;

    for (;;) {
        unsigned char cmd[2];
        ssize_t n = read(CKB_PROTO_FD_CMD, cmd, 2);
        if (n != 2)
            return 0; /* the parent is gone */
        switch (cmd[0]) {
        case CKB_CMD_CHECK:
            s.h->stage = CKB_STAGE_CORRECTNESS;
            child__check(&s, cmd[1]);
            break;
        case CKB_CMD_TIME:
            s.h->stage = CKB_STAGE_TIMING;
            if (child__time(&s) != 0)
                return 2;
            break;
        case CKB_CMD_QUIT:
            return 0;
        default:
            return 2;
        }
        if (child__reply((char)cmd[0]) != 0)
            return 2;
    }
}
