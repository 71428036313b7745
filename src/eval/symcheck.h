/*
 * symcheck.h — stage 2: what a candidate's shared object imports and
 * defines, against an allow list (DESIGN §4). A candidate may call the C
 * math and memory functions and OpenMP's runtime; nothing that reaches
 * files, sockets, processes, signals, timers, the dynamic loader or raw
 * system calls.
 */
#ifndef CKB_SYMCHECK_H
#define CKB_SYMCHECK_H

typedef struct {
    int ok;
    int has_workload;     /* defines a function named workload */
    int nforbidden;
    char forbidden[512];  /* the first forbidden imports, comma-separated */
    char error[256];      /* set when the file is not a readable ELF64 object */
} ckb_symcheck;

/* Returns 0 when the file was read (see out->ok), -1 when it is not a
 * readable ELF64 shared object (out->error says why). */
int ckb_symcheck_file(const char *so_path, ckb_symcheck *out);

/* 1 when a candidate may import `name`. */
int ckb_symcheck_allowed(const char *name);

#endif /* CKB_SYMCHECK_H */
