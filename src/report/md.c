/* The Markdown writer (see writers.h). */
#include <string.h>

#include "report/escape.h"
#include "report/writers.h"

static void md__fence(ckb_strbuf *o, int n)
{
    for (int i = 0; i < n; i++)
        ckb_strbuf_append(o, "`", 1);
}

static void md__anchor(ckb_strbuf *o, const char *id)
{
    ckb_strbuf_printf(o, "<a id=\"");
    ckb_esc_html(o, id);
    ckb_strbuf_printf(o, "\"></a>\n\n");
}

static void md__table(ckb_strbuf *o, const ckb_doc_block *b)
{
    const ckb_table *t = &b->table;
    if (b->id)
        md__anchor(o, b->id);
    if (b->text) {
        ckb_strbuf_printf(o, "*");
        ckb_esc_md(o, b->text);
        ckb_strbuf_printf(o, "*\n\n");
    }
    ckb_strbuf_printf(o, "|");
    for (int c = 0; c < t->ncols; c++) {
        ckb_strbuf_printf(o, " ");
        ckb_esc_md(o, t->heads[c]);
        ckb_strbuf_printf(o, " |");
    }
    ckb_strbuf_printf(o, "\n|");
    for (int c = 0; c < t->ncols; c++)
        ckb_strbuf_printf(o, "%s|", t->numeric[c] ? "---:" : "---");
    ckb_strbuf_printf(o, "\n");
    for (int r = 0; r < t->nrows; r++) {
        ckb_strbuf_printf(o, "|");
        for (int c = 0; c < t->ncols; c++) {
            ckb_strbuf_printf(o, " ");
            if (c == 0 && t->row_links[r]) {
                ckb_strbuf_printf(o, "[");
                ckb_esc_md(o, ckb_table_get(t, r, c));
                ckb_strbuf_printf(o, "](#");
                ckb_esc_html(o, t->row_links[r]);
                ckb_strbuf_printf(o, ")");
            } else {
                ckb_esc_md(o, ckb_table_get(t, r, c));
            }
            ckb_strbuf_printf(o, " |");
        }
        ckb_strbuf_printf(o, "\n");
    }
    ckb_strbuf_printf(o, "\n");
}

/* A fence longer than any run of backticks in the code, so none closes it. */
static int md__fence_len(const char *code)
{
    int longest = 0, run = 0;
    for (const char *p = code; *p; p++) {
        run = *p == '`' ? run + 1 : 0;
        if (run > longest)
            longest = run;
    }
    return longest < 3 ? 3 : longest + 1;
}

static void md__code(ckb_strbuf *o, const ckb_doc_block *b)
{
    const char *code = b->text ? b->text : "";
    int f = md__fence_len(code);
    ckb_strbuf_printf(o, "<details><summary>");
    ckb_esc_html(o, b->summary ? b->summary : "source");
    ckb_strbuf_printf(o, "</summary>\n\n");
    md__fence(o, f);
    ckb_strbuf_printf(o, "c\n");
    size_t n = strlen(code);
    ckb_strbuf_append(o, code, n);
    if (n && code[n - 1] != '\n')
        ckb_strbuf_printf(o, "\n");
    md__fence(o, f);
    ckb_strbuf_printf(o, "\n\n</details>\n\n");
}

void ckb_report_write_md(const ckb_doc *d, ckb_strbuf *o)
{
    ckb_strbuf_printf(o, "# ");
    ckb_esc_md(o, d->title ? d->title : "ckbench report");
    ckb_strbuf_printf(o, "\n\n");
    for (int i = 0; i < d->n; i++) {
        const ckb_doc_block *b = &d->b[i];
        switch (b->kind) {
        case CKB_DOC_HEADING:
            if (b->id)
                md__anchor(o, b->id);
            ckb_strbuf_printf(o, "%.*s ", b->level, "####");
            ckb_esc_md(o, b->text);
            ckb_strbuf_printf(o, "\n\n");
            break;
        case CKB_DOC_PARA:
            if (b->cls && strcmp(b->cls, "note") == 0)
                ckb_strbuf_printf(o, "> ");
            ckb_esc_md(o, b->text);
            ckb_strbuf_printf(o, "\n\n");
            break;
        case CKB_DOC_TABLE:
            md__table(o, b);
            break;
        case CKB_DOC_FIGURE:
            ckb_strbuf_printf(o, "![");
            ckb_esc_md(o, b->text ? b->text : "figure");
            ckb_strbuf_printf(o, "](%s)\n\n", b->file ? b->file : "");
            break;
        case CKB_DOC_CODE:
            md__code(o, b);
            break;
        }
    }
}
