/* Every expert kernel is a valid candidate: through `ckbench eval` at small
 * size it compiles, passes the import check, is correct on fresh seeds and
 * on the final check, with its own macro defaults, with the grid's extremes
 * (the smallest and largest value of every parameter) and, where it has a
 * matmul-unit parameter, on each unit with the blocks the host model gives
 * for it, bench's untuned defaults (units this host lacks run as the
 * expert's fallback, which is then tested again). */
#include <dlfcn.h>
#include <json-c/json.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/expert.h"
#include "core/alloc.h"
#include "core/fsutil.h"
#include "core/proc.h"
#include "eval/check.h"
#include "eval/compile.h"
#include "eval/eval.h"
#include "eval_util.h"
#include "guard.h"
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

/* Tier full: what it adds to experts_pass_eval_with_a_team_of_three (the
 * same `ckbench eval` of every expert, quick) is other -D values for the
 * kernels, which are compiled as candidates are, without the sanitizers.
 * The sanitizer pass keeps that evaluator path on every expert, --define
 * included (experts_run_the_unit_they_are_given); the plain pass runs this. */
CKBT_TEST(experts_pass_eval_at_small_size, "full")
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
 * compiler does not know is skipped. Each configuration's dims, where a
 * workload has several. */
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

/* Whether w's expert takes the matmul unit as a parameter (MMA). */
static int experts__takes_unit(const ckb_workload *w)
{
    for (int p = 0; p < w->nparams; p++)
        if (w->params[p].fallback == CKB_PARAM_HOST_UNIT)
            return 1;
    return 0;
}

/* One compile of experts_build_for_the_units_this_host_lacks: its label,
 * its command line's own parts, and what came of it. */
typedef struct {
    char label[160];
    const char *target;
    char path[512], dims[600], unit[16];
    int ok;
    char *message;
} experts_build;

