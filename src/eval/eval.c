#include "eval/eval.h"

#include <errno.h>
#include <omp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include "core/digest.h"
#include "core/cleanup.h"
#include "core/fsutil.h"
#include "core/proc.h"
#include "core/stats.h"
#include "eval/check.h"
#include "eval/compile.h"
#include "eval/perturb.h"
#include "eval/sandbox.h"
#include "eval/symcheck.h"

void ckb_eval_opts_default(ckb_eval_opts *o)
{
    memset(o, 0, sizeof *o);
    o->size = CKB_SIZE_DEFAULT;
    o->threads = omp_get_num_procs();
    o->nseeds = 3;
    o->warmup = 5;
    o->iters = 50;
    o->mode = CKB_MODE_CANDIDATE;
    o->timeout_scale = 1.0;
    o->max_timing_s = 60.0;
    o->max_steal_pct = 10.0;
}

/* Everything one evaluation holds; freed by eval__release. */
typedef struct {
    const ckb_workload *w;
    const ckb_eval_opts *o;
    ckb_eval_result *r;
    int64_t dims[CKB_MAX_DIMS];
    char workdir[256];
    int own_workdir;
    int shm_fd;
    void *shm;
    size_t shm_bytes;
    ckb_proto_header *h;
    void *oracle[CKB_PROTO_MAX_SETS][CKB_MAX_TENSORS];
    uint64_t in_digest[CKB_PROTO_MAX_SETS]; /* of each set's inputs, as written */
    void *audit_t[CKB_MAX_TENSORS];         /* an audited call's inputs and oracle */
    double base_s;       /* the baseline's time per call in the parent */
    double cand_s;       /* the slowest checked candidate call, in the child */
    ckb_sandbox sb;
    int started;
} eval__ctx;

static void eval__fail(eval__ctx *c, ckb_status st, const char *detail, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void eval__fail(eval__ctx *c, ckb_status st, const char *detail, const char *fmt, ...)
{
    c->r->status = st;
    if (detail)
        snprintf(c->r->detail, sizeof c->r->detail, "%s", detail);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->r->message, sizeof c->r->message, fmt, ap);
    va_end(ap);
}

/* A random number drawn now (or from --seed, for a reproducible run),
 * out of the child's reach. */
static uint64_t eval__draw(const ckb_eval_opts *o, int i)
{
    if (o->seed)
        return ckb_hash64(o->seed, (uint64_t)i);
    uint64_t s = 0;
    while (getrandom(&s, sizeof s, 0) != sizeof s) {
    }
    return s;
}

/* Seeds are odd: 0 never reaches a workload's create_inputs. */
static uint64_t eval__draw_seed(const ckb_eval_opts *o, int i)
{
    return eval__draw(o, i) | 1;
}

static int eval__make_workdir(eval__ctx *c)
{
    if (c->o->workdir) {
        snprintf(c->workdir, sizeof c->workdir, "%s", c->o->workdir);
        return ckb_mkdirs(c->workdir);
    }
    /* $TMPDIR/ckbench-<pid>-XXXXXX, removed on a signal, swept when stale */
    if (ckb_tmpdir_make(c->workdir, sizeof c->workdir) != 0)
        return -1;
    c->own_workdir = 1;
    return 0;
}

static int eval__map_shm(eval__ctx *c)
{
    uint64_t offset[CKB_MAX_TENSORS];
    uint64_t slot = ckb_proto_layout(c->w, c->dims, offset);
    c->shm_bytes = CKB_PROTO_HEADER_BYTES + (size_t)slot * CKB_PROTO_SLOTS;
    c->shm_fd = memfd_create("ckbench-eval", MFD_CLOEXEC);
    if (c->shm_fd < 0)
        return -1;
    if (ftruncate(c->shm_fd, (off_t)c->shm_bytes) != 0)
        return -1;
    c->shm = mmap(NULL, c->shm_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, c->shm_fd, 0);
    if (c->shm == MAP_FAILED) {
        c->shm = NULL;
        return -1;
    }
    c->h = c->shm;
    c->h->magic = CKB_PROTO_MAGIC;
    c->h->slot_bytes = slot;
    memcpy(c->h->offset, offset, sizeof offset);
    return 0;
}

/* A fingerprint of set `set`'s inputs in the shared memory, which the
 * child maps writable: a kernel that rewrote them (to steer the oracle of
 * an audit) is caught by the change. */
static uint64_t eval__inputs_digest(const eval__ctx *c, int set)
{
    uint64_t d = 0;
    for (int i = 0; i < c->w->ntensors; i++)
        if (c->w->tensors[i].role == CKB_IN)
            d = ckb_digest(ckb_proto_tensor(c->shm, c->h, set, i),
                           ckb_tensor_bytes(&c->w->tensors[i], c->dims), d + (uint64_t)i);
    return d;
}

