/*
 * options.c — the command-line machinery: one table per command drives
 * getopt_long, the value checks and the help texts; lookups shared by the
 * commands.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

#ifndef CKB_GIT_COMMIT
#define CKB_GIT_COMMIT "unknown"
#endif

const char *ckb_cli_version(void) { return CKB_VERSION; }
const char *ckb_cli_build_commit(void) { return CKB_GIT_COMMIT[0] ? CKB_GIT_COMMIT : "unknown"; }

const ckb_cli_cmd *ckb_cli_command(const char *name)
{
    for (int i = 0; i < ckb_cli_ncommands; i++)
        if (strcmp(ckb_cli_commands[i]->name, name) == 0)
            return ckb_cli_commands[i];
    return NULL;
}

/* "--iters N", "-v, --verbose", "--define NAME=VALUE" */
static void options__spec(const ckb_cli_opt *o, char *buf, size_t n)
{
    size_t used = 0;
    if (o->short_name)
        used = (size_t)snprintf(buf, n, "-%c, ", o->short_name);
    snprintf(buf + used, n - used, "--%s%s%s", o->name, o->metavar ? " " : "",
             o->metavar ? o->metavar : "");
}

/* The synopsis, wrapped at 88 columns under the command's name. */
static void options__synopsis(const ckb_cli_cmd *c, FILE *f, const char *lead)
{
    char head[128], word[160];
    int indent = snprintf(head, sizeof head, "%sckbench %s", lead, c->name);
    fputs(head, f);
    int col = indent;
    for (int i = -1; i < c->nopts; i++) {
        if (i < 0) {
            if (!c->args[0])
                continue;
            snprintf(word, sizeof word, "%s", c->args);
        } else {
            const ckb_cli_opt *o = &c->opts[i];
            snprintf(word, sizeof word, "%s--%s%s%s%s%s", o->needed ? "" : "[", o->name,
                     o->metavar ? " " : "", o->metavar ? o->metavar : "", o->needed ? "" : "]",
                     o->repeat > 1 ? "..." : "");
        }
        int len = (int)strlen(word);
        if (col + 1 + len > 88 && col > indent) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
        }
        fprintf(f, " %s", word);
        col += 1 + len;
    }
    fputc('\n', f);
}

/* Words of text from column col, wrapped at 88 columns under col. */
static void options__wrap(FILE *f, const char *text, int col)
{
    int at = col;
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, " ");
        if (at > col && at + 1 + (int)len > 88) {
            fprintf(f, "\n%*s", col, "");
            at = col;
        } else if (at > col) {
            fputc(' ', f);
            at++;
        }
        fwrite(p, 1, len, f);
        at += (int)len;
        p += len;
        while (*p == ' ')
            p++;
    }
    fputc('\n', f);
}

void ckb_cli_print_help(const ckb_cli_cmd *c, FILE *f)
{
    options__synopsis(c, f, "usage: ");
    fprintf(f, "\n%s\n", c->summary);
    if (c->about)
        fprintf(f, "\n%s", c->about);
    fprintf(f, "\noptions:\n");
    char spec[128], help[600];
    for (int i = 0; i < c->nopts; i++) {
        const ckb_cli_opt *o = &c->opts[i];
        options__spec(o, spec, sizeof spec);
        size_t used = (size_t)snprintf(help, sizeof help, "%s", o->help);
        if (o->repeat > 1 && used < sizeof help)
            used += (size_t)snprintf(help + used, sizeof help - used,
                                     " (may be given up to %d times)", o->repeat);
        if (o->needed && used < sizeof help)
            snprintf(help + used, sizeof help - used, " (needed%s%s)",
                     o->needed[0] ? " unless --" : "", o->needed);
        fprintf(f, "  %-24s", spec);
        if (strlen(spec) > 23)
            fprintf(f, "\n  %-24s", "");
        options__wrap(f, help, 26);
    }
    fprintf(f, "  %-24s%s\n", "-h, --help", "print this help and exit");
}