CKBT_TEST(experts_build_for_the_units_this_host_lacks, "full")
{
    static const char *const targets[] = {"-march=sapphirerapids", "-march=cooperlake"};
    const char *dir = ckbt_tmpdir();
    char empty[600], obj[600], inc[600], kit[600];
    snprintf(empty, sizeof empty, "%s/empty.c", dir);
    snprintf(obj, sizeof obj, "%s/expert.o", dir);
    snprintf(inc, sizeof inc, "-I%s/include", ckb_home());
    snprintf(kit, sizeof kit, "-I%s/expert-kit", ckb_home());
    static const char empty_src[] = "int ckbt_empty;\n";
    CKBT_EXPECT(ckb_write_file_atomic(empty, empty_src, strlen(empty_src)) == 0, "write %s",
                empty);
    /* Every compile is listed first (each workload configuration's dims in a
     * header of its own), then run a few at once: they are independent, and
     * one at a time they left all cores but one idle for most of a minute. */
    experts_build *jobs = NULL;
    int njobs = 0, cap = 0;
    for (size_t t = 0; t < sizeof targets / sizeof *targets; t++) {
        char *probe[] = {(char *)ckb_compiler(), (char *)targets[t], "-c", empty, "-o", obj, NULL};
        if (!compile_ok(probe, NULL))
            continue; /* an older compiler */
        for (int i = 0; i < ckb_workload_count(); i++) {
            const ckb_workload *w = ckb_workload_at(i);
            char path[512];
            if (!ckb_expert_path(w, path, sizeof path))
                continue;
            for (int cf = 0; cf < ckb_workload_config_count(w); cf++) {
                char dims[600];
                snprintf(dims, sizeof dims, "%s/dims-%s-%d.h", dir, w->id, cf);
                int64_t d[CKB_MAX_DIMS];
                ckb_workload_config_dims(w, CKB_SIZE_SMALL, cf, d);
                char *header = ckb_workload_dims_header(w, d, "small");
                CKBT_EXPECT(header && ckb_write_file_atomic(dims, header, strlen(header)) == 0,
                            "write %s", dims);
                free(header);
                for (int u = experts__takes_unit(w) ? 0 : 2; u <= 2; u++) {
                    if (njobs == cap) {
                        cap = cap ? 2 * cap : 64;
                        jobs = ckb_xrealloc(jobs, (size_t)cap * sizeof *jobs);
                    }
                    experts_build *b = &jobs[njobs++];
                    memset(b, 0, sizeof *b);
                    snprintf(b->label, sizeof b->label, "%s%s%s expert, %s", w->id,
                             cf ? "/" : "", cf ? ckb_workload_config_name(w, cf) : "",
                             targets[t]);
                    snprintf(b->path, sizeof b->path, "%s", path);
                    b->target = targets[t];
                    snprintf(b->dims, sizeof b->dims, "%s", dims);
                    snprintf(b->unit, sizeof b->unit, "-DMMA=%d", u);
                }
            }
        }
    }
    int width = (int)sysconf(_SC_NPROCESSORS_ONLN);
#pragma omp parallel for schedule(dynamic) num_threads(width > 1 ? width : 1)
    for (int k = 0; k < njobs; k++) {
        experts_build *b = &jobs[k];
        char o[640];
        snprintf(o, sizeof o, "%s/expert-%d.o", dir, k);
        char *argv[] = {(char *)ckb_compiler(), "-O2", (char *)b->target, "-fopenmp",
                        "-fPIC", "-std=gnu11", "-Werror=implicit-function-declaration",
                        inc, kit, "-include", b->dims, b->unit, "-c", b->path, "-o", o,
                        NULL};
        b->ok = compile_ok(argv, &b->message);
        remove(o);
    }
    int built = 0;
    for (int k = 0; k < njobs; k++) {
        CKBT_EXPECT(jobs[k].ok, "%s, %s: %.600s", jobs[k].label, jobs[k].unit,
                    jobs[k].message ? jobs[k].message : "");
        built += jobs[k].ok;
        free(jobs[k].message);
    }
    free(jobs);
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

/* ---- every configuration --------------------------------------------------- */

/* `ckbench eval` compiles and checks a candidate at one configuration of
 * its workload; a workload judged on several (6p's and 7p's serving mixes)
 * needs its expert right at each. Here the expert is compiled as eval
 * compiles it (the -march of an ISA level, the kit, a force-included dims
 * header) with the dims of one configuration at small size, loaded, run
 * once on guarded buffers (an overrun faults, an output left unwritten is
 * NaN) and held to the reference with that configuration's tolerance. */
typedef void (*experts_fn)();

static int experts__call(experts_fn f, int n, void *const *t)
{
    switch (n) {
    case 2: f(t[0], t[1]); return 0;
    case 3: f(t[0], t[1], t[2]); return 0;
    case 4: f(t[0], t[1], t[2], t[3]); return 0;
    case 5: f(t[0], t[1], t[2], t[3], t[4]); return 0;
    case 6: f(t[0], t[1], t[2], t[3], t[4], t[5]); return 0;
    case 7: f(t[0], t[1], t[2], t[3], t[4], t[5], t[6]); return 0;
    case 8: f(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7]); return 0;
    }
    return -1;
}

typedef struct {
    ckb_isa level;       /* the -march eval would use at this level */
    const char *defines; /* "-DA=1 -DB=2", split on spaces; NULL: untuned */
    int threads;
    int amx_emulated;    /* the tile intrinsics from tests/amx_emu.h */
} experts_run;

/* One expert at one configuration and run: what experts__check_all
 * compiles (all of a test's at once) and then loads, runs and checks. */
typedef struct {
    const ckb_workload *w;
    char path[512];
    int cf;
    experts_run run;
    char defines[256]; /* run.defines' copy, split in place by the compile */
    char label[300], hdr[600], so[600];
    int64_t dims[CKB_MAX_DIMS];
    int ready, ok;     /* its dims header written; its object built */
    char *message;     /* the compiler's output */
    long products;     /* the object's amx_emu_products after the call (-1 without one) */
} experts_case;

