/* Every expert kernel is a valid candidate: through `ckbench eval` at small
 * size it compiles, passes the import check, is correct on fresh seeds and
 * on the final check, with its own macro defaults, with the grid's extremes
 * (the smallest and largest value of every parameter) and, where it has a
 * matmul-unit parameter, on each unit with the blocks the host model gives
 * for it, bench's untuned defaults (units this host lacks run as the
 * expert's fallback, which is then tested again). */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/expert.h"
#include "core/fsutil.h"
#include "core/proc.h"
#include "eval/compile.h"
#include "eval/eval.h"
#include "eval_util.h"
#include "harness.h"
#include "machine/isa.h"
#include "workloads/workload.h"

static void expect_expert_ok_on(const ckb_workload *w, const char *path, const char *label,
                                const int64_t *values, const char *threads)
{
    char defines[CKB_MAX_PARAMS][96];
    char *args[2 * CKB_MAX_PARAMS + 10];
    int n = 0;
    args[n++] = "--iters";
    args[n++] = "3";
    args[n++] = "--warmup";
    args[n++] = "1";
    if (threads) {
        args[n++] = "--threads";
        args[n++] = (char *)threads;
    }
    /* The grid values reach the compiler through --define. */
    for (int i = 0; values && i < w->nparams; i++) {
        snprintf(defines[i], sizeof defines[i], "%s=%lld", w->params[i].name,
                 (long long)values[i]);
        args[n++] = "--define";
        args[n++] = defines[i];
    }
    args[n] = NULL;
    int code = -1;
    json_object *j = ckbt_eval_argv(w->id, path, &code, args);
    CKBT_EXPECT(code == 0 && strcmp(ckbt_str(j, "status"), "ok") == 0,
                "%s expert (%s): exit %d, status %s: %.400s", w->id, label, code,
                ckbt_str(j, "status"), ckbt_str(j, "message"));
    json_object_put(j);
}

static void expect_expert_ok(const ckb_workload *w, const char *path, const char *label,
                             const int64_t *values)
{
    expect_expert_ok_on(w, path, label, values, NULL);
}

CKBT_TEST(experts_pass_eval_at_small_size, "quick")
{
    ckb_machine here; /* caches and ISA level: what the host model reads */
    ckb_machine_probe(1, &here);
    for (int i = 0; i < ckb_workload_count(); i++) {
        const ckb_workload *w = ckb_workload_at(i);
        char path[512];
        if (!ckb_expert_path(w, path, sizeof path))
            continue;
        expect_expert_ok(w, path, "untuned defaults", NULL);
        if (w->nparams == 0)
            continue;
        int64_t lo[CKB_MAX_PARAMS], hi[CKB_MAX_PARAMS], unit[CKB_MAX_PARAMS];
        int has_unit = 0;
        for (int p = 0; p < w->nparams; p++) {
            if (w->params[p].fallback == CKB_PARAM_HOST_UNIT) {
                lo[p] = 0, hi[p] = 2; /* the grid holds the host's unit only */
                has_unit = 1;
                continue;
            }
            lo[p] = hi[p] = w->params[p].values[0];
            for (int k = 1; k < w->params[p].nvalues; k++) {
                if (w->params[p].values[k] < lo[p])
                    lo[p] = w->params[p].values[k];
                if (w->params[p].values[k] > hi[p])
                    hi[p] = w->params[p].values[k];
            }
        }
        expect_expert_ok(w, path, "smallest grid values", lo);
        expect_expert_ok(w, path, "largest grid values", hi);
        /* on each unit, the untuned defaults bench gives this host with
         * that unit fastest: the host model's blocks for it */
        for (int u = 0; has_unit && u <= 2; u++) {
            ckb_expert_defaults_on(w, &here, u, unit);
            char label[64];
            snprintf(label, sizeof label, "matmul unit %d, the host model's blocks", u);
            expect_expert_ok(w, path, label, unit);
        }
    }
}

/* Each expert again on every lower ISA level (CKBENCH_ISA, so -march drops
 * the features above it): a path written for a feature this host has must
 * not be the only one that works. An AVX-512 host whose BF16 is hidden, as
 * some Intel Xeons' is, runs the AVX-512 f32 FMA paths that a BF16 host
 * never compiles otherwise. */