void ckb_cli_print_commands(FILE *f)
{
    fprintf(f, "usage: ckbench COMMAND [options]     ckbench COMMAND --help     ckbench "
               "--version\n\ncommands:\n");
    for (int i = 0; i < ckb_cli_ncommands; i++) {
        options__synopsis(ckb_cli_commands[i], f, "  ");
        fprintf(f, "      %s\n", ckb_cli_commands[i]->summary);
    }
    fprintf(f, "\nA WORKLOAD is its id (8p_GEMM) or its number (8p). Threads default to every "
               "core.\nExit status: 0 done (an eval that judged a kernel wrong is done), 1 the "
               "harness\nfailed, 2 bad command line.\n");
}

int ckb_cli_usage_error(const ckb_cli_args *a, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "ckbench %s: ", a->cmd->name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "; see ckbench %s --help\n", a->cmd->name);
    return 2;
}

/* Checks one value against its option's type; 0 or -1 after saying why. */
static int options__check(const ckb_cli_args *a, const ckb_cli_opt *o, const char *v)
{
    char *end = NULL;
    errno = 0;
    switch (o->type) {
    case CKB_CLI_INT: {
        long x = strtol(v, &end, 10);
        if (!*v || errno || *end || x < o->lo || x > o->hi) {
            ckb_cli_usage_error(a, "--%s needs an integer in %.0f..%.0f (got '%s')", o->name,
                                o->lo, o->hi, v);
            return -1;
        }
        return 0;
    }
    case CKB_CLI_NUM: {
        double x = strtod(v, &end);
        if (!*v || *end || !(x >= o->lo && x <= o->hi)) {
            ckb_cli_usage_error(a, "--%s needs a number in %g..%g (got '%s')", o->name, o->lo,
                                o->hi, v);
            return -1;
        }
        return 0;
    }
    case CKB_CLI_SIZE: {
        ckb_size s;
        if (ckb_size_parse(v, &s) != 0) {
            ckb_cli_usage_error(a, "--%s is small, default, paper or host (got '%s')", o->name, v);
            return -1;
        }
        return 0;
    }
    case CKB_CLI_U64: {
        unsigned long long x = strtoull(v, &end, 0);
        if (!*v || v[0] == '-' || errno || *end || (o->lo > 0 && x == 0)) {
            ckb_cli_usage_error(a, "--%s needs a%s integer (got '%s')", o->name,
                                o->lo > 0 ? " non-zero" : "n", v);
            return -1;
        }
        return 0;
    }
    case CKB_CLI_KV:
        if (!strchr(v, '=') || v[0] == '=') {
            ckb_cli_usage_error(a, "--%s needs NAME=VALUE (got '%s')", o->name, v);
            return -1;
        }
        return 0;
    case CKB_CLI_FLAG:
    case CKB_CLI_STR:
        return 0;
    }
    return 0;
}

static int options__find(const ckb_cli_cmd *c, const char *name)
{
    for (int i = 0; i < c->nopts; i++)
        if (strcmp(c->opts[i].name, name) == 0)
            return i;
    return -1;
}

/* The option's index; a name not in the table is a bug in the command. */
static int options__index(const ckb_cli_args *a, const char *name, const char *file, int line)
{
    int i = options__find(a->cmd, name);
    if (i < 0) {
        fprintf(stderr, "%s:%d: ckbench %s has no option --%s\n", file, line, a->cmd->name,
                name);
        abort();
    }
    return i;
}
#define OPTIONS__INDEX(a, name) options__index(a, name, __FILE__, __LINE__)

/* Says why an option not in this command's table was refused. */
static void options__refuse(const ckb_cli_args *a, const char *arg)
{
    if (strncmp(arg, "--", 2) != 0) {
        ckb_cli_usage_error(a, "unknown option %s", arg);
        return;
    }
    char name[64];
    snprintf(name, sizeof name, "%s", arg + 2);
    name[strcspn(name, "=")] = '\0';
    char others[512] = "";
    size_t used = 0;
    for (int i = 0; i < ckb_cli_ncommands; i++)
        for (int k = 0; k < ckb_cli_commands[i]->nopts; k++)
            if (strcmp(ckb_cli_commands[i]->opts[k].name, name) == 0 && used < sizeof others)
                used += (size_t)snprintf(others + used, sizeof others - used, "%s%s",
                                         used ? ", " : "", ckb_cli_commands[i]->name);
    if (others[0])
        ckb_cli_usage_error(a, "--%s does not apply to %s (it is an option of: %s)", name,
                            a->cmd->name, others);
    else
        ckb_cli_usage_error(a, "unknown option %s", arg);
}

