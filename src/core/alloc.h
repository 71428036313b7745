/*
 * alloc.h — the one allocation helper and its policy: when the harness
 * cannot get memory for its own bookkeeping (names, records, messages,
 * tables) it aborts, saying where, because nothing useful can follow and
 * every call site checking by hand is code that is never run. So these never
 * return NULL and no caller checks.
 *
 * Not for data whose size the user chooses (tensors, files read whole):
 * those use malloc and give CKB_E_OOM back (core/error.h). The sandbox child
 * keeps its own handling (src/eval/child.c says why).
 */
#ifndef CKB_ALLOC_H
#define CKB_ALLOC_H

#include <stddef.h>

#define ckb_xmalloc(n) ckb__xmalloc((n), __FILE__, __LINE__)
#define ckb_xcalloc(n, size) ckb__xcalloc((n), (size), __FILE__, __LINE__)
#define ckb_xrealloc(p, n) ckb__xrealloc((p), (n), __FILE__, __LINE__)
#define ckb_xstrdup(s) ckb__xstrdup((s), __FILE__, __LINE__)
#define ckb_xstrndup(s, n) ckb__xstrndup((s), (n), __FILE__, __LINE__)

void *ckb__xmalloc(size_t n, const char *file, int line);
void *ckb__xcalloc(size_t n, size_t size, const char *file, int line);
void *ckb__xrealloc(void *p, size_t n, const char *file, int line);
char *ckb__xstrdup(const char *s, const char *file, int line);
char *ckb__xstrndup(const char *s, size_t n, const char *file, int line);

/* Aborts with "ckbench: out of memory at FILE:LINE" (ckb_fatal). */
void ckb__oom(const char *file, int line) __attribute__((noreturn));

#endif /* CKB_ALLOC_H */
