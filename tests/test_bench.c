/* `ckbench bench` end to end at small size: results.json and results.csv
 * carry what a reader needs, and a run resumes without redoing work. */
#include <json-c/json.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "core/fsutil.h"
#include "core/proc.h"
#include "eval_util.h"
#include "harness.h"

static int run_bench(const char *out, const char *workloads, const char *extra)
{
    char *argv[] = {(char *)ckbt_bin(), "bench", "--size", "small", "--workloads",
                    (char *)workloads, "--iters", "5", "--warmup", "1", "--out", (char *)out,
                    (char *)extra, NULL};
    ckb_proc_result r;
    if (ckb_proc_run(argv, 600, 1 << 20, &r) != 0)
        return -1;
    int code = r.exited ? r.exit_code : 128 + r.signal;
    if (code != 0)
        printf("    bench output: %.2000s\n", r.output);
    ckb_proc_result_free(&r);
    return code;
}

static json_object *entry(json_object *root, const char *id)
{
    json_object *list = json_object_object_get(root, "workloads");
    for (size_t i = 0; list && i < json_object_array_length(list); i++) {
        json_object *e = json_object_array_get_idx(list, i);
        if (strcmp(ckbt_str(e, "workload"), id) == 0)
            return e;
    }
    return NULL;
}

CKBT_TEST(bench_writes_results_json_and_csv, "full")
{
    char out[512], path[600];
    snprintf(out, sizeof out, "%s/run", ckbt_tmpdir());
    CKBT_EXPECT(run_bench(out, "8p,12p", NULL) == 0, "bench exits 0");
    snprintf(path, sizeof path, "%s/results.json", out);
    json_object *root = json_object_from_file(path);
    CKBT_EXPECT(root != NULL, "results.json parses");
    json_object *meta = json_object_object_get(root, "metadata");
    CKBT_EXPECT(strcmp(ckbt_str(meta, "size"), "small") == 0, "size recorded");
    CKBT_EXPECT(strlen(ckbt_str(meta, "compiler")) > 0, "compiler version recorded");
    CKBT_EXPECT(strlen(ckbt_str(meta, "onednn_version")) > 0, "oneDNN version recorded");
    CKBT_EXPECT(ckbt_num(meta, "iters") == 5 && ckbt_num(meta, "warmup") == 1, "counts");
    CKBT_EXPECT(json_object_object_get(meta, "machine") != NULL, "machine profile");
    const char *ids[] = {"8p_GEMM", "12p_RMSNorm"};
    for (int i = 0; i < 2; i++) {
        json_object *e = entry(root, ids[i]);
        CKBT_EXPECT(e != NULL, "%s present", ids[i]);
        json_object *b = json_object_object_get(e, "baseline");
        CKBT_EXPECT(strcmp(ckbt_str(b, "status"), "ok") == 0 && ckbt_num(b, "median_ms") > 0,
                    "%s baseline timed", ids[i]);
        json_object *x = json_object_object_get(e, "expert");
        if (x) {
            CKBT_EXPECT(strcmp(ckbt_str(x, "status"), "ok") == 0, "%s expert correct: %s",
                        ids[i], ckbt_str(x, "error"));
            CKBT_EXPECT(ckbt_num(e, "speedup") > 0, "%s speedup", ids[i]);
        }
    }
    json_object *noise = json_object_object_get(root, "timing_noise");
    CKBT_EXPECT(ckbt_num(noise, "ratio") > 0.3 && ckbt_num(noise, "ratio") < 3,
                "noise ratio %g", ckbt_num(noise, "ratio"));
    snprintf(path, sizeof path, "%s/results.csv", out);
    char *csv = ckb_read_file(path, NULL);
    CKBT_EXPECT(csv && strncmp(csv, "name,variant,status,timing_method,median_ms", 43) == 0,
                "CSV header");
    CKBT_EXPECT(csv && strstr(csv, "\n8p_GEMM,baseline,ok,") && strstr(csv, "\n12p_RMSNorm,baseline,ok,"),
                "CSV rows");
    free(csv);
    json_object_put(root);
}

