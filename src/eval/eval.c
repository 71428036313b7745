#include "eval/eval.h"

#include <errno.h>
#include <math.h>
#include <omp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/cleanup.h"
#include "core/excl.h"
#include "core/fsutil.h"
#include "core/proc.h"
#include "core/stats.h"
#include "eval/check.h"
#include "eval/compile.h"
#include "eval/limits.h"
#include "eval/perturb.h"
#include "eval/sandbox.h"
#include "eval/symcheck.h"
#include "eval/syscalls.h"
#include "eval/verdict.h"

#if defined(__SANITIZE_ADDRESS__)
#define CKB_EVAL_ASAN 1
#else
#define CKB_EVAL_ASAN 0
#endif

void ckb_eval_opts_default(ckb_eval_opts *o)
{
    memset(o, 0, sizeof *o);
    o->size = CKB_SIZE_DEFAULT;
    o->threads = omp_get_num_procs();
    o->nseeds = CKB_EVAL_DEFAULT_SEEDS;
    o->warmup = CKB_EVAL_DEFAULT_WARMUP;
    o->iters = CKB_EVAL_DEFAULT_ITERS;
    o->mode = CKB_MODE_CANDIDATE;
    o->timeout_scale = 1.0;
    o->max_timing_s = CKB_EVAL_DEFAULT_MAX_TIMING_S;
    o->max_steal_pct = CKB_EVAL_DEFAULT_MAX_DISTURBED_PCT;
    /* $CKBENCH_MAX_DISTURBED_PCT replaces it: the share of the machine's CPU
     * time other work may take during a timing run before the run counts as
     * disturbed (a negative value makes every timing disturbed, for tests). */
    const char *v = getenv("CKBENCH_MAX_DISTURBED_PCT");
    char *end;
    double x = v && *v ? strtod(v, &end) : NAN;
    if (v && *v && !*end && isfinite(x))
        o->max_steal_pct = x;
}

/* One sandboxed process and the trusted side's view of its OUT memfd. */
typedef struct {
    ckb_sandbox sb;
    int root_fd;   /* the folder its sandbox sees (a compiled kernel's), -1: none */
    int started;
    int opened;    /* it is about to open (or has opened) the candidate: from then on
                      the candidate's code, not ours, decides how it ends */
    int out_fd;
    void *out;
    ckb_proto_header *h;
} eval__proc;

/* Everything one evaluation holds; freed by eval__release. */
typedef struct {
    const ckb_workload *w;
    const ckb_eval_opts *o;
    ckb_eval_result *r;
    int64_t dims[CKB_MAX_DIMS];
    char workdir[256];
    int own_workdir;
    int root_fd;           /* workdir/root: all a candidate's sandbox can see */
    ckb_proto_layout lay;
    int in_fd;
    void *in;              /* the input set of the next call, written here only */
    eval__proc base;       /* the baseline, in every mode */
    eval__proc cand;       /* the candidate (or a second baseline, in SELF mode) */
    eval__proc expert;     /* the workload's expert, with expert_src (--vs-expert) */
    int expert_root_fd;    /* workdir/expert/root: all the expert's sandbox sees */
    double expert_s;       /* the expert's slowest checked call */
    unsigned seq;          /* calls made, the next call's sequence number */
    void *want[CKB_MAX_TENSORS]; /* create_inputs's output arguments: scratch, never read */
    double base_s;         /* the baseline's slowest checked call */
    double cand_s;         /* the candidate's slowest checked call */
    double call_s;         /* wall time inside timed calls, this timing run */
    double harness_cpu_s;  /* our other threads' CPU time inside them */
    int timing;            /* in the timing stage: its calls' costs are added up in r */
} eval__ctx;

/* Ends the evaluation with verdict v (its status and detail: verdict.def,
 * the only place either comes from) and a message. */
