/*
 * refsrc.h — the plain reference of a workload as source text, for a
 * prompt: the reference function of workloads/<id>/workload.c, the file's
 * helpers it calls (transitively, callees first), the shared ops and the
 * reference matmul it uses (src/workloads/ops.[ch], reference.c), and the
 * file's constants and index enums. A model reproduces these semantics.
 */
#ifndef CKB_GEN_REFSRC_H
#define CKB_GEN_REFSRC_H

#include "workloads/workload.h"

/* The source text (caller frees), or NULL with a message in err when
 * workload.c cannot be read or names no reference. */
char *ckb_gen_reference_source(const ckb_workload *w, char *err, size_t errlen);

/* The text of workloads/<id>/README.md before its first "## " heading: the
 * formula part. NULL when there is none. Caller frees. */
char *ckb_gen_readme_intro(const ckb_workload *w);

#endif /* CKB_GEN_REFSRC_H */
