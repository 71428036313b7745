/*
 * refsrc.h — what a model is shown of a workload's semantics: the file
 * workloads/<id>/shown.md (the formula, an "Inputs" paragraph with the
 * input distributions and invariants, the named constants, and the plain
 * reference as C), embedded into the binary at build time by
 * scripts/embed_shown.sh. One file per workload is the single source of
 * truth: the prompt carries it verbatim and the source tree need not be
 * present at run time.
 */
#ifndef CKB_GEN_REFSRC_H
#define CKB_GEN_REFSRC_H

#include "core/error.h"
#include "workloads/workload.h"

/* The embedded shown.md of w (static storage, never freed), or NULL when
 * the build holds none for it. */
const char *ckb_gen_shown(const ckb_workload *w);

/* A copy of ckb_gen_shown(w) (caller frees), or NULL with a message in err
 * when the build holds no shown.md for w. */
char *ckb_gen_reference_source(const ckb_workload *w, ckb_err *err);

#endif /* CKB_GEN_REFSRC_H */
