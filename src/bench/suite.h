/*
 * suite.h — `ckbench bench`, JAXBench's run_all: every chosen workload's
 * baseline and, where present, its expert, with the timing protocol; a
 * timing-noise measurement (one baseline timed against itself); results
 * written after every workload (so a killed run resumes) as results.json
 * and results.csv, and a table said to the user (core/say.h).
 */
#ifndef CKB_SUITE_H
#define CKB_SUITE_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/strbuf.h"
#include "exec/executor.h"
#include "machine/profile.h"
#include "workloads/workload.h"

typedef struct {
    ckb_size size;
    int threads;
    const char *out_dir;                /* results.json and results.csv go here */
    const ckb_workload *list[128];
    int n;
    int use_expert;                     /* 0: baselines only */
    int resume;                         /* continue out_dir/results.json (see ckb_suite_run) */
    int retime;                         /* with resume: entries (and the timing noise) whose
                                           timing was disturbed are measured again */
    int warmup, iters;
    const char *noise_workload;         /* NULL: 8p_GEMM if chosen, else the first */
    const ckb_machine *machine;
    ckb_exec *exec;                     /* where evaluations run; NULL: local */
} ckb_suite_opts;

/* CKB_OK when every workload was run (whatever their statuses); another
 * code with err filled when the harness failed (results so far are kept on
 * disk); CKB_E_CONFLICT when the run was refused before anything was
 * written: out_dir is not empty and resume is off, or its results.json
 * cannot be continued (not a complete suite result, or measured at another
 * size, thread budget, warm-up or iteration count). A resumed run keeps
 * every workload the file holds, asked for this time or not, and runs the
 * missing ones. Progress and the table go through core/say.h. */
int ckb_suite_run(const ckb_suite_opts *o, ckb_err *err);

/* `ckbench retime RESULTS_DIR`: the settings of dir/results.json (size,
 * threads, warm-up, iterations, the workloads it holds, whether it timed
 * experts) in o, for ckb_suite_run with resume and retime set; *ndisturbed
 * gets how many entries (and the noise measurement) were disturbed. CKB_OK,
 * or CKB_E_FORMAT with err saying why the file cannot be read. */
int ckb_suite_retime_opts(const char *dir, ckb_suite_opts *o, int *ndisturbed, ckb_err *err);
/* For a run at size host: the scale value each entry of dir/results.json
 * ran with becomes this process's (a resumed run keeps the dims it began
 * with); the workloads taken go to adopted[] (at most max). Returns how
 * many; 0 when dir holds no host-size results. */
int ckb_suite_adopt_host_dims(const char *dir, const ckb_workload **adopted, int max);
/* The refusals of ckb_suite_run alone (o->machine is not read), so that a
 * command refuses before it measures anything: CKB_OK or CKB_E_CONFLICT
 * with err saying why. */
int ckb_suite_check(const ckb_suite_opts *o, ckb_err *err);

/* The hash recorded as an expert's "source_hash" (FNV-1a 64 of the file's
 * bytes, written as 16 hex digits), for a report to check the source it
 * shows is the one that ran. */
uint64_t ckb_suite_source_hash(const char *text, size_t n);

/* The CSV forms of a results.json object (docs/FORMATS.md), appended to
 * out: ckbench's own (results.csv: ckb_suite_csv_header), or with jaxbench
 * set JAXBench's run_all columns and status names exactly
 * (results-jaxbench.csv: ckb_suite_jaxbench_header). Unmeasured values are
 * empty fields. */
struct json_object;
void ckb_suite_csv(struct json_object *root, int jaxbench, ckb_strbuf *out);
extern const char ckb_suite_csv_header[];
extern const char ckb_suite_jaxbench_header[];

#endif /* CKB_SUITE_H */
