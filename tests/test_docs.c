/*
 * The documentation (docs/<target>/, src/docs): every example compiles and
 * passes `ckbench eval` on the workload it solves; every intrinsic the
 * blocks name exists in the compiler's headers; the functions the rules
 * call allowed or forbidden agree with the static check; selection gives
 * each workload the blocks its tags ask for and never its own example;
 * the hardware block is filled; the cache is reused and invalidated. And
 * docs/DESIGN.md: every section the code and the documents cite exists.
 */
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fsutil.h"
#include "core/proc.h"
#include "core/strbuf.h"
#include "docs/docs.h"
#include "eval/check.h"
#include "eval/compile.h"
#include "guard.h"
#include "eval/symcheck.h"
#include "machine/isa.h"
#include "workloads/workload.h"

#include "eval_util.h"
#include "harness.h"

static const char *const docs_targets[] = {"x86-avx512", "generic-c", "x86-avx2"};

/* Examples are evaluated only where the host can compile them: the portable
 * target everywhere, an ISA target where the docs would be chosen. */
static int target_runs_here(const char *target)
{
    return strcmp(target, "generic-c") == 0 || strcmp(target, ckb_docs_default_target()) == 0;
}

static int load_target(const char *target, ckb_docs_set *s)
{
    ckb_err err;
    char dir[1024];
    snprintf(dir, sizeof dir, "docs/%s", target);
    if (ckb_docs_load(dir, s, &err) != 0) {
        CKBT_EXPECT(0, "loading %s: %s", dir, err.msg);
        return -1;
    }
    return 0;
}

/* The first ```c fenced block of a Markdown body; caller frees. */
static char *first_c_block(const char *md)
{
    const char *open = strstr(md, "```c\n");
    if (!open)
        return NULL;
    open += 5;
    const char *close = strstr(open, "\n```");
    if (!close)
        return NULL;
    size_t n = (size_t)(close - open) + 1;
    char *code = malloc(n + 1);
    memcpy(code, open, n);
    code[n] = '\0';
    return code;
}

CKBT_TEST(docs_examples_pass_eval, "full")
{
    for (size_t t = 0; t < sizeof docs_targets / sizeof *docs_targets; t++) {
        ckb_docs_set s;
        if (!target_runs_here(docs_targets[t]) || load_target(docs_targets[t], &s) != 0)
            continue;
        int nexamples = 0;
        for (int i = 0; i < s.n; i++) {
            const ckb_docs_block *b = &s.v[i];
            if (b->kind != CKB_DOCS_EXAMPLE || strcmp(b->unit, "amx") == 0)
                continue; /* the AMX examples: docs_amx_examples_pass_eval */
            nexamples++;
            CKBT_EXPECT(ckb_workload_find(b->solves) != NULL, "%s/%s solves unknown workload %s",
                        docs_targets[t], b->file, b->solves);
            char *code = first_c_block(b->body);
            CKBT_EXPECT(code != NULL, "%s/%s has no ```c block", docs_targets[t], b->file);
            if (!code)
                continue;
            char path[512];
            snprintf(path, sizeof path, "%s/example-%s-%d.c", ckbt_tmpdir(), docs_targets[t], i);
            CKBT_EXPECT(ckb_write_file_atomic(path, code, strlen(code)) == 0, "cannot write %s",
                        path);
            free(code);
            int exit_code = -1;
            json_object *j = ckbt_eval(b->solves, path, &exit_code, "--warmup", "1", "--iters",
                                       "5", NULL);
            CKBT_EXPECT(exit_code == 0 && strcmp(ckbt_str(j, "status"), "ok") == 0,
                        "%s/%s on %s: exit %d, status %s: %.600s", docs_targets[t], b->file,
                        b->solves, exit_code, ckbt_str(j, "status"), ckbt_str(j, "message"));
            json_object_put(j);
        }
        CKBT_EXPECT(nexamples >= (t == 0 ? 5 : 1), "%s: only %d examples", docs_targets[t],
                    nexamples);
        ckb_docs_set_free(&s);
    }
}

/* Adds every distinct _mm512_/_mm256_/_mm_ name of text to names (a
 * newline-separated list). */
