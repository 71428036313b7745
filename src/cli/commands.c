/* The commands of the ckbench binary, in the order `ckbench --help` lists them. */
#include "cli/cli.h"

const ckb_cli_cmd *const ckb_cli_commands[] = {
    &ckb_cmd_list,   &ckb_cmd_describe, &ckb_cmd_machine, &ckb_cmd_size,     &ckb_cmd_eval,
    &ckb_cmd_bench,  &ckb_cmd_tune,     &ckb_cmd_report,  &ckb_cmd_score,    &ckb_cmd_generate,
    &ckb_cmd_prompt, &ckb_cmd_retime,   &ckb_cmd_plan,     &ckb_cmd_serve,
};
const int ckb_cli_ncommands = (int)(sizeof ckb_cli_commands / sizeof *ckb_cli_commands);
