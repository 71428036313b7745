/*
 * run.h — a generation run's folder (docs/FORMATS.md): config.json,
 * records.jsonl (one fsync'd line per finished sample), best/<workload>.c
 * and .json (replaced atomically), summary.json, expert/<workload>.json
 * (the expert's evaluation, made once), and `lock`.
 *
 * The lock is an flock on RUN/lock held for the run's lifetime, the file
 * holding the pid: a live holder refuses a second process, a dead one's
 * lock is free (the kernel drops it with the process).
 *
 * Failures return a code and fill err (core/error.h): CKB_E_CONFLICT for a
 * folder in use or not empty, CKB_E_NOT_FOUND for a folder that is no run,
 * CKB_E_FORMAT for a bad config.json, CKB_E_IO when the disk refused.
 *
 * The records in memory are the method's state: a method asks for sample
 * (workload, index) and does it only when the run lacks it, so a resumed
 * run repeats no sample and loses none. All functions are thread-safe.
 */
#ifndef CKB_GEN_RUN_H
#define CKB_GEN_RUN_H

#include <stddef.h>

#include "core/error.h"

struct json_object;
typedef struct ckb_run ckb_run;

/* Creates dir (it must not exist or be empty), takes the lock, writes
 * config.json. The config names the workloads ("workloads": [ids]) and
 * the budget per workload ("budget"). */
int ckb_run_create(const char *dir, struct json_object *config, ckb_run **out, ckb_err *err);

/* Opens an existing run: takes the lock, reads config.json, cuts a
 * half-written last line off records.jsonl and loads the records. */
int ckb_run_resume(const char *dir, ckb_run **out, ckb_err *err);

/* The run's config (borrowed). */
struct json_object *ckb_run_config(ckb_run *r);
const char *ckb_run_dir(const ckb_run *r);

/* The record of (workload, index), or NULL (borrowed; stays valid until
 * ckb_run_close). */
struct json_object *ckb_run_record(ckb_run *r, const char *workload, int index);

/* Appends a record (taking ownership): one line and an fsync, then it is
 * in memory; best/ is replaced when it is correct and faster than the best
 * so far (a disturbed timing is no speed: such a sample is best only while
 * no correct sample has an undisturbed timing). CKB_OK, or a code with err
 * filled when the disk refused. */
int ckb_run_append(ckb_run *r, struct json_object *record, ckb_err *err);

/* Appends a record that re-times the sample's record (the same workload
 * and index, a "retimed" object saying what it redid): the old line stays
 * on disk, the new one replaces it here and on every later read (the
 * latest wins); best/ follows. CKB_OK, or a code with err filled. */
int ckb_run_retimed(ckb_run *r, struct json_object *record, ckb_err *err);

/* The expert's speedup of a workload (NAN: none), recorded for summary. */
void ckb_run_set_expert(ckb_run *r, const char *workload, double speedup);

/* The expert speedup set for a workload (NAN: none). */
double ckb_run_expert(ckb_run *r, const char *workload);

/* Rewrites summary.json from the records (atomically). */
int ckb_run_write_summary(ckb_run *r);

/* Counts of a workload's records: samples, correct, best speedup (0 when
 * none correct). */
void ckb_run_workload_totals(ckb_run *r, const char *workload, int *samples, int *correct,
                             double *best);

/* Releases the lock and frees everything. */
void ckb_run_close(ckb_run *r);

#endif /* CKB_GEN_RUN_H */