int ckb_cli_parse(const ckb_cli_cmd *c, int argc, char **argv, ckb_cli_args *a)
{
    memset(a, 0, sizeof *a);
    a->cmd = c;
    if (c->nopts > CKB_CLI_MAX_OPTS) {
        fprintf(stderr, "%s:%d: %s has more options than CKB_CLI_MAX_OPTS\n", __FILE__,
                __LINE__, c->name);
        abort();
    }
    struct option lo[CKB_CLI_MAX_OPTS + 2];
    char shorts[2 * CKB_CLI_MAX_OPTS + 8] = ":h";
    size_t ns = 2;
    for (int i = 0; i < c->nopts; i++) {
        const ckb_cli_opt *o = &c->opts[i];
        lo[i] = (struct option){o->name, o->type == CKB_CLI_FLAG ? no_argument : required_argument,
                                NULL, 256 + i};
        if (o->short_name) {
            shorts[ns++] = o->short_name;
            if (o->type != CKB_CLI_FLAG)
                shorts[ns++] = ':';
        }
    }
    lo[c->nopts] = (struct option){"help", no_argument, NULL, 'h'};
    lo[c->nopts + 1] = (struct option){NULL, 0, NULL, 0};
    shorts[ns] = '\0';
    optind = 0; /* glibc: start afresh */
    opterr = 0;
    for (;;) {
        int ch = getopt_long(argc, argv, shorts, lo, NULL);
        if (ch == -1)
            break;
        if (ch == 'h') {
            ckb_cli_print_help(c, stdout);
            return 1;
        }
        if (ch == ':') {
            const char *name = optopt >= 256 ? c->opts[optopt - 256].name : "";
            const char *mv = optopt >= 256 ? c->opts[optopt - 256].metavar : "";
            if (optopt >= 256)
                ckb_cli_usage_error(a, "--%s needs a value (%s)", name, mv);
            else
                ckb_cli_usage_error(a, "-%c needs a value", optopt);
            return 2;
        }
        if (ch == '?') {
            if (optopt >= 256)
                ckb_cli_usage_error(a, "--%s takes no value", c->opts[optopt - 256].name);
            else if (optopt)
                ckb_cli_usage_error(a, "unknown option -%c", optopt);
            else
                options__refuse(a, argv[optind - 1]);
            return 2;
        }
        int i = -1;
        if (ch >= 256)
            i = ch - 256;
        else
            for (int k = 0; k < c->nopts && i < 0; k++)
                if (c->opts[k].short_name == ch)
                    i = k;
        if (i < 0)
            return ckb_cli_usage_error(a, "unknown option -%c", ch);
        const ckb_cli_opt *o = &c->opts[i];
        const char *v = o->type == CKB_CLI_FLAG ? "" : optarg;
        if (options__check(a, o, v) != 0)
            return 2;
        if (o->repeat > 1) {
            if (a->given[i] == o->repeat || a->given[i] == CKB_CLI_MAX_REPEAT)
                return ckb_cli_usage_error(a, "--%s may be given at most %d times", o->name,
                                           o->repeat);
            a->value[i][a->given[i]] = v;
        } else {
            a->value[i][0] = v;
        }
        a->given[i]++;
    }
    for (int i = 0; i < c->nopts; i++) {
        const char *unless = c->opts[i].needed;
        if (!unless || a->given[i] || (unless[0] && a->given[OPTIONS__INDEX(a, unless)]))
            continue;
        if (unless[0])
            return ckb_cli_usage_error(a, "--%s is needed (or --%s)", c->opts[i].name, unless);
        return ckb_cli_usage_error(a, "--%s is needed", c->opts[i].name);
    }
    for (int i = optind; i < argc; i++) {
        if (a->npos == c->max_pos || a->npos == CKB_CLI_MAX_POS) {
            if (c->max_pos == 0)
                return ckb_cli_usage_error(a, "takes no arguments (got '%s')", argv[i]);
            return ckb_cli_usage_error(a, "too many arguments (at most %d: %s; got '%s')",
                                       c->max_pos, c->args, argv[i]);
        }
        a->pos[a->npos++] = argv[i];
    }
    if (a->npos < c->min_pos)
        return ckb_cli_usage_error(a, "%s", c->missing ? c->missing : "needs more arguments");
    return 0;
}


