/*
 * provider.c — the layer every provider shares: dispatch by name, the
 * concurrency limit, timing, the invariants of a reply, the price table.
 */
#include "providers/provider.h"

#include <errno.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/proc.h"
#include "core/utf8.h"
#include "providers/backend.h"

struct ckb_provider {
    char name[32];
    char model[128]; /* as configured: the price table's fallback key */
    ckb_backend backend;
    sem_t slots; /* `concurrency` calls in flight at most */
    ckb_price_table *prices;
};

static const char *const provider__status_names[CKB_REPLY_COUNT] = {
    [CKB_REPLY_OK] = "ok",
    [CKB_REPLY_EMPTY] = "empty",
    [CKB_REPLY_MALFORMED] = "malformed",
    [CKB_REPLY_HTTP_ERROR] = "http_error",
    [CKB_REPLY_TIMEOUT] = "timeout",
    [CKB_REPLY_TRANSPORT] = "transport",
    [CKB_REPLY_NOT_RECORDED] = "not_recorded",
};
_Static_assert(CKB_REPLY_COUNT == 7, "a new reply status needs a name above");

const char *ckb_reply_status_name(ckb_reply_status s)
{
    if ((unsigned)s >= CKB_REPLY_COUNT)
        return "unknown";
    return provider__status_names[s];
}

void ckb_provider_config_default(ckb_provider_config *c)
{
    memset(c, 0, sizeof *c);
    c->max_retries = 5;
    c->timeout_s = 300.0;
    c->concurrency = 4;
    c->temperature = -1.0;
    c->max_tokens = 8192;
}

void ckb_provider_set_error(char *dst, size_t dstlen, const char *prefix, const char *text)
{
    if (dstlen == 0)
        return;
    size_t o = 0;
    if (prefix && *prefix) {
        int n = snprintf(dst, dstlen, "%s: ", prefix);
        o = n < 0 ? 0 : ((size_t)n < dstlen ? (size_t)n : dstlen - 1);
    }
    /* whitespace runs (newlines of a stack trace or an HTML page) become one space */
    int space = 1;
    const char *s = text ? text : "";
    for (; *s && o + 1 < dstlen; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t') {
            if (!space)
                dst[o++] = ' ';
            space = 1;
        } else {
            dst[o++] = (char)ch;
            space = 0;
        }
    }
    while (o > 0 && dst[o - 1] == ' ')
        o--;
    dst[o] = '\0';
    if (*s && dstlen > 4) { /* cut: say so, on a character boundary */
        size_t at = ckb_utf8_cut(dst, o < dstlen - 4 ? o : dstlen - 4);
        memcpy(dst + at, "...", 4);
    }
}

void ckb_provider_take_text(ckb_reply *out, ckb_strbuf *text, const char *name,
                            const char *reason_key, const char *reason, const char *detail)
{
    if (text->len == 0) {
        char msg[300];
        snprintf(msg, sizeof msg, "empty reply (%s %s)%s%s", reason_key, reason ? reason : "unknown",
                 detail ? ": " : "", detail ? detail : "");
        out->status = CKB_REPLY_EMPTY;
        ckb_provider_set_error(out->error, sizeof out->error, name, msg);
        ckb_strbuf_free(text);
        return;
    }
    out->status = CKB_REPLY_OK;
    out->text = ckb_strbuf_take(text);
}

typedef int (*provider__open_fn)(const ckb_provider_config *, ckb_backend *, ckb_err *);
static const struct {
    const char *name;
    provider__open_fn open;
} provider__registry[] = {
    {"openai", ckb_openai_open},   {"anthropic", ckb_anthropic_open}, {"gemini", ckb_gemini_open},
    {"command", ckb_command_open}, {"replay", ckb_replay_open},
};

/* The wrapper around a backend; takes ownership of it (and of prices). */
static ckb_provider *provider__wrap(const char *name, const char *model, const ckb_backend *b,
                                    int concurrency, ckb_price_table *prices)
{
    ckb_provider *p = ckb_xcalloc(1, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name ? name : "custom");
    snprintf(p->model, sizeof p->model, "%s", model ? model : "");
    p->backend = *b;
    p->prices = prices;
    sem_init(&p->slots, 0, (unsigned)(concurrency > 0 ? concurrency : 4));
    return p;
}