static void eval__fail(eval__ctx *c, ckb_verdict v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void eval__fail(eval__ctx *c, ckb_verdict v, const char *fmt, ...)
{
    c->r->status = ckb_verdict_status(v);
    snprintf(c->r->detail, sizeof c->r->detail, "%s", ckb_verdict_detail(v));
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


/* The input memfd: written through this process's mapping, sealed so that
 * no other mapping of it can ever be writable. */
static int eval__map_in(eval__ctx *c)
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
    c->w->create_inputs(c->dims, seed, t);
    int e = ckb_widen_exponent(c->w, ckb_hash64(seed, 0x77));
    if (e)
        ckb_widen_inputs(c->w, c->dims, t, e);
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
                           ckb_tensor_numel(t, c->dims),
                           ckb_workload_atol(c->w), ckb_workload_rtol(c->w), &k);
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

/* workdir/root, world-readable, holding only the candidate object: the
 * whole file system a candidate's sandbox sees. */
static int eval__make_root(const char *dir, const char *so_path, int *root_fd)
{
    char root[300], so[320];
    snprintf(root, sizeof root, "%s/root", dir);
    snprintf(so, sizeof so, "%s/candidate.so", root);
    if (mkdir(root, 0755) != 0 || chmod(root, 0755) != 0)
        return -1;
    if (link(so_path, so) != 0) {
        size_t n = 0;
        char *data = ckb_read_file(so_path, &n);
        int bad = !data || ckb_write_file_atomic(so, data, n) != 0;
        free(data);
        if (bad)
            return -1;
    }
    if (chmod(so, 0644) != 0)
        return -1;
    *root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    return *root_fd >= 0 ? 0 : -1;
}

static int eval__start(eval__ctx *c, eval__proc *p, int runs_candidate)
{
    ckb_sandbox_limits lim = {
        .mem_bytes = c->lay.in_bytes + c->lay.out_bytes + CKB_EVAL_SANDBOX_SPARE_BYTES,
        .cpu_s = (CKB_EVAL_SANDBOX_CPU_BASE_S +
                  CKB_EVAL_SANDBOX_CPU_PER_TIMING_S * c->o->max_timing_s) *
                 c->o->timeout_scale * c->o->threads,
        .threads = c->o->threads,
    };
    char why[256], size[64];
    /* the sandbox cannot read this host's sizes file: the host size's scale
     * value travels on its command line */
    if (c->o->size == CKB_SIZE_HOST && ckb_workload_scale_dim(c->w) >= 0)
        snprintf(size, sizeof size, "host=%lld", (long long)ckb_workload_host_scale(c->w));
    else
        snprintf(size, sizeof size, "%s", ckb_size_name(c->o->size));
    if (eval__map_out(c, p, runs_candidate) != 0) {
        eval__fail(c, CKB_V_HARNESS_MEMORY, "cannot map the output buffers: %s",
                   strerror(errno));
        return -1;
    }
    if (ckb_sandbox_start(&p->sb, c->in_fd, p->out_fd, runs_candidate ? p->root_fd : -1,
                          c->w->id, size, runs_candidate ? "candidate.so" : NULL, &lim, why, sizeof why) != 0) {
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

typedef struct {
    double cand_ms, base_ms, expert_ms;
    ckb_check check;
} eval__pair_result;

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
static int eval__pair(eval__ctx *c, uint64_t seed, int cand_first, int expert_slot,
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

/* The wall-clock limit of a checked call (limits.h). */
static double eval__checked_limit_s(const eval__ctx *c)
{
    return CKB_EVAL_CHECKED_CALL_BASE_S + CKB_EVAL_CHECKED_CALL_PER_BASE * c->base_s;
}

static int eval__correctness(eval__ctx *c)
{
    c->r->stage = CKB_STAGE_CORRECTNESS;
    double t0 = ckb_now();
    /* Each seed once, then the first again: the same input must give the
     * same verdict (a kernel that varies between calls is caught here). */
    for (int k = 0; k <= c->o->nseeds; k++) {
        uint64_t seed = c->r->seeds[k < c->o->nseeds ? k : 0];
        eval__pair_result pr;
        if (eval__pair(c, seed, 0, 2, eval__checked_limit_s(c), &pr) != 0)
            return -1;
        eval__note_check(c, &pr.check);
        if (!pr.check.ok) {
            const ckb_check *k_ = &pr.check;
            int repeat = k == c->o->nseeds;
            eval__fail(c, repeat           ? CKB_V_NONDETERMINISTIC_REPEAT
                          : k_->nonfinite ? CKB_V_WRONG_NONFINITE
                                          : CKB_V_WRONG_MISMATCH,
                       "%s%s: %lld of %lld elements outside tolerance (atol %g, rtol %g); "
                       "worst at index %lld: got %g, expected %g%s",
                       repeat ? "the same input gave a different answer the second time; "
                              : "",
                       c->r->worst_tensor, (long long)k_->nbad,
                       (long long)eval__output_numel(c), ckb_workload_atol(c->w),
                       ckb_workload_rtol(c->w), (long long)k_->worst, k_->got, k_->want,
                       k_->nonfinite ? " (NaN/Inf where the baseline has none)" : "");
            c->r->correctness_s = ckb_now() - t0;
            return -1;
        }
        if (pr.base_ms * 1e-3 > c->base_s)
            c->base_s = pr.base_ms * 1e-3;
        if (pr.cand_ms * 1e-3 > c->cand_s)
            c->cand_s = pr.cand_ms * 1e-3;
        if (pr.expert_ms * 1e-3 > c->expert_s)
            c->expert_s = pr.expert_ms * 1e-3;
    }
    c->r->correctness_s = ckb_now() - t0;
    return 0;
}

/* A timed call whose output misses: a kernel that was right on every
 * checked set and then leaves most of an output unwritten (the poison) or
 * wrong did less work when it was timed; a few elements a little outside
 * the tolerance on new inputs is an imprecise kernel. */
static void eval__timed_miss(eval__ctx *c, int call, int calls, const ckb_check *k)
{
    int64_t n = eval__output_numel(c);
    int lazy = k->nonfinite > 0 || k->nbad * 2 > n;
    /* The first sentence's shape is read back by the feedback (gen/prompt.c). */
    eval__fail(c, lazy ? CKB_V_CHEAT_TIMED_OUTPUT : CKB_V_WRONG_TIMED_CALL,
               "%stimed call %d of %d gave a wrong %s: %lld elements outside tolerance; worst at "
               "index %lld: got %g, expected %g (%lld of %lld output elements wrong, atol %g, "
               "rtol %g%s)",
               lazy ? "correct when checked, but " : "", call + 1, calls, c->r->worst_tensor,
               (long long)k->nbad, (long long)k->worst, k->got, k->want, (long long)k->nbad,
               (long long)n, ckb_workload_atol(c->w), ckb_workload_rtol(c->w),
               k->nonfinite ? ", NaN/Inf included" : "");
}

static int eval__timing_runs(eval__ctx *c)
{
    int two = c->o->mode != CKB_MODE_BASELINE;
    double pair_s = c->base_s + (two ? c->cand_s : 0.0) + c->expert_s;
    int warmup = c->o->warmup, iters = c->o->iters;
    /* A slow candidate gets fewer calls rather than a timeout; the counts
     * used are in the result. */
    if (pair_s > 0 && (warmup + iters) * pair_s > c->o->max_timing_s) {
        int calls = (int)(c->o->max_timing_s / pair_s);
        warmup = warmup < 1 ? warmup : (calls >= CKB_EVAL_CALLS_TO_KEEP_WARMUP ? warmup : 1);
        iters = calls - warmup;
        if (iters < CKB_EVAL_MIN_ITERS)
            iters = CKB_EVAL_MIN_ITERS;
        if (iters > c->o->iters)
            iters = c->o->iters;
    }
    if (warmup + iters > CKB_PROTO_MAX_CALLS)
        iters = CKB_PROTO_MAX_CALLS - warmup;
    c->r->warmup = warmup;
    c->r->iters = iters;
    double slowest = c->cand_s > c->base_s ? c->cand_s : c->base_s;
    if (c->expert_s > slowest)
        slowest = c->expert_s;
    double limit = CKB_EVAL_TIMED_CALL_BASE_S + CKB_EVAL_TIMED_CALL_PER_SLOWEST * slowest;
    int calls = warmup + iters;

    double best_disturbed = 1e9;
    double cand[CKB_PROTO_MAX_CALLS], base[CKB_PROTO_MAX_CALLS];
    double run_cand[CKB_PROTO_MAX_CALLS], run_base[CKB_PROTO_MAX_CALLS];
    double expert[CKB_PROTO_MAX_CALLS], run_expert[CKB_PROTO_MAX_CALLS];
    for (int run = 0; run < CKB_EVAL_TIMING_RUNS; run++) {
        pid_t pids[4] = {getpid(), c->base.sb.pid, two ? c->cand.sb.pid : 0,
                         c->r->has_expert ? c->expert.sb.pid : 0};
        ckb_cpu_times t0, t1;
        ckb_sched_times w0, w1;
        ckb_cpu_times_read(pids, 4, &t0);
        ckb_sched_times_read(pids + 1, 3, &w0);
        c->call_s = c->harness_cpu_s = 0;
        double p0 = ckb_now();
        for (int it = 0; it < calls; it++) {
            eval__pair_result pr;
            /* Every call a set of its own, drawn now: nothing the kernel saw
             * before, nothing it can see before its turn. */
            uint64_t seed =
                eval__draw_seed(c->o, CKB_EVAL_SEED_TIMED + CKB_EVAL_SEED_PER_RUN * run + it);
            /* the candidate first on every other call; the expert's place
             * turns over the three */
            if (eval__pair(c, seed, it % 2 == 0, (2 * it) % 3, limit, &pr) != 0)
                return -1;
            eval__note_check(c, &pr.check);
            if (!pr.check.ok) {
                eval__timed_miss(c, it, calls, &pr.check);
                return -1;
            }
            run_cand[it] = pr.cand_ms;
            run_base[it] = pr.base_ms;
            run_expert[it] = pr.expert_ms;
        }
        double elapsed = ckb_now() - p0;
        ckb_cpu_times_read(pids, 4, &t1);
        ckb_sched_times_read(pids + 1, 3, &w1);
        /* The machine's CPU time during the run that went neither to the
         * sandboxes nor to us: stolen by the hypervisor, or used by other
         * processes (whose threads then preempt ours mid-barrier). Clock
         * ticks are 10 ms, so only runs of CKB_EVAL_JUDGED_RUN_S or more
         * are judged (a shorter one's share is a few ticks: noise). */
        double steal_pct, others_pct;
        ckb_cpu_times_disturbance(&t0, &t1, elapsed, &steal_pct, &others_pct);
        /* Our own threads are the other thing that can share the kernels'
         * cores while they run; unlike the rest, measured precisely, so
         * judged at any length. */
        double harness_pct = c->call_s > 0 ? 100.0 * c->harness_cpu_s / (c->call_s * t0.ncpu) : 0;
        /* The kernels' threads' own time waiting for a CPU another task
         * held (schedstat, exact at any length): what a run too short for
         * the ticks is judged by, and the larger of the two otherwise. */
        double wait_pct = ckb_sched_wait_pct(&w0, &w1);
        int ticks_judged = elapsed >= CKB_EVAL_JUDGED_RUN_S;
        int judged = ticks_judged || wait_pct >= 0;
        double elsewhere = ticks_judged ? steal_pct + others_pct : 0.0;
        if (wait_pct > elsewhere)
            elsewhere = wait_pct;
        double disturbed = elsewhere + harness_pct;
        c->r->timing_runs = run + 1;
        if (disturbed < best_disturbed) {
            best_disturbed = disturbed;
            c->r->disturbed_pct = disturbed;
            c->r->disturbance_judged = judged;
            c->r->wait_pct = wait_pct;
            memcpy(cand, run_cand + warmup, sizeof(double) * (size_t)iters);
            memcpy(base, run_base + warmup, sizeof(double) * (size_t)iters);
            memcpy(expert, run_expert + warmup, sizeof(double) * (size_t)iters);
            c->r->steal_pct = steal_pct;
            c->r->others_pct = others_pct;
            c->r->harness_pct = harness_pct;
            c->r->parent_timing_ms = elapsed * 1e3;
        }
        if (disturbed <= c->o->max_steal_pct)
            break;
        fprintf(stderr, "ckbench: %s: timing disturbed by other work (%.0f%% of the kernels' "
                        "CPU time spent waiting for a CPU, %.0f%% of the machine stolen by the "
                        "hypervisor, %.0f%% other processes, %.0f%% the harness); timing again\n",
                c->w->id, wait_pct > 0 ? wait_pct : 0, steal_pct, others_pct, harness_pct);
    }
    c->r->base = ckb_stats_of(base, iters);
    c->r->cand = two ? ckb_stats_of(cand, iters) : c->r->base;
    c->r->speedup = c->r->cand.median > 0 ? c->r->base.median / c->r->cand.median : 0;
    if (c->r->has_expert) {
        c->r->expert = ckb_stats_of(expert, iters);
        c->r->speedup_vs_expert =
            c->r->cand.median > 0 ? c->r->expert.median / c->r->cand.median : 0;
    }

    /* Faster than the roofline: with the clock and every output out of the
     * kernel's reach, only a kernel that does less than the declared work
     * (an exact algebraic rewrite) gets here. It is legal; the result says
     * so, and the workload's README names the rewrite (SECURITY.md). */
    if (c->o->mode == CKB_MODE_CANDIDATE && c->o->peak_gflops > 0 && c->o->bw_gbs > 0) {
        double tc = c->r->flops / (c->o->peak_gflops * 1e9), tm = c->r->bytes / (c->o->bw_gbs * 1e9);
        c->r->beyond_roofline = c->r->cand.median < 1e3 * (tc > tm ? tc : tm);
    }
    return 0;
}

/* The timing stage, its wall time kept whatever its verdict (kernel_calls_s
 * and the harness's parts are within it). */
static int eval__timing(eval__ctx *c)
{
    c->r->stage = CKB_STAGE_TIMING;
    c->timing = 1;
    double t0 = ckb_now();
    int rc = eval__timing_runs(c);
    c->r->timing_s = ckb_now() - t0;
    c->timing = 0;
    return rc;
}

static int eval__final_check(eval__ctx *c)
{
    double t0 = ckb_now();
    c->r->stage = CKB_STAGE_FINAL_CHECK;
    c->r->final_seed = eval__draw_seed(c->o, CKB_EVAL_SEED_FINAL_CHECK);
    eval__pair_result pr;
    int rc = eval__pair(c, c->r->final_seed, 0, 2, eval__checked_limit_s(c), &pr);
    if (rc == 0) {
        eval__note_check(c, &pr.check);
        if (!pr.check.ok) {
            eval__fail(c, CKB_V_WRONG_FINAL_CHECK,
                       "correct before timing but wrong on fresh inputs after it: %lld elements "
                       "outside tolerance; worst at index %lld: got %g, expected %g",
                       (long long)pr.check.nbad, (long long)pr.check.worst, pr.check.got,
                       pr.check.want);
            rc = -1;
        }
    }
    c->r->final_check_s = ckb_now() - t0;
    return rc;
}

static void eval__release_proc(eval__ctx *c, eval__proc *p)
{
    if (p->started)
        ckb_sandbox_stop(&p->sb);
    if (p->out)
        munmap(p->out, c->lay.out_bytes);
    if (p->out_fd > 0)
        close(p->out_fd);
}

static void eval__release(eval__ctx *c)
{
    eval__release_proc(c, &c->expert);
    eval__release_proc(c, &c->cand);
    eval__release_proc(c, &c->base);
    for (int i = 0; i < CKB_MAX_TENSORS; i++) {
        free(c->want[i]);
    }
    if (c->in)
        munmap(c->in, c->lay.in_bytes);
    if (c->in_fd > 0)
        close(c->in_fd);
    if (c->root_fd > 0)
        close(c->root_fd);
    if (c->expert_root_fd > 0)
        close(c->expert_root_fd);
    if (c->own_workdir && c->workdir[0])
        ckb_remove_tree(c->workdir);
}

static int eval__alloc_outputs(eval__ctx *c)
{
    for (int i = 0; i < c->w->ntensors; i++) {
        size_t n = (c->lay.t[i].bytes + 63) / 64 * 64;
        c->want[i] = aligned_alloc(64, n ? n : 64);
        if (!c->want[i])
            return -1;
    }
    return 0;
}

/* The expert of --vs-expert, compiled with its kit and parameters into
 * workdir/expert and given a root of its own. It is the benchmark's code:
 * whatever goes wrong with it is a harness_error, never the candidate's. */
static int eval__compile_expert(eval__ctx *c)
{
    char dir[300];
    snprintf(dir, sizeof dir, "%s/expert", c->workdir);
    ckb_compile_result cr = {0};
    if (mkdir(dir, 0700) != 0) {
        eval__fail(c, CKB_V_HARNESS_WORKDIR, "cannot make %s: %s", dir, strerror(errno));
        return -1;
    }
    int ran = ckb_compile_candidate(c->w, c->o->size, c->o->expert_src, dir,
                                    c->o->expert_defines, c->o->nexpert_defines, 1, &cr);
    int ok = ran == 0 && cr.ok;
    if (!ok)
        eval__fail(c, CKB_V_HARNESS_EXPERT, "the expert %s does not compile: %.600s",
                   c->o->expert_src, ran == 0 ? cr.message : cr.error);
    else if (eval__make_root(dir, cr.so_path, &c->expert_root_fd) != 0) {
        eval__fail(c, CKB_V_HARNESS_WORKDIR, "cannot make the expert's sandbox folder: %s",
                   strerror(errno));
        ok = 0;
    }
    c->expert.root_fd = c->expert_root_fd;
    c->r->has_expert = ok;
    c->r->compile_s += cr.seconds;
    ckb_compile_result_free(&cr);
    return ok ? 0 : -1;
}

int ckb_eval_run(const ckb_workload *w, const char *src, const ckb_eval_opts *o,
                 ckb_eval_result *r)
{
    memset(r, 0, sizeof *r);
    eval__ctx c = {.w = w, .o = o, .r = r, .in_fd = -1, .root_fd = -1, .expert_root_fd = -1,
                   .base = {.out_fd = -1, .root_fd = -1}, .cand = {.out_fd = -1, .root_fd = -1},
                   .expert = {.out_fd = -1, .root_fd = -1}};
    double t_start = ckb_now();
    int rc = -1, locked = 0;
    ckb_workload_dims(w, o->size, c.dims);
    ckb_proto_layout_of(w, c.dims, &c.lay);
    r->flops = w->flops(c.dims);
    r->bytes = w->bytes(c.dims);
    r->worst_index = -1;
    if (o->nseeds < 1 || o->nseeds > CKB_PROTO_MAX_SEEDS) {
        eval__fail(&c, CKB_V_HARNESS_OPTIONS, "--seeds must be 1..%d",
                   CKB_PROTO_MAX_SEEDS);
        goto done;
    }
    if (eval__make_workdir(&c) != 0) {
        eval__fail(&c, CKB_V_HARNESS_WORKDIR, "cannot create a work folder: %s",
                   strerror(errno));
        goto done;
    }

    if (o->mode == CKB_MODE_CANDIDATE) {
        ckb_compile_result cr = {0};
        r->stage = CKB_STAGE_COMPILE;
        if (access(src, R_OK) != 0) {
            eval__fail(&c, CKB_V_HARNESS_INPUT, "cannot read %s: %s", src,
                       strerror(errno));
            goto done;
        }
        if (ckb_compile_candidate(w, o->size, src, c.workdir, o->defines, o->ndefines,
                                  o->expert_kit, &cr) !=
            0) {
            eval__fail(&c, CKB_V_HARNESS_COMPILER, "cannot run the compiler %s: %s",
                       ckb_compiler(), cr.error);
            goto done;
        }
        r->compile_s = cr.seconds;
        if (!cr.ok) {
            eval__fail(&c, cr.kind, "%s", cr.message);
            ckb_compile_result_free(&cr);
            rc = 0;
            goto done;
        }
        ckb_compile_result_free(&cr);

        r->stage = CKB_STAGE_SYMCHECK;
        ckb_symcheck sc;
        if (ckb_symcheck_file(cr.so_path, &sc) != 0) {
            eval__fail(&c, CKB_V_HARNESS_SYMCHECK, "%s", sc.error);
            goto done;
        }
        if (!sc.has_workload) {
            eval__fail(&c, CKB_V_COMPILE_NO_WORKLOAD,
                       "the file defines no function named workload");
            rc = 0;
            goto done;
        }
        if (sc.nforbidden) {
            eval__fail(&c, CKB_V_FORBIDDEN_IMPORT,
                       "calls functions a kernel may not use: %s", sc.forbidden);
            rc = 0;
            goto done;
        }
        if (eval__make_root(c.workdir, cr.so_path, &c.root_fd) != 0) {
            eval__fail(&c, CKB_V_HARNESS_WORKDIR,
                       "cannot make the sandbox's folder: %s", strerror(errno));
            goto done;
        }
        c.cand.root_fd = c.root_fd;
        if (o->expert_src && eval__compile_expert(&c) != 0)
            goto done;
    }

    r->stage = CKB_STAGE_LOAD;
    double t_setup = ckb_now();
    if (eval__map_in(&c) != 0 || eval__alloc_outputs(&c) != 0) {
        eval__fail(&c, CKB_V_HARNESS_MEMORY, "cannot map the shared buffers: %s",
                   strerror(errno));
        goto done;
    }
    r->nseeds = o->nseeds;
    for (int i = 0; i < o->nseeds; i++)
        r->seeds[i] = eval__draw_seed(o, i);
    /* From here to the end no other ckbench on this machine times. */
    ckb_excl_lock();
    locked = 1;
    if (eval__start(&c, &c.base, 0) != 0)
        goto done_ran;
    if (o->mode != CKB_MODE_BASELINE &&
        eval__start(&c, &c.cand, o->mode == CKB_MODE_CANDIDATE) != 0)
        goto done_ran;
    if (r->has_expert && eval__start(&c, &c.expert, 1) != 0) {
        if (r->status != CKB_ST_HARNESS_ERROR) /* its own failure, not the candidate's */
            eval__fail(&c, CKB_V_HARNESS_EXPERT, "the expert's sandbox did not start: %s",
                       r->message);
        goto done_ran;
    }
    r->setup_s = ckb_now() - t_setup;
    if (eval__correctness(&c) != 0)
        goto done_ran;
    if (eval__timing(&c) != 0)
        goto done_ran;
    if (o->mode != CKB_MODE_BASELINE && eval__final_check(&c) != 0)
        goto done_ran;
    r->correct = o->mode != CKB_MODE_BASELINE;
    r->status = CKB_ST_OK;
    r->stage = CKB_STAGE_DONE;
done_ran:
    rc = 0;
done:
    if (r->status != CKB_ST_OK)
        r->correct = 0;
    if (r->status == CKB_ST_HARNESS_ERROR)
        rc = -1;
    eval__release(&c);
    if (locked)
        ckb_excl_unlock();
    r->total_s = ckb_now() - t_start;
    return rc;
}