/* Writes set `set`'s inputs for seed into the shared slot and computes the
 * oracle (the baseline's outputs) in this process, out of the child's reach. */
static int eval__prepare_set(eval__ctx *c, int set, uint64_t seed)
{
    void *t[CKB_MAX_TENSORS];
    for (int i = 0; i < c->w->ntensors; i++) {
        if (c->w->tensors[i].role == CKB_IN) {
            t[i] = ckb_proto_tensor(c->shm, c->h, set, i);
            continue;
        }
        if (!c->oracle[set][i]) {
            size_t n = (ckb_tensor_bytes(&c->w->tensors[i], c->dims) + 63) / 64 * 64;
            c->oracle[set][i] = aligned_alloc(64, n);
            if (!c->oracle[set][i])
                return -1;
        }
        t[i] = c->oracle[set][i];
    }
    c->w->create_inputs(c->dims, seed, t);
    if (c->w->wide_range > 0 && c->o->nseeds >= 2 && set == c->o->nseeds - 1) {
        ckb_widen_inputs(c->w, c->dims, t, c->w->wide_range);
        c->r->wide_set = set;
    }
    c->in_digest[set] = eval__inputs_digest(c, set);
    double t0 = ckb_now();
    c->w->baseline(c->dims, t);
    double dt = ckb_now() - t0;
    /* The first call includes primitive creation: keep the fastest. */
    if (c->base_s == 0 || dt < c->base_s)
        c->base_s = dt;
    return 0;
}

/* The outputs in shared slot `slot` against want[] (the workload's tensor
 * list; only its outputs are read). Names the first wrong tensor. */
static ckb_check eval__compare(eval__ctx *c, int slot, void *const *want)
{
    ckb_check all = {.ok = 1, .worst = -1};
    for (int i = 0; i < c->w->ntensors; i++) {
        const ckb_tensor *t = &c->w->tensors[i];
        if (t->role != CKB_OUT)
            continue;
        ckb_check k;
        ckb_check_allclose(t->dtype, ckb_proto_tensor(c->shm, c->h, slot, i), want[i],
                           ckb_tensor_numel(t, c->dims), ckb_workload_atol(c->w),
                           ckb_workload_rtol(c->w), &k);
        if (all.ok && !k.ok)
            snprintf(c->r->worst_tensor, sizeof c->r->worst_tensor, "%s", t->name);
        ckb_check_merge(&all, &k);
    }
    return all;
}

/* Elements over all outputs: the denominator of "n of N elements wrong". */
static int64_t eval__output_numel(const eval__ctx *c)
{
    int64_t n = 0;
    for (int i = 0; i < c->w->ntensors; i++)
        if (c->w->tensors[i].role == CKB_OUT)
            n += ckb_tensor_numel(&c->w->tensors[i], c->dims);
    return n;
}

static void eval__note_check(eval__ctx *c, const ckb_check *k)
{
    if (k->max_abs_err > c->r->max_abs_err)
        c->r->max_abs_err = k->max_abs_err;
    if (!k->ok && c->r->nbad == 0) {
        c->r->nbad = k->nbad;
        c->r->worst_index = k->worst;
        c->r->worst_got = k->got;
        c->r->worst_want = k->want;
    }
}

static const char *eval__signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    case SIGABRT: return "SIGABRT";
    case SIGKILL: return "SIGKILL";
    case SIGXCPU: return "SIGXCPU";
    case SIGXFSZ: return "SIGXFSZ";
    case SIGTRAP: return "SIGTRAP";
    case SIGSYS: return "SIGSYS";
    default: return "signal";
    }
}

/* The child ended without answering: turn how it ended into a status. */
static void eval__child_died(eval__ctx *c, int wait_rc)
{
    ckb_sandbox *sb = &c->sb;
    const char *err = sb->err;
    if (wait_rc == -2) {
        eval__fail(c, CKB_ST_TIMEOUT, "wall_clock", "no answer within the wall-clock limit%s%s",
                   *err ? ": " : "", err);
        return;
    }
    if (sb->term_signal) {
        int s = sb->term_signal;
        ckb_status st = s == SIGXCPU                   ? CKB_ST_TIMEOUT
                        : s == SIGXFSZ || s == SIGKILL ? CKB_ST_RESOURCE_LIMIT
                        : s == SIGSYS                  ? CKB_ST_FORBIDDEN_SYMBOL
                                                       : CKB_ST_CRASH;
        eval__fail(c, st, s == SIGSYS ? "syscall" : eval__signal_name(s),
                   "killed by %s (signal %d)%s%s%s", eval__signal_name(s), s,
                   s == SIGSYS ? ": a system call outside the sandbox's allow list" : "",
                   *err ? ": " : "", err);
        return;
    }
    if (sb->exit_code == 2 || sb->exit_code == 4)
        eval__fail(c, CKB_ST_HARNESS_ERROR, "sandbox",
                   "the sandbox failed to set up (exit code %d)%s%s", sb->exit_code,
                   *err ? ": " : "", err);
    else if (sb->exit_code == 3)
        eval__fail(c, CKB_ST_RESOURCE_LIMIT, "memory",
                   "the sandbox could not allocate the workload's buffers");
    else if (strstr(err, "AddressSanitizer") || strstr(err, "runtime error"))
        eval__fail(c, CKB_ST_CRASH, "sanitizer", "%s", err);
    else
        eval__fail(c, CKB_ST_CRASH, "exit", "the process exited (code %d) during the call%s%s",
                   sb->exit_code, *err ? ": " : "", err);
}

