/* `ckbench machine`: measure this machine and store its profile. */
#include <json-c/json.h>
#include <stdio.h>

#include "cli/cli.h"

int ckb_cmd_machine(int argc, char **argv)
{
    ckb_cli_opts o;
    if (ckb_cli_parse(argc, argv, 2, &o) != 0)
        return 2;
    char path[1024];
    if (o.out)
        snprintf(path, sizeof path, "%s", o.out);
    else
        ckb_machine_default_path(o.threads, path, sizeof path);
    ckb_machine m;
    if (!o.force) {
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
