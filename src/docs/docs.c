/* docs.c — documentation blocks: parse their headers, choose them for a
 * workload by its tags, fill the hardware block from the machine profile,
 * cache the chosen text per workload (docs.h). */
#include "docs/docs.h"

#include <ctype.h>
#include <dirent.h>
#include <glob.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/digest.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/say.h"
#include "machine/isa.h"
#include "machine/roofline.h"

const char *ckb_docs_default_target(void)
{
    /* The target whose examples teach this host's fastest path, at the ISA
     * level in force (CKBENCH_ISA can hide what the CPU has): AVX-512 BF16,
     * else AVX2 + FMA (f32 FMA on operands converted while packing), else
     * portable C. */
    ckb_isa l = ckb_isa_level();
    return l >= CKB_ISA_AVX512BF16 ? "x86-avx512" : l >= CKB_ISA_AVX2 ? "x86-avx2" : "generic-c";
}

static const char *const docs__kinds[] = {"hardware", "api", "example", "rules"};

const char *ckb_docs_kind_name(ckb_docs_kind k)
{
    return (unsigned)k < 4 ? docs__kinds[k] : "?";
}

/* ---- parsing ------------------------------------------------------------ */

static void docs__copy_trimmed(char *dst, size_t n, const char *s, size_t len, int drop_spaces)
{
    while (len && isspace((unsigned char)*s))
        s++, len--;
    while (len && isspace((unsigned char)s[len - 1]))
        len--;
    size_t k = 0;
    for (size_t i = 0; i < len && k + 1 < n; i++)
        if (!drop_spaces || !isspace((unsigned char)s[i]))
            dst[k++] = s[i];
    dst[k] = '\0';
}

int ckb_docs_parse(const char *name, const char *text, ckb_docs_block *out, ckb_err *err)
{
    memset(out, 0, sizeof *out);
    snprintf(out->file, sizeof out->file, "%s", name);
    out->kind = (ckb_docs_kind)-1;
    if (strncmp(text, "---\n", 4) != 0) {
        return ckb_err_set(err, CKB_E_FORMAT, "%s: a block must open with a '---' header line",
                           name);
    }
    const char *p = text + 4;
    int line = 2;
    for (;; line++) {
        const char *nl = strchr(p, '\n');
        if (!nl) {
            return ckb_err_set(err, CKB_E_FORMAT, "%s: the header has no closing '---' line", name);
        }
        size_t len = (size_t)(nl - p);
        if (len == 3 && strncmp(p, "---", 3) == 0) {
            p = nl + 1;
            break;
        }
        const char *colon = memchr(p, ':', len);
        if (!colon) {
            return ckb_err_set(err, CKB_E_FORMAT, "%s:%d: expected 'key: value' in the header",
                               name, line);
        }
        size_t klen = (size_t)(colon - p);
        const char *v = colon + 1;
        size_t vlen = (size_t)(nl - v);
        if (klen == 4 && strncmp(p, "kind", 4) == 0) {
            char kind[16];
            docs__copy_trimmed(kind, sizeof kind, v, vlen, 1);
            for (int k = 0; k < 4; k++)
                if (strcmp(kind, docs__kinds[k]) == 0)
                    out->kind = (ckb_docs_kind)k;
            if ((int)out->kind < 0) {
                return ckb_err_set(err, CKB_E_FORMAT,
                                   "%s:%d: kind '%s' is not hardware, api, example or rules", name,
                                   line, kind);
            }
        } else if (klen == 4 && strncmp(p, "tags", 4) == 0) {
            docs__copy_trimmed(out->tags, sizeof out->tags, v, vlen, 1);
        } else if (klen == 5 && strncmp(p, "title", 5) == 0) {
            docs__copy_trimmed(out->title, sizeof out->title, v, vlen, 0);
            size_t tl = strlen(out->title); /* YAML-style quotes are not part of it */
            if (tl >= 2 && out->title[0] == '"' && out->title[tl - 1] == '"') {
                memmove(out->title, out->title + 1, tl - 2);
                out->title[tl - 2] = '\0';
            }
        } else if (klen == 6 && strncmp(p, "solves", 6) == 0) {
            docs__copy_trimmed(out->solves, sizeof out->solves, v, vlen, 1);
        } else if (klen == 5 && strncmp(p, "tails", 5) == 0) {
            docs__copy_trimmed(out->tails, sizeof out->tails, v, vlen, 1);
        } else if (klen == 4 && strncmp(p, "unit", 4) == 0) {
            docs__copy_trimmed(out->unit, sizeof out->unit, v, vlen, 1);
            if (strcmp(out->unit, "f32_fma") != 0 && strcmp(out->unit, "bf16_dot") != 0 &&
                strcmp(out->unit, "amx") != 0) {
                return ckb_err_set(err, CKB_E_FORMAT,
                                   "%s:%d: unit '%s' is not f32_fma, bf16_dot or amx", name, line,
                                   out->unit);
            }
        } else {
            return ckb_err_set(
                err, CKB_E_FORMAT,
                "%s:%d: unknown header key '%.*s' (kind, tags, title, solves, tails, unit)", name,
                line, (int)klen, p);
        }
        p = nl + 1;
    }
    if ((int)out->kind < 0 || !out->title[0]) {
        return ckb_err_set(err, CKB_E_FORMAT, "%s: the header needs a kind and a title", name);
    }
    if ((out->kind == CKB_DOCS_API || out->kind == CKB_DOCS_EXAMPLE) && !out->tags[0]) {
        return ckb_err_set(err, CKB_E_FORMAT,
                           "%s: an %s block needs tags (the workload tags it serves)", name,
                           ckb_docs_kind_name(out->kind));
    }
    if (out->kind == CKB_DOCS_EXAMPLE && !out->solves[0]) {
        return ckb_err_set(err, CKB_E_FORMAT,
                           "%s: an example needs 'solves: WORKLOAD_ID' (it is never shown "
                           "to that workload)",
                           name);
    }
    while (*p == '\n')
        p++;
    out->body = ckb_xstrdup(p);
    out->raw = ckb_xstrdup(text);
    return CKB_OK;
}

