/*
 * compile.h — stage 1: a candidate C file to a shared object, with the fixed
 * flags of DESIGN §4 and a time limit. The compiler's message is kept,
 * trimmed, for the model's feedback, and classified for the taxonomy.
 */
#ifndef CKB_COMPILE_H
#define CKB_COMPILE_H

#include <limits.h>

#include "eval/verdict.h"
#include "workloads/instance.h"

typedef struct {
    int ok;
    char so_path[PATH_MAX];
    char *message;    /* trimmed compiler output (may be ""); caller frees */
    ckb_verdict kind; /* when not ok: CKB_V_COMPILE_SYNTAX, _UNKNOWN_INTRINSIC,
                         _WRONG_SIGNATURE, _UNDECLARED, _LINK, _OTHER, or the
                         limit that ended it: _TIMEOUT (wall clock), _CPU_LIMIT,
                         _MEMORY_LIMIT, _DISK_LIMIT, _OUTPUT_LIMIT
                         (eval/confine.h); the message then opens naming it */
    double seconds;
    char error[768];  /* why the compiler could not run, when -1 is returned */
} ckb_compile_result;

/* What to compile: src for the instance in (its dims.h), in workdir. */
typedef struct {
    const ckb_instance *in;
    const char *src;
    const char *workdir;         /* must exist */
    const char *const *defines;  /* extra "NAME=VALUE" macros (an expert's tunables), or NULL */
    int ndefines;
    int expert_kit;              /* 1 (experts only): expert-kit/ may be included */
} ckb_compile_request;

/* Compiles q->src for q->in in workdir/compile/work (made here): copies src
 * there unless it lies there already, writes dims.h (ckb_instance_header)
 * and candidate.so (out->so_path) there. The compiler runs confined and
 * bounded (eval/confine.h): it sees only the system's toolchain and
 * headers, copies of the source and dims.h in a tmpfs of its own (the
 * object is copied back from there), ckbench's include/ and, when
 * expert_kit = 1, expert-kit/ (both copied into workdir/compile).
 * Returns 0 when the compiler ran (see out->ok), -1 with out->error when it
 * or its confinement could not be started (no user namespaces). */
int ckb_compile_candidate(const ckb_compile_request *q, ckb_compile_result *out);
void ckb_compile_result_free(ckb_compile_result *r);

/* The compiler command ckbench uses ($CKBENCH_CC or cc) and its version line. */
const char *ckb_compiler(void);
const char *ckb_compiler_version(void);

#endif /* CKB_COMPILE_H */
