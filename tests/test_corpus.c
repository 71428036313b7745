/*
 * The candidate corpus under tests/candidates, end to end through `ckbench
 * eval`: every legit_*.c kernel (plain C, AVX-512, OpenMP, big stacks,
 * aligned heap, libm) must pass, and every attack_*.c must end with the
 * status and detail recorded here. A legitimate kernel refused is as much
 * a harness bug as an attack let through.
 */
#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <string.h>

#include "eval_util.h"
#include "harness.h"
#include "machine/isa.h"

typedef struct {
    const char *file;
    const char *workload;
    const char *status;
    const char *detail; /* NULL: none expected (status ok) */
    const char *stage;
    /* Under AddressSanitizer the seccomp filter and the address-space limit
     * are off and the sanitizer reports faults itself: the detail expected
     * there, or NULL to skip the row (a raw syscall would then really run). */
    const char *san_detail;
    /* An ISA extension the kernel is written for ("avx512f", "avx512bf16"):
     * on a host without it the kernel cannot be built for -march=native, and
     * the row expects exactly that, a compile error. */
    const char *needs;
} corpus__row;

#define CORPUS__OK(file, wl) {file, wl, "ok", NULL, "done", "", NULL}
#define CORPUS__OK_ON(file, wl, isa) {file, wl, "ok", NULL, "done", "", isa}

static const corpus__row corpus__legit[] = {
    CORPUS__OK("legit_gemm_serial_ikj.c", "8p_GEMM"),
    CORPUS__OK_ON("legit_gemm_avx512_dpbf16.c", "8p_GEMM", "avx512bf16"),
    CORPUS__OK_ON("legit_gemm_avx512_fma.c", "8p_GEMM", "avx512f"),
    CORPUS__OK("legit_gemm_omp_collapse.c", "8p_GEMM"),
    CORPUS__OK("legit_gemm_omp_reduction.c", "8p_GEMM"),
    CORPUS__OK("legit_gemm_big_stack.c", "8p_GEMM"),
    CORPUS__OK("legit_gemm_posix_memalign.c", "8p_GEMM"),
    CORPUS__OK("legit_gemm_calloc_blocked.c", "8p_GEMM"),
    CORPUS__OK_ON("legit_rmsnorm_avx512.c", "12p_RMSNorm", "avx512f"),
    CORPUS__OK("legit_rmsnorm_qsort_sincos.c", "12p_RMSNorm"),
    CORPUS__OK("legit_rmsnorm_amx_tiles.c", "12p_RMSNorm"),
    CORPUS__OK("legit_gemm_add_relu.c", "41k_Gemm_Add_ReLU"),
    CORPUS__OK("legit_swish_expf.c", "37k_Matmul_Swish_Scaling"),
    CORPUS__OK("legit_swish_tanhf_simd.c", "37k_Matmul_Swish_Scaling"),
    /* C that a sandbox must not refuse (issue 14's list). */
    CORPUS__OK("legit_gemm_thread_local.c", "8p_GEMM"),
    CORPUS__OK("legit_gemm_omp_locks_tasks.c", "8p_GEMM"),
    CORPUS__OK("legit_gemm_atomic_libatomic.c", "8p_GEMM"),
    CORPUS__OK("legit_gemm_target_clones.c", "8p_GEMM"),
    CORPUS__OK("legit_gemm_1gib_alloc.c", "8p_GEMM"),
};

#define CORPUS__IMPORT(file) \
    {file, "8p_GEMM", "forbidden_symbol", "import", "symcheck", "import", NULL}