/* ---- loading ------------------------------------------------------------ */

static int docs__by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int docs__visible(const struct dirent *d) { return d->d_name[0] != '.'; }

static int docs__is_markdown(const char *name)
{
    size_t n = strlen(name);
    return n > 3 && strcmp(name + n - 3, ".md") == 0;
}

static int docs__add(ckb_docs_set *s, const char *path, const char *rel, ckb_err *err)
{
    char *text = ckb_read_file(path, NULL);
    if (!text)
        return ckb_err_set(err, CKB_E_IO, "cannot read %s", path);
    s->v = ckb_xrealloc(s->v, (size_t)(s->n + 1) * sizeof *s->v);
    int rc = ckb_docs_parse(rel, text, &s->v[s->n], err);
    free(text);
    if (rc == 0)
        s->n++;
    return rc;
}

/* Adds the *.md of dir/sub (sub "" = dir itself), recursing once. */
static int docs__scan(ckb_docs_set *s, const char *dir, const char *sub, ckb_err *err)
{
    char here[4096];
    snprintf(here, sizeof here, "%s%s%s", dir, *sub ? "/" : "", sub);
    struct dirent **names;
    int n = scandir(here, &names, docs__visible, docs__by_name);
    if (n < 0)
        return ckb_err_set(err, CKB_E_IO, "cannot read the documentation folder %s", here);
    int rc = 0;
    for (int i = 0; i < n; i++) {
        char path[8192], rel[600];
        snprintf(path, sizeof path, "%s/%s", here, names[i]->d_name);
        int rl = snprintf(rel, sizeof rel, "%s%s%s", sub, *sub ? "/" : "", names[i]->d_name);
        if (rl < 0 || (size_t)rl >= sizeof((ckb_docs_block *)0)->file) {
            rc = ckb_err_set(err, CKB_E_FORMAT, "%s: the path is too long for a block name", path);
        }
        struct stat st;
        if (rc == 0 && stat(path, &st) == 0) {
            if (S_ISDIR(st.st_mode) && !*sub)
                rc = docs__scan(s, dir, names[i]->d_name, err);
            else if (S_ISREG(st.st_mode) && docs__is_markdown(names[i]->d_name))
                rc = docs__add(s, path, rel, err);
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int ckb_docs_load(const char *dir, ckb_docs_set *out, ckb_err *err)
{
    memset(out, 0, sizeof *out);
    int rc = docs__scan(out, dir, "", err);
    if (rc != CKB_OK) {
        ckb_docs_set_free(out);
        return rc;
    }
    int nhw = 0, nrules = 0;
    for (int i = 0; i < out->n; i++) {
        nhw += out->v[i].kind == CKB_DOCS_HARDWARE;
        nrules += out->v[i].kind == CKB_DOCS_RULES;
    }
    if (nhw != 1 || nrules != 1) {
        ckb_err_set(err, CKB_E_FORMAT,
                    "%s: needs exactly one hardware and one rules block (found %d and %d)", dir,
                    nhw, nrules);
        ckb_docs_set_free(out);
        return CKB_E_FORMAT;
    }
    return CKB_OK;
}

void ckb_docs_set_free(ckb_docs_set *s)
{
    for (int i = 0; i < s->n; i++) {
        free(s->v[i].body);
        free(s->v[i].raw);
    }
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* ---- selection ---------------------------------------------------------- */

static int docs__has_tag(const char *list, const char *tag, size_t n)
{
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, tag, n) == 0)
            return 1;
        p = end ? end + 1 : NULL;
    }
    return 0;
}

int ckb_docs_block_serves(const ckb_docs_block *b, const char *tags)
{
    if (strcmp(b->tags, "*") == 0)
        return 1;
    for (const char *p = tags; p && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len && docs__has_tag(b->tags, p, len))
            return 1;
        p = end ? end + 1 : NULL;
    }
    return 0;
}

