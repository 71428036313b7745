/* The prompts of the generation methods (see prompt.h). */
#include <ctype.h>
#include <json-c/json.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "eval/eval.h"
#include "gen/menu.h"
#include "gen/prompt.h"
#include "machine/roofline.h"

#define PROMPT_FEEDBACK_LINES 40

void ckb_gen_prompt_free(ckb_gen_prompt *p)
{
    for (int i = 0; i < p->n; i++)
        free(p->text[i]);
    memset(p, 0, sizeof *p);
}

static void prompt__set(ckb_gen_prompt *p, char *system, char *user)
{
    memset(p, 0, sizeof *p);
    p->text[0] = system;
    p->text[1] = user;
    p->msgs[0] = (ckb_chat_msg){"system", system};
    p->msgs[1] = (ckb_chat_msg){"user", user};
    p->n = 2;
}

void ckb_gen_machine(int threads, ckb_machine *m, int *measured)
{
    ckb_machine probe, stored;
    char path[1024];
    ckb_machine_probe(threads, &probe);
    ckb_machine_default_path(threads, path, sizeof path);
    *measured = ckb_machine_load(path, &stored) == 0 && strcmp(stored.cpu, probe.cpu) == 0 &&
                strcmp(stored.isa, probe.isa) == 0 && stored.cores == probe.cores &&
                stored.threads == threads;
    *m = *measured ? stored : probe;
}

/* The host in one line: CPU, the vector ISA that matters, what it lacks. */
static void prompt__host(ckb_strbuf *sb, const ckb_machine *m)
{
    const char *isa = m->isa;
    int avx512 = strstr(isa, "avx512f") != NULL, bf16 = strstr(isa, "avx512_bf16") != NULL;
    int amx = strstr(isa, "amx_bf16") != NULL, avx2 = strstr(isa, "avx2") != NULL;
    ckb_strbuf_printf(sb, "%s, %d CPUs; ", m->cpu[0] ? m->cpu : "unknown CPU", m->cores);
    if (amx)
        ckb_strbuf_printf(sb, "AVX-512 with BF16 and AMX (tiles)");
    else if (bf16)
        ckb_strbuf_printf(sb, "AVX-512 with BF16 (vdpbf16ps), no AMX");
    else if (avx512)
        ckb_strbuf_printf(sb, "AVX-512 without BF16, no AMX");
    else if (avx2)
        ckb_strbuf_printf(sb, "AVX2%s, no AVX-512 (512-bit intrinsics do not compile), no AMX",
                          strstr(isa, "fma") ? " and FMA" : "");
    else
        ckb_strbuf_printf(sb, "no AVX2");
}

/* The roofline of this workload at this size, as every result of it is
 * divided by (machine/roofline.h, the same call as `ckbench eval`): the
 * compute roof by unit with how it was measured, the memory roof of the
 * level its working set fits, and the time they allow. */
