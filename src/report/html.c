/* The HTML writer (see writers.h). */
#include <string.h>

#include "report/escape.h"
#include "report/writers.h"

/* The page's only style; system fonts, nothing fetched. */
static const char html__css[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0;"
    "color:#1b1f24;background:#fafafa;line-height:1.45}"
    "header{background:#1f3a5f;color:#fff;padding:14px 28px}header h1{margin:0;font-size:22px}"
    "nav{padding:8px 28px;background:#e9eef5;font-size:14px}nav ul{margin:0;padding:0}"
    "nav li{display:inline;margin-right:18px}"
    "main{padding:8px 28px 40px;max-width:1400px;box-sizing:border-box}"
    "h2{border-bottom:2px solid #1f3a5f;padding-bottom:3px;margin-top:34px}"
    "h3{margin-top:26px}h4{margin:18px 0 6px}"
    ".table-wrap{overflow-x:auto}"
    "table{border-collapse:collapse;font-size:13px;margin:8px 0 16px;background:#fff;"
    "max-width:100%}"
    "caption{text-align:left;font-style:italic;padding:4px 0;color:#444}"
    "th,td{border:1px solid #d0d7de;padding:3px 8px;white-space:normal;overflow-wrap:anywhere}"
    "th{background:#f0f3f6;text-align:left}td.num{text-align:right;white-space:nowrap;"
    "font-variant-numeric:tabular-nums}tbody tr:nth-child(even){background:#f6f8fa}"
    "td.st-bad{color:#b00020;font-weight:bold}td.st-ok{color:#116329}"
    "td.wrap{white-space:normal;max-width:520px}"
    "figure{margin:10px 0 22px}figcaption{font-size:13px;color:#444;max-width:900px}"
    "svg{background:#fff;border:1px solid #d0d7de;max-width:100%;height:auto}"
    "p.note{color:#555;font-size:13px;border-left:3px solid #c8d1dc;padding-left:8px}"
    "details{margin:6px 0 14px}summary{cursor:pointer;color:#1f3a5f}"
    "pre{background:#f6f8fa;border:1px solid #d0d7de;padding:10px;overflow-x:auto;"
    "font-size:12px;max-height:600px}"
    "footer{padding:12px 28px;color:#777;font-size:12px}";

static void html__attr(ckb_strbuf *o, const char *name, const char *v)
{
    if (!v)
        return;
    ckb_strbuf_printf(o, " %s=\"", name);
    ckb_esc_html(o, v);
    ckb_strbuf_printf(o, "\"");
}

static void html__table(ckb_strbuf *o, const ckb_doc_block *b)
{
    const ckb_table *t = &b->table;
    ckb_strbuf_printf(o, "<div class=\"table-wrap\"><table");
    html__attr(o, "id", b->id);
    ckb_strbuf_printf(o, ">\n");
    if (b->text) {
        ckb_strbuf_printf(o, "<caption>");
        ckb_esc_html(o, b->text);
        ckb_strbuf_printf(o, "</caption>\n");
    }
    ckb_strbuf_printf(o, "<thead><tr>");
    for (int c = 0; c < t->ncols; c++) {
        ckb_strbuf_printf(o, "<th");
        html__attr(o, "data-col", t->keys[c]);
        ckb_strbuf_printf(o, ">");
        ckb_esc_html(o, t->heads[c]);
        ckb_strbuf_printf(o, "</th>");
    }
    ckb_strbuf_printf(o, "</tr></thead>\n<tbody>\n");
    for (int r = 0; r < t->nrows; r++) {
        ckb_strbuf_printf(o, "<tr");
        html__attr(o, "data-row", t->row_keys[r]);
        ckb_strbuf_printf(o, ">");
        for (int c = 0; c < t->ncols; c++) {
            const char *v = ckb_table_get(t, r, c), *k = t->keys[c];
            size_t kl = strlen(k);
            const char *cls = t->numeric[c] ? "num" : NULL;
            /* Status columns stand out when something failed. */
            if (kl >= 6 && strcmp(k + kl - 6, "status") == 0 && *v && strcmp(v, "-") != 0)
                cls = strcmp(v, "ok") == 0 ? "st-ok" : "st-bad";
            else if (strlen(v) > 80)
                cls = "wrap";
            ckb_strbuf_printf(o, "<td");
            html__attr(o, "data-col", k);
            html__attr(o, "class", cls);
            ckb_strbuf_printf(o, ">");
            if (c == 0 && t->row_links[r]) {
                ckb_strbuf_printf(o, "<a href=\"#");
                ckb_esc_html(o, t->row_links[r]);
                ckb_strbuf_printf(o, "\">");
                ckb_esc_html(o, v);
                ckb_strbuf_printf(o, "</a>");
            } else {
                ckb_esc_html(o, v);
            }
            ckb_strbuf_printf(o, "</td>");
        }
        ckb_strbuf_printf(o, "</tr>\n");
    }
    ckb_strbuf_printf(o, "</tbody></table></div>\n");
}

void ckb_report_write_html(const ckb_doc *d, ckb_strbuf *o)
{
    const char *title = d->title ? d->title : "ckbench report";
    /* The policy makes the page's promise checkable: no script runs and
     * nothing is fetched, even if some text escaped its escaping. */
    ckb_strbuf_printf(o, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                         "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
                         "'none'; style-src 'unsafe-inline'\">\n"
                         "<meta name=\"viewport\" content=\"width=device-width, "
                         "initial-scale=1\">\n<title>");
    ckb_esc_html(o, title);
    ckb_strbuf_printf(o, "</title>\n<style>%s</style>\n</head>\n<body>\n<header><h1>", html__css);
    ckb_esc_html(o, title);
    ckb_strbuf_printf(o, "</h1></header>\n<nav><ul>");
    for (int i = 0; i < d->n; i++)
        if (d->b[i].kind == CKB_DOC_HEADING && d->b[i].level == 2 && d->b[i].id) {
            ckb_strbuf_printf(o, "<li><a href=\"#");
            ckb_esc_html(o, d->b[i].id);
            ckb_strbuf_printf(o, "\">");
            ckb_esc_html(o, d->b[i].text);
            ckb_strbuf_printf(o, "</a></li>");
        }
    ckb_strbuf_printf(o, "</ul></nav>\n<main>\n");
    for (int i = 0; i < d->n; i++) {
        const ckb_doc_block *b = &d->b[i];
        switch (b->kind) {
        case CKB_DOC_HEADING:
            ckb_strbuf_printf(o, "<h%d", b->level);
            html__attr(o, "id", b->id);
            ckb_strbuf_printf(o, ">");
            ckb_esc_html(o, b->text);
            ckb_strbuf_printf(o, "</h%d>\n", b->level);
            break;
        case CKB_DOC_PARA:
            ckb_strbuf_printf(o, "<p");
            html__attr(o, "class", b->cls);
            ckb_strbuf_printf(o, ">");
            ckb_esc_html(o, b->text);
            ckb_strbuf_printf(o, "</p>\n");
            break;
        case CKB_DOC_TABLE:
            html__table(o, b);
            break;
        case CKB_DOC_FIGURE:
            ckb_strbuf_printf(o, "<figure");
            html__attr(o, "id", b->id);
            /* The SVG was built by svg.c, which escapes every string in it. */
            ckb_strbuf_printf(o, ">\n%s<figcaption>", b->svg ? b->svg : "");
            ckb_esc_html(o, b->text);
            ckb_strbuf_printf(o, "</figcaption></figure>\n");
            break;
        case CKB_DOC_CODE:
            ckb_strbuf_printf(o, "<details class=\"code\"><summary>");
            ckb_esc_html(o, b->summary ? b->summary : "source");
            ckb_strbuf_printf(o, "</summary><pre><code>");
            ckb_esc_html(o, b->text);
            ckb_strbuf_printf(o, "</code></pre></details>\n");
            break;
        }
    }
    ckb_strbuf_printf(o, "</main>\n<footer>Written by <code>ckbench report</code>; "
                         "self-contained: no script, no external resource.</footer>\n"
                         "</body>\n</html>\n");
}