/* A block written for one unit is shown where that unit is the roof for
 * bf16 work; on an AMX host the bf16 dot's blocks too (the tails and
 * epilogues around the tiles). AMX blocks never reach a host without AMX:
 * with no measured roof, only where the ISA level in force has it. */
static int docs__unit_fits(const ckb_docs_block *b, const char *unit)
{
    if (!b->unit[0])
        return 1;
    if (!unit || !*unit)
        return strcmp(b->unit, "amx") != 0 || ckb_isa_level() >= CKB_ISA_AMX;
    if (strcmp(b->unit, unit) == 0)
        return 1;
    return strcmp(unit, "amx") == 0 && strcmp(b->unit, "bf16_dot") == 0;
}

int ckb_docs_select(const ckb_docs_set *s, const ckb_workload *w, const char *unit, int *idx,
                    int max)
{
    int n = 0;
    /* Pass 0: hardware; 1: api for every workload; 2: api by tags;
     * 3: examples; 4: rules. Within a pass, file order. */
    for (int pass = 0; pass < 5; pass++) {
        for (int i = 0; i < s->n && n < max; i++) {
            const ckb_docs_block *b = &s->v[i];
            int every = strcmp(b->tags, "*") == 0;
            int take = 0;
            switch (pass) {
            case 0: take = b->kind == CKB_DOCS_HARDWARE; break;
            case 1: take = b->kind == CKB_DOCS_API && every; break;
            case 2:
                take = b->kind == CKB_DOCS_API && !every && ckb_docs_block_serves(b, w->tags) &&
                       docs__unit_fits(b, unit);
                break;
            case 3:
                take = b->kind == CKB_DOCS_EXAMPLE && strcmp(b->solves, w->id) != 0 &&
                       ckb_docs_block_serves(b, w->tags) && docs__unit_fits(b, unit);
                break;
            case 4: take = b->kind == CKB_DOCS_RULES; break;
            }
            if (take)
                idx[n++] = i;
        }
    }
    return n;
}

/* ---- rendering ---------------------------------------------------------- */

static void docs__bytes(char *buf, size_t n, int64_t b)
{
    if (b <= 0)
        snprintf(buf, n, "unknown");
    else if (b >= (1 << 20) && b % (1 << 20) == 0)
        snprintf(buf, n, "%lld MiB", (long long)(b >> 20));
    else
        snprintf(buf, n, "%lld KiB", (long long)(b >> 10));
}

static void docs__figure(char *buf, size_t n, double v, const char *unit)
{
    if (v > 0)
        snprintf(buf, n, "%.0f %s", v, unit);
    else
        snprintf(buf, n, "not measured (run `ckbench machine`)");
}