/* Fills c for w's expert at path, configuration cf, run run. */
static void experts__case(experts_case *c, const ckb_workload *w, const char *path, int cf,
                          const experts_run *run)
{
    static int seq;
    seq++;
    memset(c, 0, sizeof *c);
    c->w = w;
    snprintf(c->path, sizeof c->path, "%s", path);
    c->cf = cf;
    c->run = *run;
    snprintf(c->defines, sizeof c->defines, "%s", run->defines ? run->defines : "");
    c->products = -1;
    snprintf(c->label, sizeof c->label, "%s/%s at %s%s%s, %d threads%s", w->id,
             ckb_workload_config_name(w, cf), ckb_isa_name(run->level),
             run->defines ? ", " : "", run->defines ? run->defines : "", run->threads,
             run->amx_emulated ? ", AMX emulated" : "");
    snprintf(c->hdr, sizeof c->hdr, "%s/cfg-%d.h", ckbt_tmpdir(), seq);
    snprintf(c->so, sizeof c->so, "%s/cfg-%d.so", ckbt_tmpdir(), seq);
    c->run.defines = NULL; /* the caller's; the copy above is the compile's */
    ckb_workload_config_dims(w, CKB_SIZE_SMALL, cf, c->dims);
    char *h = ckb_workload_dims_header(w, c->dims, c->label);
    c->ready = h && ckb_write_file_atomic(c->hdr, h, strlen(h)) == 0;
    free(h);
    CKBT_EXPECT(c->ready, "%s: cannot write %s", c->label, c->hdr);
}

/* Compiles c as eval would; no test state is touched (it runs beside
 * others), the outcome is left in c. */
static void experts__compile(experts_case *c)
{
    char *argv[48], inc[600], kit[600], emu[600];
    int n = 0;
    snprintf(inc, sizeof inc, "-I%s/include", ckb_home());
    snprintf(kit, sizeof kit, "-I%s/expert-kit", ckb_home());
    snprintf(emu, sizeof emu, "%s/tests/amx_emu.h", ckb_home());
    const char *march[CKB_ISA_MAX_FLAGS];
    argv[n++] = (char *)ckb_compiler();
    argv[n++] = "-O3";
    for (int i = 0, nm = ckb_isa_march(c->run.level, march); i < nm; i++)
        argv[n++] = (char *)march[i];
    char *fixed[] = {"-fopenmp", "-shared", "-fPIC", "-std=gnu11",
                     "-Werror=implicit-function-declaration", inc, kit};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
        argv[n++] = fixed[i];
    if (c->run.amx_emulated) {
        argv[n++] = "-D__AMX_TILE__";
        argv[n++] = "-D__AMX_BF16__";
        argv[n++] = "-include";
        argv[n++] = emu;
    }
    argv[n++] = "-include";
    argv[n++] = c->hdr;
    for (char *save, *tok = strtok_r(c->defines, " ", &save); tok && n < 40;
         tok = strtok_r(NULL, " ", &save))
        argv[n++] = tok;
    argv[n++] = c->path;
    argv[n++] = "-o";
    argv[n++] = c->so;
    argv[n++] = "-lm";
    argv[n++] = "-latomic";
    argv[n] = NULL;
    c->ok = compile_ok(argv, &c->message);
}

/* Loads c's object, runs it once on guarded buffers (an overrun faults, an
 * output left unwritten is NaN) and holds it to the reference with that
 * configuration's tolerance; its amx_emu_products into c->products. */
