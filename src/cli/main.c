/* ckbench — the command-line entry point: dispatch to one command. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "eval/child.h"
#include "exec/executor.h"

static const char usage[] =
    "usage: ckbench COMMAND [options]\n"
    "\n"
    "commands:\n"
    "  list                         the workloads: sizes, GFLOP, tags, expert\n"
    "  describe WORKLOAD            one workload: dims, tensors, the candidate signature\n"
    "  machine [--threads N] [--out PATH] [--force]\n"
    "                               measure peak f32/bf16 GFLOP/s and bandwidth, store the profile\n"
    "  eval WORKLOAD FILE [--size small|default|paper] [--seeds N] [--threads N]\n"
    "       [--warmup N] [--iters N] [--seed S] [--keep DIR] [--timeout-scale X]\n"
    "       [--define NAME=VALUE]...\n"
    "                               evaluate a candidate kernel; one JSON object on stdout\n"
    "  bench [--size S] [--workloads ID,ID...] [--threads N] [--out DIR] [--resume]\n"
    "        [--no-expert] [--warmup N] [--iters N]\n"
    "        [--executor local|slurm [--partition P] [--account A] [--slurm-max-jobs N]]\n"
    "                               the suite: baselines and experts, results.json/.csv\n"
    "  tune WORKLOAD [--size S] [--threads N] [--warmup N] [--iters N] [--dry-run]\n"
    "                               grid-search the expert's parameters, store the best\n"
    "  report PATH... [--out DIR]   report.md and a self-contained report.html from suite\n"
    "                               results (results.json or its folder; up to 6 compared)\n"
    "                               and generation runs (folders with records.jsonl);\n"
    "                               DIR defaults to the first path's folder\n"
    "  score RUN... [--json] [--out FILE] [--verbose] [--p X]... [--n N]...\n"
    "                               score generation runs per method/model: compile rate,\n"
    "                               correctness, solved, floored geomean speedup, fast_p@N,\n"
    "                               % of expert, failure taxonomy; writes score.json\n"
    "                               (FILE defaults to RUN/score.json for one run)\n"
    "  generate --method best-of-n|refine|refine-docs|beam --provider P --model X\n"
    "           --workloads ID,ID... [--budget N] [--size S] [--threads N] [--out RUN]\n"
    "           [--jobs K] [--concurrency N] [--base-url U] [--command CMD] [--replay RUN]\n"
    "           [--prices FILE] [--max-retries N] [--timeout S] [--temperature T]\n"
    "           [--chains C --turns T] [--beam-width W --beam-candidates K] [--seed S]\n"
    "           [--warmup N] [--iters N] [--no-expert]\n"
    "           [--executor local|slurm [--partition P] [--account A] [--slurm-max-jobs N]]\n"
    "                               a generation method on a sample budget per workload,\n"
    "                               into a run folder (records.jsonl, best/, summary.json)\n"
    "  generate --resume RUN        continue a killed run where its records stop\n"
    "  plan [--method M[,M...]|all] [--budget N] [--workloads ID,ID...]\n"
    "       [--eval-seconds S | --from RUN[,RUN...]] [--overhead S] [--nodes N] [--no-expert]\n"
    "                               model calls, evaluations and node-hours of an experiment\n"
    "  prompt WORKLOAD [--method M] [--docs] [--size S]\n"
    "                               print exactly what a model gets for the first sample\n"
    "\n"
    "A WORKLOAD is its id (8p_GEMM) or its number (8p). Threads default to every core.\n"
    "Exit status: 0 done (an eval that judged a kernel wrong is done), 1 the harness\n"
    "failed, 2 bad command line.\n";

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "__sandbox") == 0)
        return ckb_child_main(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "__exec") == 0) /* a Slurm node's evaluation */
        return ckb_exec_node_main(argc, argv);
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "help") == 0) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } commands[] = {
        {"list", ckb_cmd_list},   {"describe", ckb_cmd_describe}, {"machine", ckb_cmd_machine},
        {"eval", ckb_cmd_eval},   {"bench", ckb_cmd_bench},       {"tune", ckb_cmd_tune},
        {"report", ckb_cmd_report}, {"score", ckb_cmd_score},
        {"generate", ckb_cmd_generate}, {"prompt", ckb_cmd_prompt},
        {"plan", ckb_cmd_plan},
    };
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].fn(argc, argv);
    fprintf(stderr, "ckbench: unknown command '%s'\n\n%s", argv[1], usage);
    return 2;
}