static void collect_intrinsics(const char *text, ckb_strbuf *names)
{
    static const char *const prefixes[] = {"_mm512_", "_mm256_", "_mm_"};
    for (const char *p = text; *p; p++) {
        if (*p != '_' || (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_')))
            continue;
        for (size_t k = 0; k < 3; k++) {
            size_t pl = strlen(prefixes[k]);
            if (strncmp(p, prefixes[k], pl) != 0)
                continue;
            size_t n = pl;
            while (isalnum((unsigned char)p[n]) || p[n] == '_')
                n++;
            if (n == pl)
                break;
            char name[128];
            snprintf(name, sizeof name, "%.*s", (int)n, p);
            char needle[132];
            snprintf(needle, sizeof needle, "\n%s\n", name);
            if (!names->data || !strstr(names->data, needle)) {
                if (!names->len)
                    ckb_strbuf_append(names, "\n", 1);
                ckb_strbuf_printf(names, "%s\n", name);
            }
            p += n - 1;
            break;
        }
    }
}

/* Compiles a probe that names each intrinsic with the candidates' flags:
 * a macro is checked with #ifdef, a function by taking its address, so an
 * unknown name is an "undeclared" error naming it. */
CKBT_TEST(docs_intrinsics_exist, "quick")
{
    ckb_strbuf names = {0};
    for (size_t t = 0; t < sizeof docs_targets / sizeof *docs_targets; t++) {
        ckb_docs_set s;
        if (load_target(docs_targets[t], &s) != 0)
            continue;
        for (int i = 0; i < s.n; i++)
            collect_intrinsics(s.v[i].body, &names);
        ckb_docs_set_free(&s);
    }
    int count = 0;
    ckb_strbuf probe = {0};
    ckb_strbuf_printf(&probe, "#include <immintrin.h>\nvoid *ckb_probe[] = {\n");
    for (char *line = names.data; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl && nl > line) {
            ckb_strbuf_printf(&probe, "#ifndef %.*s\n(void *)&%.*s,\n#endif\n", (int)(nl - line),
                              line, (int)(nl - line), line);
            count++;
        }
        line = nl ? nl + 1 : NULL;
    }
    ckb_strbuf_printf(&probe, "0};\n");
    CKBT_EXPECT(count >= 60, "only %d intrinsics named in the API reference", count);
    char src[512], obj[512];
    snprintf(src, sizeof src, "%s/intrinsics-probe.c", ckbt_tmpdir());
    snprintf(obj, sizeof obj, "%s/intrinsics-probe.o", ckbt_tmpdir());
    CKBT_EXPECT(ckb_write_file_atomic(src, probe.data, probe.len) == 0, "cannot write %s", src);
    char *argv[] = {(char *)ckb_compiler(), "-O3", "-march=native", "-std=gnu11", "-c",
                    src, "-o", obj, NULL};
    ckb_proc_result r;
    CKBT_EXPECT(ckb_proc_run(argv, 120, 1 << 20, &r) == 0, "cannot run %s", argv[0]);
    CKBT_EXPECT(r.exited && r.exit_code == 0, "intrinsics named in docs/ unknown to %s:\n%.3000s",
                argv[0], r.output);
    ckb_proc_result_free(&r);

    /* The probe itself must be able to fail. */
    char bad[512];
    snprintf(bad, sizeof bad, "%s/intrinsics-bad.c", ckbt_tmpdir());
    const char *bad_src = "#include <immintrin.h>\nvoid *p = (void *)&_mm512_no_such_intrinsic_ps;\n";
    ckb_write_file_atomic(bad, bad_src, strlen(bad_src));
    argv[5] = bad;
    if (ckb_proc_run(argv, 120, 1 << 20, &r) == 0) {
        CKBT_EXPECT(!(r.exited && r.exit_code == 0), "a made-up intrinsic compiled");
        ckb_proc_result_free(&r);
    }
    ckb_strbuf_free(&probe);
    ckb_strbuf_free(&names);
}

/* Backticked identifiers in the rules' section that starts with heading. */
static int rules_names(const char *body, const char *heading, char names[][64], int max)
{
    const char *p = strstr(body, heading);
    if (!p)
        return 0;
    p += strlen(heading);
    const char *end = strstr(p, "\n### ");
    if (!end)
        end = p + strlen(p);
    int n = 0;
    for (const char *q = p; q < end && n < max; q++) {
        if (*q != '`')
            continue;
        const char *close = memchr(q + 1, '`', (size_t)(end - q - 1));
        if (!close)
            break;
        size_t len = (size_t)(close - q - 1);
        int ident = len > 0 && len < 64;
        for (size_t i = 0; ident && i < len; i++)
            ident = isalnum((unsigned char)q[1 + i]) || q[1 + i] == '_';
        if (ident) {
            memcpy(names[n], q + 1, len);
            names[n][len] = '\0';
            n++;
        }
        q = close;
    }
    return n;
}

CKBT_TEST(docs_rules_match_symcheck, "quick")
{
    for (size_t t = 0; t < sizeof docs_targets / sizeof *docs_targets; t++) {
        ckb_docs_set s;
        if (load_target(docs_targets[t], &s) != 0)
            continue;
        for (int i = 0; i < s.n; i++) {
            if (s.v[i].kind != CKB_DOCS_RULES)
                continue;
            static char names[256][64];
            int n = rules_names(s.v[i].body, "### Functions you may call", names, 256);
            CKBT_EXPECT(n >= 20, "%s: only %d callable functions listed", docs_targets[t], n);
            for (int k = 0; k < n; k++)
                CKBT_EXPECT(ckb_symcheck_allowed(names[k]), "%s rules: %s listed as callable "
                            "but the static check forbids it", docs_targets[t], names[k]);
            n = rules_names(s.v[i].body, "### libm", names, 256);
            CKBT_EXPECT(n >= 40, "%s: only %d libm functions listed", docs_targets[t], n);
            for (int k = 0; k < n; k++) {
                char f[80];
                size_t nl = strnlen(names[k], 63);
                memcpy(f, names[k], nl);
                f[nl] = 'f', f[nl + 1] = '\0';
                CKBT_EXPECT(ckb_symcheck_allowed(names[k]) &&
                                (names[k][strlen(names[k]) - 1] == 'f' || ckb_symcheck_allowed(f)),
                            "%s rules: libm %s (or its f form) is not allowed", docs_targets[t],
                            names[k]);
            }
            n = rules_names(s.v[i].body, "### Functions you may not call", names, 256);
            CKBT_EXPECT(n >= 15, "%s: only %d forbidden functions listed", docs_targets[t], n);
            for (int k = 0; k < n; k++)
                CKBT_EXPECT(!ckb_symcheck_allowed(names[k]) || strcmp(names[k], "assert") == 0,
                            "%s rules: %s listed as forbidden but the static check allows it",
                            docs_targets[t], names[k]);
        }
        ckb_docs_set_free(&s);
    }
}

/* One workload tag: whether some api block other than the common one
 * serves it. */
static int tag_served(const ckb_docs_set *s, const char *tag)
{
    for (int i = 0; i < s->n; i++)
        if (s->v[i].kind == CKB_DOCS_API && strcmp(s->v[i].tags, "*") != 0 &&
            ckb_docs_block_serves(&s->v[i], tag))
            return 1;
    return 0;
}

CKBT_TEST(docs_selection_follows_tags, "quick")
{
    for (size_t t = 0; t < sizeof docs_targets / sizeof *docs_targets; t++) {
        ckb_docs_set s;
        if (load_target(docs_targets[t], &s) != 0)
            continue;
        for (int wi = 0; wi < ckb_workload_count(); wi++) {
            const ckb_workload *w = ckb_workload_at(wi);
            int idx[CKB_DOCS_MAX_BLOCKS];
            int n = ckb_docs_select(&s, w, NULL, idx, CKB_DOCS_MAX_BLOCKS);
            CKBT_EXPECT(n >= 3, "%s: %d blocks", w->id, n);
            if (n < 3)
                continue;
            CKBT_EXPECT(s.v[idx[0]].kind == CKB_DOCS_HARDWARE, "%s: first block %s", w->id,
                        s.v[idx[0]].file);
            CKBT_EXPECT(s.v[idx[n - 1]].kind == CKB_DOCS_RULES, "%s: last block %s", w->id,
                        s.v[idx[n - 1]].file);
            CKBT_EXPECT(s.v[idx[1]].kind == CKB_DOCS_API && strcmp(s.v[idx[1]].tags, "*") == 0,
                        "%s: the common api block is not second", w->id);
            /* Every block chosen once, in kind order; every api block and
             * example that serves a tag of w is chosen, and only those. */
            int last_kind = -1;
            for (int k = 0; k < n; k++) {
                CKBT_EXPECT((int)s.v[idx[k]].kind >= last_kind, "%s: %s out of order", w->id,
                            s.v[idx[k]].file);
                last_kind = (int)s.v[idx[k]].kind;
                CKBT_EXPECT(strcmp(s.v[idx[k]].solves, w->id) != 0,
                            "%s: shown its own example %s", w->id, s.v[idx[k]].file);
            }
            for (int i = 0; i < s.n; i++) {
                const ckb_docs_block *b = &s.v[i];
                int chosen = 0;
                for (int k = 0; k < n; k++)
                    chosen |= idx[k] == i;
                /* with no measured roof, AMX blocks only where the ISA has AMX */
                int want = b->kind == CKB_DOCS_HARDWARE || b->kind == CKB_DOCS_RULES ||
                           (ckb_docs_block_serves(b, w->tags) &&
                            !(b->kind == CKB_DOCS_EXAMPLE && strcmp(b->solves, w->id) == 0) &&
                            (strcmp(b->unit, "amx") != 0 || ckb_isa_level() >= CKB_ISA_AMX));
                CKBT_EXPECT(chosen == want, "%s (tags %s): %s %s", w->id, w->tags, b->file,
                            want ? "missing" : "chosen but serves none of its tags");
            }
            /* Every tag of every workload has its own api block. */
            char tags[256];
            snprintf(tags, sizeof tags, "%s", w->tags);
            for (char *save, *tag = strtok_r(tags, ",", &save); tag;
                 tag = strtok_r(NULL, ",", &save))
                CKBT_EXPECT(t != 0 || tag_served(&s, tag), "%s: no api block serves tag '%s'",
                            w->id, tag);
        }
        ckb_docs_set_free(&s);
    }
    /* The example of a workload is excluded for it, shown to a sibling. */
    ckb_docs_set s;
    if (load_target("x86-avx512", &s) == 0) {
        const ckb_workload *own = ckb_workload_find("20k_Gemm_Multiply_LeakyReLU");
        const ckb_workload *sib = ckb_workload_find("41k_Gemm_Add_ReLU");
        int idx[CKB_DOCS_MAX_BLOCKS], seen_own = 0, seen_sib = 0;
        int n = ckb_docs_select(&s, own, NULL, idx, CKB_DOCS_MAX_BLOCKS);
        for (int k = 0; k < n; k++)
            seen_own |= strcmp(s.v[idx[k]].solves, own->id) == 0;
        n = ckb_docs_select(&s, sib, NULL, idx, CKB_DOCS_MAX_BLOCKS);
        for (int k = 0; k < n; k++)
            seen_sib |= strcmp(s.v[idx[k]].solves, own->id) == 0;
        CKBT_EXPECT(!seen_own && seen_sib, "the GEMM example: shown to its own workload %d, "
                    "to 41k %d", seen_own, seen_sib);
        ckb_docs_set_free(&s);
    }
}

/* A GEMM example written for one unit is shown where that unit is the
 * host's roof for bf16 work: the f32 FMA one where f32 FMA beats the bf16
 * dot (as on the issue-18 Xeon), the vdpbf16ps one where the dot wins or
 * AMX is there, both when nothing was measured. */
static int docs__shows(const ckb_docs_set *s, const ckb_workload *w, const char *unit,
                       const char *file)
{
    int idx[CKB_DOCS_MAX_BLOCKS];
    int n = ckb_docs_select(s, w, unit, idx, CKB_DOCS_MAX_BLOCKS);
    for (int k = 0; k < n; k++)
        if (strcmp(s->v[idx[k]].file, file) == 0)
            return 1;
    return 0;
}

CKBT_TEST(docs_examples_follow_the_roof_unit, "quick")
{
    ckb_docs_set s;
    if (load_target("x86-avx512", &s) != 0)
        return;
    const ckb_workload *w = ckb_workload_find("8p_GEMM");
    const char *fma = "examples/gemm-f32-fma.md", *dot = "examples/gemm-epilogue.md";
    CKBT_EXPECT(docs__shows(&s, w, "f32_fma", fma) && !docs__shows(&s, w, "f32_fma", dot),
                "f32 FMA host: want the FMA example only");
    CKBT_EXPECT(!docs__shows(&s, w, "bf16_dot", fma) && docs__shows(&s, w, "bf16_dot", dot),
                "bf16 dot host: want the vdpbf16ps example only");
    CKBT_EXPECT(!docs__shows(&s, w, "amx", fma) && docs__shows(&s, w, "amx", dot),
                "AMX host: want the vdpbf16ps example only");
    CKBT_EXPECT(docs__shows(&s, w, NULL, fma) && docs__shows(&s, w, NULL, dot),
                "unmeasured: want both");
    /* The AMX blocks reach AMX hosts only (never its own example: 9p gets
     * the GEMM one, 8p only the API block). */
    const ckb_workload *mlp = ckb_workload_find("9p_SwiGLU_MLP");
    const char *amx_api = "api/amx.md", *amx_gemm = "examples/gemm-amx.md";
    CKBT_EXPECT(docs__shows(&s, w, "amx", amx_api) && !docs__shows(&s, w, "amx", amx_gemm) &&
                    docs__shows(&s, mlp, "amx", amx_gemm) &&
                    docs__shows(&s, ckb_workload_find("2p_GQA_Attention"), "amx",
                                "examples/attention-amx.md"),
                "AMX host: the AMX API block and examples");
    const char *units[] = {"f32_fma", "bf16_dot"};
    for (int u = 0; u < 2; u++)
        CKBT_EXPECT(!docs__shows(&s, w, units[u], amx_api) &&
                        !docs__shows(&s, mlp, units[u], amx_gemm),
                    "%s host: no AMX block", units[u]);
    CKBT_EXPECT(ckb_isa_level() >= CKB_ISA_AMX ||
                    (!docs__shows(&s, w, NULL, amx_api) && !docs__shows(&s, mlp, NULL, amx_gemm)),
                "unmeasured on a host without AMX: no AMX block");
    ckb_docs_set_free(&s);
    /* through the builder, from a profile where f32 FMA is the faster unit */
    ckb_machine m;
    memset(&m, 0, sizeof m);
    snprintf(m.cpu, sizeof m.cpu, "fake");
    m.cores = m.threads = 2;
    m.f32_gflops = 347, m.bf16_dot_gflops = 160, m.bf16_gflops = 347, m.bw_gbs = 20;
    ckb_docs_opts o = {.target = "x86-avx512", .cache_dir = "", .machine = &m};
    ckb_strbuf text = {0};
    ckb_err err;
    ckb_docs_info info;
    CKBT_EXPECT(ckb_docs_build(w, &o, &text, &info, &err) == 0, "%s", err.msg);
    CKBT_EXPECT(text.data && strstr(text.data, "_mm512_fmadd_ps(a, b0") &&
                    !strstr(text.data, "## Example: tiled bf16 GEMM micro-kernel"),
                "the built docs do not teach the f32 FMA GEMM");
    ckb_strbuf_free(&text);
}

/* The dims header of workload w at dims (what `ckbench eval` force-includes). */
static int write_dims_header(const ckb_workload *w, const int64_t *dims, const char *path)
{
    char *h = ckb_workload_dims_header(w, dims, "test dims");
    int rc = ckb_write_file_atomic(path, h, strlen(h));
    free(h);
    return rc;
}

/* The hardware block of x86-avx512 rendered for m. */
static char *render_avx512_hardware(const ckb_machine *m)
{
    ckb_docs_set s;
    if (load_target("x86-avx512", &s) != 0)
        return NULL;
    ckb_strbuf out = {0};
    for (int i = 0; i < s.n; i++)
        if (s.v[i].kind == CKB_DOCS_HARDWARE)
            ckb_docs_render(&s.v[i], m, &out);
    ckb_docs_set_free(&s);
    return ckb_strbuf_take(&out);
}

CKBT_TEST(docs_hardware_advice_follows_the_fastest_unit, "quick")
{
    /* "vdpbf16ps is NOT faster than f32 FMA ... converting reaches the
     * higher roof" only where f32 FMA is the roof for bf16 work; never where
     * the dot is faster (even by less than 1.2x) or AMX is higher. */
    const char *not_faster = "vdpbf16ps is NOT faster than f32 FMA";
    ckb_machine m;
    ckb_machine_probe(2, &m);
    snprintf(m.isa, sizeof m.isa, "avx512f avx512bw avx512vl avx512_bf16 fma");
    m.bw_gbs = 25, m.l2_gbs = 200, m.l3_gbs = 90;
    m.f32_gflops = 400, m.bf16_dot_gflops = 200, m.bf16_gflops = 400;
    char *t = render_avx512_hardware(&m);
    CKBT_EXPECT(t && strstr(t, not_faster) && strstr(t, "400 GFLOP/s, from the f32 FMA") &&
                    strstr(t, "register-only loop") && strstr(t, "no AMX"),
                "f32 FMA is the roof: the advice to convert:\n%s", t ? t : "");
    free(t);
    m.bf16_dot_gflops = 440, m.bf16_gflops = 440; /* the dot 1.1x faster */
    t = render_avx512_hardware(&m);
    CKBT_EXPECT(t && !strstr(t, not_faster) && strstr(t, "vdpbf16ps is the faster path"),
                "the dot is the roof:\n%s", t ? t : "");
    free(t);
    snprintf(m.isa, sizeof m.isa, "avx512f avx512bw avx512vl avx512_bf16 amx_tile amx_bf16 fma");
    m.bf16_dot_gflops = 200, m.bf16_amx_gflops = 3000, m.bf16_gflops = 3000;
    t = render_avx512_hardware(&m);
    CKBT_EXPECT(t && !strstr(t, not_faster) && strstr(t, "AMX tiles are the fastest unit") &&
                    strstr(t, "3000 GFLOP/s, from the AMX (tdpbf16ps)") &&
                    strstr(t, "the AMX block"),
                "AMX is the roof: no advice to convert to f32:\n%s", t ? t : "");
    CKBT_EXPECT(t && strstr(t, "L2 200 GB/s") && strstr(t, "L3 90 GB/s") &&
                    strstr(t, "DRAM 25 GB/s") && !strstr(t, "bf16 peak") &&
                    !strstr(t, "bf16 unit"),
                "the memory roofs by level, one vocabulary:\n%s", t ? t : "");
    free(t);
}

CKBT_TEST(docs_amx_examples_compile, "quick")
{
    /* The AMX examples' tile paths compile wherever the compiler knows
     * AMX (this host need not have it): at the small and default sizes of
     * the workload each solves, with the candidates' flags plus AMX, and
     * the assembly holds ldtilecfg, tileloadd, tdpbf16ps, tilestored and
     * tilerelease (the tile path was taken, not the fallback). */
    ckb_docs_set s;
    if (load_target("x86-avx512", &s) != 0)
        return;
    int n = 0;
    for (int i = 0; i < s.n; i++) {
        const ckb_docs_block *b = &s.v[i];
        if (strcmp(b->unit, "amx") != 0 || b->kind != CKB_DOCS_EXAMPLE)
            continue;
        n++;
        const ckb_workload *w = ckb_workload_find(b->solves);
        char *code = first_c_block(b->body);
        CKBT_EXPECT(w && code, "%s: a workload and a C block", b->file);
        if (!w || !code) {
            free(code);
            continue;
        }
        char src[512], inc[600];
        snprintf(src, sizeof src, "%s/amx-%d.c", ckbt_tmpdir(), i);
        snprintf(inc, sizeof inc, "-I%s/include", ckb_home());
        CKBT_EXPECT(ckb_write_file_atomic(src, code, strlen(code)) == 0, "write %s", src);
        free(code);
        for (int size = CKB_SIZE_SMALL; size <= CKB_SIZE_DEFAULT; size++) {
            char hdr[512], as[512];
            int64_t dims[CKB_MAX_DIMS];
            ckb_workload_dims(w, (ckb_size)size, dims);
            snprintf(hdr, sizeof hdr, "%s/amx-%d-%d.h", ckbt_tmpdir(), i, size);
            snprintf(as, sizeof as, "%s/amx-%d-%d.s", ckbt_tmpdir(), i, size);
            CKBT_EXPECT(write_dims_header(w, dims, hdr) == 0, "write %s", hdr);
            char *argv[] = {(char *)ckb_compiler(), "-O3", "-march=native", "-mamx-tile",
                            "-mamx-bf16", "-fopenmp", "-fPIC", "-std=gnu11", "-Wall", "-Werror",
                            "-Werror=implicit-function-declaration", inc, "-include", hdr, "-S",
                            src, "-o", as, NULL};
            ckb_proc_result r;
            if (ckb_proc_run(argv, 120, 1 << 20, &r) != 0) {
                CKBT_EXPECT(0, "%s: cannot run the compiler", b->file);
                continue;
            }
            int ok = r.exited && r.exit_code == 0;
            CKBT_EXPECT(ok, "%s at size %s: the AMX path does not compile:\n%.2000s", b->file,
                        ckb_size_name((ckb_size)size), r.output);
            ckb_proc_result_free(&r);
            char *asm_text = ok ? ckb_read_file(as, NULL) : NULL;
            static const char *const insns[] = {"ldtilecfg", "tileloadd", "tdpbf16ps",
                                                "tilestored", "tilerelease", "tilezero"};
            for (size_t k = 0; asm_text && k < sizeof insns / sizeof *insns; k++)
                CKBT_EXPECT(strstr(asm_text, insns[k]), "%s at size %s: no %s in the assembly",
                            b->file, ckb_size_name((ckb_size)size), insns[k]);
            free(asm_text);
        }
    }
    CKBT_EXPECT(n == 2, "two AMX examples (GEMM, attention), found %d", n);
    ckb_docs_set_free(&s);
}

CKBT_TEST(docs_amx_examples_pass_eval, "full")
{
    /* The AMX examples pass `ckbench eval` on the workload each solves:
     * through the tiles on an AMX host; elsewhere only their plain path can
     * run, which is evaluated, and the test says it is skipped. */
    ckb_docs_set s;
    if (load_target("x86-avx512", &s) != 0)
        return;
    int amx = ckb_isa_level() >= CKB_ISA_AMX;
    for (int i = 0; i < s.n; i++) {
        const ckb_docs_block *b = &s.v[i];
        if (strcmp(b->unit, "amx") != 0 || b->kind != CKB_DOCS_EXAMPLE)
            continue;
        char *code = first_c_block(b->body);
        char path[512];
        snprintf(path, sizeof path, "%s/amx-example-%d.c", ckbt_tmpdir(), i);
        CKBT_EXPECT(code && ckb_write_file_atomic(path, code, strlen(code)) == 0, "%s", b->file);
        free(code);
        const char *sizes[] = {"small", "default"};
        for (int k = 0; k < (amx ? 2 : 1); k++) {
            int exit_code = -1;
            json_object *j = ckbt_eval(b->solves, path, &exit_code, "--warmup", "1", "--iters",
                                       "3", "--size", sizes[k], NULL);
            CKBT_EXPECT(exit_code == 0 && strcmp(ckbt_str(j, "status"), "ok") == 0,
                        "%s on %s at %s: exit %d, status %s: %.600s", b->file, b->solves,
                        sizes[k], exit_code, ckbt_str(j, "status"), ckbt_str(j, "message"));
            json_object_put(j);
        }
    }
    ckb_docs_set_free(&s);
    if (!amx)
        ckbt_skip("no AMX on this host (ISA level %s): the tile paths of the AMX examples "
                  "were not run (docs_amx_examples_compile compiles them); only their plain "
                  "fallback was evaluated",
                  ckb_isa_name(ckb_isa_level()));
}

CKBT_TEST(docs_header_errors, "quick")
{
    ckb_docs_block b;
    ckb_err err;
    CKBT_EXPECT(ckb_docs_parse("x.md", "no header\n", &b, &err) != 0, "no header");
    CKBT_EXPECT(ckb_docs_parse("x.md", "---\nkind: api\ntitle: t\n---\nbody", &b, &err) != 0,
                "api without tags accepted");
    CKBT_EXPECT(
        ckb_docs_parse("x.md", "---\nkind: example\ntags: matmul\ntitle: t\n---\n", &b, &err) != 0,
        "example without solves accepted");
    CKBT_EXPECT(ckb_docs_parse("x.md", "---\nkind: recipe\ntitle: t\n---\n", &b, &err) != 0 &&
                    strstr(err.msg, "recipe"),
                "kind recipe: %s", err.msg);
    CKBT_EXPECT(
        ckb_docs_parse("x.md", "---\nkind: api\ntags: a, b\ncolour: red\n---\n", &b, &err) != 0 &&
            strstr(err.msg, "x.md:4"),
        "unknown key: %s", err.msg);
    int ok = ckb_docs_parse(
        "x.md", "---\nkind: api\ntags: norm , scan\ntitle: \"T: x\"\n---\n\nBody\n", &b, &err);
    CKBT_EXPECT(ok == 0, "a good header rejected: %s", err.msg);
    if (ok == 0) {
        CKBT_EXPECT(strcmp(b.tags, "norm,scan") == 0 && strcmp(b.title, "T: x") == 0 &&
                        strcmp(b.body, "Body\n") == 0,
                    "parsed tags '%s' title '%s' body '%s'", b.tags, b.title, b.body);
        CKBT_EXPECT(ckb_docs_block_serves(&b, "matmul,scan") && !ckb_docs_block_serves(&b, "conv"),
                    "serves");
        free(b.body);
        free(b.raw);
    }
}

CKBT_TEST(docs_hardware_filled, "quick")
{
    ckb_machine m;
    ckb_machine_probe(2, &m);
    /* a CPU whose bf16 dot is slower than f32 FMA: the bf16 roof is f32's */
    m.f32_gflops = 400, m.bf16_dot_gflops = 200, m.bf16_gflops = 400, m.bw_gbs = 25;
    m.f32_gflops_1t = 200, m.bf16_gflops_1t = 100;
    for (size_t t = 0; t < sizeof docs_targets / sizeof *docs_targets; t++) {
        ckb_docs_set s;
        if (load_target(docs_targets[t], &s) != 0)
            continue;
        for (int i = 0; i < s.n; i++) {
            if (s.v[i].kind != CKB_DOCS_HARDWARE)
                continue;
            ckb_strbuf out = {0};
            ckb_docs_render(&s.v[i], &m, &out);
            CKBT_EXPECT(!strstr(out.data, "{{"), "%s: unfilled placeholder near: %.80s",
                        docs_targets[t], strstr(out.data, "{{"));
            CKBT_EXPECT(strstr(out.data, "400 GFLOP/s") && strstr(out.data, "25 GB/s") &&
                            strstr(out.data, "16 FLOP/byte"),
                        "%s: the profile's figures (400, 25, ridge 16 = the f32 roof / DRAM) are "
                        "missing",
                        docs_targets[t]);
            ckb_strbuf_free(&out);
        }
        ckb_docs_set_free(&s);
    }
}

/* Copies docs/<target> into a scratch folder, so a block can be edited. */
static int copy_docs(const char *target, const char *dst)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "docs/%s/.", target);
    char *argv[] = {"cp", "-r", cmd, (char *)dst, NULL};
    ckb_proc_result r;
    if (ckb_mkdirs(dst) != 0 || ckb_proc_run(argv, 60, 4096, &r) != 0)
        return -1;
    int ok = r.exited && r.exit_code == 0;
    ckb_proc_result_free(&r);
    return ok ? 0 : -1;
}

