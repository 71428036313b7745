/* A workload's reference as source text (see refsrc.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fsutil.h"
#include "core/strbuf.h"
#include "gen/refsrc.h"

#define REFSRC_MAX_FUNCS 32

typedef struct {
    const char *text; /* a whole source file */
    const char *path; /* as shown to the model */
} refsrc__file;

typedef struct {
    char name[96];
    const char *start, *end; /* the definition, its comment included */
    const refsrc__file *file;
} refsrc__func;

static int refsrc__ident(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* The definition of `name` in f (a line starting at column 0 whose
 * identifier `name(` is followed by a body), with the comment right above
 * it. 0 when found. */
static int refsrc__find(const refsrc__file *f, const char *name, refsrc__func *out)
{
    size_t nl = strlen(name);
    for (const char *p = strstr(f->text, name); p; p = strstr(p + 1, name)) {
        if ((p > f->text && refsrc__ident(p[-1])) || p[nl] != '(')
            continue;
        const char *line = p;
        while (line > f->text && line[-1] != '\n')
            line--;
        if (isspace((unsigned char)*line) || *line == '#' || *line == '/' || *line == '*')
            continue; /* inside a body, a macro or a comment: a call, not a definition */
        const char *q = p + nl;
        int depth = 0;
        for (; *q; q++) {
            if (*q == '(')
                depth++;
            else if (*q == ')' && --depth == 0)
                break;
        }
        if (!*q)
            return -1;
        q++;
        while (isspace((unsigned char)*q))
            q++;
        if (*q != '{')
            continue; /* a prototype */
        depth = 0;
        for (; *q; q++) {
            if (*q == '{')
                depth++;
            else if (*q == '}' && --depth == 0)
                break;
        }
        if (!*q)
            return -1;
        /* The comment block ending on the line above, if any. */
        const char *start = line;
        if (start > f->text + 1) {
            const char *prev = start - 1; /* the '\n' ending the line above */
            const char *pl = prev;
            while (pl > f->text && pl[-1] != '\n')
                pl--;
            if (prev - pl >= 2 && strncmp(prev - 2, "*/", 2) == 0) {
                const char *c = prev;
                while (c > f->text && strncmp(c, "/*", 2) != 0)
                    c--;
                while (c > f->text && c[-1] != '\n')
                    c--;
                start = c;
            }
        }
        snprintf(out->name, sizeof out->name, "%s", name);
        out->start = start;
        out->end = q + 1;
        out->file = f;
        return 0;
    }
    return -1;
}

/* Calls inside a definition that name functions defined in one of files[]
 * and not yet in funcs[]: appended to funcs (callers before callees). */
static void refsrc__callees(const refsrc__func *fn, const refsrc__file *files, int nfiles,
                            refsrc__func *funcs, int *n, const char *const *skip)
{
    for (const char *p = fn->start; p < fn->end; p++) {
        if (!refsrc__ident(*p) || (p > fn->start && refsrc__ident(p[-1])))
            continue;
        const char *e = p;
        while (e < fn->end && refsrc__ident(*e))
            e++;
        if (*e != '(' || e - p >= 96 || isdigit((unsigned char)*p)) {
            p = e - 1 > p ? e - 1 : p;
            continue;
        }
        char name[96];
        snprintf(name, sizeof name, "%.*s", (int)(e - p), p);
        p = e - 1;
        int known = 0;
        for (int i = 0; i < *n && !known; i++)
            known = strcmp(funcs[i].name, name) == 0;
        for (int i = 0; skip[i] && !known; i++)
            known = strcmp(skip[i], name) == 0;
        if (known || *n == REFSRC_MAX_FUNCS)
            continue;
        for (int f = 0; f < nfiles; f++)
            if (refsrc__find(&files[f], name, &funcs[*n]) == 0) {
                (*n)++;
                break;
            }
    }
}

/* The reference's name: `.reference = NAME,` in the registry entry. */
static int refsrc__reference_name(const char *text, char *name, size_t n)
{
    const char *p = strstr(text, ".reference =");
    if (!p)
        return -1;
    p += strlen(".reference =");
    while (*p == ' ')
        p++;
    size_t len = 0;
    while (refsrc__ident(p[len]))
        len++;
    if (len == 0 || len >= n)
        return -1;
    snprintf(name, n, "%.*s", (int)len, p);
    return 0;
}

/* The file's first comment, its #define lines and its top-level enums. */
static void refsrc__preamble(const char *text, ckb_strbuf *sb)
{
    if (strncmp(text, "/*", 2) == 0) {
        const char *e = strstr(text, "*/");
        if (e)
            ckb_strbuf_printf(sb, "%.*s\n\n", (int)(e + 2 - text), text);
    }
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        const char *eol = strchr(l, '\n');
        size_t len = eol ? (size_t)(eol - l) : strlen(l);
        if (strncmp(l, "#define ", 8) == 0 || strncmp(l, "enum ", 5) == 0) {
            const char *end = l + len;
            if (strncmp(l, "enum ", 5) == 0 && !memchr(l, ';', len)) {
                const char *semi = strstr(l, "};");
                if (semi)
                    end = semi + 2;
            }
            ckb_strbuf_printf(sb, "%.*s\n", (int)(end - l), l);
        }
    }
}

