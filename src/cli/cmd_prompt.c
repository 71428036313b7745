/*
 * `ckbench prompt WORKLOAD [--method M] [--docs]`: exactly what a model gets
 * for a method's first sample, on stdout with role headers; its size on
 * stderr. For beam, the plan request, then the implementation request
 * with a placeholder where the model's plan goes. With --feedback EVAL.json
 * (an `eval` result, or a run record holding one under "eval"): the
 * feedback text refine and beam send back after that evaluation.
 */
#include <json-c/json.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "gen/gen.h"

/* The feedback text of a recorded evaluation of w, on stdout. */
static int prompt__feedback(const ckb_workload *w, const char *path, int threads)
{
    json_object *j = json_object_from_file(path), *eval = j, *v;
    if (!j) {
        fprintf(stderr, "ckbench: cannot read %s as JSON (an `eval` result or a run "
                        "record)\n", path);
        return 1;
    }
    /* A run record (records.jsonl line) carries the evaluation under "eval". */
    if (json_object_object_get_ex(j, "eval", &v) && json_object_is_type(v, json_type_object))
        eval = v;
    const char *status = json_object_object_get_ex(j, "status", &v) ? json_object_get_string(v)
                         : json_object_object_get_ex(eval, "status", &v)
                             ? json_object_get_string(v)
                             : NULL;
    const char *id = json_object_object_get_ex(eval, "workload", &v) ? json_object_get_string(v)
                                                                     : NULL;
    if (!status) {
        fprintf(stderr, "ckbench: %s holds no \"status\": not an evaluation\n", path);
        json_object_put(j);
        return 1;
    }
    if (id && strcmp(id, w->id) != 0)
        fprintf(stderr, "ckbench: note: %s is an evaluation of %s, not %s\n", path, id, w->id);
    ckb_machine m;
    int measured;
    ckb_gen_machine(threads, &m, &measured);
    ckb_strbuf sb = {0};
    ckb_gen_feedback(&sb, status, eval, measured ? &m : NULL);
    fputs(sb.data ? sb.data : "", stdout);
    ckb_strbuf_free(&sb);
    json_object_put(j);
    return 0;
}

static int prompt__run(const ckb_cli_args *a)
{
    const char *name = a->pos[0], *method = ckb_cli_str(a, "method", "best-of-n");
    const char *target = ckb_cli_str(a, "docs-target", NULL);
    int docs = ckb_cli_given(a, "docs") > 0;
    int threads = (int)ckb_cli_int(a, "threads", omp_get_num_procs());
    ckb_size size = ckb_cli_size(a, "size", CKB_SIZE_DEFAULT);
    const char *feedback = ckb_cli_str(a, "feedback", NULL);
    ckb_gen_method m;
    if (ckb_gen_method_parse(method, &m) != 0)
        return ckb_cli_usage_error(a, "--method is best-of-n, refine, refine-docs or beam (got "
                                      "'%s')",
                                   method);
    const ckb_workload *w = ckb_cli_workload(name);
    if (!w)
        return 2;
    if (feedback)
        return prompt__feedback(w, feedback, threads);
    ckb_machine hm;
    if (size == CKB_SIZE_HOST && (ckb_cli_machine(threads, NULL, &hm) != 0 ||
                                  ckb_cli_host_sizes(size, &hm, threads, &w, 1) != 0))
        return 1;
    ckb_err err;
    char *sizes = NULL;
    char *text = ckb_gen_prompt_text(w, m, docs, size, threads, target, &sizes, &err);
    if (!text) {
        fprintf(stderr, "ckbench: %s\n", err.msg);
        return 1;
    }
    fputs(text, stdout);
    fflush(stdout);
    /* the size on stderr, as a model's budget counts it (~4 chars a token) */
    fputs(sizes, stderr);
    free(text);
    free(sizes);
    return 0;
}

static const ckb_cli_opt prompt__opts[] = {
    {"method", 0, CKB_CLI_STR, "M", 0, 0, 0,
     "best-of-n, refine, refine-docs or beam (default: best-of-n)", NULL},
    {"docs", 0, CKB_CLI_FLAG, NULL, 0, 0, 0,
     "include the documentation blocks (refine-docs and beam always do)", NULL},
    CKB_CLI_OPT_SIZE,
    CKB_CLI_OPT_THREADS,
    {"docs-target", 0, CKB_CLI_STR, "T", 0, 0, 0,
     "the documentation target: x86-avx512, x86-avx2 or generic-c (default: chosen by the "
     "host)", NULL},
    {"feedback", 0, CKB_CLI_STR, "EVAL.json", 0, 0, 0,
     "print the feedback a model gets for this recorded evaluation (an `eval` result or a "
     "run record) instead of the prompt", NULL},
};

const ckb_cli_cmd ckb_cmd_prompt = {
    .name = "prompt", .args = "WORKLOAD", .min_pos = 1, .max_pos = 1,
    .missing = "needs a WORKLOAD, e.g. ckbench prompt 8p",
    .summary = "print exactly what a model gets for the first sample",
    .about = "The prompt goes to stdout with role headers, its size to stderr. For beam: the\n"
             "plan request, then the implementation request.\n",
    .opts = prompt__opts, .nopts = CKB_CLI_NOPTS(prompt__opts), .run = prompt__run,
};
