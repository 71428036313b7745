/*
 * `ckbench eval` end to end on the 8p_GEMM corpus under tests/candidates:
 * a correct kernel passes with timings; each broken one ends with its own
 * status, and the harness itself always exits 0 with one JSON object.
 */
#include <json-c/json.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckbench.h"
#include "core/proc.h"
#include "eval/eval.h"
#include "eval/perturb.h"
#include "machine/isa.h"
#include "machine/profile.h"
#include "workloads/workload.h"

#include "eval_util.h"
#include "harness.h"

static void expect_status(const char *file, const char *status, const char *detail,
                          const char *stage)
{
    int code = -1;
    json_object *j = ckbt_eval("8p_GEMM", file, &code, "--seed", "42", "--warmup", "1",
                               "--iters", "5", "--timeout-scale", "0.2", NULL);
    CKBT_EXPECT(code == 0, "%s: exit code %d", file, code);
    CKBT_EXPECT(strcmp(ckbt_str(j, "status"), status) == 0, "%s: status %s, wanted %s (%s)",
                file, ckbt_str(j, "status"), status, ckbt_str(j, "message"));
    if (detail)
        CKBT_EXPECT(strcmp(ckbt_str(j, "detail"), detail) == 0, "%s: detail %s, wanted %s",
                    file, ckbt_str(j, "detail"), detail);
    if (stage)
        CKBT_EXPECT(strcmp(ckbt_str(j, "stage"), stage) == 0, "%s: stage %s, wanted %s", file,
                    ckbt_str(j, "stage"), stage);
    if (strcmp(status, "ok") != 0)
        CKBT_EXPECT(json_object_get_boolean(json_object_object_get(j, "correct")) == 0,
                    "%s: a failed kernel marked correct", file);
    json_object_put(j);
}

CKBT_TEST(eval_passes_a_correct_plain_c_kernel, "quick")
{
    int code = -1;
    json_object *j = ckbt_eval("8p", "gemm_plain.c", &code, "--seeds", "3", "--warmup", "2",
                               "--iters", "7", NULL);
    CKBT_EXPECT(code == 0, "exit code %d", code);
    CKBT_EXPECT(strcmp(ckbt_str(j, "status"), "ok") == 0, "status %s: %s", ckbt_str(j, "status"),
                ckbt_str(j, "message"));
    CKBT_EXPECT(json_object_get_boolean(json_object_object_get(j, "correct")), "not correct");
    CKBT_EXPECT(json_object_array_length(json_object_object_get(j, "seeds")) == 3,
                "three seeds recorded");
    json_object *cand = json_object_object_get(j, "candidate");
    json_object *base = json_object_object_get(j, "baseline");
    CKBT_EXPECT(ckbt_num(cand, "median_ms") > 0 && ckbt_num(base, "median_ms") > 0,
                "both timed");
    CKBT_EXPECT((int)ckbt_num(cand, "n") == 7, "7 timed calls, got %g", ckbt_num(cand, "n"));
    CKBT_EXPECT(ckbt_num(j, "speedup") > 0, "a speedup");
    CKBT_EXPECT(ckbt_num(j, "gflops") > 0 && ckbt_num(j, "pct_of_peak") > 0, "GFLOP/s and %% of peak");
    CKBT_EXPECT(ckbt_num(j, "max_abs_err") < 0.1, "max_abs_err %g", ckbt_num(j, "max_abs_err"));
    json_object_put(j);
}

CKBT_TEST(eval_seeds_are_drawn_fresh_each_run, "quick")
{
    int code;
    json_object *a = ckbt_eval("8p", "gemm_plain.c", &code, "--iters", "1", "--warmup", "0", NULL);
    json_object *b = ckbt_eval("8p", "gemm_plain.c", &code, "--iters", "1", "--warmup", "0", NULL);
    const char *sa = json_object_get_string(json_object_array_get_idx(json_object_object_get(a, "seeds"), 0));
    const char *sb = json_object_get_string(json_object_array_get_idx(json_object_object_get(b, "seeds"), 0));
    CKBT_EXPECT(sa && sb && strcmp(sa, sb) != 0, "two runs drew the same seed %s", sa ? sa : "?");
    json_object_put(a);
    json_object_put(b);
}

