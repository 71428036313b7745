/* `ckbench machine`: measure this machine and store its profile. */
#include <json-c/json.h>
#include <stdio.h>

#include "cli/cli.h"

static int machine__run(const ckb_cli_args *a)
{
    ckb_cli_common o;
    ckb_cli_common_get(a, &o);
    char path[1024];
    if (ckb_cli_given(a, "out"))
        snprintf(path, sizeof path, "%s", ckb_cli_str(a, "out", ""));
    else
        ckb_machine_default_path(o.threads, path, sizeof path);
    ckb_machine m;
    if (!ckb_cli_given(a, "force")) {
        /* A stored profile is reused only when it was measured on this CPU
         * with this thread budget; otherwise it is measured again. */
        if (ckb_machine_get(o.threads, path, &m) != 0) {
            fprintf(stderr, "ckbench: the measurement failed\n");
            return 1;
        }
    } else {
        fprintf(stderr, "ckbench: measuring this machine (%d thread%s)...\n", o.threads,
                o.threads == 1 ? "" : "s");
        if (ckb_machine_measure(o.threads, &m) != 0) {
            fprintf(stderr, "ckbench: the measurement failed\n");
            return 1;
        }
        if (ckb_machine_save(&m, path) != 0) {
            perror("ckbench: cannot store the profile");
            return 1;
        }
    }
    json_object *j = ckb_machine_to_json(&m);
    json_object_object_add(j, "path", json_object_new_string(path));
    json_object_object_add(j, "ridge_flop_per_byte", json_object_new_double(ckb_machine_ridge(&m)));
    printf("%s\n", json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY |
                                                         JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(j);
    return 0;
}

static const ckb_cli_opt machine__opts[] = {
    CKB_CLI_OPT_THREADS,
    {"out", 0, CKB_CLI_STR, "PATH", 0, 0, 0,
     "where the profile is stored (default: ~/.cache/ckbench/, keyed by host and threads)", NULL},
    {"force", 0, CKB_CLI_FLAG, NULL, 0, 0, 0,
     "measure again even when a stored profile fits this CPU and thread budget", NULL},
};

const ckb_cli_cmd ckb_cmd_machine = {
    .name = "machine", .args = "", .min_pos = 0, .max_pos = 0,
    .summary = "measure peak f32/bf16 GFLOP/s and bandwidth, store the profile; print it as JSON",
    .about = "Every other command loads the stored profile, and measures it the first time.\n",
    .opts = machine__opts, .nopts = CKB_CLI_NOPTS(machine__opts), .run = machine__run,
};
