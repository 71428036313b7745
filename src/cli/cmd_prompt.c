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

static void prompt__print(const ckb_gen_prompt *p, const char *title)
{
    char *text = ckb_gen_prompt_render(p);
    long chars = ckb_gen_prompt_chars(p);
    if (title)
        printf("##### %s\n", title);
    fputs(text, stdout);
    free(text);
    fprintf(stderr, "%s%s%ld chars, ~%ld tokens\n", title ? title : "", title ? ": " : "",
            chars, chars / 4);
}

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

int ckb_cmd_prompt(int argc, char **argv)
{
    const char *name = NULL, *method = "best-of-n", *target = NULL, *feedback = NULL;
    int docs = 0, threads = omp_get_num_procs();
    ckb_size size = CKB_SIZE_DEFAULT;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--docs")) {
            docs = 1;
        } else if (!strcmp(a, "--method") && v) {
            method = argv[++i];
        } else if (!strcmp(a, "--feedback") && v) {
            feedback = argv[++i];
        } else if (!strcmp(a, "--docs-target") && v) {
            target = argv[++i];
        } else if (!strcmp(a, "--size") && v) {
            if (ckb_size_parse(argv[++i], &size) != 0) {
                fprintf(stderr, "ckbench: --size is small, default or paper\n");
                return 2;
            }
        } else if (!strcmp(a, "--threads") && v) {
            threads = atoi(argv[++i]);
            if (threads < 1) {
                fprintf(stderr, "ckbench: --threads needs a positive integer\n");
                return 2;
            }
        } else if (a[0] != '-' && !name) {
            name = a;
        } else {
            fprintf(stderr, "usage: ckbench prompt WORKLOAD [--method M] [--docs] "
                            "[--size S] [--threads N] [--docs-target T] [--feedback EVAL.json]\n");
            return 2;
        }
    }
    ckb_gen_method m;
    if (!name || ckb_gen_method_parse(method, &m) != 0) {
        fprintf(stderr, "usage: ckbench prompt WORKLOAD [--method best-of-n|refine|"
                        "refine-docs|beam] [--docs]\n");
        return 2;
    }
    const ckb_workload *w = ckb_cli_workload(name);
    if (!w)
        return 2;
    if (feedback)
        return prompt__feedback(w, feedback, threads);
    ckb_gen_task t;
    char err[512];
    if (ckb_gen_task_load(w, size, threads, docs || ckb_gen_method_uses_docs(m), target, &t, err,
                          sizeof err) != 0) {
        fprintf(stderr, "ckbench: %s\n", err);
        return 1;
    }
    ckb_gen_prompt p;
    if (m == CKB_GEN_BEAM) {
        ckb_gen_prev root = {0};
        ckb_gen_prompt_plan(&t, &root, "translate", 1, 4, &p);
        prompt__print(&p, "plan request");
        ckb_gen_prompt_free(&p);
        ckb_gen_prompt_implement(&t, &root, "<the plan the model replied>", &p);
        printf("\n");
        prompt__print(&p, "implementation request");
    } else {
        ckb_gen_prompt_oneshot(&t, &p);
        prompt__print(&p, NULL);
    }
    ckb_gen_prompt_free(&p);
    ckb_gen_task_free(&t);
    return 0;
}