static void experts__run_case(experts_case *c)
{
    const ckb_workload *w = c->w;
    const char *label = c->label;
    CKBT_EXPECT(c->ok, "%s: the expert does not compile:\n%.1500s", label,
                c->message ? c->message : "");
    void *lib = c->ok ? dlopen(c->so, RTLD_NOW | RTLD_LOCAL) : NULL;
    experts_fn fn = lib ? (experts_fn)dlsym(lib, "workload") : NULL;
    CKBT_EXPECT(!c->ok || fn, "%s: cannot load %s", label, c->so);
    if (!fn) {
        if (lib)
            dlclose(lib);
        return;
    }

    void *ref[CKB_MAX_TENSORS], *cand[CKB_MAX_TENSORS];
    ckb_guard g[CKB_MAX_TENSORS];
    if (ckb_tensors_alloc(w, c->dims, ref) != 0)
        abort();
    w->create_inputs(c->dims, 11, ref);
    for (int i = 0; i < w->ntensors; i++) {
        size_t bytes = ckb_tensor_bytes(&w->tensors[i], c->dims);
        if (ckb_guard_alloc(&g[i], bytes) != 0)
            abort();
        cand[i] = g[i].ptr;
        if (w->tensors[i].role == CKB_IN)
            memcpy(cand[i], ref[i], bytes);
        else
            memset(cand[i], 0xff, bytes);
    }
    w->reference(c->dims, ref);
    const int team = omp_get_max_threads();
    omp_set_num_threads(c->run.threads);
    CKBT_EXPECT(experts__call(fn, w->ntensors, cand) == 0, "%s: %d tensors: extend experts__call",
                label, w->ntensors);
    omp_set_num_threads(team);
    for (int i = 0; i < w->ntensors; i++) {
        const ckb_tensor *t = &w->tensors[i];
        if (t->role != CKB_OUT)
            continue;
        ckb_check k;
        ckb_check_allclose(t->dtype, cand[i], ref[i], ckb_tensor_numel(t, c->dims),
                           ckb_workload_config_atol(w, c->cf), ckb_workload_config_rtol(w, c->cf),
                           &k);
        CKBT_EXPECT(k.ok && ckb_guard_canary_ok(&g[i]),
                    "%s: %lld wrong elements of %s (worst [%lld]: %g, the reference %g), "
                    "canary %s", label, (long long)k.nbad, t->name, (long long)k.worst, k.got,
                    k.want, ckb_guard_canary_ok(&g[i]) ? "intact" : "overwritten");
    }
    const long *products = dlsym(lib, "amx_emu_products");
    c->products = products ? *products : -1;
    for (int i = 0; i < w->ntensors; i++)
        ckb_guard_free(&g[i]);
    ckb_tensors_free(w, ref);
    dlclose(lib);
}

/* Checks cases[0..n): every object compiled first, on every core at once
 * (one at a time the compiles, most of these tests' time, left the other
 * cores idle), then each loaded and run in turn, in order. */
static void experts__check_all(experts_case *cases, int n)
{
    int width = (int)sysconf(_SC_NPROCESSORS_ONLN);
#pragma omp parallel for schedule(dynamic) num_threads(width > 1 ? width : 1)
    for (int i = 0; i < n; i++)
        if (cases[i].ready)
            experts__compile(&cases[i]);
    for (int i = 0; i < n; i++) {
        if (cases[i].ready)
            experts__run_case(&cases[i]);
        free(cases[i].message);
        cases[i].message = NULL;
    }
}

/* A test's cases, grown as it lists them. */
typedef struct {
    experts_case *c;
    int n, cap;
} experts_cases;

static experts_case *experts__add(experts_cases *cs, const ckb_workload *w, const char *path,
                                  int cf, const experts_run *run)
{
    if (cs->n == cs->cap) {
        cs->cap = cs->cap ? 2 * cs->cap : 16;
        cs->c = ckb_xrealloc(cs->c, (size_t)cs->cap * sizeof *cs->c);
    }
    experts__case(&cs->c[cs->n], w, path, cf, run);
    return &cs->c[cs->n++];
}

/* The grid's smallest and largest value of every parameter but the matmul
 * unit, as -D flags (the unit at the host's fallback). */
static void experts__grid_defines(const ckb_workload *w, int largest, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int p = 0; p < w->nparams && len < n; p++) {
        const ckb_param *prm = &w->params[p];
        if (prm->fallback == CKB_PARAM_HOST_UNIT)
            continue;
        int64_t v = prm->values[0];
        for (int k = 1; k < prm->nvalues; k++)
            if (largest ? prm->values[k] > v : prm->values[k] < v)
                v = prm->values[k];
        len += (size_t)snprintf(buf + len, n - len, "%s-D%s=%lld", len ? " " : "", prm->name,
                                (long long)v);
    }
}

/* Whether w's grid lists the tile unit (MMA=2). */
static int experts__grid_has_tiles(const ckb_workload *w)
{
    for (int p = 0; p < w->nparams; p++)
        if (w->params[p].fallback == CKB_PARAM_HOST_UNIT)
            for (int k = 0; k < w->params[p].nvalues; k++)
                if (w->params[p].values[k] == 2)
                    return 1;
    return 0;
}

