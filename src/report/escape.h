/*
 * escape.h — text from result files made safe for the page it lands in.
 * Every string a report writes into HTML or SVG passes through
 * ckb_esc_html (error messages and kernel sources come from untrusted
 * candidates); every table cell of the Markdown through ckb_esc_md.
 */
#ifndef CKB_REPORT_ESCAPE_H
#define CKB_REPORT_ESCAPE_H

#include "core/strbuf.h"

/* Appends s with & < > " ' as character references: safe in element text
 * and in double- or single-quoted attribute values. NULL appends nothing. */
void ckb_esc_html(ckb_strbuf *sb, const char *s);

/* Appends s for one Markdown table cell: | and \ escaped, < > & as
 * references (so no inline HTML survives), newlines and tabs as spaces. */
void ckb_esc_md(ckb_strbuf *sb, const char *s);

/* Writes an HTML id made from s: letters, digits, - and _ kept, anything
 * else as '-', prefixed by `prefix` (ids must not start with a digit for
 * CSS selectors). */
void ckb_esc_id(char *buf, size_t n, const char *prefix, const char *s);

#endif /* CKB_REPORT_ESCAPE_H */