static void prompt__roofs(ckb_strbuf *sb, const ckb_gen_task *t, const int64_t *dims)
{
    const ckb_workload *w = t->w;
    const ckb_machine *m = &t->machine;
    ckb_roof r;
    ckb_roof_make(m, ckb_roof_precision(w), ckb_roof_working_set_dims(w, dims), &r);
    if (!t->measured || !(r.compute_gflops > 0) || !(r.mem_gbs > 0)) {
        ckb_strbuf_printf(sb, "- Roofs: not measured yet on this host (`ckbench machine`).\n");
        return;
    }
    double flops = w->flops(dims), bytes = w->bytes(dims);
    const char *bound = ckb_roof_bound(&r, flops, bytes);
    ckb_strbuf_printf(sb,
                      "- Roofs (the roofline every result of this workload is divided by, "
                      "%d threads):\n"
                      "  - compute roof: %.0f GFLOP/s from the %s, %s.",
                      m->threads, r.compute_gflops, ckb_roof_unit_label(r.unit),
                      ckb_roof_compute_how());
    /* the other units, measured the same way, below the roof */
    struct { const char *unit; double v; } other[] = {{"f32_fma", m->f32_gflops},
                                                      {"bf16_dot", m->bf16_dot_gflops},
                                                      {"amx", m->bf16_amx_gflops}};
    int said = 0;
    for (int i = 0; i < 3; i++) {
        if (!(other[i].v > 0) || (r.unit && strcmp(r.unit, other[i].unit) == 0))
            continue;
        if (r.precision == CKB_PREC_F32 && i > 0)
            continue;
        ckb_strbuf_printf(sb, "%s%s %.0f GFLOP/s", said ? ", " : " Below it: ",
                          ckb_roof_unit_label(other[i].unit), other[i].v);
        said = 1;
    }
    ckb_strbuf_printf(sb, "%s\n", said ? "." : "");
    ckb_strbuf_printf(sb,
                      "  - memory roof: %.0f GB/s from %s (%s): this working set, %.3g MB, %s",
                      r.mem_gbs, ckb_roof_level_label(r.mem_level),
                      ckb_roof_level_how(r.mem_level), r.working_set / 1e6,
                      r.mem_level && strcmp(r.mem_level, "dram") == 0
                          ? "fits no cache"
                          : r.mem_level && strcmp(r.mem_level, "l2") == 0
                                ? "fits the L2 of the team's cores"
                                : "fits the L3");
    if (r.mem_level && strcmp(r.mem_level, "dram") != 0 && r.dram_gbs > 0)
        ckb_strbuf_printf(sb, " (DRAM, for a larger one: %.0f GB/s)", r.dram_gbs);
    ckb_strbuf_printf(sb,
                      ".\n"
                      "  - this workload at this size: %.3g GFLOP and %.3g MB of compulsory "
                      "traffic, so it is %s-bound and no kernel beats %.3g ms.\n",
                      flops / 1e9, bytes / 1e6, bound ? bound : "?",
                      ckb_roof_ms(&r, flops, bytes));
}

/* The task and the rules, true to what src/eval enforces, and next to the
 * signature the facts a kernel is judged and timed by: the judge and its
 * tolerance, the dims it is compiled at, the threads, the host's roofs. */