CKBT_TEST(docs_cache_reused_and_invalidated, "quick")
{
    ckb_err err;
    char dir[512], cache[512];
    snprintf(dir, sizeof dir, "%s/docs-copy", ckbt_tmpdir());
    snprintf(cache, sizeof cache, "%s/docs-cache", ckbt_tmpdir());
    CKBT_EXPECT(copy_docs("x86-avx512", dir) == 0, "cannot copy docs/x86-avx512");
    const ckb_workload *w = ckb_workload_find("12p_RMSNorm");
    ckb_machine m;
    ckb_machine_probe(2, &m);
    ckb_docs_opts o = {.target = "x86-avx512", .dir = dir, .cache_dir = cache, .machine = &m};
    ckb_docs_info a, b, c, d;
    ckb_strbuf ta = {0}, tb = {0}, tc = {0}, td = {0};
    CKBT_EXPECT(ckb_docs_build(w, &o, &ta, &a, &err) == 0, "%s", err.msg);
    CKBT_EXPECT(!a.cached && a.cache_path[0] && access(a.cache_path, R_OK) == 0,
                "first build: cached %d, path '%s'", a.cached, a.cache_path);
    CKBT_EXPECT(a.chars == (long)ta.len && a.tokens == a.chars / 4 && a.nblocks >= 4,
                "info: %ld chars (text %zu), %ld tokens, %d blocks", a.chars, ta.len, a.tokens,
                a.nblocks);
    long sum = 0;
    for (int i = 0; i < a.nblocks; i++)
        sum += a.block[i].chars;
    CKBT_EXPECT(sum == a.chars, "block sizes add to %ld, text %ld", sum, a.chars);

    /* Reused: a marker written into the cached file comes back. */
    const char *marker = "CACHED-TEXT\n";
    ckb_write_file_atomic(a.cache_path, marker, strlen(marker));
    CKBT_EXPECT(ckb_docs_build(w, &o, &tb, &b, &err) == 0, "%s", err.msg);
    CKBT_EXPECT(b.cached && strcmp(b.cache_path, a.cache_path) == 0 && tb.data &&
                    strcmp(tb.data, marker) == 0,
                "second build not from the cache (cached %d)", b.cached);

    /* Invalidated: an edited block gives a new key and new text. */
    char path[1024];
    snprintf(path, sizeof path, "%s/api/norm.md", dir);
    char *text = ckb_read_file(path, NULL);
    CKBT_EXPECT(text != NULL, "cannot read %s", path);
    if (text) {
        ckb_strbuf edited = {0};
        ckb_strbuf_printf(&edited, "%sEDITED-LINE\n", text);
        ckb_write_file_atomic(path, edited.data, edited.len);
        ckb_strbuf_free(&edited);
        free(text);
    }
    CKBT_EXPECT(ckb_docs_build(w, &o, &tc, &c, &err) == 0, "%s", err.msg);
    CKBT_EXPECT(!c.cached && strcmp(c.cache_path, a.cache_path) != 0 && tc.data &&
                    strstr(tc.data, "EDITED-LINE"),
                "after an edit: cached %d, same path %d", c.cached,
                strcmp(c.cache_path, a.cache_path) == 0);
    CKBT_EXPECT(access(a.cache_path, F_OK) != 0, "the stale cache file was kept");

    /* A different profile is a different key too. */
    m.bw_gbs = 123;
    CKBT_EXPECT(ckb_docs_build(w, &o, &td, &d, &err) == 0, "%s", err.msg);
    CKBT_EXPECT(!d.cached && strstr(td.data, "123 GB/s"), "a new profile reused the old text");
    ckb_strbuf_free(&ta);
    ckb_strbuf_free(&tb);
    ckb_strbuf_free(&tc);
    ckb_strbuf_free(&td);
}