/* The value of placeholder `name` from m, or NULL when unknown. */
static const char *docs__var(const char *name, size_t len, const ckb_machine *m, char *buf,
                             size_t n)
{
#define IS(s) (len == sizeof(s) - 1 && strncmp(name, s, len) == 0)
    /* the roofs of the one model (machine/roofline.h) for bf16 and f32 work
     * over DRAM (a working set larger than any cache) */
    ckb_roof r16, r32;
    ckb_roof_make(m, CKB_PREC_BF16, INFINITY, &r16);
    ckb_roof_make(m, CKB_PREC_F32, INFINITY, &r32);
    double ridge = m->bw_gbs > 0 ? ckb_roof_ridge(&r16) : 0;
    double ridge_f32 = m->bw_gbs > 0 ? ckb_roof_ridge(&r32) : 0;
    /* the bf16 dot where it was measured; else the bf16 roof (f32 after a
     * conversion, or AMX) */
    double dot = m->bf16_dot_gflops > 0 ? m->bf16_dot_gflops : r16.compute_gflops;
    if (IS("cpu"))
        snprintf(buf, n, "%s", m->cpu[0] ? m->cpu : "unknown");
    else if (IS("isa"))
        snprintf(buf, n, "%s", m->isa[0] ? m->isa : "unknown");
    else if (IS("cores"))
        snprintf(buf, n, "%d", m->cores);
    else if (IS("threads"))
        snprintf(buf, n, "%d", m->threads);
    else if (IS("l1d"))
        docs__bytes(buf, n, m->l1d);
    else if (IS("l2"))
        docs__bytes(buf, n, m->l2);
    else if (IS("l3"))
        docs__bytes(buf, n, m->l3);
    else if (IS("f32_gflops"))
        docs__figure(buf, n, m->f32_gflops, "GFLOP/s");
    else if (IS("bf16_gflops"))
        docs__figure(buf, n, dot, "GFLOP/s");
    else if (IS("amx_gflops")) {
        if (!strstr(m->isa, "amx_bf16"))
            snprintf(buf, n, "none: this CPU (at the ISA level in force) has no AMX");
        else
            docs__figure(buf, n, m->bf16_amx_gflops, "GFLOP/s");
    }
    else if (IS("roof_gflops"))
        docs__figure(buf, n, r16.compute_gflops, "GFLOP/s");
    else if (IS("roof_unit"))
        snprintf(buf, n, "%s", r16.compute_gflops > 0 ? ckb_roof_unit_label(r16.unit) : "unknown");
    else if (IS("l2_gbs"))
        docs__figure(buf, n, m->l2_gbs, "GB/s");
    else if (IS("l3_gbs"))
        docs__figure(buf, n, m->l3_gbs, "GB/s");
    else if (IS("isa_level"))
        snprintf(buf, n, "%s", m->isa_level[0] ? m->isa_level : "unknown");
    else if (IS("f32_gflops_1t"))
        docs__figure(buf, n, m->f32_gflops_1t, "GFLOP/s");
    else if (IS("bf16_gflops_1t"))
        docs__figure(buf, n, m->bf16_dot_gflops_1t > 0 ? m->bf16_dot_gflops_1t : m->bf16_gflops_1t,
                     "GFLOP/s");
    else if (IS("bw_gbs"))
        docs__figure(buf, n, m->bw_gbs, "GB/s");
    else if (IS("ridge"))
        docs__figure(buf, n, ridge, "FLOP/byte");
    else if (IS("ridge_f32"))
        docs__figure(buf, n, ridge_f32, "FLOP/byte");
    else if (IS("measured_at"))
        snprintf(buf, n, "%s", m->measured_at[0] ? m->measured_at : "never");
    else if (IS("dot_note")) {
        /* What is fastest on this machine decides the inner loop: the unit
         * of the roof (machine/roofline.h), never a claim it contradicts. */
        const char *u = r16.unit ? r16.unit : "";
        if (r16.compute_gflops <= 0 || m->f32_gflops <= 0)
            snprintf(buf, n, "Measure the units (`ckbench machine`) before choosing the one "
                             "for the inner loop.");
        else if (strcmp(u, "amx") == 0)
            snprintf(buf, n, "On this machine AMX tiles are the fastest unit (%.1fx the f32 FMA "
                             "roof%s): put the matrix products on tiles (the AMX block) and "
                             "keep vdpbf16ps or f32 FMA for tails and epilogues.",
                     r16.compute_gflops / m->f32_gflops,
                     m->bf16_dot_gflops > 0 ? ", and above the bf16 dot" : "");
        else if (strcmp(u, "bf16_dot") == 0)
            snprintf(buf, n, "On this machine vdpbf16ps is the faster path (%.2fx the f32 FMA "
                             "roof): feed it bf16 pairs directly.",
                     r16.compute_gflops / m->f32_gflops);
        else if (m->bf16_dot_gflops > 0)
            snprintf(buf, n, "On this machine vdpbf16ps is NOT faster than f32 FMA (%.0f vs "
                             "%.0f GFLOP/s) and there is no AMX: converting bf16 to f32 once "
                             "(while packing) and using _mm512_fmadd_ps reaches the higher "
                             "roof.",
                     m->bf16_dot_gflops, m->f32_gflops);
        else
            snprintf(buf, n, "On this machine f32 FMA is the compute roof: convert bf16 to f32 "
                             "once (while packing) and use _mm512_fmadd_ps.");
    } else if (IS("amx_note")) {
        if (strstr(m->isa, "amx_bf16"))
            snprintf(buf, n, "AMX tiles: this CPU has them (`amx_tile`, `amx_bf16`); the AMX "
                             "block says how to use them (tile configuration, the pair layout "
                             "of B, accumulator blocking, per-thread state). Keep a path for "
                             "dims the tiles do not cover (`#if defined(__AMX_BF16__)` and "
                             "multiples of the tile shape).");
        else
            snprintf(buf, n, "No AMX on this CPU (at the ISA level in force): tile intrinsics "
                             "(`_tile_*`) do not compile here.");
    } else
        return NULL;
    return buf;
#undef IS
}

