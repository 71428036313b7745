/*
 * provider.h — a model behind one call: messages in, reply text out, with
 * what the call cost (DESIGN §7). Providers: openai (any OpenAI-compatible
 * chat-completions endpoint), anthropic (messages API), gemini
 * (generateContent), command (a program: prompt on stdin, reply on stdout),
 * replay (replies read back from a recorded run).
 *
 * A provider never aborts the caller: a failed call is a reply with a status
 * (the sample records it), and only a configuration that cannot work (no
 * key, no endpoint, no such run to replay) fails at open time.
 *
 * ckb_provider_complete may be called from several threads at once; the
 * provider itself holds the configured concurrency limit.
 */
#ifndef CKB_PROVIDER_H
#define CKB_PROVIDER_H

#include <stddef.h>

#include "core/error.h"

typedef enum {
    CKB_REPLY_OK = 0,
    CKB_REPLY_EMPTY,      /* the call worked, the model said nothing */
    CKB_REPLY_MALFORMED,  /* a body that is not the API's JSON */
    CKB_REPLY_HTTP_ERROR, /* a 4xx/5xx left after retries */
    CKB_REPLY_TIMEOUT,    /* no answer within the timeout, after retries */
    CKB_REPLY_TRANSPORT,  /* connection refused, DNS, TLS, a command that failed */
    CKB_REPLY_NOT_RECORDED, /* replay: the run holds no reply for this key */
    CKB_REPLY_COUNT
} ckb_reply_status;

/* Stable lower-case names: "ok", "empty", "malformed", "http_error",
 * "timeout", "transport", "not_recorded". */
const char *ckb_reply_status_name(ckb_reply_status s);

typedef struct {
    const char *role; /* "system", "user" or "assistant" */
    const char *content;
} ckb_chat_msg;

typedef struct {
    ckb_reply_status status;
    char *text;         /* malloc'd reply text; NULL unless there is some */
    char error[512];    /* why, when status != OK (trimmed, no secrets) */
    char model[128];    /* the model that answered, as the API names it */
    long tokens_in, tokens_out; /* -1 when the API did not say */
    double latency_s;   /* wall time of the call, retries included */
    double cost_usd;    /* from the price table; -1 when no price is known */
    int attempts;       /* 1 + retries */
    int http_code;      /* the last HTTP status, 0 for non-HTTP providers */
} ckb_reply;

typedef struct {
    const char *name;        /* openai | anthropic | gemini | command | replay */
    const char *model;       /* required for the HTTP providers */
    const char *base_url;    /* NULL: $CKB_<NAME>_BASE_URL, then the public default */
    const char *api_key_env; /* NULL: OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY */
    const char *command;     /* command: the program line, run by /bin/sh -c */
    const char *replay_run;  /* replay: the run folder whose records answer */
    const char *price_file;  /* NULL or a JSON price table (docs/FORMATS.md) */
    int max_retries;         /* on 429, 5xx, timeouts (default 5) */
    double timeout_s;        /* per attempt (default 300) */
    int concurrency;         /* calls in flight at once (default 4) */
    double temperature;      /* < 0: the API's default */
    int max_tokens;          /* <= 0: 8192 */
} ckb_provider_config;

void ckb_provider_config_default(ckb_provider_config *c);

typedef struct ckb_provider ckb_provider;

/* Opens a provider. NULL with a message in err when it cannot work: an
 * unknown name, a missing key or model, a replay run that is not there. */
ckb_provider *ckb_provider_open(const ckb_provider_config *c, ckb_err *err);

/* A provider made of two functions, for tests and for embedding. */
typedef struct {
    void (*complete)(void *state, const ckb_chat_msg *msgs, int nmsgs, const char *key,
                     ckb_reply *out);
    void (*close)(void *state);
} ckb_provider_ops;
ckb_provider *ckb_provider_custom(const char *name, const ckb_provider_ops *ops, void *state);

/* One call. key names the request inside the run ("8p_GEMM#17": workload and
 * sample index); replay answers by it, the others ignore it. Always fills
 * *out (zeroed first); returns 0 when out->status is OK, else -1. */
int ckb_provider_complete(ckb_provider *p, const ckb_chat_msg *msgs, int nmsgs, const char *key,
                          ckb_reply *out);

/* Whether a failed reply is the infrastructure's fault, not the model's:
 * a transport failure (connection refused, DNS, TLS; a command that could
 * not start, exited non-zero or was killed), or an HTTP status that says
 * the service, not the model, refused: 401, 403, 404 (no such model or
 * endpoint), 407, 408, 429 and 5xx, after the retries. Such a call is
 * not a sample: it is recorded as infra_error, never scored, and asked
 * again on resume. A timeout, an empty or malformed reply are the
 * model's (0). */
int ckb_reply_is_infra(const ckb_reply *r);

const char *ckb_provider_name(const ckb_provider *p);
void ckb_reply_free(ckb_reply *r);
void ckb_provider_close(ckb_provider *p);

#endif /* CKB_PROVIDER_H */