static char *prompt__preamble(const ckb_gen_task *t)
{
    ckb_strbuf sb = {0};
    const ckb_workload *w = t->w;
    const ckb_machine *m = &t->machine;
    /* The protocol as the evaluator runs it: its defaults, or the run's. */
    ckb_eval_opts eo;
    ckb_eval_opts_default(&eo);
    int nseeds = t->nseeds > 0 ? t->nseeds : eo.nseeds;
    int warmup = t->warmup > 0 ? t->warmup : eo.warmup;
    int iters = t->iters > 0 ? t->iters : eo.iters;
    char *sig = ckb_workload_signature(w);
    int64_t dims[CKB_MAX_DIMS];
    ckb_workload_dims(w, t->size, dims);
    ckb_strbuf_printf(
        &sb,
        "You write fast CPU kernels in C. Your kernel replaces the baseline of one workload "
        "and is judged on correctness first, then on its speedup over the baseline (oneDNN "
        "primitives plus OpenMP loops).\n\n"
        "Rules (enforced by the evaluator):\n"
        "- Reply with ONE complete C file in a ```c fenced block. It defines exactly\n"
        "    %s\n"
        "  (the tensors in this order, inputs first; every tensor is contiguous, row-major, "
        "64-byte aligned; inputs are read-only).\n",
        sig);
    free(sig);
    ckb_strbuf_printf(&sb,
                      "- The judge: the BASELINE's output on the same inputs (not the plain "
                      "reference, which fixes the semantics; the two agree within the "
                      "tolerance). Every output element must satisfy |got - expected| <= atol "
                      "+ rtol*|expected| with this workload's atol = %g, rtol = %g",
                      ckb_workload_atol(w), ckb_workload_rtol(w));
    if (w->tolerance_reason)
        ckb_strbuf_printf(&sb, " (why: %s)", w->tolerance_reason);
    ckb_strbuf_printf(&sb,
                      "; a NaN or Inf the baseline lacks is wrong. Checked on %d input sets "
                      "from seeds drawn at evaluation time (then the first again), on EVERY "
                      "timed call (each gets a fresh input set of its own) and on a fresh set "
                      "at the end; outputs are poisoned before each call (write every element); "
                      "memory past the tensors is guarded.\n",
                      nseeds);
    ckb_strbuf_printf(&sb, "- Compiled once, at size `%s` only:", ckb_size_name(t->size));
    for (int i = 0; i < w->ndims; i++)
        ckb_strbuf_printf(&sb, " %s=%lld", w->dims[i].name, (long long)dims[i]);
    ckb_strbuf_printf(
        &sb,
        " (the dims are macros of these values; no other size is compiled). It is compiled "
        "with `cc -O3 -march=native -fopenmp -shared -fPIC` and a generated header "
        "force-included: the dims as macros (64-bit, e.g. `#define N 4096L`), the constants, "
        "and the prototype of workload() - so do not redefine those macros.\n"
        "- Threads: %d (OpenMP's default team is that size; the baseline has the same).\n",
        t->threads);
    ckb_strbuf_printf(&sb, "- This host: ");
    prompt__host(&sb, m);
    ckb_strbuf_printf(&sb, ".\n");
    prompt__roofs(&sb, t, dims);
    ckb_strbuf_printf(
        &sb,
        "- You may include the C standard headers, <immintrin.h>, <omp.h> and \"ckbench.h\" "
        "(ckb_bf16 = uint16_t raw bf16 bits; ckb_bf16_to_f32, ckb_f32_to_bf16 (round to "
        "nearest even), ckb_hash64, ckb_uniform). malloc/free and libm are allowed.\n"
        "- Forbidden (the build is rejected or the run killed): I/O, files, sockets, "
        "processes, signals, timers, syscalls, dlopen; state kept between calls (static or "
        "global caches of inputs or results); reading anything but the arguments.\n");
    ckb_strbuf_printf(
        &sb,
        "- Then it is timed: %d warm-up and %d timed calls of your kernel and of the baseline, "
        "alternating call by call on the same CPUs, %d threads each (fewer calls, at least %d timed, when "
        "they would take over %.0f s). Each runs in its own sandboxed process, stopped while "
        "the other runs; the clock is the evaluator's, outside both. The figure is the median "
        "of the timed calls, and the speedup the baseline's median over yours. A timing run "
        "in which other work took over %g%% of the machine's CPU time is redone (%d runs at "
        "most, the least disturbed kept); one still disturbed gives no figure.\n",
        warmup, iters, t->threads, CKB_EVAL_MIN_ITERS, eo.max_timing_s,
        eo.max_steal_pct, CKB_EVAL_TIMING_RUNS);
    return ckb_strbuf_take(&sb);
}

static void prompt__workload(ckb_strbuf *sb, const ckb_gen_task *t)
{
    const ckb_workload *w = t->w;
    int64_t dims[CKB_MAX_DIMS];
    ckb_workload_dims(w, t->size, dims);
    ckb_strbuf_printf(sb, "## The workload: %s\n\n%s\n\n", w->id, w->summary);
    ckb_strbuf_printf(sb, "Dims (size %s):", ckb_size_name(t->size));
    for (int i = 0; i < w->ndims; i++)
        ckb_strbuf_printf(sb, " %s=%lld", w->dims[i].name, (long long)dims[i]);
    ckb_strbuf_printf(sb, "\n");
    for (int i = 0; i < w->nconsts; i++)
        ckb_strbuf_printf(sb, "Constant %s = %g\n", w->consts[i].name, w->consts[i].value);
    ckb_strbuf_printf(sb, "Tensors:\n");
    for (int i = 0; i < w->ntensors; i++) {
        const ckb_tensor *x = &w->tensors[i];
        ckb_strbuf_printf(sb, "  %-6s %-4s %s[", x->role == CKB_IN ? "input" : "output",
                          ckb_dtype_name(x->dtype), x->name);
        for (int r = 0; r < x->rank; r++)
            ckb_strbuf_printf(sb, "%s%s", r ? "][" : "", w->dims[x->shape[r]].name);
        ckb_strbuf_printf(sb, "]\n");
    }
    char *hdr = ckb_workload_candidate_header(w, t->size);
    ckb_strbuf_printf(sb, "\nThe header force-included into your file:\n```c\n%s```\n", hdr);
    free(hdr);
    ckb_strbuf_printf(
        sb,
        "\n## The semantics to reproduce\n\n"
        "Below: what the workload computes, its inputs and the plain reference in C, written "
        "against the harness's calling convention: its enums index the dims and the "
        "tensors, d[X] is the dim X (the macro X in your file) and t[T_NAME] is the tensor "
        "`name` (your parameter of that name); the helpers it calls are shown above it. The "
        "reference fixes the semantics, its bf16 rounding points included; the judge is the "
        "baseline's output (see the rules), which matches it within the tolerance.\n\n%s",
        t->reference ? t->reference : "(the workload's description is unavailable)\n");
}

