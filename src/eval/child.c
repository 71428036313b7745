/*
 * child.c — the inside of a sandbox (`ckbench __sandbox`), exec'd by the
 * trusted side in fresh namespaces with its limits applied (sandbox.c).
 *
 * A candidate's sandbox confines itself before the first instruction of
 * the candidate object can run: chroot into the folder holding only the
 * object, every capability dropped, no_new_privs, the OpenMP pool created,
 * then the seccomp filter synchronised to every thread, and only then
 * dlopen (whose constructors, .init_array entries and IFUNC resolvers
 * therefore run confined). A baseline's sandbox runs trusted code only and
 * is not filtered, but lives in the same kind of process.
 *
 * Then it obeys: on CALL it runs the kernel once on the input set mapped
 * read-only from IN and replies DONE. It keeps no figure and sees no oracle:
 * the trusted side times each call from the kernel's stamps on the replies
 * and copies the outputs while the process is stopped.
 */
#include "eval/child.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <omp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <immintrin.h>

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
    void *t[CKB_MAX_TENSORS]; /* inputs read-only from IN, outputs in OUT */
    child__fn cand;
    /* What the kernel must leave as it found it. */
    int omp_threads, omp_dynamic, omp_levels, omp_sched_chunk;
    omp_sched_t omp_sched;
    unsigned mxcsr;
} child__state;

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

/* Maps each tensor's chunk of its memfd between inaccessible pages, so an
 * overrun or underrun faults. Inputs are mapped read-only from a sealed
 * memfd: no mprotect can make them writable. Not core/alloc.h's abort on
 * failure: a mapping sized by the workload that fails is the evaluation's
 * result, which the parent reads from the exit code, and the child keeps
 * to write(2) and _exit (no stdio, no heap) once its filter is on. */