/* ---- examples at ragged sizes ------------------------------------------ */

typedef void (*docs_test_fn)();

static void call_candidate(docs_test_fn f, int n, void *const *t)
{
    switch (n) {
    case 2: f(t[0], t[1]); break;
    case 3: f(t[0], t[1], t[2]); break;
    case 4: f(t[0], t[1], t[2], t[3]); break;
    case 5: f(t[0], t[1], t[2], t[3], t[4]); break;
    case 6: f(t[0], t[1], t[2], t[3], t[4], t[5]); break;
    default: CKBT_EXPECT(0, "%d tensors: extend call_candidate", n);
    }
}

/* Dims of `small` with the example's "NAME=V,..." overrides. */
static int ragged_dims(const ckb_workload *w, const char *tails, int64_t *dims)
{
    ckb_workload_dims(w, CKB_SIZE_SMALL, dims);
    char buf[128];
    snprintf(buf, sizeof buf, "%s", tails);
    for (char *save, *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        int found = 0;
        for (int i = 0; eq && i < w->ndims; i++)
            if ((size_t)(eq - kv) == strlen(w->dims[i].name) &&
                strncmp(kv, w->dims[i].name, (size_t)(eq - kv)) == 0) {
                dims[i] = strtoll(eq + 1, NULL, 10);
                found = 1;
            }
        if (!found)
            return -1;
    }
    return 0;
}