static int eval__start_child(eval__ctx *c, const char *so_path)
{
    size_t buffers = c->shm_bytes + 3 * (size_t)c->h->slot_bytes;
    ckb_sandbox_limits lim = {
        .mem_bytes = buffers + ((size_t)8 << 30),
        .cpu_s = (600.0 + 20.0 * c->o->max_timing_s) * c->o->timeout_scale * c->o->threads,
        .threads = c->o->threads,
    };
    char size[16];
    snprintf(size, sizeof size, "%s", ckb_size_name(c->o->size));
    if (ckb_sandbox_start(&c->sb, c->shm_fd, c->w->id, size, so_path, &lim) != 0)
        return -1;
    c->started = 1;
    return 0;
}

/* A kernel that left OpenMP's settings or the FP control register changed
 * (the child restored them and said so). */
static int eval__violated(eval__ctx *c)
{
    if (c->h->violation == CKB_VIOLATION_NONE)
        return 0;
    eval__fail(c, CKB_ST_CHEAT_DETECTED,
               c->h->violation == CKB_VIOLATION_OMP ? "omp_state" : "fp_state", "%s",
               c->h->msg);
    return 1;
}

/* Sends one command and waits for its echo; on death or timeout the
 * result is filled in and -1 returned. */
static int eval__command(eval__ctx *c, char cmd, int arg, double timeout_s)
{
    int rc = ckb_sandbox_send(&c->sb, cmd, (unsigned char)arg);
    int reply = rc == 0 ? ckb_sandbox_wait(&c->sb, timeout_s * c->o->timeout_scale) : -1;
    if (reply == cmd)
        return 0;
    c->r->stage = (ckb_stage)c->h->stage;
    if (reply < 0)
        eval__child_died(c, reply);
    else
        eval__fail(c, CKB_ST_CHEAT_DETECTED, "protocol",
                   "the sandbox answered '%c' to '%c': the kernel wrote to the harness's pipe",
                   reply > 32 && reply < 127 ? reply : '?', cmd);
    return -1;
}

static int eval__correctness(eval__ctx *c)
{
    c->r->stage = CKB_STAGE_CORRECTNESS;
    double t0 = ckb_now();
    double limit = 30.0 + 100.0 * c->base_s;
    /* Each seed once, then the first again: the same input must give the
     * same verdict (a kernel that varies between calls is caught here). */
    for (int k = 0; k <= c->o->nseeds; k++) {
        int set = k < c->o->nseeds ? k : 0;
        if (eval__command(c, CKB_CMD_CHECK, set, limit) != 0)
            return -1;
        if (eval__violated(c))
            return -1;
        if (c->h->msg[0]) {
            eval__fail(c, CKB_ST_CRASH, "out_of_bounds", "%s", c->h->msg);
            return -1;
        }
        ckb_check k_ = eval__compare(c, set, c->oracle[set]);
        eval__note_check(c, &k_);
        if (!k_.ok) {
            int repeat = k == c->o->nseeds;
            eval__fail(c, repeat ? CKB_ST_NONDETERMINISTIC : CKB_ST_WRONG_RESULT,
                       repeat ? "repeat_differs" : (k_.nonfinite ? "nonfinite" : "mismatch"),
                       "%s%s: %lld of %lld elements outside tolerance (atol %g, rtol %g); "
                       "worst at index %lld: got %g, expected %g%s",
                       repeat ? "the same input gave a different answer the second time; "
                              : "",
                       c->r->worst_tensor, (long long)k_.nbad,
                       (long long)eval__output_numel(c),
                       ckb_workload_atol(c->w), ckb_workload_rtol(c->w), (long long)k_.worst,
                       k_.got, k_.want, k_.nonfinite ? " (NaN/Inf where the baseline has none)" : "");
            c->r->correctness_s = ckb_now() - t0;
            return -1;
        }
        if (c->h->check_ms * 1e-3 > c->cand_s)
            c->cand_s = c->h->check_ms * 1e-3;
    }
    c->r->correctness_s = ckb_now() - t0;
    return 0;
}

