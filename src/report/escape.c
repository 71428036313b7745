#include "report/escape.h"

#include <stdio.h>
#include <string.h>

/* Appends s, replacing each character that rep() maps to a string. */
static void escape__run(ckb_strbuf *sb, const char *s, const char *(*rep)(char))
{
    if (!s)
        return;
    const char *run = s;
    for (const char *p = s;; p++) {
        const char *r = *p ? rep(*p) : NULL;
        if (r || !*p) {
            ckb_strbuf_append(sb, run, (size_t)(p - run));
            if (!*p)
                break;
            ckb_strbuf_append(sb, r, strlen(r));
            run = p + 1;
        }
    }
}

static const char *escape__html_char(char c)
{
    switch (c) {
    case '&': return "&amp;";
    case '<': return "&lt;";
    case '>': return "&gt;";
    case '"': return "&quot;";
    case '\'': return "&#39;";
    default: return NULL;
    }
}

static const char *escape__md_char(char c)
{
    switch (c) {
    case '|': return "\\|";
    case '\\': return "\\\\";
    case '&': return "&amp;";
    case '<': return "&lt;";
    case '>': return "&gt;";
    case '\n': case '\r': case '\t': return " ";
    default: return NULL;
    }
}

void ckb_esc_html(ckb_strbuf *sb, const char *s) { escape__run(sb, s, escape__html_char); }

void ckb_esc_md(ckb_strbuf *sb, const char *s) { escape__run(sb, s, escape__md_char); }

void ckb_esc_id(char *buf, size_t n, const char *prefix, const char *s)
{
    if (n == 0)
        return;
    size_t used = (size_t)snprintf(buf, n, "%s", prefix);
    if (used >= n)
        return;
    for (const char *p = s ? s : ""; *p && used + 1 < n; p++) {
        char c = *p;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '-' || c == '_';
        buf[used++] = ok ? c : '-';
    }
    if (used < n)
        buf[used] = '\0';
}
