#include "report/table.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"


void ckb_table_add_col(ckb_table *t, const char *key, const char *head, int numeric)
{
    if (t->ncols == CKB_TABLE_MAXCOLS || t->nrows > 0)
        ckb_fatal("table column '%s' added too late or beyond %d", key, CKB_TABLE_MAXCOLS);
    t->keys[t->ncols] = ckb_xstrdup(key);
    t->heads[t->ncols] = ckb_xstrdup(head);
    t->numeric[t->ncols] = numeric;
    t->ncols++;
}

void ckb_table_init(ckb_table *t, int ncols, const char *const *cols)
{
    memset(t, 0, sizeof *t);
    for (int i = 0; i < ncols; i++) {
        const char *colon = strchr(cols[i], ':');
        size_t klen = colon ? (size_t)(colon - cols[i]) : strlen(cols[i]);
        char key[128];
        int numeric = klen > 0 && cols[i][klen - 1] == '#';
        snprintf(key, sizeof key, "%.*s", (int)(klen - (size_t)numeric), cols[i]);
        ckb_table_add_col(t, key, colon ? colon + 1 : key, numeric);
    }
}

int ckb_table_row(ckb_table *t, const char *key, const char *link)
{
    if (t->nrows == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 16;
        t->row_keys = ckb_xrealloc(t->row_keys, (size_t)t->cap * sizeof *t->row_keys);
        t->row_links = ckb_xrealloc(t->row_links, (size_t)t->cap * sizeof *t->row_links);
        t->cells = ckb_xrealloc(t->cells, (size_t)t->cap * CKB_TABLE_MAXCOLS * sizeof *t->cells);
    }
    int r = t->nrows++;
    t->row_keys[r] = ckb_xstrdup(key ? key : "");
    t->row_links[r] = link ? ckb_xstrdup(link) : NULL;
    memset(t->cells + (size_t)r * CKB_TABLE_MAXCOLS, 0, CKB_TABLE_MAXCOLS * sizeof *t->cells);
    return r;
}

void ckb_table_set(ckb_table *t, int row, int col, const char *fmt, ...)
{
    if (row < 0 || row >= t->nrows || col < 0 || col >= t->ncols)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    char **cell = &t->cells[(size_t)row * CKB_TABLE_MAXCOLS + (size_t)col];
    free(*cell);
    *cell = s;
}

int ckb_table_col(const ckb_table *t, const char *key)
{
    for (int i = 0; i < t->ncols; i++)
        if (strcmp(t->keys[i], key) == 0)
            return i;
    return -1;
}

const char *ckb_table_get(const ckb_table *t, int row, int col)
{
    const char *s = t->cells[(size_t)row * CKB_TABLE_MAXCOLS + (size_t)col];
    return s ? s : "";
}

void ckb_table_free(ckb_table *t)
{
    for (int i = 0; i < t->ncols; i++) {
        free(t->keys[i]);
        free(t->heads[i]);
    }
    for (int r = 0; r < t->nrows; r++) {
        free(t->row_keys[r]);
        free(t->row_links[r]);
        for (int c = 0; c < t->ncols; c++)
            free(t->cells[(size_t)r * CKB_TABLE_MAXCOLS + (size_t)c]);
    }
    free(t->row_keys);
    free(t->row_links);
    free(t->cells);
    memset(t, 0, sizeof *t);
}
