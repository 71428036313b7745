/*
 * test_arch.c — the module order of docs/DESIGN.md ("Module picture") is
 * the one the code keeps. The order is written once, in DESIGN.md's line
 * "Module order: `core` < `workloads` < ..."; this test reads it there, reads
 * every `#include "module/file.h"` of src/, and fails on
 *   - a folder of src/ missing from the order, or a name of the order that
 *     is no folder (or is named twice);
 *   - an include of a module later in the order (a back-arrow);
 *   - a row of DESIGN.md's module table whose "includes headers of" column
 *     is not the set of modules the module's files include;
 *   - two files of one module that include each other's header (a.c
 *     includes m/b.h while b.c includes m/a.h): a circle between files.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fsutil.h"
#include "harness.h"

enum { ARCH_MAX_MODULES = 32, ARCH_MAX_FILES = 64, ARCH_NAME = 64 };

typedef struct {
    char name[ARCH_NAME];
    int folder;                   /* 1: src/<name>/ exists */
    int uses[ARCH_MAX_MODULES];   /* uses[j]: a file of this module includes module j */
    int nfiles;
    char files[ARCH_MAX_FILES][ARCH_NAME]; /* the .c files' stems: "compile" */
    char incl[ARCH_MAX_FILES][1024];       /* per .c file: " x y " for each "m/x.h" of its
                                              own module it includes */
} arch_module;

typedef struct {
    arch_module m[ARCH_MAX_MODULES];
    int n;             /* modules in the order */
    char order[512];   /* the order as DESIGN.md writes it, for messages */
} arch_graph;

static int arch_index(const arch_graph *g, const char *name, size_t len)
{
    for (int i = 0; i < g->n; i++)
        if (strlen(g->m[i].name) == len && strncmp(g->m[i].name, name, len) == 0)
            return i;
    return -1;
}

/* The text of DESIGN.md's "## Module picture" section (a pointer into
 * design, and its length). */
static const char *arch_section(const char *design, size_t *len)
{
    const char *s = strstr(design, "\n## Module picture\n");
    if (!s)
        return NULL;
    s++;
    const char *e = strstr(s + 3, "\n## ");
    *len = e ? (size_t)(e - s) : strlen(s);
    return s;
}

/* Parses "Module order: `a` < `b` < ..." from the section. 0, or -1. */
static int arch_parse_order(arch_graph *g, const char *sec, size_t len)
{
    static const char key[] = "\nModule order: ";
    const char *p = memmem(sec, len, key, sizeof key - 1);
    CKBT_EXPECT(p != NULL, "docs/DESIGN.md's module picture has a line \"Module order: `core` < ...\"");
    if (!p)
        return -1;
    p += sizeof key - 1;
    const char *eol = strchr(p, '\n');
    if (!eol)
        eol = p + strlen(p);
    snprintf(g->order, sizeof g->order, "%.*s", (int)(eol - p), p);
    for (;;) {
        if (*p != '`')
            break;
        const char *q = memchr(p + 1, '`', (size_t)(eol - p - 1));
        if (!q || q == p + 1 || q - p - 1 >= ARCH_NAME || g->n == ARCH_MAX_MODULES)
            break;
        CKBT_EXPECT(arch_index(g, p + 1, (size_t)(q - p - 1)) < 0,
                    "the module order names %.*s twice", (int)(q - p - 1), p + 1);
        snprintf(g->m[g->n++].name, ARCH_NAME, "%.*s", (int)(q - p - 1), p + 1);
        p = q + 1;
        if (p == eol)
            return 0;
        if (strncmp(p, " < ", 3) != 0)
            break;
        p += 3;
    }
    CKBT_EXPECT(0, "the module order is `a` < `b` < ... and nothing else on its line: %s",
                g->order);
    return -1;
}

/* The module and the rest of the path of an include line ("#include
 * \"m/x.h\"", spaces allowed after '#'), or 0 when the line is none. */
static int arch_include(const char *line, const char **mod, size_t *modlen, const char **rest,
                        size_t *restlen)
{
    while (*line == ' ' || *line == '\t')
        line++;
    if (*line++ != '#')
        return 0;
    while (*line == ' ' || *line == '\t')
        line++;
    if (strncmp(line, "include", 7) != 0)
        return 0;
    line += 7;
    while (*line == ' ' || *line == '\t')
        line++;
    if (*line++ != '"')
        return 0;
    const char *slash = line;
    while (*slash && (islower((unsigned char)*slash) || *slash == '_'))
        slash++;
    if (*slash != '/' || slash == line)
        return 0; /* "ckbench.h", a sibling "x.h": no module named */
    const char *end = strchr(slash, '"');
    if (!end)
        return 0;
    *mod = line;
    *modlen = (size_t)(slash - line);
    *rest = slash + 1;
    *restlen = (size_t)(end - slash - 1);
    return 1;
}