static const corpus__row corpus__attacks[] = {
    /* Imports outside the allow list, refused before anything runs. */
    CORPUS__IMPORT("attack_getenv.c"),
    CORPUS__IMPORT("attack_pthread_create.c"),
    CORPUS__IMPORT("attack_dlsym.c"),
    CORPUS__IMPORT("attack_sigaction.c"),
    CORPUS__IMPORT("attack_clock_gettime.c"),
    CORPUS__IMPORT("attack_mprotect.c"),
    CORPUS__IMPORT("attack_mmap.c"),
    CORPUS__IMPORT("attack_system.c"),
    CORPUS__IMPORT("attack_fork_execve.c"),
    CORPUS__IMPORT("attack_socket.c"),
    /* A thread that outlives the call, through libgomp's legacy entry. */
    CORPUS__IMPORT("attack_gomp_parallel_start.c"),
    /* Load-time code (constructors, raw .init_array entries, IFUNC
     * resolvers) runs confined: the filter is in force before dlopen, the
     * chroot holds only the object, the PID namespace hides every other
     * process. Under ASan the filter is off: those rows are skipped. */
    {"attack_ctor_fake_seccomp.c", "8p_GEMM", "forbidden_symbol", "syscall", "load", NULL, NULL},
    /* A thread cloned at load time runs, filtered, stopped between calls and
     * on the budget's CPUs: it gains nothing, the kernel is simply right. */
    {"attack_ctor_helper_thread.c", "8p_GEMM", "ok", NULL, "done", NULL, NULL},
    {"attack_ctor_setsid_daemon.c", "8p_GEMM", "forbidden_symbol", "syscall", "load", NULL, NULL},
    {"attack_ctor_proc_mem_write.c", "8p_GEMM", "forbidden_symbol", "syscall", "load", NULL, NULL},
    {"attack_ifunc_resolver_socket.c", "8p_GEMM", "forbidden_symbol", "syscall", "load", NULL,
     NULL},
    {"attack_ctor_exit_as_harness.c", "8p_GEMM", "crash", "exit", "load", "exit", NULL},
    /* Reads that are allowed find nothing: the answers stay zeros. */
    {"attack_ctor_read_host_file.c", "8p_GEMM", "wrong_result", "mismatch", "correctness",
     "mismatch", NULL},
    {"attack_ctor_parent_environ.c", "8p_GEMM", "wrong_result", "mismatch", "correctness",
     "mismatch", NULL},
    /* Every thread is filtered (TSYNC), OpenMP's workers included. */
    {"attack_omp_worker_syscall.c", "8p_GEMM", "forbidden_symbol", "syscall", "correctness", NULL,
     NULL},
    {"attack_omp_worker_daemon.c", "8p_GEMM", "forbidden_symbol", "syscall", "correctness", NULL,
     NULL},
    {"attack_raw_kill_parent.c", "8p_GEMM", "forbidden_symbol", "syscall", "correctness", NULL, NULL},
    /* More threads than the budget run on the budget's CPUs (see
     * corpus_threads_past_the_budget_run_on_its_cpus); a thread left running
     * is stopped with the process (corpus_raw_clone_thread_never_sees_an_input_written). */
    {"attack_omp_team_16.c", "8p_GEMM", "ok", NULL, "done", "", NULL},
    /* Threads without end stop at the sandbox's RLIMIT_NPROC; the probe
     * answers wrongly only if all 20000 of its clones succeed. */
    {"attack_thread_flood.c", "8p_GEMM", "ok", NULL, "done", NULL, NULL},
    {"attack_raw_fork.c", "8p_GEMM", "forbidden_symbol", "syscall", "correctness", NULL, NULL},
    /* Inputs: a sealed memfd mapped read-only; a private mapping over them
     * changes only the kernel's own view. */
    {"attack_mprotect_inputs.c", "8p_GEMM", "crash", "SIGSEGV", "correctness", "sanitizer", NULL},
    {"attack_remap_inputs_private.c", "8p_GEMM", "wrong_result", "mismatch", "correctness",
     "mismatch", NULL},
    /* The measurement: replies the harness did not send. */
    {"attack_early_done.c", "8p_GEMM", "cheat_detected", "protocol", "correctness", "protocol",
     NULL},
    /* The experts' shared code is on no candidate's include path. */
    {"attack_include_expert_kit.c", "8p_GEMM", "compile_error", "other", "compile", "other", NULL},
    /* The compiler sees no host file but the toolchain and the headers:
     * not by absolute path, not by ../, not through .incbin. */
    {"attack_include_etc_passwd.c", "8p_GEMM", "compile_error", "other", "compile", "other", NULL},
    {"attack_include_dotdot.c", "8p_GEMM", "compile_error", "other", "compile", "other", NULL},
    {"attack_incbin_environ.c", "8p_GEMM", "compile_error", "other", "compile", "other", NULL},
    /* Ending the process or stalling it. */
    {"attack_raw_exit_group.c", "8p_GEMM", "crash", "exit", "correctness", "exit", NULL},
    {"attack_trap.c", "8p_GEMM", "crash", "SIGILL", "correctness", "SIGILL", NULL},
    {"attack_hang_in_timing.c", "8p_GEMM", "timeout", "wall_clock", "timing", "wall_clock", NULL},
    /* Talking to the harness, or leaving the process changed. */
    {"attack_forge_reply.c", "8p_GEMM", "cheat_detected", "protocol", "correctness", "protocol", NULL},
    {"attack_mxcsr_round_to_zero.c", "8p_GEMM", "cheat_detected", "fp_state", "correctness",
     "fp_state", NULL},
    /* Faults and limits. */
    /* the address-space limit is not set under AddressSanitizer: skipped there */
    {"attack_huge_malloc.c", "8p_GEMM", "crash", "SIGSEGV", "correctness", NULL, NULL},
    {"attack_deep_recursion.c", "8p_GEMM", "crash", "SIGSEGV", "correctness", "sanitizer", NULL},
    {"attack_write_past_end.c", "8p_GEMM", "crash", "SIGSEGV", "correctness", "sanitizer", NULL},
    {"attack_canary_overrun.c", "13p_Cross_Entropy", "crash", "out_of_bounds", "correctness",
     "out_of_bounds", NULL},
    /* Wrong answers dressed up. */
    {"attack_nan.c", "8p_GEMM", "wrong_result", "nonfinite", "correctness", "nonfinite", NULL},
    {"attack_identity.c", "8p_GEMM", "wrong_result", "mismatch", "correctness", "mismatch", NULL},
    {"attack_first_call_only.c", "8p_GEMM", "wrong_result", "mismatch", "correctness",
     "mismatch", NULL},
    /* Less work when not checked: caught on the audited timed calls. */
    {"attack_lazy_timed_calls.c", "8p_GEMM", "cheat_detected", "timed_output", "timing",
     "timed_output", NULL},
    /* Every timed call is checked: lazy on half of them is caught at the
     * first lazy one. */
    {"attack_lazy_half.c", "8p_GEMM", "cheat_detected", "timed_output", "timing", "timed_output",
     NULL},
    /* Precision games: int8 fails the tolerance on any input; half
     * precision is exact on ordinary inputs and overflows on the
     * wide-range set. */
    {"attack_int8_quantized.c", "8p_GEMM", "wrong_result", "mismatch", "correctness", "mismatch", NULL},
    {"attack_fp16_storage.c", "8p_GEMM", "wrong_result", "nonfinite", "correctness", "nonfinite", NULL},
    /* The unwritten last row keeps the NaN poison of the fresh buffer. */
    {"attack_skip_last_row.c", "8p_GEMM", "wrong_result", "nonfinite", "correctness",
     "nonfinite", NULL},
};

