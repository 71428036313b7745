/*
 * cli.h — the commands of the ckbench binary. Each command owns one option
 * table (ckb_cli_opt[]); the same table drives getopt_long, the checks on
 * each value, `ckbench CMD --help` and the command list of `ckbench --help`,
 * so the usage text cannot drift from what is parsed. An option that is not
 * in a command's table is refused (exit 2), saying which commands take it.
 *
 * Each command returns the process exit code: 0 done, 1 the harness failed,
 * 2 the command line was wrong.
 */
#ifndef CKB_CLI_H
#define CKB_CLI_H

#include <stdio.h>

#include "core/error.h"
#include "exec/executor.h"
#include "machine/profile.h"
#include "workloads/workload.h"

#define CKB_VERSION "0.1.0"

typedef enum {
    CKB_CLI_FLAG, /* no value */
    CKB_CLI_INT,  /* an integer in lo..hi */
    CKB_CLI_NUM,  /* a number in lo..hi */
    CKB_CLI_STR,  /* any text */
    CKB_CLI_SIZE, /* small, default, paper or host */
    CKB_CLI_U64,  /* an unsigned 64-bit integer (decimal or 0x); lo > 0: not 0 */
    CKB_CLI_KV,   /* NAME=VALUE */
} ckb_cli_type;

typedef struct {
    const char *name;    /* the long name, without "--" */
    char short_name;     /* a one-letter alias ("-v"), or 0 */
    ckb_cli_type type;
    const char *metavar; /* what the value is called in usage ("N"); NULL for a flag */
    double lo, hi;       /* CKB_CLI_INT and CKB_CLI_NUM: the accepted range */
    int repeat;          /* 0: once (a later one wins); N > 1: up to N times, all kept */
    const char *help;    /* one line, defaults included */
    const char *needed;  /* NULL: optional; "": must be given; "NAME": must be given
                          * unless --NAME is (the parser enforces it) */
} ckb_cli_opt;

enum { CKB_CLI_MAX_OPTS = 48, CKB_CLI_MAX_REPEAT = 16, CKB_CLI_MAX_POS = 64 };

struct ckb_cli_args;

typedef struct {
    const char *name;    /* "eval" */
    const char *args;    /* the positional arguments as usage shows them, or "" */
    int min_pos, max_pos;
    const char *summary; /* one line for `ckbench --help` */
    const char *about;   /* more text for `ckbench CMD --help` (ends with \n), or NULL */
    const char *missing; /* what to say when positional arguments are missing, or NULL */
    const ckb_cli_opt *opts;
    int nopts;
    int (*run)(const struct ckb_cli_args *a);
} ckb_cli_cmd;

/* A parsed command line: every value was checked against its option's type. */
typedef struct ckb_cli_args {
    const ckb_cli_cmd *cmd;
    int given[CKB_CLI_MAX_OPTS];                             /* times given, per option */
    const char *value[CKB_CLI_MAX_OPTS][CKB_CLI_MAX_REPEAT]; /* values in order */
    const char *pos[CKB_CLI_MAX_POS];
    int npos;
} ckb_cli_args;

/* The commands, in the order `ckbench --help` lists them. */
extern const ckb_cli_cmd *const ckb_cli_commands[];
extern const int ckb_cli_ncommands;
const ckb_cli_cmd *ckb_cli_command(const char *name);

/* Parses argv (argv[0] is the command's name) against c's table. 0: parsed;
 * 1: --help was asked and printed (exit 0); 2: a bad command line, said on
 * stderr with a pointer to --help. */
int ckb_cli_parse(const ckb_cli_cmd *c, int argc, char **argv, ckb_cli_args *a);
/* `ckbench CMD --help`, and the command list of `ckbench --help`. */
void ckb_cli_print_help(const ckb_cli_cmd *c, FILE *f);
void ckb_cli_print_commands(FILE *f);
/* Prints "ckbench CMD: <message>; see ckbench CMD --help" to stderr and
 * returns 2, for checks a table cannot express. */
int ckb_cli_usage_error(const ckb_cli_args *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Values by option name; the name must be in the command's table (a typo
 * aborts with file:line). dflt when the option was not given. */
int ckb_cli_given(const ckb_cli_args *a, const char *name);
const char *ckb_cli_str(const ckb_cli_args *a, const char *name, const char *dflt);
const char *ckb_cli_at(const ckb_cli_args *a, const char *name, int i); /* i-th value */
long ckb_cli_int(const ckb_cli_args *a, const char *name, long dflt);
double ckb_cli_num(const ckb_cli_args *a, const char *name, double dflt);
unsigned long long ckb_cli_u64(const ckb_cli_args *a, const char *name, unsigned long long dflt);
ckb_size ckb_cli_size(const ckb_cli_args *a, const char *name, ckb_size dflt);