static void prompt__docs(ckb_strbuf *sb, const ckb_gen_task *t)
{
    if (t->docs && t->docs[0])
        ckb_strbuf_printf(sb, "# Documentation for this target\n\n%s\n", t->docs);
}

static const char prompt__reply_rule[] =
    "Reply with the whole C file in one ```c block (a short explanation before it is "
    "fine).\n";

void ckb_gen_prompt_oneshot(const ckb_gen_task *t, ckb_gen_prompt *p)
{
    ckb_strbuf sb = {0};
    prompt__docs(&sb, t);
    prompt__workload(&sb, t);
    ckb_strbuf_printf(&sb, "\n## Your task\n\nWrite a correct kernel for this workload that "
                           "is as fast as you can make it on this CPU.\n%s",
                      prompt__reply_rule);
    prompt__set(p, prompt__preamble(t), ckb_strbuf_take(&sb));
}

/* At most `lines` lines of s, with a note of how many were cut. */
static void prompt__trimmed(ckb_strbuf *sb, const char *s, int lines)
{
    int n = 0;
    const char *p = s;
    while (*p && n < lines) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        /* "/any/run/tmp/x-3/kernel.c:2:6: error" -> "kernel.c:2:6: error": the
         * prompt does not depend on where the run lives. */
        const char *k = strstr(p, "/kernel.c:");
        if (k && k < p + len && !memchr(p, ' ', (size_t)(k - p))) {
            len -= (size_t)(k + 1 - p);
            p = k + 1;
        }
        ckb_strbuf_printf(sb, "%.*s\n", (int)(len > 300 ? 300 : len), p);
        n++;
        p = eol ? eol + 1 : p + len;
    }
    int rest = 0;
    for (; *p; p++)
        rest += *p == '\n';
    if (rest)
        ckb_strbuf_printf(sb, "[... %d more lines]\n", rest);
}

static double prompt__num(json_object *o, const char *k)
{
    json_object *v;
    return o && json_object_object_get_ex(o, k, &v) && v ? json_object_get_double(v) : NAN;
}

static const char *prompt__str(json_object *o, const char *k)
{
    json_object *v;
    return o && json_object_object_get_ex(o, k, &v) && v ? json_object_get_string(v) : NULL;
}

/* One side's timing: the median and the spread of its calls. */
static void prompt__timing_side(ckb_strbuf *sb, const char *who, json_object *t)
{
    double med = prompt__num(t, "median_ms"), lo = prompt__num(t, "min_ms"),
           hi = prompt__num(t, "max_ms");
    ckb_strbuf_printf(sb,
                      "%s %.4g ms (median of %d calls; min %.4g, max %.4g, std %.3g ms; "
                      "spread (max - min) / median %.1f%%)",
                      who, med, (int)prompt__num(t, "n"), lo, hi, prompt__num(t, "std_ms"),
                      100.0 * (hi - lo) / med);
}

