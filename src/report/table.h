/*
 * table.h — a table as plain text cells, built once and written by both
 * the Markdown and the HTML writer, so the two show the same numbers. Rows
 * and columns carry keys (a workload id, a column name) that the HTML
 * writer puts in data- attributes for tests and scripts to find them.
 */
#ifndef CKB_REPORT_TABLE_H
#define CKB_REPORT_TABLE_H

enum { CKB_TABLE_MAXCOLS = 32 };

typedef struct {
    int ncols, nrows, cap;
    char *keys[CKB_TABLE_MAXCOLS];   /* column keys (data-col), owned */
    char *heads[CKB_TABLE_MAXCOLS];  /* column headings, owned */
    char **row_keys;                 /* per row (data-row), owned */
    char **row_links;                /* per row: an anchor the first cell links to, or NULL */
    char **cells;                    /* nrows x ncols, owned; NULL reads as "" */
    int numeric[CKB_TABLE_MAXCOLS];  /* 1: right-aligned */
} ckb_table;

/* Starts an empty table with the given columns; "key:Heading" per column,
 * a trailing '#' on the key marks a numeric column ("speedup#:Speedup").
 * Aborts on more than CKB_TABLE_MAXCOLS columns (a programming error). */
void ckb_table_init(ckb_table *t, int ncols, const char *const *cols);
/* Adds a column after init (for tables whose columns depend on the data). */
void ckb_table_add_col(ckb_table *t, const char *key, const char *head, int numeric);
/* Appends a row; returns its index. link may be NULL. */
int ckb_table_row(ckb_table *t, const char *key, const char *link);
/* Sets cell (row, col) from a printf format; replaces an earlier value. */
void ckb_table_set(ckb_table *t, int row, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The column index of key, or -1. */
int ckb_table_col(const ckb_table *t, const char *key);
/* The cell text ("" when unset). */
const char *ckb_table_get(const ckb_table *t, int row, int col);
void ckb_table_free(ckb_table *t);

#endif /* CKB_REPORT_TABLE_H */
