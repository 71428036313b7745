/* The small pieces every verdict rests on: bf16 rounding, allclose, stats,
 * the import allow list, guard pages' canaries, atomic writes. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/fsutil.h"
#include "core/stats.h"
#include "eval/check.h"
#include "eval/symcheck.h"
#include "guard.h"
#include "harness.h"

CKBT_TEST(bf16_rounds_to_nearest_even, "quick")
{
    CKBT_EXPECT(ckb_f32_to_bf16(1.0f) == 0x3f80, "1.0");
    /* 1 + 2^-8 is exactly halfway between 1 and 1 + 2^-7: ties go to even (1.0) */
    CKBT_EXPECT(ckb_f32_to_bf16(1.0f + 1.0f / 256) == 0x3f80, "tie to even down");
    /* 1 + 3*2^-8 is halfway between 1+2^-7 (odd) and 1+2^-6: up to even */
    CKBT_EXPECT(ckb_f32_to_bf16(1.0f + 3.0f / 256) == 0x3f82, "tie to even up");
    CKBT_EXPECT(isnan(ckb_bf16_to_f32(ckb_f32_to_bf16(NAN))), "NaN stays NaN");
    CKBT_EXPECT(ckb_bf16_to_f32(ckb_f32_to_bf16(-2.5f)) == -2.5f, "exact values survive");
}

CKBT_TEST(allclose_follows_its_formula, "quick")
{
    float want[4] = {1.0f, -2.0f, 0.0f, NAN}, got[4] = {1.019f, -2.0f, 0.0099f, NAN};
    ckb_check c;
    ckb_check_allclose(CKB_F32, got, want, 4, 1e-2, 1e-2, &c);
    CKBT_EXPECT(c.ok, "within atol + rtol*|want|: nbad %lld", (long long)c.nbad);
    got[0] = 1.021f; /* 0.021 > 0.01 + 0.01 */
    ckb_check_allclose(CKB_F32, got, want, 4, 1e-2, 1e-2, &c);
    CKBT_EXPECT(!c.ok && c.nbad == 1 && c.worst == 0, "one element out");
    got[0] = 1.0f;
    got[1] = INFINITY;
    ckb_check_allclose(CKB_F32, got, want, 4, 1e-2, 1e-2, &c);
    CKBT_EXPECT(!c.ok && c.nonfinite == 1, "Inf where the oracle is finite is wrong");
    got[1] = -2.0f;
    got[3] = 0.0f;
    ckb_check_allclose(CKB_F32, got, want, 4, 1e-2, 1e-2, &c);
    CKBT_EXPECT(!c.ok, "the oracle's NaN is no wildcard");
}

CKBT_TEST(stats_median_mean_std, "quick")
{
    double x[] = {5, 1, 3, 2, 4};
    ckb_stats s = ckb_stats_of(x, 5);
    CKBT_EXPECT(s.median == 3 && s.min == 1 && s.max == 5 && s.mean == 3, "odd count");
    CKBT_EXPECT(fabs(s.std - sqrt(2.5)) < 1e-12, "sample std %g", s.std);
    ckb_stats e = ckb_stats_of(x, 4);
    CKBT_EXPECT(e.median == 2.5, "even count: %g", e.median);
}

CKBT_TEST(import_allow_list, "quick")
{
    const char *ok[] = {"expf", "exp", "tanhf", "memcpy", "aligned_alloc", "GOMP_parallel",
                        "omp_get_thread_num", "_ZGVeN16v_expf", "__stack_chk_fail"};
    const char *bad[] = {"fopen", "open", "syscall", "dlopen", "dlsym", "mprotect", "fork",
                         "pthread_create", "signal", "clock_gettime", "omp_set_num_threads",
                         "getenv", "socket", "expfoo", "system", "mmap"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        CKBT_EXPECT(ckb_symcheck_allowed(ok[i]), "%s should be allowed", ok[i]);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CKBT_EXPECT(!ckb_symcheck_allowed(bad[i]), "%s should be forbidden", bad[i]);
}

CKBT_TEST(guard_canary_sees_small_overruns, "quick")
{
    ckb_guard g;
    CKBT_EXPECT(ckb_guard_alloc(&g, 100) == 0, "alloc");
    CKBT_EXPECT(((uintptr_t)g.ptr & 63) == 0, "64-byte aligned");
    memset(g.ptr, 1, 100);
    CKBT_EXPECT(ckb_guard_canary_ok(&g), "in bounds leaves the canary");
    ((char *)g.ptr)[100] = 0;
    CKBT_EXPECT(!ckb_guard_canary_ok(&g), "one byte past the end is seen");
    ckb_guard_free(&g);
}

CKBT_TEST(atomic_write_keeps_the_old_file_on_failure, "quick")
{
    char path[512], bad[512];
    snprintf(path, sizeof path, "%s/x.json", ckbt_tmpdir());
    CKBT_EXPECT(ckb_write_file_atomic(path, "old", 3) == 0, "first write");
    CKBT_EXPECT(ckb_write_file_atomic(path, "new!", 4) == 0, "second write");
    char *s = ckb_read_file(path, NULL);
    CKBT_EXPECT(s && strcmp(s, "new!") == 0, "content %s", s ? s : "(null)");
    free(s);
    snprintf(bad, sizeof bad, "%s/missing-dir/x.json", ckbt_tmpdir());
    CKBT_EXPECT(ckb_write_file_atomic(bad, "x", 1) != 0, "a write that cannot happen fails");
}

/* The one error type (core/error.h): the code comes back from the setter,
 * context goes in front, a long message is cut, NULL is allowed. */
CKBT_TEST(core_err_sets_prefixes_and_cuts, "quick")
{
    ckb_err e;
    int rc = ckb_err_set(&e, CKB_E_IO, "cannot read %s", "x.json");
    CKBT_EXPECT(rc == CKB_E_IO && e.code == CKB_E_IO && strcmp(e.msg, "cannot read x.json") == 0,
                "set: %d '%s'", e.code, e.msg);
    rc = ckb_err_prefix(&e, "%s #%d: ", "8p_GEMM", 3);
    CKBT_EXPECT(rc == CKB_E_IO && strcmp(e.msg, "8p_GEMM #3: cannot read x.json") == 0,
                "prefix: '%s'", e.msg);
    char big[3 * CKB_ERR_MSG];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = 0;
    ckb_err_set(&e, CKB_E_FORMAT, "%s", big);
    ckb_err_prefix(&e, "ctx: ");
    CKBT_EXPECT(strlen(e.msg) == CKB_ERR_MSG - 1 && strncmp(e.msg, "ctx: aaa", 8) == 0,
                "a long message is cut to %d bytes, its context kept: %zu", CKB_ERR_MSG - 1,
                strlen(e.msg));
    rc = ckb_err_set(NULL, CKB_E_USAGE, "nobody reads %d", 1);
    CKBT_EXPECT(rc == CKB_E_USAGE, "a NULL err still gives the code");
    ckb_err_clear(&e);
    CKBT_EXPECT(e.code == CKB_OK && !e.msg[0] &&
                    !strcmp(ckb_err_code_name(CKB_E_CONFLICT), "conflict"),
                "clear and names");
}