/* The medians of the kernel before this one beside this one's. */
static void prompt__versus(ckb_strbuf *sb, json_object *eval, json_object *before)
{
    json_object *bc, *bb, *c, *b, *dist;
    if (!before || !json_object_object_get_ex(before, "candidate", &bc) ||
        !json_object_object_get_ex(before, "baseline", &bb) ||
        !json_object_object_get_ex(eval, "candidate", &c) ||
        !json_object_object_get_ex(eval, "baseline", &b))
        return;
    double pc = prompt__num(bc, "median_ms"), pb = prompt__num(bb, "median_ms");
    double cc = prompt__num(c, "median_ms"), cb = prompt__num(b, "median_ms");
    if (!(pc > 0) || !(cc > 0))
        return;
    int was_disturbed = json_object_object_get_ex(before, "timing_disturbed", &dist) &&
                        json_object_get_boolean(dist);
    ckb_strbuf_printf(sb,
                      "Against the previous kernel: its median %.4g ms (baseline %.4g ms, "
                      "speedup %.3gx) -> this one %.4g ms (baseline %.4g ms, speedup %.3gx): "
                      "%s %.1f%%%s.\n",
                      pc, pb, pb / pc, cc, cb, cb / cc, cc <= pc ? "faster by" : "slower by",
                      100.0 * fabs(pc - cc) / pc,
                      was_disturbed ? " (the previous timing was disturbed: compare with care)"
                                    : "");
}

/* The timing block: disturbed or not, both medians with their spread, the
 * previous kernel's beside them, and the profile against the roof the
 * result was divided by (machine/roofline.h). */
static void prompt__timing(ckb_strbuf *sb, json_object *eval, json_object *before,
                           const ckb_machine *m)
{
    json_object *cand, *base, *dist;
    if (!eval || !json_object_object_get_ex(eval, "candidate", &cand) ||
        !json_object_object_get_ex(eval, "baseline", &base))
        return;
    double cm = prompt__num(cand, "median_ms"), bm = prompt__num(base, "median_ms");
    int disturbed = json_object_object_get_ex(eval, "timing_disturbed", &dist) &&
                    json_object_get_boolean(dist);
    if (disturbed) {
        ckb_strbuf_printf(sb,
                          "Timing: DISTURBED - other work took %.0f%% of the machine's CPU time "
                          "(other processes %.0f%%, hypervisor steal %.0f%%) even in the least "
                          "disturbed of %d runs, so these times measure the load, not your "
                          "kernel: there is no speedup figure to improve on this turn. For the "
                          "record: ",
                          prompt__num(eval, "other_processes_pct") +
                              prompt__num(eval, "steal_pct"),
                          prompt__num(eval, "other_processes_pct"),
                          prompt__num(eval, "steal_pct"), (int)prompt__num(eval, "timing_runs"));
    } else {
        ckb_strbuf_printf(sb, "Timing: ");
    }
    prompt__timing_side(sb, "your kernel", cand);
    ckb_strbuf_printf(sb, "; ");
    prompt__timing_side(sb, "baseline", base);
    if (disturbed) {
        ckb_strbuf_printf(sb, ".\n");
        return;
    }
    ckb_strbuf_printf(sb, ": speedup %.3gx%s (ratio of medians). A change between turns "
                          "smaller than the spread of the calls is noise, not a gain.\n",
                      bm / cm, bm / cm < 1 ? " (slower than the baseline)" : "");
    prompt__versus(sb, eval, before);
    double flops = prompt__num(eval, "flops"), bytes = prompt__num(eval, "bytes");
    double g = flops / (cm * 1e-3) / 1e9, gbs = bytes / (cm * 1e-3) / 1e9;
    ckb_strbuf_printf(sb, "Profile: %.4g GFLOP/s and %.4g GB/s of compulsory traffic; "
                          "arithmetic intensity %.3g FLOP/byte",
                      g, gbs, prompt__num(eval, "arithmetic_intensity"));
    ckb_roof r;
    if (isfinite(flops) && isfinite(bytes) && ckb_roof_of_result(eval, m, &r) == 0) {
        const char *bound = ckb_roof_bound(&r, flops, bytes);
        double ms = ckb_roof_ms(&r, flops, bytes);
        ckb_strbuf_printf(sb,
                          ". %.3g%% of the compute roof (%.4g GFLOP/s, %s) and %.3g%% of the "
                          "memory roof (%.4g GB/s, %s): the %s roof binds this workload, so "
                          "no kernel beats %.4g ms (yours takes %.3gx that)",
                          100.0 * g / r.compute_gflops, r.compute_gflops,
                          ckb_roof_unit_label(r.unit), 100.0 * gbs / r.mem_gbs, r.mem_gbs,
                          ckb_roof_level_label(r.mem_level), bound ? bound : "?", ms, cm / ms);
    }
    ckb_strbuf_printf(sb, ".\n");
}

