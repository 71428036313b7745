/*
 * cli.h — the commands of the ckbench binary, and the options they share.
 * Each command returns the process exit code: 0 done, 1 the harness failed,
 * 2 the command line was wrong.
 */
#ifndef CKB_CLI_H
#define CKB_CLI_H

#include "machine/profile.h"
#include "workloads/workload.h"

typedef struct {
    const char *positional[8];
    int npositional;
    ckb_size size;
    int threads;
    int seeds;
    int warmup, iters;
    unsigned long long seed;
    double timeout_scale;
    const char *out;        /* --out PATH */
    const char *workloads;  /* --workloads a,b,c */
    const char *machine;    /* --machine PATH: the profile file */
    const char *keep;       /* --keep DIR: keep the compile folder */
    int force;              /* --force: re-measure */
    int resume;             /* --resume */
    int no_expert;          /* --no-expert */
    int dry_run;            /* --dry-run */
    const char *defines[8]; /* --define NAME=VALUE: macros for the candidate's compile */
    int ndefines;
    const char *executor;   /* --executor local|slurm (bench) */
    const char *partition, *account; /* --partition, --account: Slurm's */
    int slurm_max_jobs;     /* --slurm-max-jobs N: sruns in flight (0: default) */
} ckb_cli_opts;

/* Parses argv[first..]; prints the problem and returns -1 on a bad option. */
int ckb_cli_parse(int argc, char **argv, int first, ckb_cli_opts *o);
/* The machine profile for o->threads (measured once, then cached). */
int ckb_cli_machine(const ckb_cli_opts *o, ckb_machine *m);
/* The workload named, or NULL after printing what exists. */
const ckb_workload *ckb_cli_workload(const char *name);

int ckb_cmd_list(int argc, char **argv);
int ckb_cmd_describe(int argc, char **argv);
int ckb_cmd_machine(int argc, char **argv);
int ckb_cmd_eval(int argc, char **argv);
int ckb_cmd_bench(int argc, char **argv);
int ckb_cmd_tune(int argc, char **argv);
int ckb_cmd_report(int argc, char **argv);
int ckb_cmd_score(int argc, char **argv);
int ckb_cmd_generate(int argc, char **argv);
int ckb_cmd_prompt(int argc, char **argv);
int ckb_cmd_plan(int argc, char **argv);

#endif /* CKB_CLI_H */
