/*
 * verdict.h — the (status, detail) pairs an evaluation ends with, one
 * enumerated list (verdict.def). eval.c fails only through these, compile.c
 * names its kinds from them, and tests/test_verdicts.c checks that every one
 * is documented in docs/VERDICTS.md with the test that produces it.
 */
#ifndef CKB_VERDICT_H
#define CKB_VERDICT_H

#include "eval/stage.h"

typedef enum {
#define CKB_VERDICT(id, status, detail) CKB_V_##id,
#include "eval/verdict.def"
#undef CKB_VERDICT
    CKB_V_COUNT
} ckb_verdict;

ckb_status ckb_verdict_status(ckb_verdict v);
const char *ckb_verdict_detail(ckb_verdict v);
/* The verdict of a status and detail, or -1 when the pair is not one. */
int ckb_verdict_find(ckb_status st, const char *detail);

#endif /* CKB_VERDICT_H */
