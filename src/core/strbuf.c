#include "core/strbuf.h"

#include "core/alloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void strbuf__reserve(ckb_strbuf *sb, size_t extra)
{
    if (sb->len + extra + 1 <= sb->cap)
        return;
    size_t cap = sb->cap ? sb->cap : 64;
    while (cap < sb->len + extra + 1)
        cap *= 2;
    sb->data = ckb_xrealloc(sb->data, cap);
    sb->cap = cap;
}

void ckb_strbuf_append(ckb_strbuf *sb, const char *s, size_t n)
{
    strbuf__reserve(sb, n);
    memcpy(sb->data + sb->len, s, n);
    sb->len += n;
    sb->data[sb->len] = '\0';
}

void ckb_strbuf_printf(ckb_strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    strbuf__reserve(sb, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb->len += (size_t)n;
}

char *ckb_strbuf_take(ckb_strbuf *sb)
{
    if (!sb->data)
        strbuf__reserve(sb, 0), sb->data[0] = '\0';
    char *s = sb->data;
    sb->data = NULL;
    sb->len = sb->cap = 0;
    return s;
}

void ckb_strbuf_free(ckb_strbuf *sb)
{
    free(sb->data);
    sb->data = NULL;
    sb->len = sb->cap = 0;
}