void ckb_docs_render(const ckb_docs_block *b, const ckb_machine *m, ckb_strbuf *out)
{
    ckb_strbuf_printf(out, "## %s\n\n", b->title);
    const char *p = b->body;
    if (b->kind != CKB_DOCS_HARDWARE || !m) {
        ckb_strbuf_append(out, p, strlen(p));
    } else {
        for (;;) {
            const char *open = strstr(p, "{{");
            const char *close = open ? strstr(open + 2, "}}") : NULL;
            if (!close) {
                ckb_strbuf_append(out, p, strlen(p));
                break;
            }
            ckb_strbuf_append(out, p, (size_t)(open - p));
            char buf[512];
            const char *v = docs__var(open + 2, (size_t)(close - open - 2), m, buf, sizeof buf);
            if (v)
                ckb_strbuf_append(out, v, strlen(v));
            else /* left visible: a test looks for unfilled placeholders */
                ckb_strbuf_append(out, open, (size_t)(close + 2 - open));
            p = close + 2;
        }
    }
    if (out->len && out->data[out->len - 1] != '\n')
        ckb_strbuf_append(out, "\n", 1);
    ckb_strbuf_append(out, "\n", 1);
}

/* ---- the selection, cached ---------------------------------------------- */

/* The stored profile of this machine for the default thread budget when it
 * belongs to this CPU; else only the facts a probe reads (no figures). */
static void docs__machine(ckb_machine *m)
{
    int threads = omp_get_num_procs();
    ckb_machine probe, stored;
    ckb_machine_probe(threads, &probe);
    char path[1024];
    ckb_machine_default_path(threads, path, sizeof path);
    if (ckb_machine_load(path, &stored) == 0 && ckb_machine_same_host(&stored, &probe))
        *m = stored;
    else
        *m = probe;
}

/* Removes older cached texts of this workload (other keys). */
static void docs__prune(const char *dir, const char *id, const char *keep)
{
    char pattern[2048];
    snprintf(pattern, sizeof pattern, "%s/%s-*.md", dir, id);
    glob_t g;
    if (glob(pattern, 0, NULL, &g) != 0)
        return;
    for (size_t i = 0; i < g.gl_pathc; i++)
        if (strcmp(g.gl_pathv[i], keep) != 0)
            unlink(g.gl_pathv[i]);
    globfree(&g);
}

