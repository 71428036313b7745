/*
 * anthropic.c — Anthropic's messages API: the system prompt is a top-level
 * field, not a message; the reply is a list of content blocks.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/strbuf.h"
#include "core/utf8.h"
#include "providers/backend.h"
#include "providers/http.h"

#define ANTHROPIC_NAME "anthropic"

static char *anthropic__body(const ckb_http_endpoint *ep, const ckb_chat_msg *msgs, int nmsgs)
{
    json_object *root = json_object_new_object();
    json_object_object_add(root, "model", json_object_new_string(ep->model));
    json_object_object_add(root, "max_tokens", json_object_new_int(ep->max_tokens));
    ckb_strbuf system = {0};
    json_object *arr = json_object_new_array();
    for (int i = 0; i < nmsgs; i++) {
        const char *role = msgs[i].role ? msgs[i].role : "user";
        const char *content = msgs[i].content ? msgs[i].content : "";
        if (strcmp(role, "system") == 0) {
            if (system.len)
                ckb_strbuf_append(&system, "\n\n", 2);
            ckb_strbuf_append(&system, content, strlen(content));
            continue;
        }
        json_object *m = json_object_new_object();
        json_object_object_add(m, "role", json_object_new_string(role));
        json_object_object_add(m, "content", json_object_new_string(content));
        json_object_array_add(arr, m);
    }
    if (system.len)
        json_object_object_add(root, "system", json_object_new_string(system.data));
    json_object_object_add(root, "messages", arr);
    if (ep->temperature >= 0)
        json_object_object_add(root, "temperature", json_object_new_double(ep->temperature));
    /* valid UTF-8 whatever the prompt holds (a compiler's bytes, a reply's) */
    char *body =
        ckb_xstrdup(ckb_json_text(root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(root);
    ckb_strbuf_free(&system);
    return body;
}

static void anthropic__parse(json_object *root, ckb_reply *out)
{
    json_object *content, *usage;
    if (!json_object_object_get_ex(root, "content", &content) ||
        !json_object_is_type(content, json_type_array)) {
        out->status = CKB_REPLY_MALFORMED;
        ckb_provider_set_error(out->error, sizeof out->error, ANTHROPIC_NAME,
                               "reply has no content list");
        return;
    }
    ckb_json_copy_str(root, "model", out->model, sizeof out->model);
    if (json_object_object_get_ex(root, "usage", &usage)) {
        out->tokens_in = ckb_json_long(usage, "input_tokens");
        out->tokens_out = ckb_json_long(usage, "output_tokens");
    }
    /* text blocks only: thinking and tool blocks are not the answer */
    ckb_strbuf text = {0};
    for (size_t i = 0; i < json_object_array_length(content); i++) {
        json_object *block = json_object_array_get_idx(content, i);
        const char *type = ckb_json_str(block, "type");
        const char *t = ckb_json_str(block, "text");
        if (type && strcmp(type, "text") == 0 && t)
            ckb_strbuf_append(&text, t, strlen(t));
    }
    ckb_provider_take_text(out, &text, ANTHROPIC_NAME, "stop_reason",
                           ckb_json_str(root, "stop_reason"), NULL);
}

static void anthropic__complete(void *state, const ckb_chat_msg *msgs, int nmsgs, const char *key,
                                ckb_reply *out)
{
    (void)key;
    ckb_http_endpoint *ep = state;
    char *body = anthropic__body(ep, msgs, nmsgs);
    ckb_http_chat(ep, ANTHROPIC_NAME, "x-api-key: ", "anthropic-version: 2023-06-01", body,
                  anthropic__parse, out);
    free(body);
}

int ckb_anthropic_open(const ckb_provider_config *c, ckb_backend *b, ckb_err *err)
{
    ckb_http_endpoint *ep = ckb_xcalloc(1, sizeof *ep);
    if (ckb_http_endpoint_init(ep, c, ANTHROPIC_NAME, "CKB_ANTHROPIC_BASE_URL",
                               "https://api.anthropic.com", "ANTHROPIC_API_KEY", 0, err) != 0)
        goto fail;
    ckb_http_endpoint_set_url(ep, "/v1/messages");
    b->ops.complete = anthropic__complete;
    b->ops.close = ckb_http_state_close;
    b->state = ep;
    b->keeps_cost = 0;
    return 0;
fail:
    ckb_http_state_close(ep);
    return CKB_E_USAGE;
}
