/*
 * openai.c — any OpenAI-compatible chat-completions endpoint: the OpenAI
 * API itself and local servers (vLLM, llama.cpp's server, Ollama), which
 * need no key.
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

#define OPENAI_NAME "openai"

typedef struct {
    ckb_http_endpoint ep; /* first: ckb_http_state_close frees the state */
    /* api.openai.com's reasoning models refuse max_tokens and want
     * max_completion_tokens, which every current OpenAI chat model takes;
     * local servers know max_tokens. */
    int official;
} openai_state;

static char *openai__body(const openai_state *s, const ckb_chat_msg *msgs, int nmsgs)
{
    json_object *root = json_object_new_object();
    json_object_object_add(root, "model", json_object_new_string(s->ep.model));
    json_object *arr = json_object_new_array();
    for (int i = 0; i < nmsgs; i++) {
        const char *role = msgs[i].role ? msgs[i].role : "user";
        json_object *m = json_object_new_object();
        json_object_object_add(m, "role", json_object_new_string(role));
        json_object_object_add(m, "content",
                               json_object_new_string(msgs[i].content ? msgs[i].content : ""));
        json_object_array_add(arr, m);
    }
    json_object_object_add(root, "messages", arr);
    json_object_object_add(root, s->official ? "max_completion_tokens" : "max_tokens",
                           json_object_new_int(s->ep.max_tokens));
    if (s->ep.temperature >= 0)
        json_object_object_add(root, "temperature", json_object_new_double(s->ep.temperature));
    /* valid UTF-8 whatever the prompt holds (a compiler's bytes, a reply's) */
    char *body =
        ckb_xstrdup(ckb_json_text(root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(root);
    return body;
}

/* choices[0].message.content: a string, or (some servers) a list of parts. */
static void openai__parse(json_object *root, ckb_reply *out)
{
    json_object *choices, *choice, *msg, *content, *usage;
    if (!json_object_object_get_ex(root, "choices", &choices) ||
        !json_object_is_type(choices, json_type_array) || json_object_array_length(choices) < 1 ||
        !(choice = json_object_array_get_idx(choices, 0)) ||
        !json_object_object_get_ex(choice, "message", &msg) ||
        !json_object_is_type(msg, json_type_object)) {
        const char *api_err = NULL;
        json_object *e;
        if (json_object_object_get_ex(root, "error", &e))
            api_err = json_object_is_type(e, json_type_string) ? json_object_get_string(e)
                                                               : ckb_json_str(e, "message");
        char why[300];
        snprintf(why, sizeof why, "reply has no choices[0].message%s%s", api_err ? ": " : "",
                 api_err ? api_err : "");
        out->status = CKB_REPLY_MALFORMED;
        ckb_provider_set_error(out->error, sizeof out->error, OPENAI_NAME, why);
        return;
    }
    ckb_json_copy_str(root, "model", out->model, sizeof out->model);
    if (json_object_object_get_ex(root, "usage", &usage)) {
        out->tokens_in = ckb_json_long(usage, "prompt_tokens");
        out->tokens_out = ckb_json_long(usage, "completion_tokens");
    }
    ckb_strbuf text = {0};
    if (json_object_object_get_ex(msg, "content", &content)) {
        if (json_object_is_type(content, json_type_string)) {
            ckb_strbuf_append(&text, json_object_get_string(content),
                              (size_t)json_object_get_string_len(content));
        } else if (json_object_is_type(content, json_type_array)) {
            for (size_t i = 0; i < json_object_array_length(content); i++) {
                const char *t = ckb_json_str(json_object_array_get_idx(content, i), "text");
                if (t)
                    ckb_strbuf_append(&text, t, strlen(t));
            }
        }
    }
    ckb_provider_take_text(out, &text, OPENAI_NAME, "finish_reason",
                           ckb_json_str(choice, "finish_reason"), ckb_json_str(msg, "refusal"));
}

static void openai__complete(void *state, const ckb_chat_msg *msgs, int nmsgs, const char *key,
                             ckb_reply *out)
{
    (void)key;
    openai_state *s = state;
    char *body = openai__body(s, msgs, nmsgs);
    ckb_http_chat(&s->ep, OPENAI_NAME, "Authorization: Bearer ", NULL, body, openai__parse, out);
    free(body);
}

int ckb_openai_open(const ckb_provider_config *c, ckb_backend *b, ckb_err *err)
{
    openai_state *s = ckb_xcalloc(1, sizeof *s);
    const char *base = c->base_url && *c->base_url ? c->base_url : getenv("CKB_OPENAI_BASE_URL");
    /* only the hosted API needs a key: a local server answers without one */
    int official = !base || !*base || ckb_http_url_host_is(base, "api.openai.com");
    if (ckb_http_endpoint_init(&s->ep, c, OPENAI_NAME, "CKB_OPENAI_BASE_URL",
                               "https://api.openai.com/v1", "OPENAI_API_KEY", !official, err) != 0)
        goto fail;
    s->official = official;
    ckb_http_endpoint_set_url(&s->ep, "/chat/completions");
    b->ops.complete = openai__complete;
    b->ops.close = ckb_http_state_close;
    b->state = s;
    b->keeps_cost = 0;
    return 0;
fail:
    ckb_http_state_close(s);
    return CKB_E_USAGE;
}