char *ckb_gen_reference_source(const ckb_workload *w, char *err, size_t errlen)
{
    char path[1024], opsh[1024], opsc[1024], refc[1024], name[96];
    char *texts[4] = {0}, *out = NULL;
    snprintf(path, sizeof path, "%s/workloads/%s/workload.c", ckb_home(), w->id);
    snprintf(opsh, sizeof opsh, "%s/src/workloads/ops.h", ckb_home());
    snprintf(opsc, sizeof opsc, "%s/src/workloads/ops.c", ckb_home());
    snprintf(refc, sizeof refc, "%s/src/workloads/reference.c", ckb_home());
    texts[0] = ckb_read_file(path, NULL);
    if (!texts[0]) {
        snprintf(err, errlen, "cannot read %s (is CKBENCH_HOME the project folder?)", path);
        goto cleanup;
    }
    if (refsrc__reference_name(texts[0], name, sizeof name) != 0) {
        snprintf(err, errlen, "%s names no .reference function", path);
        goto cleanup;
    }
    texts[1] = ckb_read_file(opsh, NULL);
    texts[2] = ckb_read_file(opsc, NULL);
    texts[3] = ckb_read_file(refc, NULL);
    refsrc__file files[4];
    int nfiles = 0;
    const char *paths[4] = {path, "src/workloads/ops.h", "src/workloads/ops.c",
                            "src/workloads/reference.c"};
    for (int i = 0; i < 4; i++)
        if (texts[i])
            files[nfiles++] = (refsrc__file){texts[i], paths[i]};
    refsrc__func funcs[REFSRC_MAX_FUNCS];
    int n = 0;
    if (refsrc__find(&files[0], name, &funcs[0]) != 0) {
        snprintf(err, errlen, "%s: no definition of %s", path, name);
        goto cleanup;
    }
    n = 1;
    /* The candidate already has these (ckbench.h) or never needs them. */
    static const char *const skip[] = {"ckb_bf16_to_f32", "ckb_f32_to_bf16", "ckb_hash64",
                                       "ckb_uniform", "sizeof", "if", "for", "while",
                                       "switch", "return", NULL};
    for (int i = 0; i < n; i++)
        refsrc__callees(&funcs[i], files, nfiles, funcs, &n, skip);
    ckb_strbuf sb = {0};
    refsrc__preamble(texts[0], &sb);
    /* Callees first, so the text reads top-down like a C file. */
    for (int i = n - 1; i >= 0; i--) {
        if (funcs[i].file != &files[0])
            ckb_strbuf_printf(&sb, "\n/* from %s */\n", funcs[i].file->path);
        else
            ckb_strbuf_printf(&sb, "\n");
        ckb_strbuf_append(&sb, funcs[i].start, (size_t)(funcs[i].end - funcs[i].start));
        ckb_strbuf_printf(&sb, "\n");
    }
    out = ckb_strbuf_take(&sb);
cleanup:
    for (int i = 0; i < 4; i++)
        free(texts[i]);
    return out;
}

char *ckb_gen_readme_intro(const ckb_workload *w)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/workloads/%s/README.md", ckb_home(), w->id);
    char *text = ckb_read_file(path, NULL);
    if (!text)
        return NULL;
    char *body = strchr(text, '\n'); /* skip the "# id" title */
    char *out = NULL;
    if (body) {
        body++;
        char *end = strstr(body, "\n## ");
        size_t len = end ? (size_t)(end - body) : strlen(body);
        while (len && isspace((unsigned char)*body))
            body++, len--;
        while (len && isspace((unsigned char)body[len - 1]))
            len--;
        if (len)
            out = strndup(body, len);
    }
    free(text);
    return out;
}