CKBT_TEST(bench_resume_keeps_finished_workloads, "full")
{
    char out[512], path[600];
    snprintf(out, sizeof out, "%s/run", ckbt_tmpdir());
    snprintf(path, sizeof path, "%s/results.json", out);
    CKBT_EXPECT(run_bench(out, "12p", NULL) == 0, "first run");
    json_object *first = json_object_from_file(path);
    double m1 = ckbt_num(json_object_object_get(entry(first, "12p_RMSNorm"), "baseline"), "median_ms");
    CKBT_EXPECT(run_bench(out, "12p,8p", "--resume") == 0, "resumed run");
    json_object *second = json_object_from_file(path);
    double m2 = ckbt_num(json_object_object_get(entry(second, "12p_RMSNorm"), "baseline"), "median_ms");
    CKBT_EXPECT(m1 > 0 && m1 == m2, "the finished workload is kept as it was (%g vs %g)", m1, m2);
    CKBT_EXPECT(entry(second, "8p_GEMM") != NULL, "the missing workload is run");
    json_object_put(first);
    json_object_put(second);
}

CKBT_TEST(bench_rejects_an_unknown_workload, "quick")
{
    char out[512];
    snprintf(out, sizeof out, "%s/run", ckbt_tmpdir());
    CKBT_EXPECT(run_bench(out, "8p,nope", NULL) == 2, "exit 2 on an unknown workload");
}

/* Runs `ckbench bench ARGS...` (NULL-terminated); returns the exit status
 * and, in *out, what it printed (caller frees). */
