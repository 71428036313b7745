/*
 * writers.h — a report document (doc.h) written out. Both writers show
 * every block in order with the same text; they differ only in markup.
 */
#ifndef CKB_REPORT_WRITERS_H
#define CKB_REPORT_WRITERS_H

#include "core/strbuf.h"
#include "report/doc.h"

/* GitHub-flavoured Markdown. Figures become image links to their `file`
 * (the caller writes the .svg files beside report.md); code blocks are
 * fenced inside <details>. */
void ckb_report_write_md(const ckb_doc *d, ckb_strbuf *out);

/* One HTML page that needs nothing else: inline CSS, SVG figures inlined,
 * no script, no external resource; a contents list from the level-2
 * headings; every string escaped. */
void ckb_report_write_html(const ckb_doc *d, ckb_strbuf *out);

#endif /* CKB_REPORT_WRITERS_H */
