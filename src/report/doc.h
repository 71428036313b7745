/*
 * doc.h — a report as a list of blocks (headings, paragraphs, tables,
 * figures, code), built once from the results and then written twice: as
 * Markdown (md.c) and as one self-contained HTML page (html.c). A section
 * of the report is a function that appends blocks, so a new kind of input
 * (generation runs) adds a section function and touches neither writer.
 *
 * Text in blocks is plain: the writers escape it for their format.
 */
#ifndef CKB_REPORT_DOC_H
#define CKB_REPORT_DOC_H

#include "report/table.h"

typedef enum {
    CKB_DOC_HEADING,  /* level 2..4 (the title is level 1), id = anchor */
    CKB_DOC_PARA,     /* text; class "note" shows it as a side remark */
    CKB_DOC_TABLE,    /* table, id, text = caption */
    CKB_DOC_FIGURE,   /* svg, id, file = name of the .svg beside report.md, text = caption */
    CKB_DOC_CODE,     /* text = code, summary = what it is; collapsed in HTML */
} ckb_doc_kind;

typedef struct {
    ckb_doc_kind kind;
    int level;
    char *id, *text, *summary, *svg, *file, *cls; /* owned; any may be NULL */
    ckb_table table;
} ckb_doc_block;

typedef struct {
    char *title;
    ckb_doc_block *b;
    int n, cap;
} ckb_doc;

void ckb_doc_init(ckb_doc *d, const char *title);
void ckb_doc_free(ckb_doc *d);

void ckb_doc_heading(ckb_doc *d, int level, const char *id, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void ckb_doc_para(ckb_doc *d, const char *cls, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Appends an empty table block and returns its table, already initialised
 * with the columns (see ckb_table_init), for the caller to fill. The
 * pointer stays valid until the next block is appended. */
ckb_table *ckb_doc_table(ckb_doc *d, const char *id, const char *caption, int ncols,
                         const char *const *cols);
/* Takes ownership of svg (malloc'd). */
void ckb_doc_figure(ckb_doc *d, const char *id, const char *file, const char *caption, char *svg);
void ckb_doc_code(ckb_doc *d, const char *summary, const char *code);

#endif /* CKB_REPORT_DOC_H */