/* Compiles the example with a header of ragged dims, runs it on guarded
 * buffers (an overrun faults; a write into an output's slack is seen) and
 * compares with the workload's plain reference at those dims. */
/* Compiles example b (with the extra flags, NULL-terminated) at dims,
 * loads it and compares it with the reference of the workload it solves;
 * label names the dims in messages. *products (may be NULL): the value of
 * the object's amx_emu_products after the call, -1 when it has none. */
static void run_example(const char *target, const ckb_docs_block *b, const int64_t *dims,
                        const char *label, const char *const *extra, long *products)
{
    const ckb_workload *w = ckb_workload_find(b->solves);
    if (products)
        *products = -1;
    if (!w) {
        CKBT_EXPECT(0, "%s/%s: unknown workload %s", target, b->file, b->solves);
        return;
    }
    /* a file of its own per run: a library dlopen'ed again by the same path
     * may be the one still loaded */
    static int seq;
    seq++;
    char hdr[512], src[512], so[512], inc[600];
    snprintf(hdr, sizeof hdr, "%s/example-%d-%s.h", ckbt_tmpdir(), seq, w->id);
    snprintf(src, sizeof src, "%s/example-%d-%s-%s.c", ckbt_tmpdir(), seq, target, w->id);
    snprintf(so, sizeof so, "%s/example-%d-%s-%s.so", ckbt_tmpdir(), seq, target, w->id);
    snprintf(inc, sizeof inc, "-I%s/include", ckb_home());
    char *code = first_c_block(b->body);
    int ok = code && write_dims_header(w, dims, hdr) == 0 &&
             ckb_write_file_atomic(src, code, strlen(code)) == 0;
    free(code);
    CKBT_EXPECT(ok, "%s/%s: cannot write the sources", target, b->file);
    char *argv[32] = {(char *)ckb_compiler(), "-O3", "-march=native", "-fopenmp", "-shared",
                      "-fPIC", "-std=gnu11", inc, "-include", hdr};
    int na = 10;
    for (int i = 0; extra && extra[i] && na < 26; i++)
        argv[na++] = (char *)extra[i];
    argv[na++] = src, argv[na++] = "-o", argv[na++] = so, argv[na++] = "-lm";
    argv[na] = NULL;
    ckb_proc_result r;
    if (!ok || ckb_proc_run(argv, 120, 1 << 20, &r) != 0)
        return;
    ok = r.exited && r.exit_code == 0;
    CKBT_EXPECT(ok, "%s/%s at %s: compile failed:\n%.2000s", target, b->file, label, r.output);
    ckb_proc_result_free(&r);
    void *lib = ok ? dlopen(so, RTLD_NOW | RTLD_LOCAL) : NULL;
    void *sym = lib ? dlsym(lib, "workload") : NULL;
    CKBT_EXPECT(!ok || sym, "%s: cannot load %s", b->file, so);
    if (!sym) {
        if (lib)
            dlclose(lib);
        return;
    }
    void *ref[CKB_MAX_TENSORS], *cand[CKB_MAX_TENSORS];
    ckb_guard g[CKB_MAX_TENSORS];
    if (ckb_tensors_alloc(w, dims, ref) != 0) {
        dlclose(lib);
        CKBT_EXPECT(0, "out of memory");
        return;
    }
    w->create_inputs(dims, 7, ref);
    for (int i = 0; i < w->ntensors; i++) {
        size_t bytes = ckb_tensor_bytes(&w->tensors[i], dims);
        CKBT_EXPECT(ckb_guard_alloc(&g[i], bytes) == 0, "guard alloc");
        cand[i] = g[i].ptr;
        if (w->tensors[i].role == CKB_IN)
            memcpy(cand[i], ref[i], bytes);
        else
            memset(cand[i], 0xff, bytes); /* NaN: every element must be written */
    }
    w->reference(dims, ref);
    call_candidate((docs_test_fn)sym, w->ntensors, cand);
    for (int i = 0; i < w->ntensors; i++) {
        if (w->tensors[i].role != CKB_OUT)
            continue;
        ckb_check k;
        ckb_check_allclose(w->tensors[i].dtype, cand[i], ref[i], ckb_tensor_numel(&w->tensors[i], dims),
                           ckb_workload_atol(w), ckb_workload_rtol(w), &k);
        CKBT_EXPECT(k.ok && ckb_guard_canary_ok(&g[i]),
                    "%s/%s at %s: %lld wrong elements of %s (worst %lld: got %g, want %g), canary %d",
                    target, b->file, label, (long long)k.nbad, w->tensors[i].name,
                    (long long)k.worst, k.got, k.want, ckb_guard_canary_ok(&g[i]));
    }
    long *count = dlsym(lib, "amx_emu_products");
    if (products && count)
        *products = *count;
    for (int i = 0; i < w->ntensors; i++)
        ckb_guard_free(&g[i]);
    ckb_tensors_free(w, ref);
    dlclose(lib);
}

