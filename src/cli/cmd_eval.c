/* `ckbench eval WORKLOAD FILE`: one candidate, one JSON object on stdout. */
#include <json-c/json.h>
#include <stdio.h>

#include "cli/cli.h"
#include "eval/eval.h"
#include "machine/roofline.h"

int ckb_cmd_eval(int argc, char **argv)
{
    ckb_cli_opts o;
    if (ckb_cli_parse(argc, argv, 2, &o) != 0)
        return 2;
    if (o.npositional != 2) {
        fprintf(stderr, "usage: ckbench eval WORKLOAD FILE [--size S] [--seeds N] [--threads N]\n");
        return 2;
    }
    const ckb_workload *w = ckb_cli_workload(o.positional[0]);
    if (!w)
        return 2;
    ckb_machine m;
    if (ckb_cli_machine(&o, &m) != 0)
        return 1;
    ckb_eval_opts eo;
    ckb_eval_opts_default(&eo);
    eo.size = o.size;
    eo.threads = o.threads;
    eo.nseeds = o.seeds;
    eo.warmup = o.warmup;
    eo.iters = o.iters;
    eo.seed = o.seed;
    eo.workdir = o.keep;
    eo.timeout_scale = o.timeout_scale;
    eo.defines = o.defines;
    eo.ndefines = o.ndefines;
    /* the workload's roofs (machine/roofline.h): % of peak, bound and the
     * plausibility check all divide by these */
    ckb_roof roof;
    ckb_roof_for_workload(&m, w, o.size, &roof);
    eo.peak_gflops = roof.compute_gflops;
    eo.bw_gbs = roof.mem_gbs;
    ckb_eval_result r;
    int rc = ckb_eval_run(w, o.positional[1], &eo, &r);
    json_object *j = ckb_eval_result_json(w, &eo, &r);
    json_object_object_add(j, "roof", ckb_roof_to_json(&roof));
    printf("%s\n", json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY |
                                                         JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(j);
    if (rc != 0)
        fprintf(stderr, "ckbench: %s\n", r.message);
    return rc == 0 ? 0 : 1;
}