/* Everything one pass of the timing loop gives the parent besides the
 * child's own numbers: its clock on each call, and the audited calls. */
typedef struct {
    int calls;
    double cand_ms[CKB_PROTO_MAX_CALLS], base_ms[CKB_PROTO_MAX_CALLS];
    int naudit;
    int audit_call[CKB_PROTO_AUDITS];
} eval__loop;

/* Draws which calls of the loop are audited: distinct, uniform, known only
 * to this process until each has returned. */
static void eval__draw_audits(eval__ctx *c, int run, eval__loop *L)
{
    L->naudit = L->calls < CKB_PROTO_AUDITS ? L->calls : CKB_PROTO_AUDITS;
    for (int j = 0; j < L->naudit; j++) {
        for (int tries = 0;; tries++) {
            int call = (int)(eval__draw(c->o, 3000 + 64 * run + 8 * j + tries) %
                             (uint64_t)L->calls);
            int dup = 0;
            for (int k = 0; k < j; k++)
                dup |= L->audit_call[k] == call;
            if (!dup) {
                L->audit_call[j] = call;
                break;
            }
        }
    }
}

static int eval__audit_slot(const eval__loop *L, int call)
{
    for (int j = 0; j < L->naudit; j++)
        if (L->audit_call[j] == call)
            return j;
    return -1;
}

/* Runs one timing loop in the child, answering its per-call replies: each
 * call is clocked here between its start and done replies, and after each
 * candidate call the child is told whether to keep the outputs. Any reply
 * out of its turn (a kernel writing to the reply pipe) is a cheat. */
static int eval__timing_loop(eval__ctx *c, eval__loop *L, double limit)
{
    if (ckb_sandbox_send(&c->sb, CKB_CMD_TIME, 0) != 0) {
        eval__child_died(c, -1);
        return -1;
    }
    double deadline = ckb_now() + limit * c->o->timeout_scale;
    int ncand = 0, nbase = 0;
    double t_start = 0;
    int expect_done = 0; /* the reply that must come next: 0 (a start or 'T'), 'D' or 'E' */
    for (;;) {
        double left = deadline - ckb_now();
        int reply = ckb_sandbox_wait(&c->sb, left > 0 ? left : 0.001);
        /* When the child sent it (the kernel's stamp), not when we woke. */
        double now = c->sb.no_stamps ? ckb_now() : c->sb.reply_stamp;
        if (reply < 0) {
            c->r->stage = (ckb_stage)c->h->stage;
            eval__child_died(c, reply);
            return -1;
        }
        int in_turn = expect_done ? reply == expect_done
                                  : (reply == CKB_REPLY_CAND_START && ncand < L->calls) ||
                                        (reply == CKB_REPLY_BASE_START && nbase < L->calls) ||
                                        reply == CKB_CMD_TIME;
        if (!in_turn) {
            eval__fail(c, CKB_ST_CHEAT_DETECTED, "protocol",
                       "the sandbox sent '%c' out of turn in the timing loop: the kernel "
                       "wrote to the harness's pipe",
                       reply > 32 && reply < 127 ? reply : '?');
            return -1;
        }
        switch (reply) {
        case CKB_REPLY_CAND_START:
        case CKB_REPLY_BASE_START:
            t_start = now;
            expect_done = reply == CKB_REPLY_CAND_START ? CKB_REPLY_CAND_DONE
                                                        : CKB_REPLY_BASE_DONE;
            break;
        case CKB_REPLY_BASE_DONE:
            L->base_ms[nbase++] = (now - t_start) * 1e3;
            expect_done = 0;
            break;
        case CKB_REPLY_CAND_DONE: {
            L->cand_ms[ncand] = (now - t_start) * 1e3;
            int slot = c->o->mode == CKB_MODE_CANDIDATE ? eval__audit_slot(L, ncand) : -1;
            ncand++;
            expect_done = 0;
            int rc = slot >= 0 ? ckb_sandbox_send(&c->sb, CKB_CMD_AUDIT, (unsigned char)slot)
                               : ckb_sandbox_send(&c->sb, CKB_CMD_NEXT, 0);
            if (rc != 0) {
                eval__child_died(c, -1);
                return -1;
            }
            break;
        }
        case CKB_CMD_TIME:
            if (ncand != L->calls || (c->o->mode != CKB_MODE_BASELINE && nbase != L->calls)) {
                eval__fail(c, CKB_ST_CHEAT_DETECTED, "protocol",
                           "the timing loop ended after %d of %d calls", ncand, L->calls);
                return -1;
            }
            return 0;
        }
    }
}

/* The audited calls' outputs against the oracle of their inputs (the set
 * with that call's swaps), computed here. A kernel that does less work
 * when it is not being checked is caught on the calls it was timed on. */
