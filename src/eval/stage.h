/*
 * stage.h — the stages of an evaluation (DESIGN §4) and the statuses that
 * end one: the failure taxonomy of DESIGN §8. Each status has a stable
 * lower-case name used in JSON, CSV and scoring.
 */
#ifndef CKB_STAGE_H
#define CKB_STAGE_H

typedef enum {
    CKB_STAGE_NONE = 0,
    CKB_STAGE_COMPILE,
    CKB_STAGE_SYMCHECK,
    CKB_STAGE_LOAD,
    CKB_STAGE_CORRECTNESS,
    CKB_STAGE_TIMING,
    CKB_STAGE_FINAL_CHECK,
    CKB_STAGE_DONE,
} ckb_stage;

typedef enum {
    CKB_ST_OK = 0,
    CKB_ST_COMPILE_ERROR,
    CKB_ST_FORBIDDEN_SYMBOL,
    CKB_ST_CRASH,
    CKB_ST_TIMEOUT,
    CKB_ST_RESOURCE_LIMIT,
    CKB_ST_WRONG_RESULT,
    CKB_ST_NONDETERMINISTIC,
    CKB_ST_CHEAT_DETECTED,
    CKB_ST_HARNESS_ERROR,
    CKB_ST_COUNT
} ckb_status;

const char *ckb_stage_name(ckb_stage s);
const char *ckb_status_name(ckb_status s);

#endif /* CKB_STAGE_H */
