#include "eval/verdict.h"

#include <string.h>

static const struct {
    ckb_status status;
    const char *detail;
} verdict__table[CKB_V_COUNT] = {
#define CKB_VERDICT(id, status, detail) [CKB_V_##id] = {CKB_ST_##status, detail},
#include "eval/verdict.def"
#undef CKB_VERDICT
};

ckb_status ckb_verdict_status(ckb_verdict v)
{
    return v >= 0 && v < CKB_V_COUNT ? verdict__table[v].status : CKB_ST_HARNESS_ERROR;
}

const char *ckb_verdict_detail(ckb_verdict v)
{
    return v >= 0 && v < CKB_V_COUNT ? verdict__table[v].detail : "?";
}

int ckb_verdict_find(ckb_status st, const char *detail)
{
    for (int v = 0; v < CKB_V_COUNT; v++)
        if (verdict__table[v].status == st && detail && strcmp(verdict__table[v].detail, detail) == 0)
            return v;
    return -1;
}
