#include "report/doc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"

static char *doc__dup(const char *s) { return s ? ckb_xstrdup(s) : NULL; }

static char *doc__vfmt(const char *fmt, va_list ap)
{
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        ckb__oom(__FILE__, __LINE__);
    return s;
}

static ckb_doc_block *doc__add(ckb_doc *d, ckb_doc_kind kind)
{
    if (d->n == d->cap) {
        d->cap = d->cap ? 2 * d->cap : 64;
        d->b = ckb_xrealloc(d->b, (size_t)d->cap * sizeof *d->b);
    }
    ckb_doc_block *b = &d->b[d->n++];
    memset(b, 0, sizeof *b);
    b->kind = kind;
    return b;
}

void ckb_doc_init(ckb_doc *d, const char *title)
{
    memset(d, 0, sizeof *d);
    d->title = doc__dup(title);
}

void ckb_doc_free(ckb_doc *d)
{
    for (int i = 0; i < d->n; i++) {
        ckb_doc_block *b = &d->b[i];
        free(b->id);
        free(b->text);
        free(b->summary);
        free(b->svg);
        free(b->file);
        free(b->cls);
        if (b->kind == CKB_DOC_TABLE)
            ckb_table_free(&b->table);
    }
    free(d->b);
    free(d->title);
    memset(d, 0, sizeof *d);
}

void ckb_doc_heading(ckb_doc *d, int level, const char *id, const char *fmt, ...)
{
    ckb_doc_block *b = doc__add(d, CKB_DOC_HEADING);
    b->level = level < 2 ? 2 : level > 4 ? 4 : level;
    b->id = doc__dup(id);
    va_list ap;
    va_start(ap, fmt);
    b->text = doc__vfmt(fmt, ap);
    va_end(ap);
}

void ckb_doc_para(ckb_doc *d, const char *cls, const char *fmt, ...)
{
    ckb_doc_block *b = doc__add(d, CKB_DOC_PARA);
    b->cls = doc__dup(cls);
    va_list ap;
    va_start(ap, fmt);
    b->text = doc__vfmt(fmt, ap);
    va_end(ap);
}

ckb_table *ckb_doc_table(ckb_doc *d, const char *id, const char *caption, int ncols,
                         const char *const *cols)
{
    ckb_doc_block *b = doc__add(d, CKB_DOC_TABLE);
    b->id = doc__dup(id);
    b->text = doc__dup(caption);
    ckb_table_init(&b->table, ncols, cols);
    return &b->table;
}

void ckb_doc_figure(ckb_doc *d, const char *id, const char *file, const char *caption, char *svg)
{
    ckb_doc_block *b = doc__add(d, CKB_DOC_FIGURE);
    b->id = doc__dup(id);
    b->file = doc__dup(file);
    b->text = doc__dup(caption);
    b->svg = svg;
}

void ckb_doc_code(ckb_doc *d, const char *summary, const char *code)
{
    ckb_doc_block *b = doc__add(d, CKB_DOC_CODE);
    b->summary = doc__dup(summary);
    b->text = doc__dup(code);
}
