/*
 * utf8.h — every byte ckbench writes as JSON is valid UTF-8. Text reaches
 * us from places that do not promise it: a model's reply (binary, or cut by
 * a token limit), a compiler's message trimmed at a byte count (gcc's curly
 * quotes are three bytes), a file a crash left half-written. Writers do not
 * check by hand: they serialize with ckb_json_text, which repairs every
 * string of the tree first (an invalid byte becomes U+FFFD); trims go
 * through ckb_utf8_cut so that they end on a character boundary.
 */
#ifndef CKB_UTF8_H
#define CKB_UTF8_H

#include <stddef.h>

struct json_object;

/* Whether s[0..n) is valid UTF-8 (NUL bytes are valid: JSON writes \u0000). */
int ckb_utf8_valid(const char *s, size_t n);

/* The largest length <= n at which s can be cut without splitting a
 * character (s[0..n) may itself be invalid; only its end is looked at). */
size_t ckb_utf8_cut(const char *s, size_t n);

/* A copy of s[0..n) where every byte that is not part of a valid UTF-8
 * character is replaced by U+FFFD (EF BF BD); NUL-terminated, its length
 * in *outlen when outlen is not NULL. Aborts on out-of-memory. */
char *ckb_utf8_fix(const char *s, size_t n, size_t *outlen);

/* Repairs, in place, every string value of the tree (objects and arrays,
 * recursively). Returns the number of strings that were changed. */
int ckb_json_fix_utf8(struct json_object *o);

/* json_object_to_json_string_ext of o after ckb_json_fix_utf8: the text is
 * valid UTF-8 and valid JSON. Borrowed from o, as json-c's is. */
const char *ckb_json_text(struct json_object *o, int flags);

#endif /* CKB_UTF8_H */