/* The error of the outputs: the largest, and the worst element's share of
 * its own tolerance (atol + rtol*|expected|; over 100%: out of it). */
static void prompt__accuracy(ckb_strbuf *sb, json_object *eval, const char *lead)
{
    double e = prompt__num(eval, "max_abs_err"), share = prompt__num(eval, "worst_tol_share");
    if (!isfinite(e))
        return;
    ckb_strbuf_printf(sb, "%s: %g", lead, e);
    if (isfinite(share))
        ckb_strbuf_printf(sb, "; the worst element used %.*g%% of its tolerance (atol + "
                              "rtol*|expected|)%s",
                          share < 10 ? 3 : 12, 100.0 * share,
                          share <= 1 ? "" : ": out of tolerance");
    ckb_strbuf_printf(sb, "\n");
}

void ckb_gen_feedback(ckb_strbuf *sb, const char *status, json_object *eval,
                      const ckb_machine *m)
{
    ckb_gen_feedback_turn(sb, status, eval, NULL, m);
}

void ckb_gen_feedback_turn(ckb_strbuf *sb, const char *status, json_object *eval,
                           json_object *before, const ckb_machine *m)
{
    const char *detail = prompt__str(eval, "detail"), *msg = prompt__str(eval, "message");
    ckb_strbuf_printf(sb, "Status: %s%s%s%s\n", status, detail ? " (" : "", detail ? detail : "",
                      detail ? ")" : "");
    if (strcmp(status, "no_code") == 0) {
        ckb_strbuf_printf(sb, "The reply held no C code block; reply with the whole file in "
                              "a ```c block.\n");
        return;
    }
    if (strcmp(status, "provider_error") == 0) {
        ckb_strbuf_printf(sb, "No reply came back for this request.\n");
        return;
    }
    json_object *worst = NULL;
    if (eval)
        json_object_object_get_ex(eval, "worst", &worst);
    if (strcmp(status, "wrong_result") == 0 || strcmp(status, "nondeterministic") == 0) {
        prompt__accuracy(sb, eval, "Max abs error");
        if (worst)
            ckb_strbuf_printf(sb,
                              "Worst element: tensor %s, flat index %lld (row-major), got %g, "
                              "expected %g; %lld elements out of tolerance.\n",
                              prompt__str(worst, "tensor"),
                              (long long)prompt__num(worst, "index"), prompt__num(worst, "got"),
                              prompt__num(worst, "expected"),
                              (long long)prompt__num(worst, "bad_elements"));
    } else if (strcmp(status, "ok") == 0) {
        prompt__accuracy(sb, eval, "Correct; max abs error");
    }
    int call = 0, calls = 0;
    long long nbad = 0, index = 0;
    double got = 0, want = 0;
    char tensor[64] = "";
    if (detail && strcmp(detail, "timed_output") == 0) {
        /* The evaluator names the call and the worst element in its message. */
        if (msg && sscanf(msg,
                          "correct when checked, but timed call %d of %d gave a wrong %63s "
                          "%lld elements outside tolerance; worst at index %lld: got %lg, "
                          "expected %lg",
                          &call, &calls, tensor, &nbad, &index, &got, &want) == 7) {
            size_t tl = strlen(tensor);
            if (tl && tensor[tl - 1] == ':')
                tensor[tl - 1] = '\0';
            ckb_strbuf_printf(sb,
                              "Your kernel was correct on the checked input sets, but timed "
                              "call %d of %d (each timed call gets different inputs) returned "
                              "a wrong %s: %lld elements out of tolerance, the worst at flat "
                              "index %lld (row-major): got %g, expected %g. Every call must "
                              "compute its answer from its own inputs.\n",
                              call, calls, tensor, nbad, index, got, want);
        } else if (worst) {
            ckb_strbuf_printf(sb, "A timed call returned a wrong output: tensor %s, flat index "
                                  "%lld, got %g, expected %g.\n",
                              prompt__str(worst, "tensor"),
                              (long long)prompt__num(worst, "index"), prompt__num(worst, "got"),
                              prompt__num(worst, "expected"));
        }
    }
    if (detail && strcmp(detail, "syscall") == 0)
        ckb_strbuf_printf(sb, "The process was stopped by a system call the sandbox does not "
                              "allow (named in the message below): a kernel may only compute, "
                              "allocate and use OpenMP.\n");
    if (strcmp(status, "ok") != 0 && msg && msg[0] && !call) {
        ckb_strbuf_printf(sb, "%s:\n```\n",
                          strcmp(status, "compile_error") == 0 ? "Compiler output (trimmed)"
                                                               : "Message");
        prompt__trimmed(sb, msg, PROMPT_FEEDBACK_LINES);
        ckb_strbuf_printf(sb, "```\n");
    }
    prompt__timing(sb, eval, before, m);
}