static int eval__audit_calls(eval__ctx *c, const eval__loop *L);

static int eval__audit(eval__ctx *c, const eval__loop *L)
{
    for (int set = 0; set < c->h->nsets_timing; set++)
        if (eval__inputs_digest(c, set) != c->in_digest[set]) {
            eval__fail(c, CKB_ST_CHEAT_DETECTED, "tampered",
                       "input set %d changed in the harness's shared memory during timing: "
                       "the kernel wrote outside its arguments", set);
            return -1;
        }
    if (c->o->mode != CKB_MODE_CANDIDATE)
        return 0;
    double t0 = ckb_now();
    int rc = eval__audit_calls(c, L);
    c->r->audit_s += ckb_now() - t0;
    return rc;
}

static int eval__audit_calls(eval__ctx *c, const eval__loop *L)
{
    for (int i = 0; i < c->w->ntensors; i++) {
        if (c->audit_t[i])
            continue;
        size_t n = (ckb_tensor_bytes(&c->w->tensors[i], c->dims) + 63) / 64 * 64;
        c->audit_t[i] = aligned_alloc(64, n ? n : 64);
        if (!c->audit_t[i]) {
            eval__fail(c, CKB_ST_HARNESS_ERROR, "memory", "out of memory for the audit");
            return -1;
        }
    }
    for (int j = 0; j < L->naudit; j++) {
        int call = L->audit_call[j], set = call % c->h->nsets_timing;
        for (int i = 0; i < c->w->ntensors; i++)
            if (c->w->tensors[i].role == CKB_IN)
                memcpy(c->audit_t[i], ckb_proto_tensor(c->shm, c->h, set, i),
                       ckb_tensor_bytes(&c->w->tensors[i], c->dims));
        ckb_perturb_inputs(c->w, c->dims, c->audit_t, c->h->perturb_key, call);
        double t0 = ckb_now();
        c->w->baseline(c->dims, c->audit_t);
        double dt = ckb_now() - t0;
        if (dt < c->base_s)
            c->base_s = dt;
        ckb_check all = eval__compare(c, CKB_PROTO_MAX_SETS + j, c->audit_t);
        if (!all.ok) {
            eval__fail(c, CKB_ST_CHEAT_DETECTED, "timed_output",
                       "correct when checked, but timed call %d of %d gave a wrong %s: %lld "
                       "elements outside tolerance; worst at index %lld: got %g, expected %g",
                       call + 1, L->calls, c->r->worst_tensor, (long long)all.nbad, (long long)all.worst,
                       all.got, all.want);
            return -1;
        }
    }
    return 0;
}

/* The child's figures against the kernel's send stamps of the replies
 * around each call. A kernel that rewrote the recorded times (in the
 * shared header, or the harness's saved start time on its stack) shifts
 * most calls one way; an honest run differs by a system call and the odd
 * preemption between a reply and the clock read, which the median of the
 * per-call differences ignores. */
static double eval__median_gap(const double *a, const double *b, int from, int n)
{
    double d[CKB_PROTO_MAX_CALLS];
    for (int i = 0; i < n; i++)
        d[i] = a[from + i] - b[from + i];
    return ckb_stats_of(d, n).median;
}

/* wait_ms: how long the sandbox's main thread waited for a CPU during the
 * loop. On an overloaded machine the reply that opens a call wakes the
 * parent, which preempts the child before it reads its clock; that wait is
 * in our view of the call and not in the child's, and a cheater cannot
 * make the kernel's scheduler account it. Spread over the loop's calls it
 * widens the allowance; on a quiet machine it is ~0 and the check strict. */
static int eval__clock_agrees(eval__ctx *c, const eval__loop *L, int warmup, int iters,
                              double wait_ms)
{
    double child_c = ckb_stats_of(c->h->cand_ms + warmup, iters).median;
    double under = eval__median_gap(L->cand_ms, c->h->cand_ms, warmup, iters);
    int ncalls = (warmup + iters) * (c->o->mode == CKB_MODE_BASELINE ? 1 : 2);
    double waited = ncalls > 0 && wait_ms > 0 ? wait_ms / ncalls : 0;
    c->r->clock_gap_ms = under;
    c->r->sched_wait_ms = waited;
    if (under > 0.1 * child_c + 0.2 + waited) {
        eval__fail(c, CKB_ST_CHEAT_DETECTED, "clock",
                   "the candidate's calls took a median %.3f ms longer on the harness's "
                   "clock than the %.3f ms the sandbox recorded (it waited %.3f ms a call "
                   "for a CPU)", under, child_c, waited);
        return 0;
    }
    if (c->o->mode == CKB_MODE_BASELINE)
        return 1;
    double child_b = ckb_stats_of(c->h->base_ms + warmup, iters).median;
    double over = eval__median_gap(c->h->base_ms, L->base_ms, warmup, iters);
    if (over > 0.1 * child_b + 0.2) {
        eval__fail(c, CKB_ST_CHEAT_DETECTED, "clock",
                   "the baseline's calls were recorded a median %.3f ms longer in the sandbox "
                   "than the harness's clock saw", over);
        return 0;
    }
    return 1;
}