CKBT_TEST(experts_pass_eval_on_every_lower_isa_level, "full")
{
    char *keep = ckbt_env_save("CKBENCH_ISA");
    const ckb_isa host = ckb_isa_level();
    for (int level = CKB_ISA_PORTABLE; level < (int)host; level++) {
        setenv("CKBENCH_ISA", ckb_isa_name((ckb_isa)level), 1);
        CKBT_EXPECT(ckb_isa_level() == (ckb_isa)level, "CKBENCH_ISA=%s is in force",
                    ckb_isa_name((ckb_isa)level));
        for (int i = 0; i < ckb_workload_count(); i++) {
            const ckb_workload *w = ckb_workload_at(i);
            char path[512], label[64];
            if (!ckb_expert_path(w, path, sizeof path))
                continue;
            /* what bench runs untuned there: the host model's blocks for
             * the lowered level's registers (the probe measures no unit:
             * f32 FMA, every level's) */
            ckb_machine lowered;
            ckb_machine_probe(1, &lowered);
            int64_t v[CKB_MAX_PARAMS];
            ckb_expert_defaults(w, &lowered, v);
            snprintf(label, sizeof label, "untuned, CKBENCH_ISA=%s", ckb_isa_name((ckb_isa)level));
            expect_expert_ok(w, path, label, v);
        }
    }
    ckbt_env_restore("CKBENCH_ISA", keep);
}

/* Each expert again with a team of 3 threads, untuned: its thread grid must
 * cover the output whatever the core count (ragged row and column shares, a
 * team that does not divide the work), not only on this machine's. */
CKBT_TEST(experts_pass_eval_with_a_team_of_three, "quick")
{
    for (int i = 0; i < ckb_workload_count(); i++) {
        const ckb_workload *w = ckb_workload_at(i);
        char path[512];
        if (ckb_expert_path(w, path, sizeof path))
            expect_expert_ok_on(w, path, "untuned, --threads 3", NULL, "3");
    }
}

/* The expert paths this host cannot run (AMX, AVX-512 BF16 where the CPU
 * lacks them) still have to build: each expert compiled, not run, for an
 * AMX target and for a BF16 target without AMX, under each matmul unit,
 * with the candidate's flags (implicit declarations are errors). A path
 * that calls a helper renamed since, or an intrinsic its target lacks, then
 * fails on every host, not only on one that has the unit. A target this
 * compiler does not know is skipped. */
static int compile_ok(char *const *argv, char **message)
{
    ckb_proc_result r;
    memset(&r, 0, sizeof r);
    int ok = ckb_proc_run(argv, 300, 1 << 16, &r) == 0 && r.exited && r.exit_code == 0;
    if (message)
        *message = r.output ? strdup(r.output) : NULL;
    ckb_proc_result_free(&r);
    return ok;
}

CKBT_TEST(experts_build_for_the_units_this_host_lacks, "full")
{
    static const char *const targets[] = {"-march=sapphirerapids", "-march=cooperlake"};
    const char *dir = ckbt_tmpdir();
    char empty[600], obj[600], dims[600], inc[600], kit[600];
    snprintf(empty, sizeof empty, "%s/empty.c", dir);
    snprintf(obj, sizeof obj, "%s/expert.o", dir);
    snprintf(dims, sizeof dims, "%s/dims.h", dir);
    snprintf(inc, sizeof inc, "-I%s/include", ckb_home());
    snprintf(kit, sizeof kit, "-I%s/expert-kit", ckb_home());
    static const char empty_src[] = "int ckbt_empty;\n";
    CKBT_EXPECT(ckb_write_file_atomic(empty, empty_src, strlen(empty_src)) == 0, "write %s",
                empty);
    int built = 0;
    for (size_t t = 0; t < sizeof targets / sizeof *targets; t++) {
        char *probe[] = {(char *)ckb_compiler(), (char *)targets[t], "-c", empty, "-o", obj, NULL};
        if (!compile_ok(probe, NULL))
            continue; /* an older compiler */
        for (int i = 0; i < ckb_workload_count(); i++) {
            const ckb_workload *w = ckb_workload_at(i);
            char path[512];
            if (!ckb_expert_path(w, path, sizeof path))
                continue;
            char *header = ckb_workload_candidate_header(w, CKB_SIZE_SMALL);
            CKBT_EXPECT(header && ckb_write_file_atomic(dims, header, strlen(header)) == 0,
                        "write %s", dims);
            free(header);
            int has_unit = 0;
            for (int p = 0; p < w->nparams; p++)
                has_unit |= w->params[p].fallback == CKB_PARAM_HOST_UNIT;
            for (int u = has_unit ? 0 : 2; u <= 2; u++) {
                char unit[16];
                snprintf(unit, sizeof unit, "-DMMA=%d", u);
                char *argv[] = {(char *)ckb_compiler(), "-O2", (char *)targets[t], "-fopenmp",
                                "-fPIC", "-std=gnu11", "-Werror=implicit-function-declaration",
                                inc, kit, "-include", dims, unit, "-c", path, "-o", obj, NULL};
                char *message = NULL;
                int ok = compile_ok(argv, &message);
                CKBT_EXPECT(ok, "%s expert, %s, %s: %.600s", w->id, targets[t], unit,
                            message ? message : "");
                free(message);
                built += ok;
            }
        }
    }
    printf("    (%d builds for units this host may lack)\n", built);
}