static void check_ragged(const char *target, const ckb_docs_block *b)
{
    const ckb_workload *w = ckb_workload_find(b->solves);
    int64_t dims[CKB_MAX_DIMS];
    if (!w || ragged_dims(w, b->tails, dims) != 0) {
        CKBT_EXPECT(0, "%s/%s: bad tails '%s' for %s", target, b->file, b->tails, b->solves);
        return;
    }
    run_example(target, b, dims, b->tails, NULL, NULL);
}

CKBT_TEST(docs_examples_handle_ragged_sizes, "full")
{
    for (size_t t = 0; t < sizeof docs_targets / sizeof *docs_targets; t++) {
        ckb_docs_set s;
        if (!target_runs_here(docs_targets[t]) || load_target(docs_targets[t], &s) != 0)
            continue;
        for (int i = 0; i < s.n; i++) {
            if (s.v[i].kind != CKB_DOCS_EXAMPLE)
                continue;
            CKBT_EXPECT(s.v[i].tails[0], "%s/%s: no 'tails:' dims to test its tails at",
                        docs_targets[t], s.v[i].file);
            if (s.v[i].tails[0])
                check_ragged(docs_targets[t], &s.v[i]);
        }
        ckb_docs_set_free(&s);
    }
}

CKBT_TEST(docs_amx_examples_emulated, "quick")
{
    /* The AMX examples' tile paths run here against the reference of the
     * workload each solves, with the tile intrinsics emulated in C
     * (tests/amx_emu.h: configuration, loads and stores by stride, the pair
     * products, traps where the hardware would fault), at the small size
     * and at one with more blocks per row. This checks the layouts, strides
     * and blocking; it is not a run on AMX hardware. */
    ckb_docs_set s;
    if (load_target("x86-avx512", &s) != 0)
        return;
    char emu[1024];
    snprintf(emu, sizeof emu, "%s/tests/amx_emu.h", ckb_home());
    const char *extra[] = {"-D__AMX_TILE__", "-D__AMX_BF16__", "-include", emu, NULL};
    int n = 0;
    for (int i = 0; i < s.n; i++) {
        const ckb_docs_block *b = &s.v[i];
        if (strcmp(b->unit, "amx") != 0 || b->kind != CKB_DOCS_EXAMPLE)
            continue;
        const ckb_workload *w = ckb_workload_find(b->solves);
        if (!w)
            continue;
        n++;
        int64_t dims[CKB_MAX_DIMS];
        for (int v = 0; v < 2; v++) {
            ckb_workload_dims(w, CKB_SIZE_SMALL, dims);
            const char *label = "small";
            if (v == 1) {
                /* more tiles: 8p M=96 K=160 N=64; 1p S=128 D=64 (multiples of 32) */
                const char *tails = strcmp(w->id, "8p_GEMM") == 0 ? "M=96,K=160,N=64"
                                                                   : "S=128,D=64,H=2";
                CKBT_EXPECT(ragged_dims(w, tails, dims) == 0, "%s: dims %s", w->id, tails);
                label = tails;
            }
            long products = -1;
            run_example("x86-avx512", b, dims, label, extra, &products);
            CKBT_EXPECT(products > 0, "%s at %s: the tile path did not run (%ld tdpbf16ps)",
                        b->file, label, products);
        }
    }
    CKBT_EXPECT(n == 2, "two AMX examples, found %d", n);
    ckb_docs_set_free(&s);
}

