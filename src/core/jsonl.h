/*
 * jsonl.h — reading a JSON-lines file (records.jsonl) that a crash or a
 * disk may have damaged, without losing a record that is whole. A line may
 * hold NUL bytes (a block the file system zero-filled after a crash, which
 * can swallow newlines): the pieces between runs of NUL bytes are parsed
 * one by one, so a record that follows the zeros on the same line is kept.
 * A piece that is not one whole JSON value is counted and skipped, never
 * fatal; a last line without its newline that does not parse is a record
 * cut by a kill mid-write (last_cut), not damage.
 */
#ifndef CKB_JSONL_H
#define CKB_JSONL_H

#include <stddef.h>

struct json_object;

typedef struct {
    int lines;          /* lines seen (the last one even without its newline) */
    int values;         /* whole JSON values handed to the callback */
    int bad;            /* pieces that were not one whole JSON value (garbage) */
    int bad_line;       /* the line of the first bad piece, 0: none */
    long nul_bytes;     /* NUL bytes skipped */
    int nul_line;       /* the first line holding one, 0: none */
    int last_cut;       /* 1: the last line had no newline and did not parse */
    size_t cut_at;      /* where that last line starts (the length to keep) */
} ckb_jsonl_stats;

/* Calls fn(ctx, value, lineno) for every whole JSON value of text[0..len),
 * in order; fn borrows the value (json_object_get it to keep it). */
void ckb_jsonl_each(const char *text, size_t len,
                    void (*fn)(void *ctx, struct json_object *v, int lineno), void *ctx,
                    ckb_jsonl_stats *st);

/* Says (core/say.h) one line of what was skipped in path, prefixed
 * "ckbench: ", or nothing when nothing was. */
void ckb_jsonl_warn(const char *path, const ckb_jsonl_stats *st);

#endif /* CKB_JSONL_H */
