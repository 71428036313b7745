/* Cost of an experiment before it runs (see plan.h). */
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fsutil.h"
#include "core/jsonget.h"
#include "gen/plan.h"

void ckb_plan_count(const ckb_gen_opts *o, int workloads, int experts, ckb_plan_counts *out)
{
    /* Every method spends exactly the budget in samples (refine cuts its
     * last chain at the budget; beam counts implementations); a sample is
     * one implementation call and at most one evaluation. */
    long samples = (long)o->budget * workloads;
    out->model_calls = o->method == CKB_GEN_BEAM ? 2 * samples : samples;
    out->evaluations = samples + (o->use_expert ? experts : 0);
}

int ckb_plan_measure(const char *run, ckb_plan_cost *c)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/records.jsonl", run);
    char *text = ckb_read_file(path, NULL);
    if (!text)
        return -1;
    for (char *l = text, *nl; *l; l = nl + 1) {
        if (!(nl = strchr(l, '\n')))
            break;
        *nl = 0;
        json_object *r = json_tokener_parse(l), *ev = ckb_json_obj(r, "eval");
        json_object *ex = ckb_json_obj(ev, "executor");
        double node = ckb_json_num(ex, "node_s"), srun = ckb_json_num(ex, "srun_s");
        if (ev && !isfinite(node))
            node = ckb_json_num(r, "eval_s");
        if (ev && isfinite(node) && node >= 0) {
            c->node_sum += node;
            c->node_n++;
        }
        if (isfinite(srun) && isfinite(node) && ckb_json_long(ex, "attempts") == 1) {
            c->over_sum += srun - node;
            c->over_n++;
        }
        json_object_put(r);
    }
    free(text);
    return 0;
}
