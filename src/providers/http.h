/*
 * http.h — what the HTTP providers share (internal to src/providers/): the
 * endpoint and one chat call, a JSON POST with retries. Retries with
 * exponential backoff and jitter on 429, 5xx, timeouts and dropped
 * connections, honouring Retry-After (capped); any other 4xx is final. The API key only ever travels in a header: no error
 * text this module writes contains it.
 */
#ifndef CKB_PROVIDERS_HTTP_H
#define CKB_PROVIDERS_HTTP_H

#include <stddef.h>

#include "providers/provider.h"

/* What the three HTTP providers share: where, who, which model. */
typedef struct {
    char *base_url; /* without a trailing slash */
    char *api_key;  /* NULL when none is needed and none was set */
    char *model;
    double timeout_s, backoff_base_s;
    int max_retries, max_tokens;
    double temperature;
    char *url; /* the request URL, set by the provider (ckb_http_endpoint_set_url) */
} ckb_http_endpoint;

/* Resolves the endpoint: base URL from the config, else $<base_env>, else
 * default_base; the key from $<api_key_env or default_key_env>. A missing
 * key is an error unless key_optional; a missing model always is. */
int ckb_http_endpoint_init(ckb_http_endpoint *ep, const ckb_provider_config *c,
                           const char *provider, const char *base_env, const char *default_base,
                           const char *default_key_env, int key_optional, ckb_err *err);
void ckb_http_endpoint_free(ckb_http_endpoint *ep);

/* ep->url = ep->base_url followed by the formatted path. */
void ckb_http_endpoint_set_url(ckb_http_endpoint *ep, const char *path_fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The close op of an HTTP provider whose state is allocated with malloc and
 * begins with its ckb_http_endpoint. */
void ckb_http_state_close(void *state);

/* Reads a provider's 2xx reply into out (text, tokens, status). */
struct json_object;
typedef void (*ckb_http_parse_fn)(struct json_object *root, ckb_reply *out);

/* One chat call: posts body to ep->url with the key in the header
 * "<auth_prefix><key>" (none when ep has no key) and extra_header when not
 * NULL, then fills out with the transport fields and, for a 2xx, what parse
 * reads from the body. The header holding the key is wiped after use. */
void ckb_http_chat(const ckb_http_endpoint *ep, const char *provider, const char *auth_prefix,
                   const char *extra_header, const char *body, ckb_http_parse_fn parse,
                   ckb_reply *out);

/* 1 when url's host is exactly host (scheme and port ignored). */
int ckb_http_url_host_is(const char *url, const char *host);

#include "core/jsonget.h" /* the typed field readers the providers use */

#endif /* CKB_PROVIDERS_HTTP_H */
