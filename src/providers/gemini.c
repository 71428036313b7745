/*
 * gemini.c — Google's generateContent: roles are user and model, the
 * system prompt is systemInstruction, the reply is the first candidate's
 * parts.
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

#define GEMINI_NAME "gemini"

static json_object *gemini__parts(const char *text)
{
    json_object *parts = json_object_new_array();
    json_object *p = json_object_new_object();
    json_object_object_add(p, "text", json_object_new_string(text));
    json_object_array_add(parts, p);
    return parts;
}

static char *gemini__body(const ckb_http_endpoint *ep, const ckb_chat_msg *msgs, int nmsgs)
{
    json_object *root = json_object_new_object();
    ckb_strbuf system = {0};
    json_object *contents = json_object_new_array();
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
        json_object_object_add(
            m, "role", json_object_new_string(strcmp(role, "assistant") == 0 ? "model" : "user"));
        json_object_object_add(m, "parts", gemini__parts(content));
        json_object_array_add(contents, m);
    }
    if (system.len) {
        json_object *si = json_object_new_object();
        json_object_object_add(si, "parts", gemini__parts(system.data));
        json_object_object_add(root, "systemInstruction", si);
    }
    json_object_object_add(root, "contents", contents);
    json_object *gc = json_object_new_object();
    json_object_object_add(gc, "maxOutputTokens", json_object_new_int(ep->max_tokens));
    if (ep->temperature >= 0)
        json_object_object_add(gc, "temperature", json_object_new_double(ep->temperature));
    json_object_object_add(root, "generationConfig", gc);
    /* valid UTF-8 whatever the prompt holds (a compiler's bytes, a reply's) */
    char *body =
        ckb_xstrdup(ckb_json_text(root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(root);
    ckb_strbuf_free(&system);
    return body;
}

static void gemini__parse(json_object *root, ckb_reply *out)
{
    json_object *cands, *usage, *content, *parts;
    ckb_json_copy_str(root, "modelVersion", out->model, sizeof out->model);
    if (json_object_object_get_ex(root, "usageMetadata", &usage)) {
        out->tokens_in = ckb_json_long(usage, "promptTokenCount");
        out->tokens_out = ckb_json_long(usage, "candidatesTokenCount");
        long thoughts = ckb_json_long(usage, "thoughtsTokenCount");
        if (thoughts > 0) /* thinking is billed as output */
            out->tokens_out = (out->tokens_out > 0 ? out->tokens_out : 0) + thoughts;
    }
    if (!json_object_object_get_ex(root, "candidates", &cands)) {
        json_object *fb;
        const char *block = json_object_object_get_ex(root, "promptFeedback", &fb)
                                ? ckb_json_str(fb, "blockReason")
                                : NULL;
        out->status = block ? CKB_REPLY_EMPTY : CKB_REPLY_MALFORMED;
        char msg[200];
        snprintf(msg, sizeof msg, block ? "prompt blocked (%s)" : "reply has no candidates%s",
                 block ? block : "");
        ckb_provider_set_error(out->error, sizeof out->error, GEMINI_NAME, msg);
        return;
    }
    json_object *cand =
        json_object_is_type(cands, json_type_array) && json_object_array_length(cands) > 0
            ? json_object_array_get_idx(cands, 0)
            : NULL;
    if (!cand || !json_object_is_type(cand, json_type_object)) {
        out->status = CKB_REPLY_MALFORMED;
        ckb_provider_set_error(out->error, sizeof out->error, GEMINI_NAME,
                               "reply's candidates is not a non-empty list");
        return;
    }
    ckb_strbuf text = {0};
    if (json_object_object_get_ex(cand, "content", &content) &&
        json_object_object_get_ex(content, "parts", &parts) &&
        json_object_is_type(parts, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(parts); i++) {
            json_object *part = json_object_array_get_idx(parts, i), *thought;
            const char *t = ckb_json_str(part, "text");
            if (json_object_object_get_ex(part, "thought", &thought) &&
                json_object_get_boolean(thought))
                continue; /* a thought summary is not the answer */
            if (t)
                ckb_strbuf_append(&text, t, strlen(t));
        }
    }
    ckb_provider_take_text(out, &text, GEMINI_NAME, "finishReason", ckb_json_str(cand, "finishReason"),
                           NULL);
}

static void gemini__complete(void *state, const ckb_chat_msg *msgs, int nmsgs, const char *key,
                             ckb_reply *out)
{
    (void)key;
    ckb_http_endpoint *ep = state;
    char *body = gemini__body(ep, msgs, nmsgs);
    ckb_http_chat(ep, GEMINI_NAME, "x-goog-api-key: ", NULL, body, gemini__parse, out);
    free(body);
}

int ckb_gemini_open(const ckb_provider_config *c, ckb_backend *b, ckb_err *err)
{
    ckb_http_endpoint *ep = ckb_xcalloc(1, sizeof *ep);
    if (ckb_http_endpoint_init(ep, c, GEMINI_NAME, "CKB_GEMINI_BASE_URL",
                               "https://generativelanguage.googleapis.com", "GEMINI_API_KEY", 0,
                               err) != 0)
        goto fail;
    /* "models/gemini-x" and "gemini-x" name the same model */
    const char *model = strncmp(ep->model, "models/", 7) == 0 ? ep->model + 7 : ep->model;
    ckb_http_endpoint_set_url(ep, "/v1beta/models/%s:generateContent", model);
    b->ops.complete = gemini__complete;
    b->ops.close = ckb_http_state_close;
    b->state = ep;
    b->keeps_cost = 0;
    return 0;
fail:
    ckb_http_state_close(ep);
    return CKB_E_USAGE;
}
