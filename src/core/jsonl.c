/* Damage-tolerant JSON lines (see jsonl.h). */
#include "core/jsonl.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "core/say.h"

static int jsonl__blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            return 0;
    return 1;
}

/* Hands every whole JSON value of s[0..n) to fn, one after the other (two
 * records glued together by a lost newline are both kept); returns 1 when
 * something that is not a whole value was left over. */
static int jsonl__piece(const char *s, size_t n, void (*fn)(void *, json_object *, int), void *ctx,
                        int lineno, int *values)
{
    json_tokener *tok = json_tokener_new();
    if (!tok)
        return 1;
    size_t at = 0;
    int bad = 0;
    while (at < n && !jsonl__blank(s + at, n - at)) {
        json_tokener_reset(tok);
        json_object *v = json_tokener_parse_ex(tok, s + at, (int)(n - at));
        size_t end = json_tokener_get_parse_end(tok);
        if (!v || json_tokener_get_error(tok) != json_tokener_success || end == 0) {
            json_object_put(v);
            bad = 1;
            break;
        }
        (*values)++;
        fn(ctx, v, lineno);
        json_object_put(v);
        at += end;
    }
    json_tokener_free(tok);
    return bad;
}

void ckb_jsonl_each(const char *text, size_t len, void (*fn)(void *, json_object *, int),
                    void *ctx, ckb_jsonl_stats *st)
{
    memset(st, 0, sizeof *st);
    for (size_t pos = 0; pos < len;) {
        const char *line = text + pos;
        const char *nl = memchr(line, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - line) : len - pos;
        int lineno = ++st->lines;
        size_t start = pos;
        pos += n + (nl != NULL);
        /* pieces between runs of NUL bytes */
        int bad_here = 0, values_here = 0;
        for (size_t i = 0; i < n;) {
            if (line[i] == '\0') {
                st->nul_bytes++;
                if (!st->nul_line)
                    st->nul_line = lineno;
                i++;
                continue;
            }
            const char *z = memchr(line + i, '\0', n - i);
            size_t m = z ? (size_t)(z - (line + i)) : n - i;
            if (!jsonl__blank(line + i, m)) {
                int got = 0;
                bad_here += jsonl__piece(line + i, m, fn, ctx, lineno, &got);
                st->values += got;
                values_here += got;
            }
            i += m;
        }
        if (bad_here && !nl && values_here == 0) {
            st->last_cut = 1; /* cut by a kill mid-write */
            st->cut_at = start;
        } else if (bad_here) {
            st->bad += bad_here;
            if (!st->bad_line)
                st->bad_line = lineno;
        }
    }
}

void ckb_jsonl_warn(const char *path, const ckb_jsonl_stats *st)
{
    if (st->nul_bytes)
        ckb_say("ckbench: %s: skipped %ld NUL byte%s (from line %d on; what a crash can leave "
                "behind); the records around them were read\n",
                path, st->nul_bytes, st->nul_bytes == 1 ? "" : "s", st->nul_line);
    if (st->bad)
        ckb_say("ckbench: %s: skipped %d piece%s of text that %s not a whole JSON record (first "
                "at line %d); every whole record was read\n",
                path, st->bad, st->bad == 1 ? "" : "s", st->bad == 1 ? "is" : "are",
                st->bad_line);
}