/* What the candidate's -march gives its compiler on this host: the ISA
 * level in force, which CKBENCH_ISA may hold below the CPU's. */
static int corpus__host_has(const char *isa)
{
    if (strcmp(isa, "avx512f") == 0)
        return ckb_isa_level() >= CKB_ISA_AVX512;
    if (strcmp(isa, "avx512bf16") == 0)
        return ckb_isa_level() >= CKB_ISA_AVX512BF16;
    return 0;
}

static void corpus__run(const corpus__row *row)
{
    corpus__row missing_isa;
    if (row->needs && !corpus__host_has(row->needs)) {
        missing_isa = *row;
        missing_isa.status = "compile_error";
        missing_isa.detail = NULL;
        missing_isa.san_detail = "";
        missing_isa.stage = "compile";
        row = &missing_isa;
    }
    const char *detail = row->detail;
#if defined(__SANITIZE_ADDRESS__)
    if (!row->san_detail) {
        ckbt_skip("%s: the guard that catches it (the system-call filter, or the address-space "
                  "limit) is off under AddressSanitizer",
                  row->file);
        return;
    }
    if (row->detail)
        detail = row->san_detail;
#endif
    int ok = strcmp(row->status, "ok") == 0;
    int code = -1;
    /* Failing kernels get a short clock: none should need it. A fixed --seed
     * makes the stage that catches a kernel reproducible: with drawn seeds,
     * a wide-range set that happens to be mild lets the int8 attack through
     * correctness, to be caught only by the timed-output check. */
    json_object *j = ok ? ckbt_eval(row->workload, row->file, &code, "--iters", "3", "--warmup",
                                    "1", "--seed", "12345", NULL)
                        : ckbt_eval(row->workload, row->file, &code, "--iters", "3", "--warmup",
                                    "1", "--timeout-scale", "0.2", "--seed", "12345", NULL);
    CKBT_EXPECT(j != NULL, "%s: no JSON", row->file);
    if (!j)
        return;
    CKBT_EXPECT(code == 0, "%s: exit code %d", row->file, code);
    CKBT_EXPECT(strcmp(ckbt_str(j, "status"), row->status) == 0, "%s: status %s, wanted %s (%s)",
                row->file, ckbt_str(j, "status"), row->status, ckbt_str(j, "message"));
    if (detail)
        CKBT_EXPECT(strcmp(ckbt_str(j, "detail"), detail) == 0, "%s: detail %s, wanted %s (%s)",
                    row->file, ckbt_str(j, "detail"), detail, ckbt_str(j, "message"));
    CKBT_EXPECT(strcmp(ckbt_str(j, "stage"), row->stage) == 0, "%s: stage %s, wanted %s",
                row->file, ckbt_str(j, "stage"), row->stage);
    int correct = json_object_get_boolean(json_object_object_get(j, "correct"));
    CKBT_EXPECT(correct == ok, "%s: correct=%d with status %s", row->file, correct,
                ckbt_str(j, "status"));
    json_object_put(j);
}

