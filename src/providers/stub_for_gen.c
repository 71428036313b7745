/*
 * stub_for_gen.c — a stand-in for the providers while they are written in
 * parallel: ckb_provider_custom works, ckb_provider_open refuses. The lead
 * deletes this file when merging the real providers (src/providers/).
 */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "providers/provider.h"

struct ckb_provider {
    char name[64];
    ckb_provider_ops ops;
    void *state;
};

const char *ckb_reply_status_name(ckb_reply_status s)
{
    static const char *names[] = {"ok", "empty", "malformed", "http_error",
                                  "timeout", "transport", "not_recorded"};
    return (unsigned)s < CKB_REPLY_COUNT ? names[s] : "unknown";
}

void ckb_provider_config_default(ckb_provider_config *c)
{
    memset(c, 0, sizeof *c);
    c->max_retries = 5;
    c->timeout_s = 300;
    c->concurrency = 4;
    c->temperature = -1;
}

ckb_provider *ckb_provider_open(const ckb_provider_config *c, char *err, size_t errlen)
{
    snprintf(err, errlen, "provider '%s' not built (stub_for_gen.c)", c->name ? c->name : "");
    return NULL;
}

ckb_provider *ckb_provider_custom(const char *name, const ckb_provider_ops *ops, void *state)
{
    ckb_provider *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    snprintf(p->name, sizeof p->name, "%s", name);
    p->ops = *ops;
    p->state = state;
    return p;
}

int ckb_provider_complete(ckb_provider *p, const ckb_chat_msg *msgs, int nmsgs, const char *key,
                          ckb_reply *out)
{
    memset(out, 0, sizeof *out);
    out->tokens_in = out->tokens_out = -1;
    out->cost_usd = -1;
    out->attempts = 1;
    p->ops.complete(p->state, msgs, nmsgs, key, out);
    if (out->status == CKB_REPLY_OK && (!out->text || !out->text[0]))
        out->status = CKB_REPLY_EMPTY;
    return out->status == CKB_REPLY_OK ? 0 : -1;
}

const char *ckb_provider_name(const ckb_provider *p) { return p->name; }

void ckb_reply_free(ckb_reply *r)
{
    free(r->text);
    r->text = NULL;
}

void ckb_provider_close(ckb_provider *p)
{
    if (!p)
        return;
    if (p->ops.close)
        p->ops.close(p->state);
    free(p);
}
