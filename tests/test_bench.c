/* `ckbench bench` end to end at small size: results.json and results.csv
 * carry what a reader needs, and a run resumes without redoing work. */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