int ckb_cli_given(const ckb_cli_args *a, const char *name)
{
    return a->given[OPTIONS__INDEX(a, name)];
}

const char *ckb_cli_str(const ckb_cli_args *a, const char *name, const char *dflt)
{
    int i = OPTIONS__INDEX(a, name);
    if (!a->given[i])
        return dflt;
    return a->value[i][a->cmd->opts[i].repeat > 1 ? a->given[i] - 1 : 0];
}

const char *ckb_cli_at(const ckb_cli_args *a, const char *name, int k)
{
    int i = OPTIONS__INDEX(a, name);
    return k >= 0 && k < a->given[i] ? a->value[i][k] : NULL;
}

long ckb_cli_int(const ckb_cli_args *a, const char *name, long dflt)
{
    const char *v = ckb_cli_str(a, name, NULL);
    return v ? strtol(v, NULL, 10) : dflt;
}

double ckb_cli_num(const ckb_cli_args *a, const char *name, double dflt)
{
    const char *v = ckb_cli_str(a, name, NULL);
    return v ? strtod(v, NULL) : dflt;
}

unsigned long long ckb_cli_u64(const ckb_cli_args *a, const char *name, unsigned long long dflt)
{
    const char *v = ckb_cli_str(a, name, NULL);
    return v ? strtoull(v, NULL, 0) : dflt;
}

ckb_size ckb_cli_size(const ckb_cli_args *a, const char *name, ckb_size dflt)
{
    const char *v = ckb_cli_str(a, name, NULL);
    ckb_size s = dflt;
    if (v)
        ckb_size_parse(v, &s);
    return s;
}

void ckb_cli_common_get(const ckb_cli_args *a, ckb_cli_common *o)
{
    memset(o, 0, sizeof *o);
    o->size = CKB_SIZE_DEFAULT;
    o->threads = omp_get_num_procs();
    o->warmup = 5;
    o->iters = 50;
    const ckb_cli_cmd *c = a->cmd;
    if (options__find(c, "size") >= 0)
        o->size = ckb_cli_size(a, "size", o->size);
    if (options__find(c, "threads") >= 0)
        o->threads = (int)ckb_cli_int(a, "threads", o->threads);
    if (options__find(c, "warmup") >= 0)
        o->warmup = (int)ckb_cli_int(a, "warmup", o->warmup);
    if (options__find(c, "iters") >= 0)
        o->iters = (int)ckb_cli_int(a, "iters", o->iters);
    if (options__find(c, "machine") >= 0)
        o->machine = ckb_cli_str(a, "machine", NULL);
}

int ckb_cli_machine(int threads, const char *path, ckb_machine *m)
{
    if (ckb_machine_get(threads, path, m) != 0) {
        fprintf(stderr, "ckbench: cannot measure or load the machine profile\n");
        return -1;
    }
    return 0;
}

const ckb_workload *ckb_cli_workload(const char *name)
{
    const ckb_workload *w = ckb_workload_find(name);
    if (w)
        return w;
    fprintf(stderr, "ckbench: unknown workload '%s'; known:", name ? name : "");
    for (int i = 0; i < ckb_workload_count(); i++)
        fprintf(stderr, " %s", ckb_workload_at(i)->id);
    fprintf(stderr, "\n");
    return NULL;
}
