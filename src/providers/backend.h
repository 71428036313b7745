/*
 * backend.h — what provider.c needs from each provider (internal to
 * src/providers/). A backend is opened from the config into a pair of
 * functions and a state; provider.c wraps it with the concurrency limit,
 * the timing and the price table.
 */
#ifndef CKB_PROVIDERS_BACKEND_H
#define CKB_PROVIDERS_BACKEND_H

#include <stddef.h>

#include "core/strbuf.h"
#include "providers/provider.h"

typedef struct {
    ckb_provider_ops ops;
    void *state;    /* owned by the backend; ops.close frees it */
    int keeps_cost; /* 1: the backend's cost_usd is final (replay), skip the price table */
} ckb_backend;

/* Each fills *b and returns CKB_OK, or a code with err saying why. */
int ckb_openai_open(const ckb_provider_config *c, ckb_backend *b, ckb_err *err);
int ckb_anthropic_open(const ckb_provider_config *c, ckb_backend *b, ckb_err *err);
int ckb_gemini_open(const ckb_provider_config *c, ckb_backend *b, ckb_err *err);
int ckb_command_open(const ckb_provider_config *c, ckb_backend *b, ckb_err *err);
int ckb_replay_open(const ckb_provider_config *c, ckb_backend *b, ckb_err *err);

/* Writes "<prefix>: <text>" into dst with whitespace runs collapsed to one
 * space and the end cut (marked "...") to fit dstlen. */
void ckb_provider_set_error(char *dst, size_t dstlen, const char *prefix, const char *text);

/* Ends a reply's parse, the same for every API: the text gathered becomes
 * the reply (CKB_REPLY_OK, text taken); none is CKB_REPLY_EMPTY with "empty
 * reply (<reason_key> <reason>)<detail>" (text freed), the reason being why
 * the API says the model stopped ("unknown" when NULL), the detail anything
 * the API adds (a refusal: ": <text>"; NULL for none). */
void ckb_provider_take_text(ckb_reply *out, ckb_strbuf *text, const char *name,
                            const char *reason_key, const char *reason, const char *detail);

/* Price table (docs/FORMATS.md): NULL path gives an empty table. */
typedef struct ckb_price_table ckb_price_table;
int ckb_price_table_load(const char *path, ckb_price_table **out, ckb_err *err);
/* Dollars for the tokens, or -1 when the model has no price or a count is unknown. */
double ckb_price_table_cost(const ckb_price_table *t, const char *model, long tokens_in,
                            long tokens_out);
void ckb_price_table_free(ckb_price_table *t);

#endif /* CKB_PROVIDERS_BACKEND_H */
