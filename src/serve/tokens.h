/*
 * tokens.h — who may call the server. The token file holds one line per
 * client: its name, the SHA-256 of its token (never the token: a copy of
 * the file lets no one in) and its limits,
 *
 *     # name  hash                      limits (optional)
 *     alice   sha256:9f86d08...0f00a08  queued=2000 source_bytes=262144
 *
 * A request names its token as "Authorization: Bearer TOKEN"; the server
 * hashes it and compares in constant time. Each evaluation belongs to the
 * name of the token that submitted it, and a token sees only its own.
 */
#ifndef CKB_SERVE_TOKENS_H
#define CKB_SERVE_TOKENS_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

/* Limits of a token that names none (and of every caller without a file). */
#define CKB_TOKEN_DEFAULT_QUEUED 1000
#define CKB_TOKEN_DEFAULT_SOURCE_BYTES (256 * 1024)

typedef struct {
    char name[64];
    unsigned char hash[32];
    int64_t max_queued;       /* queued + running evaluations at once */
    int64_t max_source_bytes; /* of one candidate's source */
} ckb_token;

typedef struct {
    ckb_token *t;
    int n;
} ckb_tokens;

/* Reads path. CKB_OK, or a code with err naming the file and line. */
int ckb_tokens_load(const char *path, ckb_tokens *out, ckb_err *err);
void ckb_tokens_free(ckb_tokens *t);

/* The token whose hash is bearer's, or NULL. */
const ckb_token *ckb_tokens_check(const ckb_tokens *t, const char *bearer);

/* A new random token for name: appends its line to path (made 0600 when
 * new) and writes the token (64 hex digits) to token. CKB_OK, or a code
 * with err filled. */
int ckb_tokens_add(const char *path, const char *name, char token[65], ckb_err *err);

#endif /* CKB_SERVE_TOKENS_H */