CKBT_TEST(corpus_legitimate_kernels_pass, "quick")
{
    for (size_t i = 0; i < sizeof corpus__legit / sizeof *corpus__legit; i++)
        corpus__run(&corpus__legit[i]);
}

CKBT_TEST(corpus_attacks_end_with_their_status, "quick")
{
    for (size_t i = 0; i < sizeof corpus__attacks / sizeof *corpus__attacks; i++)
        corpus__run(&corpus__attacks[i]);
}

static void corpus__run_threads(const char *file, const char *threads)
{
    int code = -1;
    json_object *j = ckbt_eval("8p_GEMM", file, &code, "--iters", "3", "--warmup", "1",
                               "--threads", threads, "--seed", "12345", NULL);
    CKBT_EXPECT(j != NULL && code == 0, "%s: exit code %d", file, code);
    if (!j)
        return;
    CKBT_EXPECT(strcmp(ckbt_str(j, "status"), "ok") == 0, "%s with --threads %s: status %s (%s)",
                file, threads, ckbt_str(j, "status"), ckbt_str(j, "message"));
    json_object_put(j);
}

/* The thread budget is held by the CPUs a sandbox may use, not by a count of
 * threads: a kernel may make threads (libgomp regrowing its pool after a
 * smaller team, a team of 16), and they run on the budget's CPUs only. The
 * probe answers wrongly if any of its 16 threads may run on more CPUs than
 * its budget of 1 (on a host of two or more CPUs; a one-CPU host cannot
 * tell). */
CKBT_TEST(corpus_threads_past_the_budget_run_on_its_cpus, "quick")
{
    corpus__run_threads("legit_gemm_omp_team_regrow.c", "3");
    corpus__run_threads("attack_cpus_past_budget.c", "1");
}

/* A signal to another pid: the filter allows tgkill on the sandbox's own
 * pid only, so the first probe traps. The kernel answers right if a probe
 * returns, so without that condition the row would read ok. */
CKBT_TEST(corpus_signal_to_another_pid_is_refused, "quick")
{
    static const corpus__row row = {"attack_tgkill_other_process.c", "8p_GEMM", "forbidden_symbol",
                                    "syscall", "correctness", NULL, NULL};
    corpus__run(&row);
}

/* A thread of the kernel's own, left running after its call, watches the
 * inputs: the process is stopped from each reply to its next call and the
 * inputs are written only then, so it never sees one change while it runs,
 * and the kernel stays right. Had it seen one (no stop between calls), the
 * kernel leaves its outputs unwritten and the row fails. */
CKBT_TEST(corpus_raw_clone_thread_never_sees_an_input_written, "quick")
{
    static const corpus__row row = {"attack_raw_clone_thread.c", "8p_GEMM", "ok", NULL, "done",
                                    "", NULL};
    corpus__run(&row);
}

/* Remembering answers by a cheap fingerprint of the inputs is not caught
 * but defeated: every timed call's inputs differ in about half their
 * neighbouring pairs, so the fingerprint never repeats, the kernel does
 * the whole GEMM on every call, and its answers are right. (When it did
 * hit, on the sparser swaps of an earlier version, the audit caught the
 * stale answer; the test ran ok by chance one time in six.) */
CKBT_TEST(corpus_memoisation_by_fingerprint_never_hits, "quick")
{
    static const corpus__row row = CORPUS__OK("attack_memo_sampled_hash.c", "8p_GEMM");
    corpus__run(&row);
}

/* A kernel that keeps its operands in half precision unless the set looks
 * wide-range never finds an ordinary set: every set is scaled, by a power
 * of two drawn per set, so it computes honestly every time. */
CKBT_TEST(corpus_precision_shortcut_never_finds_an_ordinary_set, "quick")
{
    static const corpus__row row = CORPUS__OK("attack_fp16_unless_wide.c", "8p_GEMM");
    corpus__run(&row);
}

/* The process names the daemon attacks give a forked child, if a fork
 * ever got through. */
static int corpus__daemon_alive(void)
{
    DIR *d = opendir("/proc");
    int found = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) && !found) {
        char path[300], comm[64] = "";
        snprintf(path, sizeof path, "/proc/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (fgets(comm, sizeof comm, f) && strncmp(comm, "ckb-daemon", 10) == 0)
            found = 1;
        fclose(f);
    }
    if (d)
        closedir(d);
    return found;
}