CKBT_TEST(experts_pass_every_configuration, "quick")
{
    /* At this host's level: untuned with 2 and 3 threads, the grid's
     * extremes, and the tile path (emulated) where the grid has one. */
    int checked = 0;
    experts_cases cs = {0};
    for (int i = 0; i < ckb_workload_count(); i++) {
        const ckb_workload *w = ckb_workload_at(i);
        char path[512], lo[256], hi[256];
        if (w->nconfigs == 0 || !ckb_expert_path(w, path, sizeof path))
            continue;
        experts__grid_defines(w, 0, lo, sizeof lo);
        experts__grid_defines(w, 1, hi, sizeof hi);
        for (int cf = 0; cf < w->nconfigs; cf++) {
            const experts_run runs[] = {{ckb_isa_level(), NULL, 2, 0},
                                        {ckb_isa_level(), NULL, 3, 0},
                                        {ckb_isa_level(), lo, 2, 0},
                                        {ckb_isa_level(), hi, 3, 0}};
            for (size_t r = 0; r < sizeof runs / sizeof *runs; r++)
                experts__add(&cs, w, path, cf, &runs[r]);
            if (experts__grid_has_tiles(w)) {
                const experts_run tiles = {ckb_isa_level(), "-DMMA=2", 2, 1};
                experts__add(&cs, w, path, cf, &tiles);
            }
            checked++;
        }
    }
    experts__check_all(cs.c, cs.n);
    for (int k = 0; k < cs.n; k++)
        if (cs.c[k].run.amx_emulated)
            CKBT_EXPECT(cs.c[k].products > 0, "%s: the emulated tile path did not run (%ld "
                        "tile products)", cs.c[k].label, cs.c[k].products);
    free(cs.c);
    CKBT_EXPECT(checked >= 4, "6p and 7p have an expert and two configurations each (%d checked)",
                checked);
}

/* The experts that walk causal query blocks on the kit's walks (1p, 2p
 * and 4p through the flash kit, 3p with its two key parts). */
static const char *const experts__flash_ids[] = {"1p", "2p", "3p", "4p"};
#define EXPERTS_NFLASH (sizeof experts__flash_ids / sizeof *experts__flash_ids)

/* 1, after saying "skipped", where the emulated tiles cannot run: they
 * need AVX-512 BF16 at the ISA level in force. */
static int experts__no_tiles_here(void)
{
    const char *level = getenv("CKBENCH_ISA");
    if (__builtin_cpu_supports("avx512bf16") && !(level && *level))
        return 0;
    ckbt_skip("no AVX-512 BF16 at the ISA level in force: the tile paths need it");
    return 1;
}

CKBT_TEST(experts_tile_paths_pass_emulated, "quick")
{
    /* The AMX path (MMA=2) of every expert that takes the unit and that no
     * other test runs on tiles (the flash four have theirs below, the
     * experts with configurations experts_pass_every_configuration): no
     * host here has AMX, so without this the GEMM and conv experts' tile
     * code (8p, 11p, 29k, 32k, 33k, 41k, 50k) would only ever compile. */
    if (experts__no_tiles_here())
        return;
    const experts_run tiles = {ckb_isa_level(), "-DMMA=2", 2, 1};
    int checked = 0;
    experts_cases cs = {0};
    for (int i = 0; i < ckb_workload_count(); i++) {
        const ckb_workload *w = ckb_workload_at(i);
        char path[512];
        int skip = w->nconfigs > 0 || !experts__takes_unit(w) ||
                   !ckb_expert_path(w, path, sizeof path);
        for (size_t f = 0; !skip && f < EXPERTS_NFLASH; f++)
            skip = ckb_workload_find(experts__flash_ids[f]) == w;
        if (skip)
            continue;
        experts__add(&cs, w, path, 0, &tiles);
        checked++;
    }
    experts__check_all(cs.c, cs.n);
    for (int k = 0; k < cs.n; k++)
        CKBT_EXPECT(cs.c[k].products > 0, "%s: the emulated tile path did not run (%ld tile "
                    "products)", cs.c[k].w->id, cs.c[k].products);
    free(cs.c);
    CKBT_EXPECT(checked >= 7, "8p, 11p, 29k, 32k, 33k, 41k and 50k take MMA (%d checked)",
                checked);
}

/* Each run on each expert that walks causal query blocks on the kit's walks
 * (1p, 2p and 4p through the flash kit, 3p with its two key parts); with
 * tiles, that the emulated tile path ran. */
