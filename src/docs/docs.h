/*
 * docs.h — the documentation shown to a model (DESIGN §8): blocks under
 * docs/<target>/ of four kinds (hardware, api, example, rules), chosen for
 * a workload by its tags, concatenated in a fixed order, and cached per
 * workload so that the exact text a model got can be read back.
 *
 * A block is a Markdown file that opens with a small header:
 *
 *     ---
 *     kind: api                 (hardware | api | example | rules)
 *     tags: matmul, mlp, moe    (the workload tags it serves; * = every workload)
 *     title: Matrix multiplication with vdpbf16ps
 *     solves: 20k_Gemm_...      (examples only: the workload its code solves)
 *     tails: B=13, IN=37        (examples, optional: ragged dims it is tested at)
 *     ---
 *
 * Selection for a workload: the hardware and rules blocks always; every api
 * block whose tags meet the workload's (the common one, tags *, always);
 * every example whose tags meet the workload's, except the one that solves
 * this very workload. Order: hardware, api (common first, then by file
 * name), examples (by file name), rules last, nearest the task.
 *
 * The hardware block's {{name}} placeholders are filled from the machine
 * profile (machine/profile.h); the figures read "not measured" until
 * `ckbench machine` has stored one.
 */
#ifndef CKB_DOCS_H
#define CKB_DOCS_H

#include <stddef.h>

#include "core/error.h"
#include "core/strbuf.h"
#include "machine/profile.h"
#include "workloads/workload.h"

#define CKB_DOCS_MAX_BLOCKS 64

typedef enum { CKB_DOCS_HARDWARE, CKB_DOCS_API, CKB_DOCS_EXAMPLE, CKB_DOCS_RULES } ckb_docs_kind;

/* One chosen block, for listings (`ckbench describe`). */
typedef struct {
    char file[128];  /* path under docs/<target>/, e.g. "api/matmul.md" */
    ckb_docs_kind kind;
    char title[128];
    long chars;      /* of its rendered text */
} ckb_docs_entry;

typedef struct {
    int nblocks;  /* blocks chosen */
    long chars;   /* length of the text */
    long tokens;  /* approximate token count (chars / 4) */
    char target[32];
    int cached;             /* 1: the text was read back from the cache */
    char cache_path[1024];  /* where the chosen text is (or would be) cached; "" if not */
    ckb_docs_entry block[CKB_DOCS_MAX_BLOCKS]; /* the chosen blocks, in order */
} ckb_docs_info;

/* A parsed block file. */
typedef struct {
    char file[128];
    ckb_docs_kind kind;
    char tags[256];   /* comma-separated, spaces removed; "*" = every workload */
    char title[128];
    char solves[96];  /* examples: the workload id */
    char tails[128];  /* examples: "NAME=V,NAME=V" dims (over `small`) that the
                         tests run it at, to show its tail handling is right */
    char unit[16];    /* examples, optional: "f32_fma" or "bf16_dot", the unit its
                         inner loop is written for; shown only on a host whose
                         roof for bf16 work is that unit (AMX hosts count as
                         bf16_dot), or when the profile is not measured */
    char *body;       /* the Markdown after the header (owned) */
    char *raw;        /* the whole file (owned): part of the cache key */
} ckb_docs_block;

typedef struct {
    ckb_docs_block *v;
    int n;
} ckb_docs_set;

/* How ckb_docs_build finds and keeps its text; zero means the default. */
typedef struct {
    const char *target;          /* NULL: ckb_docs_default_target() */
    const char *dir;             /* NULL: <home>/docs/<target> */
    const char *cache_dir;       /* NULL: <cache>/docs; "" = do not cache */
    const ckb_machine *machine;  /* NULL: the stored profile of this machine, if any */
} ckb_docs_opts;

/* The target whose docs fit this machine: "x86-avx512" where the CPU has
 * AVX-512 with BF16, else "generic-c". */
const char *ckb_docs_default_target(void);

const char *ckb_docs_kind_name(ckb_docs_kind k);

/* Parses one block file (name is its path under the target folder).
 * CKB_OK, or CKB_E_FORMAT with err saying which header line is wrong. On
 * success the block owns copies of body and text. */
int ckb_docs_parse(const char *name, const char *text, ckb_docs_block *out, ckb_err *err);

/* Reads every *.md under dir (one level of sub-folders too), sorted by
 * path. CKB_OK, or a code with err saying why (a missing folder, a bad
 * header). */
int ckb_docs_load(const char *dir, ckb_docs_set *out, ckb_err *err);
void ckb_docs_set_free(ckb_docs_set *s);

/* Whether block b serves a workload with these comma-separated tags. */
int ckb_docs_block_serves(const ckb_docs_block *b, const char *tags);

/* The indices into s of the blocks chosen for w, in the fixed order; at
 * most max. Returns how many. */
int ckb_docs_select(const ckb_docs_set *s, const ckb_workload *w, const char *unit, int *idx,
                    int max);

/* Appends block b as shown to a model: its title as a heading, then its
 * body, hardware placeholders filled from m (NULL: unmeasured). */
void ckb_docs_render(const ckb_docs_block *b, const ckb_machine *m, ckb_strbuf *out);

/* The full selection for w with explicit options: appends the text to out
 * and fills *info (may be NULL). Reuses the cached text when the block
 * files, the workload's tags and the profile are unchanged; otherwise
 * renders and stores it. CKB_OK, or a code with err filled. */
int ckb_docs_build(const ckb_workload *w, const ckb_docs_opts *o, ckb_strbuf *out,
                   ckb_docs_info *info, ckb_err *err);

/* Appends the blocks chosen for w from docs/<target>/ (target NULL: the
 * default) to out and fills *info (may be NULL). CKB_OK, or a code with err
 * filled when the docs cannot be read. */
int ckb_docs_for_workload(const ckb_workload *w, const char *target, ckb_strbuf *out,
                          ckb_docs_info *info, ckb_err *err);

#endif /* CKB_DOCS_H */