/* The build: "0.1.0", and the git commit it was built from ("unknown"
 * when built outside git). */
const char *ckb_cli_version(void);

/* Sends what the library says (core/say.h) to stderr and stdout; main()
 * installs it first thing, the test runner too. */
void ckb_cli_say_install(void);
/* Prints "ckbench: " and err's message on stderr; returns exit_code. */
int ckb_cli_fail(const ckb_err *err, int exit_code);
const char *ckb_cli_build_commit(void);

/* What the measuring commands share; filled from whichever of these
 * options the command has, the rest left at their defaults. */
typedef struct {
    ckb_size size;
    int threads;
    int warmup, iters;
    const char *machine; /* --machine FILE: the profile file, or NULL */
} ckb_cli_common;
void ckb_cli_common_get(const ckb_cli_args *a, ckb_cli_common *o);

/* The machine profile for threads (measured once, then cached). */
int ckb_cli_machine(int threads, const char *path, ckb_machine *m);
/* At size host: makes the host size of the n workloads this host's
 * (machine/sizes.h: the stored choice, else a search now). 0, or -1 after
 * saying why. Other sizes: 0, nothing done. */
int ckb_cli_host_sizes(ckb_size s, const ckb_machine *m, int threads,
                       const ckb_workload *const *ws, int n);
/* The workload named, or NULL after printing what exists. */
const ckb_workload *ckb_cli_workload(const char *name);

/* Options several commands share, so their help reads the same everywhere. */
#define CKB_CLI_OPT_SIZE                                                                     \
    {"size", 0, CKB_CLI_SIZE, "S", 0, 0, 0,                                                  \
     "small, default, paper, or host: default with the scale dim `ckbench size` chose here " \
     "(default: default)", NULL}
/* The same for the commands that run at this host's sizes unless told
 * otherwise (bench, tune): the caller makes "host" the default. */
#define CKB_CLI_OPT_SIZE_HOST                                                                \
    {"size", 0, CKB_CLI_SIZE, "S", 0, 0, 0,                                                  \
     "small, default, paper, or host: default with the scale dim `ckbench size` chose here, " \
     "searched first when missing (default: host)", NULL}
#define CKB_CLI_OPT_THREADS \
    {"threads", 0, CKB_CLI_INT, "N", 1, 1024, 0, "the thread budget (default: every core)", NULL}
#define CKB_CLI_OPT_WARMUP \
    {"warmup", 0, CKB_CLI_INT, "N", 0, 100, 0, "warm-up calls before timing (default: 5)", NULL}
#define CKB_CLI_OPT_ITERS \
    {"iters", 0, CKB_CLI_INT, "N", 1, 400, 0, "timed calls (default: 50)", NULL}
#define CKB_CLI_OPT_MACHINE                                                                   \
    {"machine", 0, CKB_CLI_STR, "FILE", 0, 0, 0,                                              \
     "the machine profile to use (default: the one stored for this host and thread budget, " \
     "measured when missing)", NULL}
/* Where evaluations run (generate, bench): exec/executor.h. */
#define CKB_CLI_OPTS_EXECUTOR                                                                 \
    {"executor", 0, CKB_CLI_STR, "E", 0, 0, 0,                                                \
     "where evaluations run: local (this machine, one at a time) or slurm (a node each; "     \
     "the README's cluster section) (default: local)", NULL},                                 \
    {"partition", 0, CKB_CLI_STR, "P", 0, 0, 0,                                               \
     "slurm: the partition (default: $CKB_SLURM_PARTITION, else Slurm's default)", NULL},    \
    {"account", 0, CKB_CLI_STR, "A", 0, 0, 0,                                                 \
     "slurm: the account (default: $CKB_SLURM_ACCOUNT, else none)", NULL},                    \
    {"slurm-max-jobs", 0, CKB_CLI_INT, "N", 1, 100000, 0,                                     \
     "slurm: evaluations in flight at once (default: the partition's node count)", NULL}
/* The executor options of a command that has CKB_CLI_OPTS_EXECUTOR into
 * *c (defaults first); 0, or 2 after saying what is wrong. */
int ckb_cli_executor(const ckb_cli_args *a, ckb_exec_config *c);
#define CKB_CLI_NOPTS(t) ((int)(sizeof(t) / sizeof *(t)))

/* The commands (one file each). */
extern const ckb_cli_cmd ckb_cmd_list, ckb_cmd_describe, ckb_cmd_machine, ckb_cmd_eval,
    ckb_cmd_bench, ckb_cmd_tune, ckb_cmd_report, ckb_cmd_score, ckb_cmd_generate, ckb_cmd_prompt,
    ckb_cmd_retime, ckb_cmd_plan, ckb_cmd_size, ckb_cmd_serve;

#endif /* CKB_CLI_H */
