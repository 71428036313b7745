/* Kernel extraction from a model's reply (see extract.h). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/strbuf.h"
#include "gen/extract.h"

typedef struct {
    const char *start; /* first byte of the block's content */
    size_t len;
    int is_c;          /* labelled c/cpp/c++/h or unlabelled */
} extract__block;

#define EXTRACT_MAX_BLOCKS 64

/* The reply with every "\r\n" (and a lone '\r') as '\n'. */
static char *extract__normalize(const char *s)
{
    size_t n = strlen(s);
    char *out = ckb_xmalloc(n + 1), *o = out;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\r') {
            if (s[i + 1] != '\n')
                *o++ = '\n';
            continue;
        }
        *o++ = s[i];
    }
    *o = 0;
    return out;
}

static int extract__ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

int ckb_gen_defines(const char *text, const char *entry)
{
    size_t el = strlen(entry);
    for (const char *p = strstr(text, entry); p; p = strstr(p + 1, entry)) {
        if ((p > text && extract__ident_char(p[-1])) || extract__ident_char(p[el]))
            continue;
        const char *q = p + el;
        while (isspace((unsigned char)*q))
            q++;
        if (*q != '(')
            continue;
        int depth = 0;
        for (; *q; q++) {
            if (*q == '(')
                depth++;
            else if (*q == ')' && --depth == 0)
                break;
        }
        if (!*q)
            return 0;
        q++;
        while (isspace((unsigned char)*q))
            q++;
        if (*q == '{')
            return 1;
    }
    return 0;
}

/* Whether a fence's info string names C (or nothing): ```c, ```cpp, ```C++. */
static int extract__lang_is_c(const char *info, size_t n)
{
    while (n && isspace((unsigned char)*info))
        info++, n--;
    size_t w = 0;
    while (w < n && !isspace((unsigned char)info[w]))
        w++;
    if (w == 0)
        return 1;
    static const char *langs[] = {"c", "cpp", "c++", "cc", "h", "cxx", "c11", "c99", "gnu11"};
    for (size_t i = 0; i < sizeof langs / sizeof *langs; i++)
        if (strlen(langs[i]) == w && strncasecmp(info, langs[i], w) == 0)
            return 1;
    return 0;
}

/* The fenced blocks of s (already LF-only). A fence opens on a line that
 * starts (after indentation) with ``` and closes on a line that is ``` or
 * ends with it; an unterminated block runs to the end. */
static int extract__blocks(const char *s, extract__block *b, int max)
{
    int n = 0;
    const char *line = s;
    extract__block *open = NULL;
    while (*line) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);
        const char *t = line;
        while (t < line + len && (*t == ' ' || *t == '\t'))
            t++;
        int starts_fence = (size_t)(line + len - t) >= 3 && strncmp(t, "```", 3) == 0;
        if (!open) {
            if (starts_fence && n < max) {
                open = &b[n++];
                open->is_c = extract__lang_is_c(t + 3, (size_t)(line + len - t - 3));
                open->start = eol ? eol + 1 : line + len;
                open->len = 0;
            }
        } else {
            const char *e = line + len;
            while (e > line && isspace((unsigned char)e[-1]))
                e--;
            if (e - line >= 3 && strncmp(e - 3, "```", 3) == 0) {
                /* Code before a closing fence on the same line ("}```") is kept. */
                open->len = (size_t)(e - 3 - open->start);
                open = NULL;
            }
        }
        if (!eol)
            break;
        line = eol + 1;
    }
    if (open)
        open->len = strlen(open->start);
    return n;
}

/* Whether a line starts like C code rather than prose. */
static int extract__code_line(const char *l)
{
    static const char *starts[] = {"#include", "#define", "#pragma", "#if", "static ", "void ",
                                   "typedef ", "//", "/*", "int ", "float ", "double ",
                                   "const ", "inline ", "struct ", "extern ", "unsigned ",
                                   "uint", "int64_t", "size_t"};
    for (size_t i = 0; i < sizeof starts / sizeof *starts; i++)
        if (strncmp(l, starts[i], strlen(starts[i])) == 0)
            return 1;
    return 0;
}

/* Bare code: from the first code-like line at column 0 to the end of the
 * last line that starts with '}' (the end of the last top-level body). */
static char *extract__bare(const char *s, const char *entry)
{
    if (!ckb_gen_defines(s, entry) && !strstr(s, "#include"))
        return NULL;
    const char *start = NULL, *end = NULL;
    for (const char *l = s; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (!start && extract__code_line(l))
            start = l;
        if (start && *l == '}') {
            const char *eol = strchr(l, '\n');
            end = eol ? eol : l + strlen(l);
        }
    }
    if (!start || !end || end <= start)
        return NULL;
    ckb_strbuf sb = {0};
    ckb_strbuf_append(&sb, start, (size_t)(end - start));
    ckb_strbuf_append(&sb, "\n", 1);
    return ckb_strbuf_take(&sb);
}

static int extract__blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isspace((unsigned char)s[i]))
            return 0;
    return 1;
}

char *ckb_gen_extract(const char *reply, const char *entry)
{
    if (!reply)
        return NULL;
    char *s = extract__normalize(reply), *out = NULL;
    if (!s)
        return NULL;
    extract__block b[EXTRACT_MAX_BLOCKS];
    int n = extract__blocks(s, b, EXTRACT_MAX_BLOCKS);
    if (n == 0) {
        out = extract__bare(s, entry);
        goto cleanup;
    }
    int pick = -1, longest = -1;
    for (int i = 0; i < n; i++) {
        if (!b[i].is_c || extract__blank(b[i].start, b[i].len))
            continue;
        char *text = ckb_xstrndup(b[i].start, b[i].len);
        if (text && ckb_gen_defines(text, entry))
            pick = i; /* the last definition wins: the model's final answer */
        free(text);
        if (longest < 0 || b[i].len > b[longest].len)
            longest = i;
    }
    if (pick < 0)
        pick = longest;
    if (pick >= 0) {
        size_t len = b[pick].len;
        /* One trailing newline, whatever the fence left. */
        while (len && (b[pick].start[len - 1] == '\n' || b[pick].start[len - 1] == ' '))
            len--;
        ckb_strbuf sb = {0};
        ckb_strbuf_append(&sb, b[pick].start, len);
        ckb_strbuf_append(&sb, "\n", 1);
        out = ckb_strbuf_take(&sb);
    }
cleanup:
    free(s);
    return out;
}
