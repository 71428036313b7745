/*
 * strbuf.h — a growable string. Zero-initialise, append, then take the
 * buffer (the caller frees it) or free it. Allocation failure aborts, as
 * everywhere in the harness (core/alloc.h).
 */
#ifndef CKB_STRBUF_H
#define CKB_STRBUF_H

#include <stddef.h>

typedef struct {
    char *data;
    size_t len, cap;
} ckb_strbuf;

void ckb_strbuf_printf(ckb_strbuf *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void ckb_strbuf_append(ckb_strbuf *sb, const char *s, size_t n);
/* Returns the string (never NULL; "" when empty) and resets sb. */
char *ckb_strbuf_take(ckb_strbuf *sb);
void ckb_strbuf_free(ckb_strbuf *sb);

#endif /* CKB_STRBUF_H */
