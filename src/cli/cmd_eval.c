/* `ckbench eval WORKLOAD FILE`: one candidate, one JSON object on stdout. */
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/expert.h"
#include "cli/cli.h"
#include "core/utf8.h"
#include "eval/eval.h"
#include "machine/roofline.h"

/* The workload's own expert.c (by real path) may use expert-kit/; any other
 * file is a candidate and compiles without it. */
static int eval__is_the_expert(const ckb_workload *w, const char *file)
{
    char expert[PATH_MAX], a[PATH_MAX], b[PATH_MAX];
    return ckb_expert_path(w, expert, sizeof expert) && realpath(expert, a) &&
           realpath(file, b) && strcmp(a, b) == 0;
}

static int eval__run(const ckb_cli_args *a)
{
    ckb_cli_common o;
    ckb_cli_common_get(a, &o);
    const ckb_workload *w = ckb_cli_workload(a->pos[0]);
    if (!w)
        return 2;
    const char *defines[CKB_CLI_MAX_REPEAT];
    int ndefines = ckb_cli_given(a, "define");
    for (int i = 0; i < ndefines; i++)
        defines[i] = ckb_cli_at(a, "define", i);
    ckb_machine m;
    if (ckb_cli_machine(o.threads, o.machine, &m) != 0 ||
        ckb_cli_host_sizes(o.size, &m, o.threads, &w, 1) != 0)
        return 1;
    ckb_eval_opts eo;
    ckb_eval_opts_default(&eo);
    eo.size = o.size;
    eo.threads = o.threads;
    eo.nseeds = (int)ckb_cli_int(a, "seeds", 3);
    eo.warmup = o.warmup;
    eo.iters = o.iters;
    eo.seed = ckb_cli_u64(a, "seed", 0);
    eo.workdir = ckb_cli_str(a, "keep", NULL);
    eo.timeout_scale = ckb_cli_num(a, "timeout-scale", 1.0);
    eo.defines = defines;
    eo.ndefines = ndefines;
    eo.expert_kit = eval__is_the_expert(w, a->pos[1]);
    /* the workload's roofs (machine/roofline.h): % of peak, bound and the
     * roofline note all divide by these */
    ckb_roof roof;
    ckb_roof_for_workload(&m, w, o.size, &roof);
    eo.peak_gflops = roof.compute_gflops;
    eo.bw_gbs = roof.mem_gbs;
    /* --vs-expert: the workload's expert, with the parameters bench would
     * give it here, timed in the same alternation (upstream's
     * speedup_vs_pallas) */
    char expert[PATH_MAX];
    ckb_expert_config cfg = {0};
    if (ckb_cli_given(a, "vs-expert") > 0) {
        if (!ckb_expert_path(w, expert, sizeof expert)) {
            fprintf(stderr, "ckbench eval: %s has no expert to time beside the candidate "
                            "(--vs-expert)\n", w->id);
            return 2;
        }
        ckb_expert_config_load(w, o.size, o.threads, &m, &cfg);
        eo.expert_src = expert;
        eo.expert_defines = cfg.defines;
        eo.nexpert_defines = cfg.n;
    }
    ckb_eval_result r;
    int rc = ckb_eval_run(w, a->pos[1], &eo, &r);
    json_object *j = ckb_eval_result_json(w, &eo, &r);
    json_object *ej;
    if (r.has_expert && json_object_object_get_ex(j, "expert", &ej)) {
        json_object *params = json_object_new_array();
        for (int i = 0; i < cfg.n; i++)
            json_object_array_add(params, json_object_new_string(cfg.text[i]));
        json_object_object_add(ej, "params", params);
        json_object_object_add(ej, "tuned", json_object_new_boolean(cfg.tuned));
    }
    json_object_object_add(j, "roof", ckb_roof_to_json(&roof));
    /* valid UTF-8 whatever the compiler or the kernel said (core/utf8.h) */
    printf("%s\n", ckb_json_text(j, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(j);
    if (rc != 0)
        fprintf(stderr, "ckbench: %s\n", r.message);
    return rc == 0 ? 0 : 1;
}

static const ckb_cli_opt eval__opts[] = {
    CKB_CLI_OPT_SIZE,
    {"seeds", 0, CKB_CLI_INT, "N", 1, 7, 0, "input sets for the correctness check (default: 3)",
     NULL},
    CKB_CLI_OPT_THREADS,
    CKB_CLI_OPT_WARMUP,
    CKB_CLI_OPT_ITERS,
    {"seed", 0, CKB_CLI_U64, "S", 1, 0, 0,
     "a fixed non-zero seed instead of ones drawn now (reproduces a run)", NULL},
    {"keep", 0, CKB_CLI_STR, "DIR", 0, 0, 0, "keep the compile folder in DIR", NULL},
    {"timeout-scale", 0, CKB_CLI_NUM, "X", 1e-3, 1e6, 0,
     "multiply every time limit by X (default: 1)", NULL},
    {"define", 0, CKB_CLI_KV, "NAME=VALUE", 0, 0, 8,
     "a macro for the candidate's compile (an expert's parameters)", NULL},
    {"vs-expert", 0, CKB_CLI_FLAG, NULL, 0, 0, 0,
     "also time the workload's expert in the same alternation: speedup_vs_expert", NULL},
    CKB_CLI_OPT_MACHINE,
};

const ckb_cli_cmd ckb_cmd_eval = {
    .name = "eval", .args = "WORKLOAD FILE", .min_pos = 2, .max_pos = 2,
    .missing = "needs WORKLOAD FILE, e.g. ckbench eval 8p kernel.c",
    .summary = "evaluate a candidate kernel (a C file); one JSON object on stdout",
    .about = "Exit status: 0 whenever the evaluation ran, whatever the verdict (see \"status\");\n"
             "1 when the harness could not run; 2 for a bad command line.\n",
    .opts = eval__opts, .nopts = CKB_CLI_NOPTS(eval__opts), .run = eval__run,
};