CKBT_TEST(eval_compile_errors_are_classified, "quick")
{
    expect_status("gemm_syntax_error.c", "compile_error", "syntax", "compile");
    expect_status("gemm_wrong_signature.c", "compile_error", "wrong_signature", "compile");
    expect_status("gemm_unknown_intrinsic.c", "compile_error", "unknown_intrinsic", "compile");
    expect_status("gemm_undeclared.c", "compile_error", "undeclared", "compile");
    expect_status("gemm_link_error.c", "compile_error", "link", "compile");
    expect_status("gemm_no_workload.c", "compile_error", "no_workload", "symcheck");
}

CKBT_TEST(eval_rejects_a_forbidden_import, "quick")
{
    expect_status("gemm_fopen.c", "forbidden_symbol", "import", "symcheck");
}

/* Under AddressSanitizer the child's SIGSEGV is caught and reported by the
 * sanitizer, which then exits: still a crash, told by its report. */
#if defined(__SANITIZE_ADDRESS__)
#define SEGV_DETAIL "sanitizer"
#else
#define SEGV_DETAIL "SIGSEGV"
#endif

CKBT_TEST(eval_contains_crashes_and_hangs, "quick")
{
    expect_status("gemm_segfault.c", "crash", SEGV_DETAIL, "correctness");
    expect_status("gemm_writes_input.c", "crash", SEGV_DETAIL, "correctness");
    expect_status("gemm_overrun.c", "crash", SEGV_DETAIL, "correctness");
    expect_status("gemm_infinite_loop.c", "timeout", "wall_clock", "correctness");
}

CKBT_TEST(eval_catches_wrong_and_remembered_answers, "quick")
{
    expect_status("gemm_zeros.c", "wrong_result", "mismatch", "correctness");
    expect_status("gemm_off_by_5pct.c", "wrong_result", "mismatch", "correctness");
    expect_status("gemm_memoize.c", "wrong_result", "mismatch", "correctness");
}

CKBT_TEST(eval_reports_unknown_workload_and_missing_file, "quick")
{
    int code;
    json_object *j = ckbt_eval("99x_Nothing", "gemm_plain.c", &code, NULL);
    CKBT_EXPECT(code == 2 && j == NULL, "unknown workload: exit %d", code);
    json_object_put(j);
    j = ckbt_eval("8p", "does_not_exist.c", &code, NULL);
    CKBT_EXPECT(code == 1, "missing file: exit %d", code);
    CKBT_EXPECT(strcmp(ckbt_str(j, "status"), "harness_error") == 0, "status %s",
                ckbt_str(j, "status"));
    json_object_put(j);
}

CKBT_TEST(eval_kills_a_raw_system_call, "quick")
{
    /* Under AddressSanitizer the filter is off (its reports need files). */
#if !defined(__SANITIZE_ADDRESS__)
    expect_status("gemm_raw_syscall.c", "forbidden_symbol", "syscall", "correctness");
#else
    ckbt_skip("the system-call filter is compiled out under AddressSanitizer");
#endif
}

CKBT_TEST(eval_catches_an_answer_that_changes_on_repeat, "quick")
{
    expect_status("gemm_repeat_differs.c", "nondeterministic", "repeat_differs", "correctness");
}

/* The inputs are drawn by our OpenMP threads, which by libgomp's default
 * spin for milliseconds after each parallel region: left so, they took a
 * core from the first call of every pair (that call ran ~1.5x slower), and
 * the disturbance check, counting us as the kernels' own, did not see it.
 * Our threads must be idle inside every timed call (eval/quiet_harness.c),
 * and that is measured. */
CKBT_TEST(eval_harness_threads_stay_off_the_timed_calls, "quick")
{
    int code = -1;
    json_object *j = ckbt_eval("8p", "gemm_plain.c", &code, "--warmup", "2", "--iters", "12",
                               NULL);
    CKBT_EXPECT(code == 0 && strcmp(ckbt_str(j, "status"), "ok") == 0, "status %s: %s",
                ckbt_str(j, "status"), ckbt_str(j, "message"));
    json_object *h = NULL;
    CKBT_EXPECT(json_object_object_get_ex(j, "harness_pct", &h), "no harness_pct in the result");
    CKBT_EXPECT(json_object_get_double(h) < 2.0,
                "the harness's threads used %.1f%% of the CPUs during the timed calls",
                json_object_get_double(h));
    json_object_put(j);
}