int ckb_docs_build(const ckb_workload *w, const ckb_docs_opts *o, ckb_strbuf *out,
                   ckb_docs_info *info, ckb_err *err)
{
    ckb_docs_opts dflt = {0};
    if (!o)
        o = &dflt;
    const char *target = o->target ? o->target : ckb_docs_default_target();
    char dir[4096];
    if (o->dir)
        snprintf(dir, sizeof dir, "%s", o->dir);
    else
        snprintf(dir, sizeof dir, "%s/docs/%s", ckb_home(), target);
    ckb_machine mach;
    if (o->machine)
        mach = *o->machine;
    else
        docs__machine(&mach);

    ckb_docs_info local;
    if (!info)
        info = &local;
    memset(info, 0, sizeof *info);
    snprintf(info->target, sizeof info->target, "%s", target);

    ckb_docs_set set;
    int rc = ckb_docs_load(dir, &set, err);
    if (rc != CKB_OK)
        return rc;
    int idx[CKB_DOCS_MAX_BLOCKS];
    /* the unit of the roof for bf16 work picks among examples written for
     * one (an unmeasured profile has no roof: every example is shown) */
    const char *unit = NULL;
    if (ckb_roof_compute(&mach, CKB_PREC_BF16, &unit) <= 0)
        unit = NULL;
    int n = ckb_docs_select(&set, w, unit, idx, CKB_DOCS_MAX_BLOCKS);

    /* Render each chosen block (cheap) for its size and the text. */
    ckb_strbuf text = {0};
    for (int k = 0; k < n; k++) {
        const ckb_docs_block *b = &set.v[idx[k]];
        size_t before = text.len;
        ckb_docs_render(b, &mach, &text);
        ckb_docs_entry *e = &info->block[k];
        snprintf(e->file, sizeof e->file, "%s", b->file);
        snprintf(e->title, sizeof e->title, "%s", b->title);
        e->kind = b->kind;
        e->chars = (long)(text.len - before);
    }
    info->nblocks = n;

    /* The key: every block file (a header anywhere can change the choice),
     * the workload's id and tags, and the profile as the hardware block
     * shows it. */
    uint64_t key = ckb_digest(target, strlen(target), 0x646f6373);
    for (int i = 0; i < set.n; i++) {
        key = ckb_digest(set.v[i].file, strlen(set.v[i].file), key);
        key = ckb_digest(set.v[i].raw, strlen(set.v[i].raw), key);
    }
    key = ckb_digest(w->id, strlen(w->id), key);
    key = ckb_digest(w->tags, strlen(w->tags), key);
    for (int i = 0; i < set.n; i++)
        if (set.v[i].kind == CKB_DOCS_HARDWARE) {
            ckb_strbuf hw = {0};
            ckb_docs_render(&set.v[i], &mach, &hw);
            key = ckb_digest(hw.data, hw.len, key);
            ckb_strbuf_free(&hw);
        }
    ckb_docs_set_free(&set);

    char cdir[2048];
    if (o->cache_dir && !*o->cache_dir)
        cdir[0] = '\0';
    else if (o->cache_dir)
        snprintf(cdir, sizeof cdir, "%s/%s", o->cache_dir, target);
    else
        snprintf(cdir, sizeof cdir, "%s/docs/%s", ckb_cache_dir(), target);
    const char *final = text.data ? text.data : "";
    size_t final_len = text.len;
    char *cached = NULL;
    if (cdir[0]) {
        snprintf(info->cache_path, sizeof info->cache_path, "%s/%s-%016llx.md", cdir, w->id,
                 (unsigned long long)key);
        size_t len;
        cached = ckb_read_file(info->cache_path, &len);
        if (cached) {
            final = cached;
            final_len = len;
            info->cached = 1;
        } else if (ckb_mkdirs(cdir) == 0 &&
                   ckb_write_file_atomic(info->cache_path, final, final_len) == 0) {
            docs__prune(cdir, w->id, info->cache_path);
        } else {
            /* A read-only cache costs nothing but the record: say so once. */
            ckb_say("ckbench: cannot cache the documentation at %s\n", info->cache_path);
            info->cache_path[0] = '\0';
        }
    }
    ckb_strbuf_append(out, final, final_len);
    info->chars = (long)final_len;
    info->tokens = info->chars / 4;
    free(cached);
    ckb_strbuf_free(&text);
    return 0;
}

int ckb_docs_for_workload(const ckb_workload *w, const char *target, ckb_strbuf *out,
                          ckb_docs_info *info, ckb_err *err)
{
    ckb_docs_opts o = {.target = target};
    return ckb_docs_build(w, &o, out, info, err);
}
