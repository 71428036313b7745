/*
 * error.h — the one error contract of the library (DESIGN "Errors").
 *
 * A function that can fail for a reason the user must read takes a
 * `ckb_err *err` as its last parameter and either returns CKB_OK (0) or a
 * ckb_err_code, after filling err with the same code and one message
 * (functions returning a pointer return NULL instead and leave the code in
 * err->code). The message is a complete sentence about what was wrong and,
 * where one exists, what to do; it has no "ckbench: " prefix and no newline:
 * the caller adds context in front (ckb_err_prefix) and only src/cli (and the
 * service's own log) decides where it is printed. err may be NULL: the
 * caller wants the code only.
 *
 * Out of memory is not an error code for the harness's own allocations: they
 * abort (core/alloc.h). CKB_E_OOM is for a data-sized allocation the user can
 * shrink (a size, a file), where giving up cleanly is the better answer.
 */
#ifndef CKB_ERROR_H
#define CKB_ERROR_H

#include <stddef.h>

typedef enum {
    CKB_OK = 0,
    CKB_E_USAGE,     /* the request is wrong: an option, a name, a value; fix and retry */
    CKB_E_NOT_FOUND, /* something named does not exist (a file, a run, a workload) */
    CKB_E_IO,        /* reading or writing a file or folder failed */
    CKB_E_FORMAT,    /* a file is there but is not what it must be */
    CKB_E_CONFLICT,  /* what is already there refuses the request (another size, a non-empty folder) */
    CKB_E_OOM,       /* a data-sized allocation failed (see above) */
    CKB_E_HARNESS,   /* the harness itself failed: a child, a thread, a lock */
} ckb_err_code;

enum { CKB_ERR_MSG = 1024 };

typedef struct {
    ckb_err_code code;
    char msg[CKB_ERR_MSG];
} ckb_err;

/* Fills err (when not NULL) and returns code, so that a failure reads
 * `return ckb_err_set(err, CKB_E_IO, "cannot read %s: %s", path, strerror(errno));`.
 * The message is cut at CKB_ERR_MSG - 1 bytes. */
ckb_err_code ckb_err_set(ckb_err *err, ckb_err_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Puts context in front of err's message ("re-timing 8p_GEMM #3: " + msg)
 * and returns err's code; nothing when err is NULL. */
ckb_err_code ckb_err_prefix(ckb_err *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Empties err: code CKB_OK, message "". */
void ckb_err_clear(ckb_err *err);

/* The code's name ("io", "not_found"), for logs and JSON. */
const char *ckb_err_code_name(ckb_err_code code);

/* Not an error but a broken invariant, or a resource the harness cannot go
 * on without (memory, a oneDNN primitive): writes "ckbench: MSG" and a
 * newline to stderr and aborts. The one place besides src/cli that writes
 * to stderr: a process that is about to die has no caller to hand a message
 * to. Safe in the sandbox child (one write(2), no allocation). */
void ckb_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif /* CKB_ERROR_H */