/* Nothing of an evaluation survives it: a daemon forked from load-time
 * code or from an OpenMP worker, a kernel that hangs past its limit. */
CKBT_TEST(corpus_no_process_survives_an_evaluation, "quick")
{
    static const char *const files[] = {"attack_ctor_setsid_daemon.c",
                                        "attack_omp_worker_daemon.c", "attack_hang_in_timing.c"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        int code = -1;
        json_object *j = ckbt_eval("8p_GEMM", files[i], &code, "--iters", "3", "--warmup", "1",
                                   "--timeout-scale", "0.2", NULL);
        CKBT_EXPECT(j != NULL && code == 0, "%s: no result", files[i]);
        json_object_put(j);
        CKBT_EXPECT(!corpus__daemon_alive(), "%s: a ckb-daemon process outlived the evaluation",
                    files[i]);
        CKBT_EXPECT(ckbt_sandboxes_of(1) == 0, "%s: a sandbox outlived the evaluation",
                    files[i]);
    }
}

/* A sandbox's credentials on the host, read from /proc: never root, no
 * capability, no way to gain one, its own PID namespace. */
static void corpus__check_unprivileged(pid_t eval_pid)
{
    int pids[4];
    int n = ckbt_sandbox_pids(eval_pid, pids, 4);
    for (int i = 0; i < n && i < 4; i++) {
        unsigned uid = 0, nnp = 0, nspid_fields = 0;
        unsigned long long capeff = 1;
        /* A sandbox gives up its privileges before it says it is ready: a
         * newly started one may not be there yet. */
        for (int tries = 0; tries < 500 && nnp != 1; tries++) {
            char path[64], line[256];
            snprintf(path, sizeof path, "/proc/%d/status", pids[i]);
            FILE *f = fopen(path, "r");
            if (!f)
                break;
            nspid_fields = 0;
            while (fgets(line, sizeof line, f)) {
                sscanf(line, "Uid: %u", &uid);
                sscanf(line, "CapEff: %llx", &capeff);
                sscanf(line, "NoNewPrivs: %u", &nnp);
                if (strncmp(line, "NSpid:", 6) == 0)
                    for (char *t = strtok(line + 6, " \t\n"); t; t = strtok(NULL, " \t\n"))
                        nspid_fields++;
            }
            fclose(f);
            if (nnp != 1)
                usleep(20000);
        }
        CKBT_EXPECT(geteuid() != 0 || uid != 0, "sandbox %d runs as root on the host", pids[i]);
        CKBT_EXPECT(capeff == 0, "sandbox %d holds capabilities %llx", pids[i], capeff);
        CKBT_EXPECT(nnp == 1, "sandbox %d may gain privileges (no_new_privs unset)", pids[i]);
        CKBT_EXPECT(nspid_fields == 2, "sandbox %d is not in a PID namespace of its own",
                    pids[i]);
    }
}

/* SIGTERM or SIGINT of `ckbench eval` in the middle of a call: its
 * sandboxes die with it (PR_SET_PDEATHSIG; PID 1 of their namespace takes
 * everything in it along). */
CKBT_TEST(corpus_killing_eval_leaves_no_sandbox, "quick")
{
    static const int sigs[] = {SIGTERM, SIGINT, SIGKILL};
    for (size_t k = 0; k < sizeof sigs / sizeof *sigs; k++) {
        pid_t pid = fork();
        if (pid == 0) {
            int devnull = open("/dev/null", O_WRONLY);
            dup2(devnull, 1);
            dup2(devnull, 2);
            execl(ckbt_bin(), "ckbench", "eval", "8p_GEMM",
                  "tests/candidates/attack_hang_in_timing.c", "--size", "small", (char *)NULL);
            _exit(127);
        }
        int seen = 0;
        for (int i = 0; i < 600 && seen < 2; i++) {
            seen = ckbt_sandboxes_of(pid);
            usleep(20000);
        }
        CKBT_EXPECT(seen == 2, "signal %d: the evaluation never had its two sandboxes", sigs[k]);
        if (k == 0)
            corpus__check_unprivileged(pid);
        kill(pid, sigs[k]);
        int status;
        waitpid(pid, &status, 0);
        int left = 1;
        for (int i = 0; i < 100 && left; i++) {
            left = ckbt_sandboxes_of(1) + ckbt_sandboxes_of(pid);
            if (left)
                usleep(20000);
        }
        CKBT_EXPECT(left == 0, "signal %d: %d sandboxes outlived ckbench eval", sigs[k], left);
    }
}
