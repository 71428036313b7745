/*
 * harness.h — the tests' own small runner. A test is a function registered
 * with CKBT_TEST(name, tier); CKBT_EXPECT records a failure with file:line
 * and what was seen, and the test goes on. The runner prints one line per
 * test and closes with "N passed, N failed".
 *
 * Tiers: "quick" runs on every commit (and under the sanitizers); "full"
 * adds the slower tests (the plain CI run executes both).
 */
#ifndef CKB_TEST_HARNESS_H
#define CKB_TEST_HARNESS_H

#include <stdio.h>

typedef void (*ckbt_fn)(void);
void ckbt_register(const char *name, const char *tier, const char *file, ckbt_fn fn);
void ckbt_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The test cannot check its claim on this host (no root, no such unit, a
 * sanitizer build): it says why, and the runner counts it as skipped, never
 * as passed. A failure recorded as well still fails it. */
void ckbt_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The path of the ckbench binary under test ($CKBENCH_BIN or build/ckbench). */
const char *ckbt_bin(void);
/* Sleeps ms milliseconds (a test's polling step). */
void ckbt_sleep_ms(long ms);
/* A fresh temporary directory for this test; removed at exit unless it failed. */
const char *ckbt_tmpdir(void);
/* Environment variable name's value now (owned; NULL when unset), for a
 * test that changes it; ckbt_env_restore puts it back (unsets it for NULL)
 * and frees it. */
char *ckbt_env_save(const char *name);
void ckbt_env_restore(const char *name, char *saved);

#define CKBT_TEST(name, tier)                                                      \
    static void name(void);                                                        \
    __attribute__((constructor)) static void ckbt_reg_##name(void)                 \
    {                                                                              \
        ckbt_register(#name, tier, __FILE__, name);                                \
    }                                                                              \
    static void name(void)

#define CKBT_EXPECT(cond, ...)                                                     \
    do {                                                                           \
        if (!(cond))                                                               \
            ckbt_fail(__FILE__, __LINE__, "expected " #cond ": " __VA_ARGS__);     \
    } while (0)

#endif /* CKB_TEST_HARNESS_H */