/* The roofline check, with a machine profile that claims a peak of 1
 * MFLOP/s: an honest kernel then looks a thousand times faster than the
 * machine allows, as a kernel that skipped its work would on a real one. */
CKBT_TEST(eval_notes_a_kernel_faster_than_the_roofline, "quick")
{
    char cache[512], path[700];
    snprintf(cache, sizeof cache, "%s/fake-cache", ckbt_tmpdir());
    int threads = omp_get_num_procs();
    ckb_machine m;
    ckb_machine_probe(threads, &m);
    m.f32_gflops = m.bf16_gflops = m.f32_gflops_1t = m.bf16_gflops_1t = 0.001;
    m.bw_gbs = 0.001;
    snprintf(m.measured_at, sizeof m.measured_at, "2026-01-01T00:00:00Z");
    char *saved = ckbt_env_save("XDG_CACHE_HOME");
    setenv("XDG_CACHE_HOME", cache, 1);
    /* where `ckbench eval` looks (ckb_machine_default_path's name, spelled
     * out: in this process the cache folder was fixed at its first use) */
    snprintf(path, sizeof path, "%s/ckbench/machine-%dt-%s.json", cache, threads,
             ckb_isa_name(ckb_isa_level()));
    CKBT_EXPECT(ckb_machine_save(&m, path) == 0, "cannot write %s", path);
    int code = -1;
    json_object *j = ckbt_eval("8p_GEMM", "gemm_plain.c", &code, "--warmup", "1", "--iters", "3",
                               NULL);
    ckbt_env_restore("XDG_CACHE_HOME", saved);
    /* The clock and the outputs are out of the kernel's reach: a time under
     * the roof can only be less work than declared, which is legal; it is
     * noted, not judged. */
    CKBT_EXPECT(strcmp(ckbt_str(j, "status"), "ok") == 0 &&
                    json_object_get_boolean(json_object_object_get(j, "beyond_roofline")),
                "status %s, beyond_roofline %s (%s)", ckbt_str(j, "status"),
                json_object_to_json_string(json_object_object_get(j, "beyond_roofline")),
                ckbt_str(j, "message"));
    json_object_put(j);
}

/* Every input set of a wide-range workload is scaled, by a power of two
 * drawn per set, both ways: no set is ordinary, and the exponent is large
 * enough that an operand leaves half precision's range. */
CKBT_TEST(eval_every_set_of_a_wide_range_workload_is_wide, "quick")
{
    const ckb_workload *w = ckb_workload_find("8p");
    int pos = 0, neg = 0;
    for (uint64_t d = 1; d < 200; d++) {
        int e = ckb_widen_exponent(w, ckb_hash64(d, 0x77));
        CKBT_EXPECT(abs(e) >= w->wide_range - 3 && abs(e) <= w->wide_range && abs(e) >= 16,
                    "exponent %d out of range", e);
        pos += e > 0;
        neg += e < 0;
    }
    CKBT_EXPECT(pos > 50 && neg > 50, "signs not mixed: %d up, %d down", pos, neg);
    CKBT_EXPECT(ckb_widen_exponent(ckb_workload_find("12p"), 5) == 0,
                "a workload without a wide range was scaled");
    /* the scale 2^e is a normal float, which ckb_widen_inputs relies on */
    for (int i = 0; i < ckb_workload_count(); i++)
        CKBT_EXPECT(ckb_workload_at(i)->wide_range >= 0 && ckb_workload_at(i)->wide_range <= 126,
                    "%s: wide_range %d", ckb_workload_at(i)->id, ckb_workload_at(i)->wide_range);
}

/* Every set a kernel sees comes from its workload's own generator, so every
 * invariant the generator keeps holds on every call: 10p's routing gap
 * (MOE_MIN_GAP), which element swaps once broke so that an honest kernel
 * was judged a cheat one run in three. 7 checked sets and 25 timed ones. */
CKBT_TEST(eval_timed_sets_keep_the_workload_invariants, "quick")
{
    int code = -1;
    json_object *j = ckbt_eval("10p_Sparse_MoE", "legit_moe_plain.c", &code,
                               "--seeds", "7", "--warmup", "5", "--iters", "20", NULL);
    CKBT_EXPECT(j && strcmp(ckbt_str(j, "status"), "ok") == 0, "10p plain kernel: status %s (%s)",
                ckbt_str(j, "status"), ckbt_str(j, "message"));
    json_object_put(j);
}