static int eval__timing(eval__ctx *c)
{
    c->r->stage = CKB_STAGE_TIMING;
    double t0 = ckb_now();
    double cand_s = c->o->mode == CKB_MODE_CANDIDATE ? c->cand_s : c->base_s;
    double pair_s = cand_s + (c->o->mode == CKB_MODE_BASELINE ? 0.0 : c->base_s);
    int warmup = c->o->warmup, iters = c->o->iters;
    /* A slow candidate gets fewer calls rather than a timeout; the counts
     * used are in the result. */
    if (pair_s > 0 && (warmup + iters) * pair_s > c->o->max_timing_s) {
        int calls = (int)(c->o->max_timing_s / pair_s);
        warmup = warmup < 1 ? warmup : (calls >= 20 ? warmup : 1);
        iters = calls - warmup;
        if (iters < 3)
            iters = 3;
        if (iters > c->o->iters)
            iters = c->o->iters;
    }
    if (warmup + iters > CKB_PROTO_MAX_CALLS)
        iters = CKB_PROTO_MAX_CALLS - warmup;
    c->h->warmup = warmup;
    c->h->iters = iters;
    c->h->nsets_timing = c->o->nseeds;
    c->r->warmup = warmup;
    c->r->iters = iters;
    double limit = 60.0 + 3.0 * (warmup + iters) * pair_s;

    double best_disturbed = 1e9;
    int best_judged = 0; /* long enough for the CPU accounting to tell */
    double cand[CKB_PROTO_MAX_CALLS], base[CKB_PROTO_MAX_CALLS];
    for (int run = 0; run < 3; run++) {
        ckb_cpu_times t0, t1;
        eval__loop L = {.calls = warmup + iters};
        eval__draw_audits(c, run, &L);
        c->h->perturb_key = eval__draw(c->o, 2000 + run);
        ckb_cpu_times_read(c->sb.pid, &t0);
        double p0 = ckb_now();
        if (eval__timing_loop(c, &L, limit) != 0)
            return -1;
        double elapsed = ckb_now() - p0;
        ckb_cpu_times_read(c->sb.pid, &t1);
        if (eval__violated(c) || eval__audit(c, &L) != 0 ||
            !eval__clock_agrees(c, &L, warmup, iters, 1e3 * (t1.main_wait - t0.main_wait)))
            return -1;
        /* The machine's CPU time during the run that did not go to the
         * sandbox: stolen by the hypervisor, or used by other processes
         * (whose threads then preempt ours mid-barrier). Clock ticks are
         * 10 ms, so only runs of half a second or more are judged. */
        double capacity = elapsed * t0.ncpu;
        double steal_pct = capacity > 0 ? 100.0 * (t1.steal - t0.steal) / capacity : 0;
        double others = (t1.busy - t0.busy) - (t1.pid_cpu - t0.pid_cpu);
        double others_pct = capacity > 0 && others > 0 ? 100.0 * others / capacity : 0;
        double disturbed = elapsed >= 0.5 ? steal_pct + others_pct : 0.0;
        c->r->timing_runs = run + 1;
        /* The child's clock against ours: its calls fit inside the time we
         * saw pass, and its own total is not far below ours. */
        double sum = 0;
        for (int i = 0; i < warmup + iters; i++)
            sum += c->h->cand_ms[i] + c->h->base_ms[i];
        double pms = elapsed * 1e3;
        if (sum > pms + 1.0 || c->h->phase_ms > pms + 1.0 ||
            c->h->phase_ms < 0.8 * pms - 50.0) {
            eval__fail(c, CKB_ST_CHEAT_DETECTED, "clock",
                       "the sandbox's timings disagree with the harness clock: calls sum to "
                       "%.1f ms, child phase %.1f ms, parent saw %.1f ms",
                       sum, c->h->phase_ms, pms);
            return -1;
        }
        if (disturbed < best_disturbed) {
            best_disturbed = disturbed;
            best_judged = elapsed >= 0.5;
            memcpy(cand, c->h->cand_ms + warmup, sizeof(double) * (size_t)iters);
            memcpy(base, c->h->base_ms + warmup, sizeof(double) * (size_t)iters);
            c->r->steal_pct = steal_pct;
            c->r->others_pct = others_pct;
            c->r->parent_timing_ms = pms;
            c->r->child_timing_ms = c->h->phase_ms;
        }
        if (disturbed <= c->o->max_steal_pct)
            break;
        fprintf(stderr, "ckbench: %s: %.0f%% of the machine's CPU time went elsewhere during "
                        "timing (%.0f%% stolen by the hypervisor, %.0f%% other processes); "
                        "timing again\n", c->w->id, disturbed, steal_pct, others_pct);
    }
    c->r->cand = ckb_stats_of(cand, iters);
    if (c->o->mode != CKB_MODE_BASELINE)
        c->r->base = ckb_stats_of(base, iters);
    else
        c->r->base = c->r->cand;
    c->r->speedup = c->r->cand.median > 0 ? c->r->base.median / c->r->cand.median : 0;
    c->r->timing_s = ckb_now() - t0;
    c->r->baseline_alone_ms = c->base_s * 1e3;

    /* The baseline timed beside the candidate against the fastest of its
     * runs here, alone: a kernel that leaves the process in a state that
     * slows the baseline (caches flushed, the pool disturbed) would gain
     * a speedup it did not earn. Judged only on an undisturbed run: on a
     * loaded machine the pool's barriers alone cost that much. */
    if (c->o->mode == CKB_MODE_CANDIDATE && c->base_s > 0 && best_judged &&
        best_disturbed <= c->o->max_steal_pct &&
        c->r->base.median > 1.5 * c->base_s * 1e3 + 1.0) {
        eval__fail(c, CKB_ST_CHEAT_DETECTED, "baseline_slowed",
                   "the baseline took a median %.3f ms beside this kernel but %.3f ms alone",
                   c->r->base.median, c->base_s * 1e3);
        return -1;
    }

    /* Plausibility: nothing runs faster than the roofline allows. */
    if (c->o->mode == CKB_MODE_CANDIDATE && c->o->peak_gflops > 0 && c->o->bw_gbs > 0) {
        double bound_ms = 1e3 * (c->r->flops / (c->o->peak_gflops * 1e9) > c->r->bytes /
                                 (c->o->bw_gbs * 1e9) ? c->r->flops / (c->o->peak_gflops * 1e9)
                                 : c->r->bytes / (c->o->bw_gbs * 1e9));
        if (c->r->cand.median < 0.5 * bound_ms) {
            eval__fail(c, CKB_ST_CHEAT_DETECTED, "roofline",
                       "median %.3f ms is under half the machine's roofline bound %.3f ms: "
                       "the work cannot have been done",
                       c->r->cand.median, bound_ms);
            return -1;
        }
    }
    return 0;
}