static void arch_scan_file(arch_graph *g, int mi, const char *name)
{
    arch_module *m = &g->m[mi];
    char path[512];
    snprintf(path, sizeof path, "src/%s/%s", m->name, name);
    char *text = ckb_read_file(path, NULL);
    CKBT_EXPECT(text != NULL, "cannot read %s", path);
    if (!text)
        return;
    int fi = -1;
    size_t len = strlen(name);
    if (len > 2 && strcmp(name + len - 2, ".c") == 0 && len - 2 < ARCH_NAME) {
        CKBT_EXPECT(m->nfiles < ARCH_MAX_FILES, "src/%s has more than %d .c files: raise "
                                                "ARCH_MAX_FILES", m->name, ARCH_MAX_FILES);
        if (m->nfiles < ARCH_MAX_FILES) {
            fi = m->nfiles++;
            snprintf(m->files[fi], ARCH_NAME, "%.*s", (int)(len - 2), name);
            snprintf(m->incl[fi], sizeof m->incl[fi], " ");
        }
    }
    int lineno = 1;
    for (char *l = text; *l; lineno++) {
        char *nl = strchr(l, '\n');
        if (nl)
            *nl = '\0';
        const char *mod, *rest;
        size_t modlen, restlen;
        if (arch_include(l, &mod, &modlen, &rest, &restlen)) {
            int to = arch_index(g, mod, modlen);
            CKBT_EXPECT(to >= 0,
                        "%s:%d includes \"%.*s/%.*s\": %.*s is no module of the order (%s)", path,
                        lineno, (int)modlen, mod, (int)restlen, rest, (int)modlen, mod, g->order);
            if (to >= 0 && to != mi) {
                m->uses[to] = 1;
                CKBT_EXPECT(to < mi,
                            "%s:%d includes \"%s/%.*s\": a back-arrow %s -> %s against the "
                            "module order of docs/DESIGN.md (%s)",
                            path, lineno, g->m[to].name, (int)restlen, rest, m->name,
                            g->m[to].name, g->order);
            }
            if (to == mi && fi >= 0 && restlen > 2 && memcmp(rest + restlen - 2, ".h", 2) == 0) {
                size_t used = strlen(m->incl[fi]);
                snprintf(m->incl[fi] + used, sizeof m->incl[fi] - used, "%.*s ",
                         (int)(restlen - 2), rest);
            }
        }
        if (!nl)
            break;
        l = nl + 1;
    }
    free(text);
}

/* Reads src/: which folders exist, and every include of their files. */
static void arch_scan(arch_graph *g)
{
    DIR *d = opendir("src");
    CKBT_EXPECT(d != NULL, "cannot open src/ (the tests run from the repository's root)");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        int mi = arch_index(g, e->d_name, strlen(e->d_name));
        CKBT_EXPECT(mi >= 0, "src/%s/ is missing from the module order of docs/DESIGN.md (%s)",
                    e->d_name, g->order);
        if (mi < 0)
            continue;
        g->m[mi].folder = 1;
    }
    closedir(d);
    for (int mi = 0; mi < g->n; mi++) {
        CKBT_EXPECT(g->m[mi].folder, "the module order names %s, which is no folder of src/",
                    g->m[mi].name);
        if (!g->m[mi].folder)
            continue;
        char dir[256];
        snprintf(dir, sizeof dir, "src/%s", g->m[mi].name);
        /* In name order, so that messages come in the same order each run. */
        struct dirent **names;
        int k = scandir(dir, &names, NULL, alphasort);
        CKBT_EXPECT(k >= 0, "cannot open %s", dir);
        for (int i = 0; i < k; i++) {
            size_t len = strlen(names[i]->d_name);
            if (len > 2 && (strcmp(names[i]->d_name + len - 2, ".c") == 0 ||
                            strcmp(names[i]->d_name + len - 2, ".h") == 0))
                arch_scan_file(g, mi, names[i]->d_name);
            free(names[i]);
        }
        if (k >= 0)
            free(names);
    }
}

/* The modules a table row names ("core, workloads (and ...)", or "—"),
 * as a set over the order's indices; -1 in *bad for a name not in it. */
