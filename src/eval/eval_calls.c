/*
 * eval_calls.c — the sandboxes of one evaluation and the call protocol
 * (DESIGN §4, §5): the shared buffers, a sandbox's start, one call of a
 * kernel timed by the trusted side, an input set through the baseline, the
 * candidate and the optional expert (poison, canaries, the comparison),
 * and how a sandbox that died or broke the rules is judged.
 */
#include "eval/eval_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "core/proc.h"
#include "eval/check.h"
#include "eval/limits.h"
#include "eval/perturb.h"
#include "eval/sandbox.h"
#include "eval/syscalls.h"
#include "eval/verdict.h"

#if defined(__SANITIZE_ADDRESS__)
#define CKB_EVAL_ASAN 1
#else
#define CKB_EVAL_ASAN 0
#endif

/* The input memfd: written through this process's mapping, sealed so that
 * no other mapping of it can ever be writable. */
int eval__map_in(eval__ctx *c)
{
    c->in_fd = memfd_create("ckbench-in", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (c->in_fd < 0 || ftruncate(c->in_fd, (off_t)c->lay.in_bytes) != 0)
        return -1;
    c->in = mmap(NULL, c->lay.in_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, c->in_fd, 0);
    if (c->in == MAP_FAILED) {
        c->in = NULL;
        return -1;
    }
    return fcntl(c->in_fd, F_ADD_SEALS,
                 F_SEAL_FUTURE_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
}

static int eval__map_out(eval__ctx *c, eval__proc *p, int runs_candidate)
{
    p->out_fd = memfd_create("ckbench-out", MFD_CLOEXEC);
    if (p->out_fd < 0 || ftruncate(p->out_fd, (off_t)c->lay.out_bytes) != 0)
        return -1;
    p->out = mmap(NULL, c->lay.out_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, p->out_fd, 0);
    if (p->out == MAP_FAILED) {
        p->out = NULL;
        return -1;
    }
    p->h = p->out;
    p->h->magic = CKB_PROTO_MAGIC;
    p->h->threads = c->o->threads;
    p->h->runs_candidate = runs_candidate;
    return 0;
}

int eval__alloc_outputs(eval__ctx *c)
{
    for (int i = 0; i < c->w->ntensors; i++) {
        size_t n = (c->lay.t[i].bytes + 63) / 64 * 64;
        c->want[i] = aligned_alloc(64, n ? n : 64);
        if (!c->want[i])
            return -1;
    }
    return 0;
}

static void *eval__tensor(const eval__ctx *c, const eval__proc *p, int i)
{
    const ckb_proto_place *pl = &c->lay.t[i];
    return (char *)(c->w->tensors[i].role == CKB_IN ? c->in : p->out) + pl->data_off;
}

/* A fresh input set for seed, written while every sandbox is stopped (or
 * waiting for its first call). Wide-range workloads get a scale drawn
 * for this set. */
static void eval__write_inputs(eval__ctx *c, uint64_t seed)
{
    void *t[CKB_MAX_TENSORS];
    for (int i = 0; i < c->w->ntensors; i++)
        t[i] = c->w->tensors[i].role == CKB_IN ? eval__tensor(c, &c->base, i) : c->want[i];
    c->w->create_inputs(c->inst->dims, seed, t);
    int e = ckb_widen_exponent(c->w, ckb_hash64(seed, 0x77));
    if (e)
        ckb_widen_inputs(c->inst, t, e);
}

/* Poison (all-ones bytes are NaN in bf16 and f32, -1 in i32) in the
 * outputs, the canary in the slack after each. */
static void eval__poison(eval__ctx *c, eval__proc *p)
{
    for (int i = 0; i < c->w->ntensors; i++) {
        if (c->w->tensors[i].role != CKB_OUT)
            continue;
        char *t = eval__tensor(c, p, i);
        memset(t, 0xff, c->lay.t[i].bytes);
        memset(t + c->lay.t[i].bytes, CKB_PROTO_CANARY, c->lay.t[i].slack);
    }
}

/* 0, or the index + 1 of an output of p whose canary was overwritten. */
static int eval__canary_broken(eval__ctx *c, eval__proc *p)
{
    for (int i = 0; i < c->w->ntensors; i++) {
        if (c->w->tensors[i].role != CKB_OUT)
            continue;
        const unsigned char *t = eval__tensor(c, p, i);
        for (uint64_t k = 0; k < c->lay.t[i].slack; k++)
            if (t[c->lay.t[i].bytes + k] != CKB_PROTO_CANARY)
                return i + 1;
    }
    return 0;
}

/* The candidate's outputs against the baseline's, read where the two
 * sandboxes wrote them: both are stopped until their next call (whose
 * outputs are poisoned first), so these are the bytes a copy would hold;
 * copying them first (2 x the outputs' size per call) was most of the
 * checking's memory traffic at the larger sizes (issue 29). Names the
 * first wrong tensor. */
static ckb_check eval__compare(eval__ctx *c, eval__proc *p)
{
    ckb_check all = {.ok = 1, .worst = -1};
    for (int i = 0; i < c->w->ntensors; i++) {
        const ckb_tensor *t = &c->w->tensors[i];
        if (t->role != CKB_OUT)
            continue;
        ckb_check k;
        ckb_check_allclose(t->dtype, eval__tensor(c, p, i), eval__tensor(c, &c->base, i),
                           c->inst->tensor_numel[i], c->inst->atol, c->inst->rtol, &k);
        if (all.ok && !k.ok)
            snprintf(c->r->worst_tensor, sizeof c->r->worst_tensor, "%s", t->name);
        ckb_check_merge(&all, &k);
    }
    return all;
}

void eval__note_check(eval__ctx *c, const ckb_check *k)
{
    if (k->max_abs_err > c->r->max_abs_err)
        c->r->max_abs_err = k->max_abs_err;
    if (k->max_tol_share > c->r->worst_tol_share)
        c->r->worst_tol_share = k->max_tol_share;
    if (k->max_rel_err > c->r->max_rel_err)
        c->r->max_rel_err = k->max_rel_err;
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

/* How a signal that ended a sandbox is judged: the CPU-time limit's
 * SIGXCPU is a timeout, SIGKILL (the CPU limit's hard end, or the kernel's
 * OOM killer) and SIGXFSZ are limits, SIGSYS a refused system call, the
 * rest a crash named by the signal. */
static ckb_verdict eval__signal_verdict(int sig)
{
    switch (sig) {
    case SIGXCPU: return CKB_V_TIMEOUT_SIGXCPU;
    case SIGKILL: return CKB_V_RESOURCE_SIGKILL;
    case SIGXFSZ: return CKB_V_RESOURCE_SIGXFSZ;
    case SIGSYS: return CKB_V_FORBIDDEN_SYSCALL;
    case SIGSEGV: return CKB_V_CRASH_SIGSEGV;
    case SIGBUS: return CKB_V_CRASH_SIGBUS;
    case SIGILL: return CKB_V_CRASH_SIGILL;
    case SIGFPE: return CKB_V_CRASH_SIGFPE;
    case SIGABRT: return CKB_V_CRASH_SIGABRT;
    case SIGTRAP: return CKB_V_CRASH_SIGTRAP;
    default: return CKB_V_CRASH_SIGNAL;
    }
}

/* The sandbox ended without answering: turn how it ended into a status. */
static void eval__child_died(eval__ctx *c, eval__proc *p, int wait_rc)
{
    ckb_sandbox *sb = &p->sb;
    const char *err = sb->err;
    if (wait_rc == -2) {
        eval__fail(c, CKB_V_TIMEOUT_WALL_CLOCK, "no answer within the wall-clock limit%s%s",
                   *err ? ": " : "", err);
        return;
    }
    if (sb->exit_code == CKB_PROTO_EXIT_SYSCALL && !sb->term_signal) {
        const char *at = strstr(err, "ckbench-sandbox: syscall ");
        long nr = at ? strtol(at + strlen("ckbench-sandbox: syscall "), NULL, 10) : -1;
        eval__fail(c, CKB_V_FORBIDDEN_SYSCALL,
                   "the kernel made the system call %s (number %ld), which the sandbox refuses",
                   nr >= 0 ? ckb_syscall_name(nr) : "?", nr);
        return;
    }
    if (sb->term_signal) {
        int s = sb->term_signal;
        eval__fail(c, eval__signal_verdict(s),
                   "killed by %s (signal %d)%s%s%s", eval__signal_name(s), s,
                   /* SIGSYS kills without the harness's handler when the call
                    * was made with signals blocked, so it cannot be named */
                   s == SIGSYS ? ": a system call outside the sandbox's allow list (made with "
                                 "signals blocked, so it cannot be named)"
                               : "",
                   *err ? ": " : "", err);
        return;
    }
    /* Only before the candidate is opened can an exit code be the
     * sandbox's own set-up failing; after it, a candidate could exit with
     * any code. */
    if (!p->opened &&
        (sb->exit_code == 2 || sb->exit_code == 4 || (sb->exit_code >= 120 && sb->exit_code <= 127)))
        eval__fail(c, CKB_V_HARNESS_SANDBOX,
                   "the sandbox failed to set up (exit code %d)%s%s%s%s", sb->exit_code,
                   p->h && p->h->msg[0] ? ": " : "", p->h ? p->h->msg : "", *err ? ": " : "",
                   err);
    else if (!p->opened && sb->exit_code == 3)
        eval__fail(c, CKB_V_RESOURCE_MEMORY,
                   "the sandbox could not map the workload's buffers");
    else if (strstr(err, "AddressSanitizer") || strstr(err, "runtime error"))
        eval__fail(c, CKB_V_CRASH_SANITIZER, "%s", err);
    else
        eval__fail(c, CKB_V_CRASH_EXIT, "the process exited (code %d) during the call%s%s",
                   sb->exit_code, *err ? ": " : "", err);
}

int eval__start(eval__ctx *c, eval__proc *p, int runs_candidate)
{
    ckb_sandbox_limits lim = {
        .mem_bytes = c->lay.in_bytes + c->lay.out_bytes + CKB_EVAL_SANDBOX_SPARE_BYTES,
        .cpu_s = (CKB_EVAL_SANDBOX_CPU_BASE_S +
                  CKB_EVAL_SANDBOX_CPU_PER_TIMING_S * c->o->max_timing_s) *
                 c->o->timeout_scale * c->o->threads,
        .threads = c->o->threads,
    };
    char why[256], id[CKB_INSTANCE_ID_MAX];
    /* the sandbox cannot read this host's sizes file: the instance's
     * identity travels on its command line, and it rebuilds the instance */
    ckb_instance_id(c->inst, id, sizeof id);
    if (eval__map_out(c, p, runs_candidate) != 0) {
        eval__fail(c, CKB_V_HARNESS_MEMORY, "cannot map the output buffers: %s",
                   strerror(errno));
        return -1;
    }
    if (ckb_sandbox_start(&p->sb, c->in_fd, p->out_fd, runs_candidate ? p->root_fd : -1,
                          c->w->id, id, runs_candidate ? "candidate.so" : NULL, &lim, why, sizeof why) != 0) {
        eval__fail(c, CKB_V_HARNESS_SPAWN, "cannot start the sandbox: %s", why);
        return -1;
    }
    p->started = 1;
    int ready = ckb_sandbox_wait(&p->sb, CKB_EVAL_LOAD_WAIT_S * c->o->timeout_scale);
    if (ready == CKB_REPLY_OPENING && runs_candidate) {
        p->opened = 1;
        ready = ckb_sandbox_wait(&p->sb, CKB_EVAL_LOAD_WAIT_S * c->o->timeout_scale);
    }
    if (ready == CKB_REPLY_LOAD_ERROR && runs_candidate) {
        eval__fail(c, CKB_V_COMPILE_LOAD, "the shared object does not load: %s",
                   p->h->msg);
        return -1;
    }
    if (ready != CKB_REPLY_READY) {
        if (ready < 0)
            eval__child_died(c, p, ready);
        else
            eval__fail(c, CKB_V_CHEAT_PROTOCOL,
                       "the sandbox answered '%c' while loading: the kernel wrote to the "
                       "harness's socket", ready > 32 && ready < 127 ? ready : '?');
        return -1;
    }
    /* The filter must really be there, the only one, on a process that can
     * gain no privilege: read by us, not reported by the sandbox. */
    if (runs_candidate && !CKB_EVAL_ASAN && ckb_syscalls_verify(p->sb.pid) != 1) {
        eval__fail(c, CKB_V_CHEAT_CONFINEMENT,
                   "the candidate's sandbox is not under exactly the harness's seccomp filter "
                   "with no_new_privs after loading the object");
        return -1;
    }
    /* Stopped until its first call. */
    if (ckb_sandbox_pause(&p->sb) != 0) {
        eval__child_died(c, p, -1);
        return -1;
    }
    return 0;
}

/* The CPU time so far of our threads other than this one (which only
 * starts the call and sleeps until its reply). */
static double eval__harness_cpu_s(void)
{
    struct timespec all, self;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &all);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &self);
    return (double)(all.tv_sec - self.tv_sec) + (double)(all.tv_nsec - self.tv_nsec) * 1e-9;
}

/* A timing-stage call's costs: poisoning its outputs (q0..q1), and the
 * rest of its wall time to now beside the kernel's own kernel_s. */
static void eval__count_call(eval__ctx *c, double q0, double q1, double kernel_s)
{
    if (!c->timing)
        return;
    double wall = ckb_now() - q1;
    c->r->checks_s += q1 - q0;
    c->r->kernel_calls_s += kernel_s;
    c->r->switch_s += wall > kernel_s ? wall - kernel_s : 0;
}

/* One call of p on the input set in IN, timed here: from just before the
 * process is let run to the kernel's stamp on its DONE reply. The process
 * is stopped again before its outputs are read. */
static int eval__call(eval__ctx *c, eval__proc *p, double limit_s, double *ms)
{
    double q0 = ckb_now();
    eval__poison(c, p);
    double q1 = ckb_now();
    /* Our OpenMP workers (the inputs are drawn in parallel) sleep once idle
     * (eval/quiet_harness.c); what our threads still use during the call
     * is measured. */
    double w0 = ckb_now(), cpu0 = eval__harness_cpu_s();
    struct timespec t0;
    clock_gettime(CLOCK_REALTIME, &t0);
    ckb_sandbox_resume(&p->sb);
    unsigned char seq = (unsigned char)(c->seq++ & 0xff);
    int reply = ckb_sandbox_send(&p->sb, CKB_CMD_CALL, seq) == 0
                    ? ckb_sandbox_wait(&p->sb, limit_s * c->o->timeout_scale)
                    : -1;
    struct timespec t1;
    clock_gettime(CLOCK_REALTIME, &t1);
    double end = p->sb.no_stamps || p->sb.reply_stamp == 0
                     ? (double)t1.tv_sec + (double)t1.tv_nsec * 1e-9
                     : p->sb.reply_stamp;
    double start = (double)t0.tv_sec + (double)t0.tv_nsec * 1e-9;
    *ms = (end - start) * 1e3;
    double cpu1 = eval__harness_cpu_s();
    c->harness_cpu_s += cpu1 > cpu0 ? cpu1 - cpu0 : 0;
    c->call_s += ckb_now() - w0;
    /* The harness's reply is two bytes, echoing this call's number, and
     * sent after the call began: anything else was written by the kernel. */
    int forged = reply == CKB_REPLY_DONE &&
                 (p->sb.reply_len != 2 || p->sb.reply_arg != seq ||
                  (!p->sb.no_stamps && p->sb.reply_stamp != 0 && end < start));
    if (reply == CKB_REPLY_DONE && !forged && ckb_sandbox_pause(&p->sb) == 0) {
        eval__count_call(c, q0, q1, *ms * 1e-3);
        return 0;
    }
    if (forged) {
        eval__fail(c, CKB_V_CHEAT_PROTOCOL,
                   "a reply on the harness's socket that the harness did not send (%d bytes, "
                   "call number %d for %d): the kernel wrote to it",
                   p->sb.reply_len, p->sb.reply_arg, seq);
        return -1;
    }
    if (reply < 0 || p->sb.dead)
        eval__child_died(c, p, reply < 0 ? reply : -1);
    else
        eval__fail(c, CKB_V_CHEAT_PROTOCOL,
                   "the sandbox answered '%c' to a call: the kernel wrote to the harness's "
                   "socket", reply > 32 && reply < 127 ? reply : '?');
    return -1;
}

/* A kernel that left OpenMP's settings or the FP control register changed
 * (its sandbox restored them and said so). */
static int eval__violated(eval__ctx *c)
{
    const ckb_proto_header *h = c->cand.h;
    if (!h || h->violation == CKB_VIOLATION_NONE)
        return 0;
    eval__fail(c, h->violation == CKB_VIOLATION_OMP ? CKB_V_CHEAT_OMP_STATE : CKB_V_CHEAT_FP_STATE,
               "%.400s", h->msg);
    return 1;
}

/* The expert's outputs against the baseline's: it is trusted code, so a
 * miss is the benchmark's fault (harness_error), never the candidate's. */
static int eval__expert_checked(eval__ctx *c)
{
    int bad = eval__canary_broken(c, &c->expert);
    ckb_check k = bad ? (ckb_check){.ok = 0} : eval__compare(c, &c->expert);
    if (k.ok)
        return 0;
    eval__fail(c, CKB_V_HARNESS_EXPERT,
               "the workload's expert, timed beside the candidate (--vs-expert), %s",
               bad ? "wrote past the end of an output"
                   : "disagrees with the baseline on this input set: the expert is wrong");
    return -1;
}

/* One input set through the processes, in the given order: the baseline's
 * outputs are the oracle of the candidate's call on the same inputs. In
 * BASELINE mode only the baseline runs. With an expert (--vs-expert) it
 * runs too, at position expert_slot (0, 1 or 2) among the three, so that
 * over three calls each kernel takes each place once (the one that runs
 * first finds the inputs out of cache). */
int eval__pair(eval__ctx *c, uint64_t seed, int cand_first, int expert_slot,
               double limit_s, eval__pair_result *pr)
{
    memset(pr, 0, sizeof *pr);
    pr->check.ok = 1;
    double t0 = ckb_now();
    eval__write_inputs(c, seed);
    if (c->timing)
        c->r->inputs_s += ckb_now() - t0;
    int two = c->o->mode != CKB_MODE_BASELINE;
    int expert = c->r->has_expert;
    for (int k = 0, pos = 0; pos < 2 + expert; pos++) {
        if (expert && pos == expert_slot) {
            if (eval__call(c, &c->expert, limit_s, &pr->expert_ms) != 0 ||
                (!c->timing && eval__expert_checked(c) != 0))
                return -1;
            continue;
        }
        int cand_turn = (k++ == 0) == (cand_first != 0);
        if (cand_turn && !two)
            continue;
        eval__proc *p = cand_turn ? &c->cand : &c->base;
        if (eval__call(c, p, limit_s, cand_turn ? &pr->cand_ms : &pr->base_ms) != 0)
            return -1;
        double t1 = ckb_now();
        int bad = eval__canary_broken(c, p);
        if (c->timing)
            c->r->checks_s += ckb_now() - t1;
        if (bad && cand_turn) {
            eval__fail(c, CKB_V_CRASH_OUT_OF_BOUNDS, "wrote past the end of output %s",
                       c->w->tensors[bad - 1].name);
            return -1;
        }
        if (cand_turn && eval__violated(c))
            return -1;
    }
    double t2 = ckb_now();
    if (two)
        pr->check = eval__compare(c, &c->cand);
    if (c->timing)
        c->r->checks_s += ckb_now() - t2;
    return 0;
}