/* The compiler sees the toolchain, the system headers, the compile folder
 * and ckbench's headers, nothing else of the host: a source that names a
 * host file (by absolute path, by ../, with .incbin, with __has_include)
 * finds nothing, and the file's bytes reach no part of the result. The
 * secret is world-readable in a world-readable folder, so only the
 * confinement, not a permission, keeps it out. */
static void eval__write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CKBT_EXPECT(f != NULL, "cannot write %s", path);
    if (!f)
        return;
    fputs(text, f);
    fclose(f);
}

static char *eval__slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return strdup("");
    char *buf = calloc(1, 1 << 16);
    size_t n = fread(buf, 1, (1 << 16) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

CKBT_TEST(eval_compile_sees_no_host_file, "quick")
{
    char secret_dir[] = "/tmp/ckbt-secret-XXXXXX", secret[64], marker[64], cwd[512];
    CKBT_EXPECT(mkdtemp(secret_dir) != NULL, "mkdtemp");
    CKBT_EXPECT(getcwd(cwd, sizeof cwd) != NULL, "getcwd");
    chmod(secret_dir, 0755);
    unsigned long long r = 0;
    FILE *u = fopen("/dev/urandom", "r");
    if (u) {
        CKBT_EXPECT(fread(&r, sizeof r, 1, u) == 1, "urandom");
        fclose(u);
    }
    snprintf(marker, sizeof marker, "CKBT_SECRET_%016llx", r);
    snprintf(secret, sizeof secret, "%s/key.txt", secret_dir);
    char text[256];
    /* Not C: an include of it fails with its first tokens quoted. */
    snprintf(text, sizeof text, "api-key: %s %s\n", marker, marker);
    eval__write_text(secret, text);
    chmod(secret, 0644);

    char *plain = eval__slurp("tests/candidates/gemm_plain.c");
    struct {
        const char *name;
        char src[8192];
        const char *says; /* the message must contain this, or NULL */
    } c[5];
    int n = 0;
    c[n].name = "include_absolute.c";
    snprintf(c[n].src, sizeof c[n].src, "#include \"%s\"\n%s", secret, plain);
    c[n++].says = NULL;
    /* From the compile folder, or from wherever the source is: enough ../
     * to reach / from any of them. */
    c[n].name = "include_dotdot.c";
    snprintf(c[n].src, sizeof c[n].src,
             "#include \"../../../../../../../../../../../../..%s\"\n%s", secret, plain);
    c[n++].says = NULL;
    /* A kernel that would compile and load with the secret in its object. */
    c[n].name = "incbin_secret.c";
    snprintf(c[n].src, sizeof c[n].src,
             "__asm__(\".section .rodata\\n.globl ckbt_secret\\nckbt_secret:\\n"
             ".incbin \\\"%s\\\"\\n.byte 0\\n.previous\");\n%s",
             secret, plain);
    c[n++].says = NULL;
    c[n].name = "has_include_secret.c";
    snprintf(c[n].src, sizeof c[n].src,
             "#if __has_include(\"%s\")\n#error the secret is visible\n#else\n"
             "#error secret_not_visible\n#endif\n",
             secret);
    c[n++].says = "secret_not_visible";
    /* Another file of ckbench's, by absolute path: the expert's source. */
    c[n].name = "include_expert_by_path.c";
    snprintf(c[n].src, sizeof c[n].src, "#include \"%s/workloads/8p_GEMM/expert.c\"\n", cwd);
    c[n++].says = NULL;
    free(plain);

    for (int i = 0; i < n; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s", ckbt_tmpdir(), c[i].name);
        eval__write_text(path, c[i].src);
        int code = -1;
        json_object *j = ckbt_eval("8p_GEMM", path, &code, "--seed", "42", "--warmup", "1",
                                   "--iters", "2", NULL);
        CKBT_EXPECT(j != NULL, "%s: no JSON", c[i].name);
        if (!j)
            continue;
        const char *all = json_object_to_json_string(j);
        CKBT_EXPECT(code == 0, "%s: exit code %d", c[i].name, code);
        CKBT_EXPECT(strcmp(ckbt_str(j, "status"), "compile_error") == 0,
                    "%s: status %s, wanted compile_error (%s)", c[i].name, ckbt_str(j, "status"),
                    ckbt_str(j, "message"));
        CKBT_EXPECT(strcmp(ckbt_str(j, "stage"), "compile") == 0, "%s: stage %s", c[i].name,
                    ckbt_str(j, "stage"));
        CKBT_EXPECT(strstr(all, marker) == NULL, "%s: the secret is in the result: %s",
                    c[i].name, all);
        if (c[i].says)
            CKBT_EXPECT(strstr(ckbt_str(j, "message"), c[i].says) != NULL,
                        "%s: message without %s: %s", c[i].name, c[i].says,
                        ckbt_str(j, "message"));
        json_object_put(j);
    }
    unlink(secret);
    rmdir(secret_dir);
}

/* No user namespaces, no compile: the evaluation fails closed, naming the
 * setting, and never runs the compiler unconfined. Simulated in a user
 * namespace of the test's own whose limit of nested namespaces is 0. */
CKBT_TEST(eval_compile_fails_closed_without_user_namespaces, "quick")
{
    char *argv[] = {"unshare", "-U", "-r", "sh", "-c",
                    "echo 0 > /proc/sys/user/max_user_namespaces || exit 99; "
                    "exec \"$0\" eval 8p tests/candidates/gemm_plain.c --size small --seeds 1",
                    (char *)ckbt_bin(), NULL};
    ckb_proc_result r;
    CKBT_EXPECT(ckb_proc_run(argv, 120, 1 << 20, &r) == 0, "cannot run unshare");
    if (!r.exited || r.exit_code == 99 || (r.exit_code != 0 && !strchr(r.output, '{'))) {
        ckbt_skip("this host gives the test no user namespace of its own: %.200s",
               r.output);
        ckb_proc_result_free(&r);
        return;
    }
    char *brace = strchr(r.output, '{');
    json_object *j = brace ? json_tokener_parse(brace) : NULL;
    CKBT_EXPECT(j != NULL, "no JSON: %s", r.output);
    CKBT_EXPECT(strcmp(ckbt_str(j, "status"), "harness_error") == 0, "status %s (%s)",
                ckbt_str(j, "status"), ckbt_str(j, "message"));
    CKBT_EXPECT(strcmp(ckbt_str(j, "stage"), "compile") == 0, "stage %s", ckbt_str(j, "stage"));
    CKBT_EXPECT(strcmp(ckbt_str(j, "detail"), "compiler") == 0, "detail %s", ckbt_str(j, "detail"));
    CKBT_EXPECT(strstr(ckbt_str(j, "message"), "user namespaces") != NULL, "message: %s",
                ckbt_str(j, "message"));
    json_object_put(j);
    ckb_proc_result_free(&r);
}

/* The headline figures are what their definitions say of the medians and
 * the workload's declared work, not merely positive (issue 34). */
CKBT_TEST(eval_headline_figures_follow_from_the_medians, "quick")
{
    int code = -1;
    json_object *j = ckbt_eval("8p", "gemm_plain.c", &code, "--seeds", "1", "--warmup", "2",
                               "--iters", "9", NULL);
    CKBT_EXPECT(j && !strcmp(ckbt_str(j, "status"), "ok"), "gemm_plain is ok: %s",
                ckbt_str(j, "message"));
    json_object *cand = NULL, *base = NULL, *dims = NULL;
    json_object_object_get_ex(j, "candidate", &cand);
    json_object_object_get_ex(j, "baseline", &base);
    json_object_object_get_ex(j, "dims", &dims);
    double cm = ckbt_num(cand, "median_ms"), bm = ckbt_num(base, "median_ms");
    double flops = ckbt_num(j, "flops"), bytes = ckbt_num(j, "bytes");
    double m = ckbt_num(dims, "M"), n = ckbt_num(dims, "N"), k = ckbt_num(dims, "K");
#define CLOSE(a, b) (fabs((a) - (b)) <= 1e-9 * fabs(b) + 1e-12)
    CKBT_EXPECT(cm > 0 && bm > 0, "medians %g %g", cm, bm);
    CKBT_EXPECT(ckbt_num(cand, "n") == 9 && ckbt_num(base, "n") == 9, "every timed call counted: "
                "%g and %g of 9", ckbt_num(cand, "n"), ckbt_num(base, "n"));
    CKBT_EXPECT(CLOSE(flops, 2 * m * n * k), "8p declares 2MNK flops: %g, M N K %g %g %g", flops, m,
                n, k);
    CKBT_EXPECT(CLOSE(ckbt_num(j, "speedup"), bm / cm), "speedup %g = baseline %g / candidate %g",
                ckbt_num(j, "speedup"), bm, cm);
    CKBT_EXPECT(CLOSE(ckbt_num(j, "gflops"), flops / (cm * 1e6)), "gflops %g = flops / median",
                ckbt_num(j, "gflops"));
    CKBT_EXPECT(CLOSE(ckbt_num(j, "baseline_gflops"), flops / (bm * 1e6)),
                "baseline gflops %g", ckbt_num(j, "baseline_gflops"));
    CKBT_EXPECT(CLOSE(ckbt_num(j, "pct_of_peak"), 100 * ckbt_num(j, "gflops") /
                                                       ckbt_num(j, "peak_gflops")),
                "%% of peak %g", ckbt_num(j, "pct_of_peak"));
    CKBT_EXPECT(CLOSE(ckbt_num(j, "arithmetic_intensity"), flops / bytes),
                "arithmetic intensity %g", ckbt_num(j, "arithmetic_intensity"));
#undef CLOSE
    json_object_put(j);
}

/* --vs-expert (upstream's speedup_vs_pallas): the expert is timed in the
 * same alternation, its figure follows from the medians, and an expert that
 * is wrong is the benchmark's fault, never the candidate's. */
CKBT_TEST(eval_vs_expert_times_the_expert_in_the_same_alternation, "quick")
{
    int code = -1;
    json_object *j = ckbt_eval("8p", "gemm_plain.c", &code, "--seeds", "1", "--warmup", "1",
                               "--iters", "9", "--vs-expert", NULL);
    CKBT_EXPECT(j && !strcmp(ckbt_str(j, "status"), "ok"), "gemm_plain --vs-expert is ok: %s",
                ckbt_str(j, "message"));
    json_object *cand = NULL, *exp = NULL, *params = NULL;
    json_object_object_get_ex(j, "candidate", &cand);
    json_object_object_get_ex(j, "expert", &exp);
    json_object_object_get_ex(exp, "params", &params);
    double cm = ckbt_num(cand, "median_ms"), em = ckbt_num(exp, "median_ms");
    CKBT_EXPECT(exp && ckbt_num(exp, "n") == 9 && em > 0, "the expert's 9 timed calls: n %g, "
                "median %g", ckbt_num(exp, "n"), em);
    CKBT_EXPECT(cm > 0 && fabs(ckbt_num(j, "speedup_vs_expert") - em / cm) <= 1e-9 * (em / cm),
                "speedup_vs_expert %g = expert %g / candidate %g",
                ckbt_num(j, "speedup_vs_expert"), em, cm);
    CKBT_EXPECT(params && json_object_array_length(params) > 0,
                "the expert's parameters are recorded");
    json_object_put(j);

    const ckb_workload *w = ckb_workload_find("8p_GEMM");
    ckb_eval_opts o;
    ckb_eval_result r;
    ckb_eval_opts_default(&o);
    o.size = CKB_SIZE_SMALL;
    o.nseeds = 1;
    o.warmup = 1;
    o.iters = 3;
    o.expert_src = "tests/candidates/gemm_off_by_5pct.c"; /* an "expert" that is wrong */
    int rc = ckb_eval_run(w, "tests/candidates/gemm_plain.c", &o, &r);
    CKBT_EXPECT(r.status == CKB_ST_HARNESS_ERROR && !strcmp(r.detail, "expert") &&
                    strstr(r.message, "the expert is wrong"),
                "a wrong expert: rc %d, %s / %s: %s", rc, ckb_status_name(r.status), r.detail,
                r.message);
    o.expert_src = "tests/candidates/gemm_syntax_error.c";
    ckb_eval_run(w, "tests/candidates/gemm_plain.c", &o, &r);
    CKBT_EXPECT(r.status == CKB_ST_HARNESS_ERROR && !strcmp(r.detail, "expert") &&
                    strstr(r.message, "does not compile"),
                "an expert that does not compile: %s / %s: %s", ckb_status_name(r.status),
                r.detail, r.message);
    code = -1;
    j = ckbt_eval("12p", "legit_rmsnorm_qsort_sincos.c", &code, "--vs-expert", NULL);
    CKBT_EXPECT(code == 2, "a workload without an expert is a bad command line (exit %d)", code);
    json_object_put(j);
}