/* Which unit an expert ran: the unit is chosen at compile time (MMA), so
 * the object the evaluation loaded holds the instructions of exactly that
 * unit. On a host with AVX-512 BF16 (at the ISA level in force): MMA=0
 * holds vdpbf16ps, MMA=1 none of it and f32 FMAs instead; with AMX, MMA=2
 * holds tdpbf16ps. A unit this host lacks is skipped, and says so. */
static int experts__count_insn(const char *keep, const char *insn)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "objdump -d '%s/root/candidate.so' 2>/dev/null | grep -c '%s'",
             keep, insn);
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (p && fscanf(p, "%d", &n) != 1)
        n = -1;
    if (p)
        pclose(p);
    return n;
}

CKBT_TEST(experts_run_the_unit_they_are_given, "quick")
{
    const char *level = getenv("CKBENCH_ISA");
    int dot = __builtin_cpu_supports("avx512bf16") && (!level || !*level);
    int amx = 0;
#if defined(__AMX_TILE__)
    amx = (!level || !*level);
#endif
    if (!dot)
        ckbt_skip("no AVX-512 BF16 at the ISA level in force: the dot unit cannot run here "
                  "(the f32 FMA path is what the other expert tests check)");
    static const char *const ids[] = {"8p", "41k"};
    for (int i = 0; dot && i < 2; i++) {
        const ckb_workload *w = ckb_workload_find(ids[i]);
        char src[600];
        CKBT_EXPECT(w && ckb_expert_path(w, src, sizeof src), "%s has an expert", ids[i]);
        for (int mma = 0; mma <= (amx ? 2 : 1); mma++) {
            char keep[600], def[16];
            snprintf(keep, sizeof keep, "%s/%s-mma%d", ckbt_tmpdir(), ids[i], mma);
            snprintf(def, sizeof def, "MMA=%d", mma);
            int code = -1;
            json_object *j = ckbt_eval(ids[i], src, &code, "--define", def, "--keep", keep,
                                       "--seeds", "1", "--warmup", "1", "--iters", "3", NULL);
            CKBT_EXPECT(j && !strcmp(ckbt_str(j, "status"), "ok"), "%s %s: %s %s", ids[i], def,
                        ckbt_str(j, "status"), ckbt_str(j, "message"));
            json_object_put(j);
            int ndot = experts__count_insn(keep, "vdpbf16ps");
            int nfma = experts__count_insn(keep, "vfmadd...ps");
            int ntile = experts__count_insn(keep, "tdpbf16ps");
            if (mma == 0)
                CKBT_EXPECT(ndot > 0, "%s MMA=0 runs vdpbf16ps (%d in the object)", ids[i], ndot);
            if (mma == 1)
                CKBT_EXPECT(ndot == 0 && nfma > 0, "%s MMA=1 runs f32 FMA: %d vdpbf16ps, %d "
                            "FMAs in the object", ids[i], ndot, nfma);
            if (mma == 2)
                CKBT_EXPECT(ntile > 0, "%s MMA=2 runs AMX tiles (%d tdpbf16ps)", ids[i], ntile);
        }
    }
    if (dot && !amx)
        printf("    (no AMX in this build's target: MMA=2 not checked here)\n");
}