ckb_provider *ckb_provider_open(const ckb_provider_config *c, ckb_err *err)
{
    ckb_backend b = {0};
    ckb_price_table *prices = NULL;
    provider__open_fn open = NULL;
    for (size_t i = 0; i < sizeof provider__registry / sizeof provider__registry[0]; i++)
        if (c->name && strcmp(c->name, provider__registry[i].name) == 0)
            open = provider__registry[i].open;
    if (!open) {
        ckb_err_set(err, CKB_E_USAGE,
                    "unknown provider '%s': use openai, anthropic, gemini, command or replay",
                    c->name ? c->name : "(none)");
        goto fail;
    }
    if (ckb_price_table_load(c->price_file, &prices, err) != 0)
        goto fail;
    if (open(c, &b, err) != 0)
        goto fail;
    return provider__wrap(c->name, c->model, &b, c->concurrency, prices);
fail:
    ckb_price_table_free(prices);
    return NULL;
}

ckb_provider *ckb_provider_custom(const char *name, const ckb_provider_ops *ops, void *state)
{
    ckb_backend b = {.ops = *ops, .state = state, .keeps_cost = 1};
    ckb_provider_config d;
    ckb_provider_config_default(&d);
    return provider__wrap(name, NULL, &b, d.concurrency, NULL);
}

int ckb_provider_complete(ckb_provider *p, const ckb_chat_msg *msgs, int nmsgs, const char *key,
                          ckb_reply *out)
{
    memset(out, 0, sizeof *out);
    out->tokens_in = out->tokens_out = -1;
    out->cost_usd = -1;
    out->attempts = 1;

    while (sem_wait(&p->slots) != 0 && errno == EINTR)
        ;
    /* latency counts the call, not the wait for a slot */
    double t0 = ckb_now();
    p->backend.ops.complete(p->backend.state, msgs, nmsgs, key, out);
    out->latency_s = ckb_now() - t0;
    sem_post(&p->slots);

    /* the invariants callers rely on: text is NULL or non-empty; OK means some */
    if (out->text && !*out->text) {
        free(out->text);
        out->text = NULL;
    }
    if (out->status == CKB_REPLY_OK && !out->text) {
        out->status = CKB_REPLY_EMPTY;
        if (!out->error[0])
            ckb_provider_set_error(out->error, sizeof out->error, p->name, "empty reply");
    }
    if (out->status != CKB_REPLY_OK && !out->error[0])
        ckb_provider_set_error(out->error, sizeof out->error, p->name,
                               ckb_reply_status_name(out->status));
    if (!out->model[0])
        snprintf(out->model, sizeof out->model, "%s", p->model);
    if (!p->backend.keeps_cost && out->cost_usd < 0 && p->prices) {
        out->cost_usd =
            ckb_price_table_cost(p->prices, out->model, out->tokens_in, out->tokens_out);
        if (out->cost_usd < 0) /* the API's dated name may be missing, the configured one not */
            out->cost_usd =
                ckb_price_table_cost(p->prices, p->model, out->tokens_in, out->tokens_out);
    }
    return out->status == CKB_REPLY_OK ? 0 : -1;
}

int ckb_reply_is_infra(const ckb_reply *r)
{
    if (r->status == CKB_REPLY_TRANSPORT)
        return 1;
    if (r->status != CKB_REPLY_HTTP_ERROR)
        return 0;
    int c = r->http_code;
    return c == 401 || c == 403 || c == 404 || c == 407 || c == 408 || c == 429 || c >= 500;
}

const char *ckb_provider_name(const ckb_provider *p)
{
    return p->name;
}

void ckb_reply_free(ckb_reply *r)
{
    if (!r)
        return;
    free(r->text);
    r->text = NULL;
}

void ckb_provider_close(ckb_provider *p)
{
    if (!p)
        return;
    if (p->backend.ops.close)
        p->backend.ops.close(p->backend.state);
    sem_destroy(&p->slots);
    ckb_price_table_free(p->prices);
    free(p);
}
