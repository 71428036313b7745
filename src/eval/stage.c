#include "eval/stage.h"

const char *ckb_stage_name(ckb_stage s)
{
    static const char *const names[] = {"none",   "compile",     "symcheck", "load",
                                        "correctness", "timing", "final_check", "done"};
    return s >= 0 && s <= CKB_STAGE_DONE ? names[s] : "?";
}

const char *ckb_status_name(ckb_status s)
{
    static const char *const names[CKB_ST_COUNT] = {
        "ok",           "compile_error", "forbidden_symbol", "crash",
        "timeout",      "resource_limit", "wrong_result",    "nondeterministic",
        "cheat_detected", "harness_error",
    };
    return s >= 0 && s < CKB_ST_COUNT ? names[s] : "?";
}
