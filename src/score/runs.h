/*
 * runs.h — a generation run folder (docs/FORMATS.md, "A generation run")
 * read back for scoring: its config.json and the records of records.jsonl,
 * each record reduced to the fields a score needs.
 *
 * Reading is tolerant, because a run may be read while it is written or
 * after a kill: a last line without its newline that does not parse (a
 * half-written record) is dropped, a malformed line elsewhere is skipped
 * and counted, fields this reader does not know are ignored, and a config
 * that lacks the workload list or the budget has them derived from the
 * records. Only a folder with no records.jsonl, or a config.json that is
 * not JSON, is an error.
 */
#ifndef CKB_SCORE_RUNS_H
#define CKB_SCORE_RUNS_H

#include <stddef.h>

#include "core/error.h"

enum { CKB_SCORE_ID_MAX = 128, CKB_SCORE_NAME_MAX = 48 };

/* One sample: a record of records.jsonl. */
typedef struct {
    char workload[CKB_SCORE_ID_MAX];
    int index;                         /* its position in the workload's budget, 0-based */
    char status[CKB_SCORE_NAME_MAX];   /* taxonomy name, no_code or provider_error */
    char detail[CKB_SCORE_NAME_MAX];   /* eval.detail (compile_error subkind), or "" */
    int correct;
    double speedup;                    /* NAN when not timed (null) or disturbed */
    int disturbed;                     /* the timing was disturbed: not a figure */
    double speedup_disturbed;          /* what the disturbed timing said (NAN: none) */
    int retimed;                       /* the record re-times an earlier one */
    double expert_speedup;             /* NAN when the workload has no expert (null) */
    double cand_ms, base_ms;           /* eval.candidate/baseline.median_ms; NAN when absent */
    int chain, turn;                   /* -1 when null */
} ckb_score_sample;

typedef struct {
    char *path;                        /* the run folder as given (owned) */
    char method[CKB_SCORE_ID_MAX], model[CKB_SCORE_ID_MAX], provider[CKB_SCORE_ID_MAX];
    char size[CKB_SCORE_NAME_MAX];
    char **workloads;                  /* config's list, then any only seen in records (owned) */
    int nworkloads;
    int budget;                        /* per workload; from config, else max index + 1 */
    int budget_from_config;            /* 0: derived from the records */
    ckb_score_sample *s;               /* in file order (owned) */
    int n;
    int dropped_last;                  /* 1: a half-written last line was dropped */
    int skipped;                       /* malformed or incomplete lines skipped elsewhere */
    int duplicates;                    /* records whose (workload, index) was already seen */
    long nul_bytes;                    /* NUL bytes skipped (a crash's zero-filled blocks) */
    int disturbed;                     /* correct samples whose timing was disturbed */
    int retimed;                       /* samples whose timing a later record redid */
    int infra;                         /* infra_error records no later record redid:
                                          not samples, not counted */
} ckb_score_run;

/* Reads the run at path (a folder holding records.jsonl; config.json is
 * read when present). CKB_OK, or a code with the reason in err (which file,
 * what is wrong, what to give instead) otherwise. */
int ckb_score_run_load(const char *path, ckb_score_run *r, ckb_err *err);
void ckb_score_run_free(ckb_score_run *r);

/* Whether path is a run folder (holds records.jsonl). Reads only names. */
int ckb_score_is_run_path(const char *path);

#endif /* CKB_SCORE_RUNS_H */