static void arch_row_set(const arch_graph *g, const char *cell, size_t len, int *set, int *bad)
{
    char buf[1024];
    size_t k = 0;
    int depth = 0;
    for (size_t i = 0; i < len && k < sizeof buf - 1; i++) { /* drop "(...)" */
        if (cell[i] == '(')
            depth++;
        else if (cell[i] == ')')
            depth--;
        else if (depth == 0)
            buf[k++] = cell[i];
    }
    buf[k] = '\0';
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        while (*t == ' ')
            t++;
        size_t n = strlen(t);
        while (n && t[n - 1] == ' ')
            n--;
        if (n == 0 || (n == 3 && memcmp(t, "—", 3) == 0))
            continue;
        int i = arch_index(g, t, n);
        if (i < 0)
            *bad = 1;
        else
            set[i] = 1;
    }
}

/* Each "| `m/` | ... | deps |" row of the section against what m's files
 * include; every module has a row. */
static void arch_check_table(const arch_graph *g, const char *sec, size_t len)
{
    int row[ARCH_MAX_MODULES] = {0};
    const char *end = sec + len;
    for (const char *l = sec; l < end;) {
        const char *nl = memchr(l, '\n', (size_t)(end - l));
        if (!nl)
            nl = end;
        if (strncmp(l, "| `", 3) == 0) {
            const char *slash = memchr(l + 3, '/', (size_t)(nl - l - 3));
            const char *last = nl;
            while (last > l && last[-1] != '|')
                last--;
            last--; /* the row's closing '|' */
            const char *prev = last;
            while (prev > l && prev[-1] != '|')
                prev--;
            int mi = slash ? arch_index(g, l + 3, (size_t)(slash - l - 3)) : -1;
            if (mi >= 0 && prev > l && last > prev) {
                int set[ARCH_MAX_MODULES] = {0}, bad = 0;
                row[mi] = 1;
                arch_row_set(g, prev, (size_t)(last - prev), set, &bad);
                CKBT_EXPECT(!bad, "docs/DESIGN.md's row for %s/ names a module not in the order: "
                                  "%.*s",
                            g->m[mi].name, (int)(last - prev), prev);
                for (int j = 0; j < g->n; j++) {
                    CKBT_EXPECT(set[j] || !g->m[mi].uses[j],
                                "%s/ includes headers of %s/, which its row in docs/DESIGN.md's "
                                "module table does not name",
                                g->m[mi].name, g->m[j].name);
                    CKBT_EXPECT(!set[j] || g->m[mi].uses[j],
                                "docs/DESIGN.md's module table says %s/ includes headers of %s/; "
                                "none of its files does",
                                g->m[mi].name, g->m[j].name);
                }
            }
        }
        l = nl + 1;
    }
    for (int i = 0; i < g->n; i++)
        CKBT_EXPECT(row[i], "docs/DESIGN.md's module table has no row \"| `%s/` | ...\"",
                    g->m[i].name);
}

/* No two .c files of a module include each other's header. */
static void arch_check_pairs(const arch_graph *g)
{
    for (int mi = 0; mi < g->n; mi++) {
        const arch_module *m = &g->m[mi];
        for (int a = 0; a < m->nfiles; a++)
            for (int b = a + 1; b < m->nfiles; b++) {
                char na[ARCH_NAME + 2], nb[ARCH_NAME + 2];
                snprintf(na, sizeof na, " %s ", m->files[a]);
                snprintf(nb, sizeof nb, " %s ", m->files[b]);
                CKBT_EXPECT(!(strstr(m->incl[a], nb) && strstr(m->incl[b], na)),
                            "src/%s/%s.c includes %s/%s.h and src/%s/%s.c includes %s/%s.h: the "
                            "two files call each other (a circle; one side should move)",
                            m->name, m->files[a], m->name, m->files[b], m->name, m->files[b],
                            m->name, m->files[a]);
            }
    }
}

CKBT_TEST(arch_modules_follow_the_design_order, "quick")
{
    char *design = ckb_read_file("docs/DESIGN.md", NULL);
    CKBT_EXPECT(design != NULL, "docs/DESIGN.md readable (the tests run from the repository's "
                                "root)");
    if (!design)
        return;
    size_t len = 0;
    const char *sec = arch_section(design, &len);
    CKBT_EXPECT(sec != NULL, "docs/DESIGN.md has a section \"## Module picture\"");
    arch_graph *g = calloc(1, sizeof *g);
    if (sec && g && arch_parse_order(g, sec, len) == 0) {
        CKBT_EXPECT(g->n >= 10, "the module order names %d modules: %s", g->n, g->order);
        arch_scan(g);
        arch_check_table(g, sec, len);
        arch_check_pairs(g);
    }
    free(g);
    free(design);
}

/* ---- only the CLI prints (DESIGN "Errors") -------------------------------- */

/* Comments and string and character literals blanked, so that a word in
 * them is not taken for a call. */