static int eval__final_check_run(eval__ctx *c)
{
    c->r->stage = CKB_STAGE_FINAL_CHECK;
    int set = c->o->nseeds;
    c->r->final_seed = eval__draw_seed(c->o, 1000);
    /* Inputs the child has never seen, written only now. */
    if (eval__prepare_set(c, set, c->r->final_seed) != 0) {
        eval__fail(c, CKB_ST_HARNESS_ERROR, "memory", "out of memory for the final check");
        return -1;
    }
    if (eval__command(c, CKB_CMD_CHECK, set, 30.0 + 100.0 * c->base_s) != 0 || eval__violated(c))
        return -1;
    ckb_check k = eval__compare(c, set, c->oracle[set]);
    eval__note_check(c, &k);
    if (!k.ok) {
        eval__fail(c, CKB_ST_WRONG_RESULT, "final_check",
                   "correct before timing but wrong on fresh inputs after it: %lld elements "
                   "outside tolerance; worst at index %lld: got %g, expected %g",
                   (long long)k.nbad, (long long)k.worst, k.got, k.want);
        return -1;
    }
    return 0;
}

static int eval__final_check(eval__ctx *c)
{
    double t0 = ckb_now();
    int rc = eval__final_check_run(c);
    c->r->final_check_s = ckb_now() - t0;
    return rc;
}

static void eval__release(eval__ctx *c)
{
    if (c->started)
        ckb_sandbox_stop(&c->sb);
    for (int s = 0; s < CKB_PROTO_MAX_SETS; s++)
        for (int i = 0; i < CKB_MAX_TENSORS; i++)
            free(c->oracle[s][i]);
    for (int i = 0; i < CKB_MAX_TENSORS; i++)
        free(c->audit_t[i]);
    if (c->shm)
        munmap(c->shm, c->shm_bytes);
    if (c->shm_fd > 0)
        close(c->shm_fd);
    if (c->own_workdir && c->workdir[0])
        ckb_remove_tree(c->workdir);
}