static int child__map_tensors(child__state *s)
{
    ckb_proto_layout l;
    ckb_proto_layout_of(s->w, s->dims, &l);
    const size_t page = 4096;
    for (int i = 0; i < s->w->ntensors; i++) {
        const ckb_proto_place *p = &l.t[i];
        int in = s->w->tensors[i].role == CKB_IN;
        char *base = mmap(NULL, p->chunk + 2 * page, PROT_NONE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (base == MAP_FAILED)
            return -1;
        void *m = mmap(base + page, p->chunk, in ? PROT_READ : PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_FIXED | MAP_POPULATE, in ? CKB_PROTO_FD_IN : CKB_PROTO_FD_OUT,
                       (off_t)p->chunk_off);
        if (m == MAP_FAILED)
            return -1;
        s->t[i] = base + page + (p->data_off - p->chunk_off);
    }
    return 0;
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
 * register, and records the first one found changed (the next call must
 * start from the state the baseline's calls start from). */
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

static int child__reply(char c)
{
    return write(CKB_PROTO_FD_REPLY, &c, 1) == 1 ? 0 : -1;
}

/* A system call the filter refused: say which on stderr and end. The
 * trusted side reads the number from there and the exit code. */
static void child__sigsys(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)uc;
    char msg[48] = "ckbench-sandbox: syscall ";
    char digits[24];
    int n = 0;
    unsigned v = (unsigned)si->si_syscall;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v && n < 20);
    size_t len = strlen(msg);
    while (n > 0)
        msg[len++] = digits[--n];
    msg[len++] = '\n';
    if (write(2, msg, len) < 0) {
    }
    _exit(CKB_PROTO_EXIT_SYSCALL);
}

/* Everything a root of a user namespace holds, given up: capabilities
 * (effective, permitted, inheritable, bounding, ambient), the way back to
 * them through set-user-ID programs or uid changes. */
static int child__drop_privileges(void)
{
    if (prctl(PR_SET_SECUREBITS, 0x2f /* NOROOT, NO_SETUID_FIXUP, KEEP_CAPS_LOCKED + locks */) !=
        0)
        return -1;
    for (int cap = 0; cap <= 63; cap++)
        prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    if (syscall(SYS_capset, &hdr, data) != 0)
        return -1;
    return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

/* Confines a candidate's sandbox; everything before the first instruction
 * of the candidate object. */
static int child__confine(child__state *s)
{
    if (fchdir(CKB_PROTO_FD_ROOT) != 0 || chroot(".") != 0 || chdir("/") != 0) {
        snprintf(s->h->msg, sizeof s->h->msg, "cannot enter the sandbox's folder");
        return -1;
    }
    close(CKB_PROTO_FD_ROOT);
    if (child__drop_privileges() != 0) {
        snprintf(s->h->msg, sizeof s->h->msg, "cannot drop the sandbox's privileges");
        return -1;
    }
    /* AMX tile data needs the kernel's permission once per process, asked
     * with a system call the filter refuses: every candidate gets what the
     * library baseline has (a CPU without AMX says no: fine). */
    syscall(SYS_arch_prctl, CHILD_ARCH_REQ_XCOMP_PERM, CHILD_XFEATURE_XTILEDATA);
    /* The pool of the thread budget, made now, before the filter: threads
     * made later (a team outgrowing a smaller one) inherit the filter and
     * the budget's CPUs (child__pin). */
    volatile int sink = 0;
#pragma omp parallel
    sink += omp_get_thread_num() >= 0;
    (void)sink;
    struct sigaction sa = {.sa_sigaction = child__sigsys, .sa_flags = SA_SIGINFO};
    sigaction(SIGSYS, &sa, NULL);
    if (ckb_syscalls_restrict(CKB_PROTO_FD_CMD, CKB_PROTO_FD_REPLY) != 0) {
        snprintf(s->h->msg, sizeof s->h->msg, "cannot install the seccomp filter");
        return -1;
    }
    return 0;
}

static int child__load(child__state *s, const char *so_name)
{
    char path[256];
    snprintf(path, sizeof path, "/%s", so_name);
    void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    void *sym = so ? dlsym(so, "workload") : NULL;
    if (!sym) {
        s->h->load_error = 1;
        snprintf(s->h->msg, sizeof s->h->msg, "%s", so ? "no symbol workload" : dlerror());
        return -1;
    }
    s->cand = (child__fn)sym;
    return 0;
}

/* The thread budget held by the CPUs, not by counting threads: the first
 * `threads` CPUs this process may use, set before any thread exists, so that
 * every thread made later (OpenMP's pool, one a kernel clones) inherits them
 * and no number of threads runs on more (the filter refuses
 * sched_setaffinity). Both sandboxes get the same CPUs. */
static int child__pin(int threads)
{
    cpu_set_t allowed, pin;
    if (threads < 1 || sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        return -1;
    CPU_ZERO(&pin);
    for (int c = 0, n = 0; c < CPU_SETSIZE && n < threads; c++)
        if (CPU_ISSET(c, &allowed)) {
            CPU_SET(c, &pin);
            n++;
        }
    return sched_setaffinity(0, sizeof pin, &pin);
}

int ckb_child_main(int argc, char **argv)
{
    /* argv: __sandbox WORKLOAD SIZE SO_NAME|- */
    if (argc < 5)
        return 2;
    child__state s = {0};
    s.h = mmap(NULL, CKB_PROTO_HEADER_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, CKB_PROTO_FD_OUT,
               0);
    if (s.h == MAP_FAILED)
        return 2;
    ckb_size size;
    s.w = ckb_workload_find(argv[2]);
    if (s.h->magic != CKB_PROTO_MAGIC || !s.w)
        return 2;
    if (strncmp(argv[3], "host=", 5) == 0) {
        size = CKB_SIZE_HOST;
        if (ckb_workload_set_host_scale(s.w, strtoll(argv[3] + 5, NULL, 10)) != 0)
            return 2;
    } else if (ckb_size_parse(argv[3], &size) != 0) {
        return 2;
    }
    ckb_workload_dims(s.w, size, s.dims);
    if (child__pin(s.h->threads) != 0)
        return 2;
    omp_set_num_threads(s.h->threads);
    if (child__map_tensors(&s) != 0)
        return 3;
    close(CKB_PROTO_FD_IN);
    close(CKB_PROTO_FD_OUT);

    s.h->stage = CKB_STAGE_LOAD;
    int candidate = strcmp(argv[4], "-") != 0;
    if (candidate) {
        if (child__confine(&s) != 0)
            return 4;
        if (child__reply(CKB_REPLY_OPENING) != 0)
            return 2;
        if (child__load(&s, argv[4]) != 0) {
            child__reply(CKB_REPLY_LOAD_ERROR);
            return 0;
        }
    } else if (child__drop_privileges() != 0) {
        return 4;
    }
    child__save_state(&s);
    if (child__reply(CKB_REPLY_READY) != 0)
        return 2;

    for (;;) {
        unsigned char cmd[2];
        if (read(CKB_PROTO_FD_CMD, cmd, 2) != 2)
            return 0; /* the trusted side is gone */
        if (cmd[0] == CKB_CMD_QUIT)
            return 0;
        if (cmd[0] != CKB_CMD_CALL)
            return 2;
        if (candidate) {
            child__call(s.cand, s.w->ntensors, s.t);
            child__restore_state(&s);
        } else {
            s.w->baseline(s.dims, s.t);
        }
        char done[2] = {CKB_REPLY_DONE, (char)cmd[1]};
        if (write(CKB_PROTO_FD_REPLY, done, 2) != 2)
            return 2;
    }
}
