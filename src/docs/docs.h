/*
 * docs.h — the documentation shown to a model (DESIGN §8): blocks under
 * docs/<target>/ of four kinds (hardware, api, example, rules), chosen for
 * a workload by its tags, concatenated in a fixed order.
 */
#ifndef CKB_DOCS_H
#define CKB_DOCS_H

#include <stddef.h>

#include "core/strbuf.h"
#include "workloads/workload.h"

typedef struct {
    int nblocks;  /* blocks chosen */
    long chars;   /* length of the text */
    long tokens;  /* approximate token count (chars / 4) */
} ckb_docs_info;

/* The target whose docs fit this machine: "x86-avx512" where the CPU has
 * AVX-512 with BF16, else "generic-c". */
const char *ckb_docs_default_target(void);

/* Appends the blocks chosen for w from docs/<target>/ (target NULL: the
 * default) to out and fills *info (may be NULL). Returns 0, or -1 with a
 * message in err when the docs cannot be read. */
int ckb_docs_for_workload(const ckb_workload *w, const char *target, ckb_strbuf *out,
                          ckb_docs_info *info, char *err, size_t errlen);

#endif /* CKB_DOCS_H */