static int bench_argv(char **out, ...)
{
    char *argv[40];
    int n = 0;
    argv[n++] = (char *)ckbt_bin();
    argv[n++] = "bench";
    va_list ap;
    va_start(ap, out);
    for (char *a; n < 39 && (a = va_arg(ap, char *));)
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    ckb_proc_result r;
    if (ckb_proc_run(argv, 600, 1 << 20, &r) != 0) {
        *out = strdup("");
        return -1;
    }
    int code = r.exited ? r.exit_code : 128 + r.signal;
    *out = r.output;
    r.output = NULL;
    ckb_proc_result_free(&r);
    return code;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* A results.json as bench writes it, for one finished (made-up) 8p entry
 * measured at small size with 1 thread, 3 + 1 calls. */
static const char fake_results[] =
    "{\"metadata\": {\"started_at\": \"2026-01-01T00:00:00Z\", \"size\": \"small\", "
    "\"threads\": 1, \"warmup\": 1, \"iters\": 3},\n"
    " \"workloads\": [{\"workload\": \"8p_GEMM\", \"flops\": 1000000.0, \"bytes\": 1000.0, "
    "\"output_shape\": \"[2 2]\", \"baseline\": {\"status\": \"ok\", \"median_ms\": 123.25, "
    "\"mean_ms\": 123.5, \"std_ms\": 0.5, \"min_ms\": 123.0}}],\n"
    " \"timing_noise\": {\"workload\": \"8p_GEMM\", \"ratio\": 1.0}}\n";

CKBT_TEST(bench_refuses_a_nonempty_out_without_resume, "quick")
{
    char out[512], keep[600], *text;
    snprintf(out, sizeof out, "%s/used", ckbt_tmpdir());
    ckb_mkdirs(out);
    snprintf(keep, sizeof keep, "%s/notes.txt", out);
    write_text(keep, "mine\n");
    int rc = bench_argv(&text, "--size", "small", "--workloads", "12p", "--out", out, NULL);
    CKBT_EXPECT(rc == 2, "exit 2 (got %d)", rc);
    CKBT_EXPECT(strstr(text, "not empty") && strstr(text, "--resume"), "says why: %.300s", text);
    free(text);
    char *after = ckb_read_file(keep, NULL), path[700];
    CKBT_EXPECT(after && strcmp(after, "mine\n") == 0, "the folder's file is untouched");
    free(after);
    snprintf(path, sizeof path, "%s/results.json", out);
    CKBT_EXPECT(access(path, F_OK) != 0, "no results.json was written");
}

CKBT_TEST(bench_resume_refuses_another_size_or_thread_count, "quick")
{
    char out[512], path[600], *text;
    snprintf(out, sizeof out, "%s/run", ckbt_tmpdir());
    ckb_mkdirs(out);
    snprintf(path, sizeof path, "%s/results.json", out);
    write_text(path, fake_results);
    int rc = bench_argv(&text, "--size", "default", "--threads", "1", "--iters", "3", "--warmup",
                        "1", "--workloads", "12p", "--out", out, "--resume", NULL);
    CKBT_EXPECT(rc == 2, "another size: exit 2 (got %d)", rc);
    CKBT_EXPECT(strstr(text, "--size small") && strstr(text, "--size default"),
                "names both sizes: %.400s", text);
    free(text);
    rc = bench_argv(&text, "--size", "small", "--threads", "2", "--iters", "3", "--warmup", "1",
                    "--workloads", "12p", "--out", out, "--resume", NULL);
    CKBT_EXPECT(rc == 2 && strstr(text, "--threads 1") && strstr(text, "--threads 2"),
                "another thread count: exit 2 (%d): %.400s", rc, text);
    free(text);
    char *after = ckb_read_file(path, NULL);
    CKBT_EXPECT(after && strcmp(after, fake_results) == 0, "results.json is untouched");
    free(after);
}

CKBT_TEST(bench_resume_refuses_a_broken_results_json, "quick")
{
    const char *broken[] = {"{\"metadata\": {\"size\": \"small\", \"threads\": 1, \"war",
                            "garbage \x01\x02 not json", "", "{\"metadata\": {}} trailing",
                            "[1, 2, 3]"};
    for (int i = 0; i < 5; i++) {
        char out[512], path[600], *text;
        snprintf(out, sizeof out, "%s/broken%d", ckbt_tmpdir(), i);
        ckb_mkdirs(out);
        snprintf(path, sizeof path, "%s/results.json", out);
        write_text(path, broken[i]);
        int rc = bench_argv(&text, "--size", "small", "--threads", "1", "--iters", "3",
                            "--warmup", "1", "--workloads", "12p", "--out", out, "--resume", NULL);
        CKBT_EXPECT(rc == 2, "case %d: exit 2 (got %d)", i, rc);
        CKBT_EXPECT(strstr(text, "not a complete suite result") && strstr(text, "left as it is"),
                    "case %d: says why: %.300s", i, text);
        free(text);
        char *after = ckb_read_file(path, NULL);
        CKBT_EXPECT(after && strcmp(after, broken[i]) == 0, "case %d: the file is untouched", i);
        free(after);
    }
}

CKBT_TEST(bench_resume_with_a_subset_keeps_the_other_workloads, "full")
{
    char out[512], path[600], *text;
    snprintf(out, sizeof out, "%s/run", ckbt_tmpdir());
    ckb_mkdirs(out);
    snprintf(path, sizeof path, "%s/results.json", out);
    write_text(path, fake_results);
    int rc = bench_argv(&text, "--size", "small", "--threads", "1", "--iters", "3", "--warmup",
                        "1", "--workloads", "12p", "--out", out, "--resume", NULL);
    CKBT_EXPECT(rc == 0, "resumed run exits 0 (got %d): %.2000s", rc, text);
    free(text);
    json_object *root = json_object_from_file(path);
    CKBT_EXPECT(root != NULL, "results.json parses");
    json_object *kept = json_object_object_get(entry(root, "8p_GEMM"), "baseline");
    CKBT_EXPECT(ckbt_num(kept, "median_ms") == 123.25,
                "the workload not asked for is kept as it was (%g)", ckbt_num(kept, "median_ms"));
    json_object *ran = json_object_object_get(entry(root, "12p_RMSNorm"), "baseline");
    CKBT_EXPECT(ran && ckbt_num(ran, "median_ms") > 0, "the asked-for workload ran");
    json_object *meta = json_object_object_get(root, "metadata");
    CKBT_EXPECT(strcmp(ckbt_str(meta, "started_at"), "2026-01-01T00:00:00Z") == 0,
                "the run's start is kept");
    CKBT_EXPECT(json_object_array_length(json_object_object_get(meta, "resumed_at")) == 1,
                "the resumption is recorded");
    snprintf(path, sizeof path, "%s/results.csv", out);
    char *csv = ckb_read_file(path, NULL);
    CKBT_EXPECT(csv && strstr(csv, "\n8p_GEMM,baseline,") && strstr(csv, "\n12p_RMSNorm,baseline,"),
                "results.csv has both");
    free(csv);
    json_object_put(root);
}