/* The host profile for the feedback's roof, or NULL when not measured. */
static const ckb_machine *prompt__machine(const ckb_gen_task *t)
{
    return t->measured ? &t->machine : NULL;
}

/* The previous kernel (or the reference's absence of one) and its feedback. */
static void prompt__prev(ckb_strbuf *sb, const ckb_gen_task *t, const ckb_gen_prev *prev,
                         const char *title)
{
    if (!prev || !prev->code) {
        ckb_strbuf_printf(sb, "\n## %s\n\nNo kernel yet: start from the reference.\n", title);
        if (prev && prev->status) {
            ckb_strbuf_printf(sb, "The previous attempt:\n");
            ckb_gen_feedback_turn(sb, prev->status, prev->eval, NULL, prompt__machine(t));
        }
        return;
    }
    ckb_strbuf_printf(sb, "\n## %s\n\n```c\n%s%s```\n\n### Its evaluation\n\n", title,
                      prev->code,
                      prev->code[0] && prev->code[strlen(prev->code) - 1] == '\n' ? "" : "\n");
    ckb_gen_feedback_turn(sb, prev->status ? prev->status : "ok", prev->eval, prev->before,
                          prompt__machine(t));
    if (prev->no_code_after)
        ckb_strbuf_printf(sb, "\nYour last reply after this kernel held no C code block.\n");
}

void ckb_gen_prompt_refine(const ckb_gen_task *t, const ckb_gen_prev *prev, ckb_gen_prompt *p)
{
    ckb_strbuf sb = {0};
    prompt__docs(&sb, t);
    prompt__workload(&sb, t);
    prompt__prev(&sb, t, prev, "Your previous kernel");
    ckb_strbuf_printf(&sb, "\n## Your task\n\n%s\n%s",
                      prev && prev->status && strcmp(prev->status, "ok") == 0
                          ? "The kernel is correct. Make it faster, keeping it correct."
                          : "Fix the problem reported above, then make the kernel fast.",
                      prompt__reply_rule);
    prompt__set(p, prompt__preamble(t), ckb_strbuf_take(&sb));
}

static int prompt__correct(const ckb_gen_prev *prev)
{
    return prev && prev->code && prev->status && strcmp(prev->status, "ok") == 0;
}