static void experts__flash_check(const experts_run *runs, size_t nruns, int tiles)
{
    const char *const *ids = experts__flash_ids;
    experts_cases cs = {0};
    for (size_t i = 0; i < EXPERTS_NFLASH; i++) {
        const ckb_workload *w = ckb_workload_find(ids[i]);
        char path[512];
        const int have = w && ckb_expert_path(w, path, sizeof path);
        CKBT_EXPECT(have, "%s has an expert", ids[i]);
        for (size_t r = 0; have && r < nruns; r++)
            experts__add(&cs, w, path, 0, &runs[r]);
    }
    experts__check_all(cs.c, cs.n);
    for (int k = 0; tiles && k < cs.n; k++)
        CKBT_EXPECT(cs.c[k].products > 0, "%s: the emulated tile path did not run (%ld tile "
                    "products)", cs.c[k].label, cs.c[k].products);
    free(cs.c);
}

CKBT_TEST(experts_flash_tile_paths_pass_emulated, "quick")
{
    /* The AMX walk of a causal query block (ckb_kit_amx_flash in
     * expert-kit/ckb_kit_attn.h); the tests above never run it (one
     * configuration each, and no AMX here). Each runs it here on emulated
     * tiles, with its untuned blocks and with small ones (more query tiles
     * and key blocks a head). */
    if (experts__no_tiles_here())
        return;
    const experts_run runs[] = {{ckb_isa_level(), "-DMMA=2", 2, 1},
                                {ckb_isa_level(), "-DMMA=2 -DBQ=32 -DBK=32", 2, 1}};
    experts__flash_check(runs, sizeof runs / sizeof *runs, 1);
}

CKBT_TEST(experts_flash_register_walks_pass_with_small_blocks, "quick")
{
    /* The register walk of a causal query block (ckb_kit_reg_flash in
     * expert-kit/ckb_kit_attn.h) and the flash kit's AVX2 walk. At small
     * size their untuned blocks cover the whole sequence, so a key block
     * past the first (its packed key offset, the visible blocks between
     * skipped and diagonal ones) would never run: small blocks here, on
     * each unit the host has and at AVX2. */
    if (ckb_isa_level() < CKB_ISA_AVX2) {
        ckbt_skip("no AVX2 at the ISA level in force: the register walks cannot run here");
        return;
    }
    const int dot = __builtin_cpu_supports("avx512bf16") && ckb_isa_level() >= CKB_ISA_AVX512BF16;
    experts_run runs[3];
    size_t n = 0;
    if (dot)
        runs[n++] = (experts_run){ckb_isa_level(), "-DMMA=0 -DBQ=8 -DBK=16", 2, 0};
    else
        printf("    (no AVX-512 BF16 at the ISA level in force: the vdpbf16ps walk not run)\n");
    if (ckb_isa_level() >= CKB_ISA_AVX512)
        runs[n++] = (experts_run){ckb_isa_level(), "-DMMA=1 -DBQ=8 -DBK=16", 2, 0};
    runs[n++] = (experts_run){CKB_ISA_AVX2, "-DMMA=1 -DBQ=8 -DBK=16", 2, 0};
    experts__flash_check(runs, n, 0);
}

CKBT_TEST(experts_pass_every_configuration_on_every_lower_isa_level, "full")
{
    /* Untuned, on each level below this host's and on each matmul unit at
     * this host's (a unit it lacks runs as the expert's fallback). */
    experts_cases cs = {0};
    for (int i = 0; i < ckb_workload_count(); i++) {
        const ckb_workload *w = ckb_workload_at(i);
        char path[512];
        if (w->nconfigs == 0 || !ckb_expert_path(w, path, sizeof path))
            continue;
        for (int cf = 0; cf < w->nconfigs; cf++) {
            for (int level = CKB_ISA_PORTABLE; level < (int)ckb_isa_level(); level++) {
                const experts_run run = {(ckb_isa)level, NULL, 2, 0};
                experts__add(&cs, w, path, cf, &run);
            }
            for (int unit = 0; unit <= 2; unit++) {
                char def[16];
                snprintf(def, sizeof def, "-DMMA=%d", unit);
                const experts_run run = {ckb_isa_level(), def, 2, 0};
                experts__add(&cs, w, path, cf, &run);
            }
        }
    }
    experts__check_all(cs.c, cs.n);
    free(cs.c);
}