/* 12p with both bf16 roundings truncated (>> 16) instead of rounded. */
static const char docs_trunc_12p[] =
    "#include <math.h>\n#include <string.h>\n"
    "static inline ckb_bf16 tr(float f)\n"
    "{ uint32_t u; memcpy(&u, &f, 4); return (ckb_bf16)(u >> 16); }\n"
    "void workload(const ckb_bf16 *x, const ckb_bf16 *scale, ckb_bf16 *out)\n{\n"
    "#pragma omp parallel for\n"
    "    for (int64_t r = 0; r < B * S; r++) {\n"
    "        float ss = 0.0f;\n"
    "        for (int64_t j = 0; j < D; j++)\n"
    "            ss += ckb_bf16_to_f32(x[r * D + j]) * ckb_bf16_to_f32(x[r * D + j]);\n"
    "        float inv = 1.0f / sqrtf(ss / (float)D + EPS);\n"
    "        for (int64_t j = 0; j < D; j++) {\n"
    "            float n = ckb_bf16_to_f32(tr(ckb_bf16_to_f32(x[r * D + j]) * inv));\n"
    "            out[r * D + j] = tr(n * ckb_bf16_to_f32(scale[j]));\n"
    "        }\n    }\n}\n";

CKBT_TEST(docs_truncation_claim_matches_eval, "full")
{
    /* The rules say what the evaluator does with a truncating kernel on
     * 12p: it passes (the relative tolerance does not catch one ulp), with
     * a larger error than rounding. Keep the text and the verdict together. */
    char path[512];
    snprintf(path, sizeof path, "%s/trunc-12p.c", ckbt_tmpdir());
    CKBT_EXPECT(ckb_write_file_atomic(path, docs_trunc_12p, strlen(docs_trunc_12p)) == 0,
                "cannot write %s", path);
    int exit_code = -1;
    json_object *j = ckbt_eval("12p", path, &exit_code, "--warmup", "1", "--iters", "5", NULL);
    CKBT_EXPECT(exit_code == 0 && strcmp(ckbt_str(j, "status"), "ok") == 0 &&
                    ckbt_num(j, "max_abs_err") > 0.02,
                "a truncating 12p kernel: status %s, max abs err %g (the docs say it passes, "
                "with an error above rounding's)",
                ckbt_str(j, "status"), ckbt_num(j, "max_abs_err"));
    json_object_put(j);
    for (size_t t = 0; t < sizeof docs_targets / sizeof *docs_targets; t++) {
        char file[256];
        snprintf(file, sizeof file, "docs/%s/rules.md", docs_targets[t]);
        char *rules = ckb_read_file(file, NULL);
        CKBT_EXPECT(rules && strstr(rules, "truncating both of its bf16") &&
                        strstr(rules, "roundings passed") && !strstr(rules, "fails large sums"),
                    "%s states what the evaluator does with truncation", file);
        free(rules);
    }
}

/* ---- docs/DESIGN.md: every "DESIGN §N" citation names one of its sections ---- */

/* Where citations may be: the tree a clone has, less build outputs. */
static const char *const design_roots[] = {"src",       "tests",      "docs",    "README.md",
                                           "workloads", "expert-kit", "include", "scripts"};

typedef struct {
    const char *design; /* docs/DESIGN.md's text */
    int cited;          /* citations seen */
    int files;          /* files read */
} design_scan;

/* 1 when DESIGN.md has a heading "## <id>." at the start of a line. */
static int design_has_section(const char *design, const char *id)
{
    char head[32];
    int n = snprintf(head, sizeof head, "## %s.", id);
    for (const char *p = design; (p = strstr(p, head)) != NULL; p += n)
        if (p == design || p[-1] == '\n')
            return 1;
    return 0;
}

/* Checks each "DESIGN §N" (and the ", §M" that follow it, as in "DESIGN
 * §4, §5") in one file's text. The id is the number and, as in §6b, one
 * lower-case letter right after it that no other letter follows. */
static void design_check_text(design_scan *s, const char *path, const char *text, size_t len)
{
    static const char needle[] = "DESIGN §";
    const size_t nl = sizeof needle - 1;
    const char *end = text + len;
    for (const char *p = text; (p = memmem(p, (size_t)(end - p), needle, nl)) != NULL;) {
        const char *q = p + nl;
        for (;;) {
            if (q >= end || !isdigit((unsigned char)*q))
                break; /* "§N" in prose about citations, not one */
            char id[16];
            size_t k = 0;
            while (q < end && isdigit((unsigned char)*q) && k < sizeof id - 2)
                id[k++] = *q++;
            if (q < end && islower((unsigned char)*q) &&
                (q + 1 >= end || !isalpha((unsigned char)q[1])))
                id[k++] = *q++;
            id[k] = '\0';
            s->cited++;
            if (!design_has_section(s->design, id)) {
                int line = 1;
                for (const char *c = text; c < p; c++)
                    line += *c == '\n';
                CKBT_EXPECT(0, "%s:%d cites DESIGN §%s, which docs/DESIGN.md has no \"## %s.\" "
                               "heading for",
                            path, line, id, id);
            }
            if ((size_t)(end - q) >= 4 && memcmp(q, ", §", 4) == 0)
                q += 4;
            else
                break;
        }
        p = q > p + nl ? q : p + nl;
    }
}