void ckb_gen_prompt_plan(const ckb_gen_task *t, const ckb_gen_prev *parent, const char *phase,
                         int iter, int niters, ckb_gen_prompt *p)
{
    ckb_strbuf sb = {0};
    prompt__docs(&sb, t);
    prompt__workload(&sb, t);
    prompt__prev(&sb, t, parent, "The current kernel");
    const char *items[CKB_GEN_MENU_MAX];
    int n = ckb_gen_menu(t->w, items, CKB_GEN_MENU_MAX);
    ckb_strbuf_printf(&sb, "\n## Optimization menu\n\n");
    if (!prompt__correct(parent))
        ckb_strbuf_printf(&sb, "0. fix what makes the current kernel fail (or, with no "
                               "kernel yet, translate the reference faithfully)\n");
    for (int i = 0; i < n; i++)
        ckb_strbuf_printf(&sb, "%d. %s\n", i + 1, items[i]);
    ckb_strbuf_printf(
        &sb,
        "\n## Your task: plan one step (phase %s, iteration %d of %d)\n\n"
        "%s Choose exactly ONE strategy from the menu and plan how to apply it to the current "
        "kernel. Do not write the code yet. Reply with a first line `STRATEGY: <number>`, "
        "then the plan in at most 15 lines.\n",
        phase, iter, niters,
        strcmp(phase, "translate") == 0
            ? "Phase translate: the goal is a correct kernel (a speedup is a bonus)."
            : "Phase optimize: the goal is a faster kernel that stays correct.");
    prompt__set(p, prompt__preamble(t), ckb_strbuf_take(&sb));
}

void ckb_gen_prompt_implement(const ckb_gen_task *t, const ckb_gen_prev *parent,
                              const char *plan, ckb_gen_prompt *p)
{
    ckb_strbuf sb = {0};
    prompt__docs(&sb, t);
    prompt__workload(&sb, t);
    prompt__prev(&sb, t, parent, "The current kernel");
    ckb_strbuf_printf(&sb, "\n## The plan\n\n%s\n\n## Your task\n\nImplement exactly this "
                           "plan on the current kernel (or, with no kernel yet, on the "
                           "reference). Keep it correct.\n%s",
                      plan ? plan : "", prompt__reply_rule);
    prompt__set(p, prompt__preamble(t), ckb_strbuf_take(&sb));
}

void ckb_gen_prompt_sha256(const ckb_gen_prompt *p, char hex[65])
{
    unsigned char md[32];
    unsigned int len = 0;
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    int ok = c && EVP_DigestInit_ex(c, EVP_sha256(), NULL);
    for (int i = 0; ok && i < p->n; i++)
        ok = EVP_DigestUpdate(c, p->msgs[i].role, strlen(p->msgs[i].role) + 1) &&
             EVP_DigestUpdate(c, p->msgs[i].content, strlen(p->msgs[i].content) + 1);
    ok = ok && EVP_DigestFinal_ex(c, md, &len) && len == 32;
    EVP_MD_CTX_free(c);
    if (!ok) {
        /* OpenSSL cannot fail here short of running out of memory. */
        snprintf(hex, 65, "%s", "unavailable");
        return;
    }
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

long ckb_gen_prompt_chars(const ckb_gen_prompt *p)
{
    long n = 0;
    for (int i = 0; i < p->n; i++)
        n += (long)strlen(p->msgs[i].content);
    return n;
}

char *ckb_gen_prompt_render(const ckb_gen_prompt *p)
{
    ckb_strbuf sb = {0};
    for (int i = 0; i < p->n; i++)
        ckb_strbuf_printf(&sb, "%s=== %s ===\n%s\n", i ? "\n" : "", p->msgs[i].role,
                          p->msgs[i].content);
    return ckb_strbuf_take(&sb);
}

char *ckb_gen_plan_strategy(const ckb_workload *w, const char *reply)
{
    if (!reply)
        return NULL;
    const char *items[CKB_GEN_MENU_MAX];
    int n = ckb_gen_menu(w, items, CKB_GEN_MENU_MAX);
    const char *s = strcasestr(reply, "STRATEGY:");
    s = s ? s + 9 : reply;
    while (*s && !isdigit((unsigned char)*s) && *s != '\n')
        s++;
    if (isdigit((unsigned char)*s)) {
        int k = atoi(s);
        if (k == 0)
            return ckb_xstrdup("fix the failure / translate the reference");
        if (k >= 1 && k <= n)
            return ckb_xstrdup(items[k - 1]);
    }
    const char *b = reply;
    while (isspace((unsigned char)*b))
        b++;
    size_t len = strcspn(b, "\n");
    return ckb_xstrndup(b, len > 200 ? 200 : len);
}
