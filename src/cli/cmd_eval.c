/* `ckbench eval WORKLOAD FILE`: one candidate, one JSON object on stdout. */
#include <json-c/json.h>
#include <stdio.h>

#include "cli/cli.h"
#include "core/utf8.h"
#include "eval/eval.h"

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
    eo.peak_gflops = m.bf16_gflops;
    eo.bw_gbs = m.bw_gbs;
    ckb_eval_result r;
    int rc = ckb_eval_run(w, o.positional[1], &eo, &r);
    json_object *j = ckb_eval_result_json(w, &eo, &r);
    /* valid UTF-8 whatever the compiler or the kernel said (core/utf8.h) */
    printf("%s\n", ckb_json_text(j, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(j);
    if (rc != 0)
        fprintf(stderr, "ckbench: %s\n", r.message);
    return rc == 0 ? 0 : 1;
}
