/*
 * `ckbench eval` end to end on the 8p_GEMM corpus under tests/candidates:
 * a correct kernel passes with timings; each broken one ends with its own
 * status, and the harness itself always exits 0 with one JSON object.
 */
#include <json-c/json.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckbench.h"
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
#endif
}

CKBT_TEST(eval_catches_an_answer_that_changes_on_repeat, "quick")
{
    expect_status("gemm_repeat_differs.c", "nondeterministic", "repeat_differs", "correctness");
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
    const char *old = getenv("XDG_CACHE_HOME");
    char *saved = old ? strdup(old) : NULL;
    setenv("XDG_CACHE_HOME", cache, 1);
    /* where `ckbench eval` looks (ckb_machine_default_path's name, spelled
     * out: in this process the cache folder was fixed at its first use) */
    snprintf(path, sizeof path, "%s/ckbench/machine-%dt-%s.json", cache, threads,
             ckb_isa_name(ckb_isa_level()));
    CKBT_EXPECT(ckb_machine_save(&m, path) == 0, "cannot write %s", path);
    int code = -1;
    json_object *j = ckbt_eval("8p_GEMM", "gemm_plain.c", &code, "--warmup", "1", "--iters", "3",
                               NULL);
    if (saved) {
        setenv("XDG_CACHE_HOME", saved, 1);
        free(saved);
    } else {
        unsetenv("XDG_CACHE_HOME");
    }
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