static void design_walk(design_scan *s, const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        CKBT_EXPECT(0, "cannot read %s (the tests run from the repository's root)", path);
        return;
    }
    if (S_ISREG(st.st_mode)) {
        size_t len = 0;
        char *text = ckb_read_file(path, &len);
        CKBT_EXPECT(text != NULL, "cannot read %s", path);
        if (text) {
            s->files++;
            design_check_text(s, path, text, len);
        }
        free(text);
        return;
    }
    if (!S_ISDIR(st.st_mode))
        return;
    DIR *d = opendir(path);
    CKBT_EXPECT(d != NULL, "cannot open %s", path);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char sub[4096];
        if (snprintf(sub, sizeof sub, "%s/%s", path, e->d_name) < (int)sizeof sub)
            design_walk(s, sub);
    }
    closedir(d);
}

CKBT_TEST(docs_design_citations_resolve, "quick")
{
    char *design = ckb_read_file("docs/DESIGN.md", NULL);
    CKBT_EXPECT(design != NULL, "docs/DESIGN.md is missing: the citations have nothing to resolve "
                                "against");
    if (!design)
        return;
    /* the scanner's own checks: a heading found, a missing one not */
    CKBT_EXPECT(design_has_section(design, "4") && design_has_section(design, "6b") &&
                    !design_has_section(design, "42"),
                "DESIGN.md's headings read as \"## N. Title\"");
    design_scan s = {.design = design};
    static const char sample[] = "DESIGN §4, §6b; DESIGN §8's; DESIGN §N";
    design_check_text(&s, "(self-test)", sample, strlen(sample));
    CKBT_EXPECT(s.cited == 3, "the scanner reads 3 citations in \"%s\" (read %d)", sample,
                s.cited);
    s.cited = 0;
    for (size_t i = 0; i < sizeof design_roots / sizeof *design_roots; i++)
        design_walk(&s, design_roots[i]);
    /* some 50 citations today: far fewer means the walk missed the tree */
    CKBT_EXPECT(s.files > 100 && s.cited >= 20, "read %d files and %d citations", s.files,
                s.cited);
    free(design);
}

/* ---- README.md, docs/MANUAL.md, docs/measurements/: their links resolve ---- */

/* GitHub's anchor of a Markdown heading's text: lower case; letters, digits,
 * '-' and '_' kept, spaces made '-', anything else dropped. */
static void readme_slug(const char *text, size_t len, char *out, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < len && k + 1 < n; i++) {
        unsigned char c = (unsigned char)text[i];
        if (isalnum(c) || c == '-' || c == '_')
            out[k++] = (char)tolower(c);
        else if (c == ' ')
            out[k++] = '-';
    }
    out[k] = '\0';
}

/* 1 when the Markdown text has a heading whose anchor is `anchor`. */
static int readme_has_anchor(const char *md, const char *anchor)
{
    for (const char *l = md; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (*l != '#' || (l > md && l[-1] != '\n'))
            continue;
        const char *t = l;
        while (*t == '#')
            t++;
        if (*t != ' ')
            continue;
        t++;
        const char *e = strchr(t, '\n');
        char slug[512];
        readme_slug(t, e ? (size_t)(e - t) : strlen(t), slug, sizeof slug);
        if (strcmp(slug, anchor) == 0)
            return 1;
    }
    return 0;
}

/* Checks every relative link "](target)" of the file at path: the target
 * exists (relative to the file's folder), and a "#anchor" names a heading of
 * it. Records in seen[] the pages of docs/measurements/ it links. */
static int readme_check_links(const char *path, char (*seen)[256], int nseen_max, int *nseen)
{
    char *text = ckb_read_file(path, NULL);
    CKBT_EXPECT(text != NULL, "cannot read %s", path);
    if (!text)
        return 0;
    char dir[512];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[1] = '\0';
    else
        dir[0] = '\0';
    int links = 0;
    for (const char *p = text; (p = strstr(p, "](")) != NULL;) {
        p += 2;
        const char *end = strchr(p, ')');
        if (!end || memchr(p, '\n', (size_t)(end - p)) || end - p >= 400)
            continue;
        if (strncmp(p, "http://", 7) == 0 || strncmp(p, "https://", 8) == 0 ||
            strncmp(p, "mailto:", 7) == 0)
            continue;
        char target[512], file[1024], anchor[400] = "";
        snprintf(target, sizeof target, "%.*s", (int)(end - p), p);
        char *hash = strchr(target, '#');
        if (hash) {
            snprintf(anchor, sizeof anchor, "%s", hash + 1);
            *hash = '\0';
        }
        links++;
        if (target[0])
            snprintf(file, sizeof file, "%s%s", dir, target);
        else
            snprintf(file, sizeof file, "%s", path); /* "#anchor": this file */
        struct stat st;
        CKBT_EXPECT(stat(file, &st) == 0, "%s links to %s, which does not exist", path, file);
        if (anchor[0] && stat(file, &st) == 0 && S_ISREG(st.st_mode)) {
            char *md = ckb_read_file(file, NULL);
            CKBT_EXPECT(md && readme_has_anchor(md, anchor),
                        "%s links to %s#%s: %s has no heading with that anchor", path, file,
                        anchor, file);
            free(md);
        }
        const char *m = strstr(file, "docs/measurements/");
        if (m && *nseen < nseen_max && strlen(m) > strlen("docs/measurements/"))
            snprintf(seen[(*nseen)++], 256, "%s", m + strlen("docs/measurements/"));
    }
    free(text);
    return links;
}

/* The README was cut to a ten-minute read (issue 31): what it left out went to
 * docs/MANUAL.md and, one page per host kind, docs/measurements/. Every link
 * between them resolves, anchors included, and the README's table of figures
 * links every page of docs/measurements/. */
CKBT_TEST(docs_readme_links_resolve, "quick")
{
    char seen[64][256];
    int nseen = 0, links = 0;
    links += readme_check_links("README.md", seen, 64, &nseen);
    int from_readme = nseen;
    links += readme_check_links("docs/MANUAL.md", seen, 64, &nseen);
    DIR *d = opendir("docs/measurements");
    CKBT_EXPECT(d != NULL, "docs/measurements/ holds the figures measured per host kind");
    int pages = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 4 || strcmp(e->d_name + n - 3, ".md") != 0)
            continue;
        pages++;
        char path[512];
        snprintf(path, sizeof path, "docs/measurements/%s", e->d_name);
        int dummy = 0;
        char none[1][256];
        links += readme_check_links(path, none, 0, &dummy);
        int linked = 0;
        for (int i = 0; i < from_readme; i++)
            linked |= strcmp(seen[i], e->d_name) == 0;
        CKBT_EXPECT(linked, "README.md's \"Figures measured, per host kind\" does not link %s",
                    path);
    }
    if (d)
        closedir(d);
    CKBT_EXPECT(pages >= 5, "docs/measurements/ has %d pages (5 host kinds measured)", pages);
    /* the checker's own checks */
    char slug[128];
    readme_slug("Hiding ISA features: `CKBENCH_ISA`", 34, slug, sizeof slug);
    CKBT_EXPECT(strcmp(slug, "hiding-isa-features-ckbench_isa") == 0, "slug '%s'", slug);
    CKBT_EXPECT(links >= 30, "read %d links", links);
}
