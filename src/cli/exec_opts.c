/* The executor options shared by generate and bench (CKB_CLI_OPTS_EXECUTOR). */
#include "cli/cli.h"

int ckb_cli_executor(const ckb_cli_args *a, ckb_exec_config *c)
{
    ckb_exec_config_default(c);
    const char *kind = ckb_cli_str(a, "executor", NULL);
    if (kind && ckb_exec_kind_parse(kind, &c->kind) != 0)
        return ckb_cli_usage_error(a, "--executor is local or slurm (got '%s')", kind);
    c->partition = ckb_cli_str(a, "partition", NULL);
    c->account = ckb_cli_str(a, "account", NULL);
    c->max_jobs = (int)ckb_cli_int(a, "slurm-max-jobs", 0);
    if (c->kind != CKB_EXEC_SLURM &&
        (c->partition || c->account || ckb_cli_given(a, "slurm-max-jobs")))
        return ckb_cli_usage_error(a, "--partition, --account and --slurm-max-jobs go with "
                                      "--executor slurm");
    return 0;
}