int ckb_eval_run(const ckb_workload *w, const char *src, const ckb_eval_opts *o,
                 ckb_eval_result *r)
{
    memset(r, 0, sizeof *r);
    eval__ctx c = {.w = w, .o = o, .r = r, .shm_fd = -1};
    double t_start = ckb_now();
    int rc = -1;
    ckb_workload_dims(w, o->size, c.dims);
    r->flops = w->flops(c.dims);
    r->bytes = w->bytes(c.dims);
    r->worst_index = -1;
    r->wide_set = -1;
    if (o->nseeds < 1 || o->nseeds + 1 > CKB_PROTO_MAX_SETS) {
        eval__fail(&c, CKB_ST_HARNESS_ERROR, "options", "--seeds must be 1..%d",
                   CKB_PROTO_MAX_SETS - 1);
        goto done;
    }
    if (eval__make_workdir(&c) != 0) {
        eval__fail(&c, CKB_ST_HARNESS_ERROR, "workdir", "cannot create a work folder: %s",
                   strerror(errno));
        goto done;
    }

    const char *so_path = NULL;
    ckb_compile_result cr = {0};
    if (o->mode == CKB_MODE_CANDIDATE) {
        r->stage = CKB_STAGE_COMPILE;
        if (access(src, R_OK) != 0) {
            eval__fail(&c, CKB_ST_HARNESS_ERROR, "input", "cannot read %s: %s", src,
                       strerror(errno));
            goto done;
        }
        if (ckb_compile_candidate(w, o->size, src, c.workdir, o->defines, o->ndefines, &cr) !=
            0) {
            eval__fail(&c, CKB_ST_HARNESS_ERROR, "compiler", "cannot run the compiler %s",
                       ckb_compiler());
            goto done;
        }
        r->compile_s = cr.seconds;
        if (!cr.ok) {
            eval__fail(&c, CKB_ST_COMPILE_ERROR, cr.kind, "%s", cr.message);
            ckb_compile_result_free(&cr);
            rc = 0;
            goto done;
        }
        ckb_compile_result_free(&cr);
        so_path = cr.so_path;

        r->stage = CKB_STAGE_SYMCHECK;
        ckb_symcheck sc;
        if (ckb_symcheck_file(so_path, &sc) != 0) {
            eval__fail(&c, CKB_ST_HARNESS_ERROR, "symcheck", "%s", sc.error);
            goto done;
        }
        if (!sc.has_workload) {
            eval__fail(&c, CKB_ST_COMPILE_ERROR, "no_workload",
                       "the file defines no function named workload");
            rc = 0;
            goto done;
        }
        if (sc.nforbidden) {
            eval__fail(&c, CKB_ST_FORBIDDEN_SYMBOL, "import",
                       "calls functions a kernel may not use: %s", sc.forbidden);
            rc = 0;
            goto done;
        }
    }

    r->stage = CKB_STAGE_LOAD;
    double t_setup = ckb_now();
    if (eval__map_shm(&c) != 0) {
        eval__fail(&c, CKB_ST_HARNESS_ERROR, "memory", "cannot map the shared buffers: %s",
                   strerror(errno));
        goto done;
    }
    c.h->threads = o->threads;
    c.h->mode = o->mode;
    omp_set_num_threads(o->threads);
    r->nseeds = o->nseeds;
    for (int i = 0; i < o->nseeds; i++) {
        r->seeds[i] = eval__draw_seed(o, i);
        if (eval__prepare_set(&c, i, r->seeds[i]) != 0) {
            eval__fail(&c, CKB_ST_HARNESS_ERROR, "memory", "out of memory for the inputs");
            goto done;
        }
    }
    if (eval__start_child(&c, so_path) != 0) {
        eval__fail(&c, CKB_ST_HARNESS_ERROR, "spawn", "cannot start the sandbox: %s",
                   strerror(errno));
        goto done;
    }
    int ready = ckb_sandbox_wait(&c.sb, 60.0 * o->timeout_scale);
    if (ready == 'L') {
        eval__fail(&c, CKB_ST_COMPILE_ERROR, "load", "the shared object does not load: %s",
                   c.h->msg);
        rc = 0;
        goto done;
    }
    if (ready != 'R') {
        if (ready < 0)
            eval__child_died(&c, ready);
        rc = 0;
        goto done;
    }
    rc = 0;
    r->setup_s = ckb_now() - t_setup;
    if (o->mode != CKB_MODE_BASELINE && eval__correctness(&c) != 0)
        goto done;
    if (eval__timing(&c) != 0)
        goto done;
    if (o->mode != CKB_MODE_BASELINE && eval__final_check(&c) != 0)
        goto done;
    r->correct = o->mode != CKB_MODE_BASELINE;
    r->status = CKB_ST_OK;
    r->stage = CKB_STAGE_DONE;
done:
    if (r->status != CKB_ST_OK)
        r->correct = 0;
    if (r->status == CKB_ST_HARNESS_ERROR)
        rc = -1;
    eval__release(&c);
    r->total_s = ckb_now() - t_start;
    return rc;
}