static void arch_blank_text(char *s)
{
    for (char *p = s; *p; p++) {
        if (p[0] == '/' && p[1] == '*') {
            char *e = strstr(p + 2, "*/");
            char *end = e ? e + 2 : p + strlen(p);
            for (; p < end; p++)
                if (*p != '\n')
                    *p = ' ';
            p--;
        } else if (p[0] == '/' && p[1] == '/') {
            while (*p && *p != '\n')
                *p++ = ' ';
            p--;
        } else if (*p == '"' || *p == '\'') {
            char q = *p;
            for (p++; *p && *p != q && *p != '\n'; p++) {
                if (*p == '\\' && p[1])
                    *p++ = ' ';
                *p = ' ';
            }
            if (!*p)
                break;
        }
    }
}

/* Whether the word at p is one that writes to the process's own streams:
 * the standard streams by name, the stdio calls that write to them, or a
 * write(2)/dprintf on descriptor 1 or 2. Returns the word's length. */
static size_t arch_print_word(const char *text, const char *p)
{
    static const char *const names[] = {"stdout", "stderr", "STDOUT_FILENO", "STDERR_FILENO",
                                        NULL};
    /* called: "printf" alone is also a format attribute's archetype */
    static const char *const calls[] = {"printf", "vprintf", "puts", "perror", "putchar", NULL};
    if (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
        return 0;
    for (int k = 0; k < 2; k++)
        for (int i = 0; (k ? calls : names)[i]; i++) {
            const char *w = (k ? calls : names)[i];
            size_t n = strlen(w);
            if (strncmp(p, w, n) != 0 || isalnum((unsigned char)p[n]) || p[n] == '_')
                continue;
            const char *q = p + n;
            while (*q == ' ')
                q++;
            if (!k || *q == '(')
                return n;
        }
    static const char *const fd_calls[] = {"write", "dprintf", NULL};
    for (int i = 0; fd_calls[i]; i++) {
        size_t n = strlen(fd_calls[i]);
        if (strncmp(p, fd_calls[i], n) != 0)
            continue;
        const char *q = p + n;
        while (*q == ' ')
            q++;
        if (*q++ != '(')
            continue;
        while (*q == ' ')
            q++;
        if ((*q == '1' || *q == '2') && !isalnum((unsigned char)q[1]))
            return n;
    }
    return 0;
}

CKBT_TEST(arch_only_the_cli_prints, "quick")
{
    /* Library code returns its errors (core/error.h) and says its progress
     * through core/say.h; these two write to fd 2 themselves, each for a
     * reason the file gives: a process about to die has nobody to hand a
     * message to (ckb_fatal), and the sandbox child's stderr is read by the
     * parent (the number of a refused system call; before that, why its
     * program could not be started, in sandbox.c's cloned process). */
    static const char *const allowed[] = {"src/core/error.c", "src/eval/child.c",
                                          "src/eval/sandbox.c", NULL};
    DIR *d = opendir("src");
    CKBT_EXPECT(d != NULL, "cannot open src/ (the tests run from the repository's root)");
    if (!d)
        return;
    int found = 0, files = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "cli") || !strcmp(e->d_name, "serve"))
            continue;
        char dir[300];
        snprintf(dir, sizeof dir, "src/%s", e->d_name);
        struct dirent **names;
        int k = scandir(dir, &names, NULL, alphasort);
        for (int i = 0; i < k; i++) {
            const char *n = names[i]->d_name;
            size_t len = strlen(n);
            char path[600];
            snprintf(path, sizeof path, "%s/%s", dir, n);
            int mine = len > 2 && (!strcmp(n + len - 2, ".c") || !strcmp(n + len - 2, ".h"));
            for (int a = 0; mine && allowed[a]; a++)
                mine = strcmp(path, allowed[a]) != 0;
            char *text = mine ? ckb_read_file(path, NULL) : NULL;
            free(names[i]);
            if (!text)
                continue;
            files++;
            arch_blank_text(text);
            int line = 1;
            for (const char *p = text; *p; p++) {
                if (*p == '\n') {
                    line++;
                    continue;
                }
                size_t w = arch_print_word(text, p);
                if (w && found++ < 20)
                    CKBT_EXPECT(0, "%s:%d: %.*s: only src/cli (and serve's log) writes to the "
                                   "process's streams; return a ckb_err (core/error.h) or say it "
                                   "through ckb_say (core/say.h)",
                                path, line, (int)w, p);
                if (w)
                    p += w - 1;
            }
            free(text);
        }
        if (k >= 0)
            free(names);
    }
    closedir(d);
    CKBT_EXPECT(files > 50, "only %d source files read under src/", files);
    CKBT_EXPECT(found == 0, "%d writes to stdout/stderr outside src/cli and src/serve", found);
}
