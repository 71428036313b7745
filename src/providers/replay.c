/*
 * replay.c — a recorded run as a model: RUN/records.jsonl (docs/FORMATS.md)
 * is read once at open and indexed by `key`; a call answers with what was
 * recorded for its key (text, status, tokens, model, cost, attempts), so a
 * replayed run sees exactly the replies the original saw. The index is
 * read-only after open: calls from several threads need no lock.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/jsonl.h"
#include "core/strbuf.h"
#include "providers/backend.h"
#include "providers/http.h"

#define REPLAY_NAME "replay"

typedef struct {
    char *key;
    long line; /* the later line wins when a key repeats */
    ckb_reply_status status;
    char *text;
    char *error;
    char model[128];
    long tokens_in, tokens_out, attempts;
    double cost_usd;
} replay_record;

typedef struct {
    replay_record *recs;
    size_t n;
    char *path;
} replay_state;

static int replay__cmp(const void *a, const void *b)
{
    const replay_record *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->line > y->line) - (x->line < y->line);
}

static int replay__cmp_key(const void *key, const void *rec)
{
    return strcmp(key, ((const replay_record *)rec)->key);
}

static ckb_reply_status replay__status(const char *name)
{
    for (int s = 0; s < CKB_REPLY_COUNT; s++)
        if (name && strcmp(name, ckb_reply_status_name((ckb_reply_status)s)) == 0)
            return (ckb_reply_status)s;
    return CKB_REPLY_COUNT;
}

/* One call's record (a sample, or a beam sample's plan_call) into *r; 0
 * when it has a key, -1 to skip it. */
static int replay__parse_call(json_object *o, long lineno, replay_record *r)
{
    json_object *v;
    int rc = -1;
    const char *key = ckb_json_str(o, "key");
    if (!o || !json_object_is_type(o, json_type_object) || !key)
        goto cleanup;
    memset(r, 0, sizeof *r);
    r->key = ckb_xstrdup(key);
    r->line = lineno;
    const char *status = ckb_json_str(o, "reply_status");
    r->status = replay__status(status ? status : "ok");
    const char *text = ckb_json_str(o, "reply");
    r->text = text ? ckb_xstrdup(text) : NULL;
    const char *error = ckb_json_str(o, "reply_error");
    if (r->status == CKB_REPLY_COUNT) {
        r->status = CKB_REPLY_MALFORMED;
        error = "the record's reply_status is not a known status";
    }
    r->error = error ? ckb_xstrdup(error) : NULL;
    const char *model = ckb_json_str(o, "model_reported");
    if (!model || !*model)
        model = ckb_json_str(o, "model");
    if (model)
        snprintf(r->model, sizeof r->model, "%s", model);
    r->tokens_in = ckb_json_long(o, "tokens_in");
    r->tokens_out = ckb_json_long(o, "tokens_out");
    r->attempts = ckb_json_long(o, "attempts");
    r->cost_usd = -1;
    if (json_object_object_get_ex(o, "cost_usd", &v) &&
        (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
        r->cost_usd = json_object_get_double(v);
    rc = 0;
cleanup:
    return rc;
}

typedef struct {
    replay_state *s;
    size_t cap;
} replay__loader;

/* One record (borrowed) into up to two replies: the sample's call and its
 * plan call. */
static void replay__value(void *ctx, json_object *o, int lineno)
{
    replay__loader *ld = ctx;
    replay_state *s = ld->s;
    if (s->n + 2 > ld->cap) {
        size_t cap = ld->cap ? 2 * ld->cap : 64;
        s->recs = ckb_xrealloc(s->recs, cap * sizeof *s->recs);
        ld->cap = cap;
    }
    json_object *plan;
    if (replay__parse_call(o, lineno, &s->recs[s->n]) == 0)
        s->n++;
    if (json_object_is_type(o, json_type_object) &&
        json_object_object_get_ex(o, "plan_call", &plan) &&
        json_object_is_type(plan, json_type_object) &&
        replay__parse_call(plan, lineno, &s->recs[s->n]) == 0)
        s->n++;
}

static void replay__complete(void *state, const ckb_chat_msg *msgs, int nmsgs, const char *key,
                             ckb_reply *out)
{
    (void)msgs;
    (void)nmsgs;
    replay_state *s = state;
    const replay_record *r =
        key ? bsearch(key, s->recs, s->n, sizeof *s->recs, replay__cmp_key) : NULL;
    if (!r) {
        char msg[300];
        snprintf(msg, sizeof msg, "no record for key '%s' in %s", key ? key : "(none)", s->path);
        out->status = CKB_REPLY_NOT_RECORDED;
        ckb_provider_set_error(out->error, sizeof out->error, REPLAY_NAME, msg);
        return;
    }
    out->status = r->status;
    out->text = r->text ? ckb_xstrdup(r->text) : NULL;
    if (r->status != CKB_REPLY_OK)
        ckb_provider_set_error(out->error, sizeof out->error, REPLAY_NAME,
                               r->error ? r->error : ckb_reply_status_name(r->status));
    snprintf(out->model, sizeof out->model, "%s", r->model);
    out->tokens_in = r->tokens_in;
    out->tokens_out = r->tokens_out;
    out->cost_usd = r->cost_usd;
    out->attempts = r->attempts > 0 ? (int)r->attempts : 1;
}

static void replay__close(void *state)
{
    replay_state *s = state;
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        free(s->recs[i].key);
        free(s->recs[i].text);
        free(s->recs[i].error);
    }
    free(s->recs);
    free(s->path);
    free(s);
}

int ckb_replay_open(const ckb_provider_config *c, ckb_backend *b, ckb_err *err)
{
    replay_state *s = NULL;
    char *data = NULL;
    struct stat st;
    if (!c->replay_run || !*c->replay_run) {
        ckb_err_set(err, CKB_E_USAGE,
                    "replay: no run given: name the run folder to replay (--replay RUN)");
        goto fail;
    }
    if (stat(c->replay_run, &st) != 0) {
        ckb_err_set(err, CKB_E_NOT_FOUND, "replay: run folder %s: %s", c->replay_run,
                    strerror(errno));
        goto fail;
    }
    if (!S_ISDIR(st.st_mode)) {
        ckb_err_set(err, CKB_E_USAGE, "replay: %s is not a folder: give the run folder to replay",
                    c->replay_run);
        goto fail;
    }
    s = ckb_xcalloc(1, sizeof *s);
    ckb_strbuf path = {0};
    ckb_strbuf_printf(&path, "%s/records.jsonl", c->replay_run);
    s->path = ckb_strbuf_take(&path);
    size_t len = 0;
    data = ckb_read_file(s->path, &len);
    if (!data) {
        ckb_err_set(err, CKB_E_NOT_FOUND,
                    "replay: cannot read %s (%s): is %s a ckbench generate run?", s->path,
                    strerror(errno), c->replay_run);
        goto fail;
    }
    /* NUL bytes and garbage are skipped, whole records kept (core/jsonl.h);
     * a half-written last line of a killed run fails to parse: harmless */
    replay__loader ld = {s, 0};
    ckb_jsonl_stats js;
    ckb_jsonl_each(data, len, replay__value, &ld, &js);
    ckb_jsonl_warn(s->path, &js);
    if (s->n == 0) {
        free(s->recs);
        s->recs = NULL;
    }
    qsort(s->recs, s->n, sizeof *s->recs, replay__cmp);
    /* keep the last record of each key */
    size_t o = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (i + 1 < s->n && strcmp(s->recs[i].key, s->recs[i + 1].key) == 0) {
            free(s->recs[i].key);
            free(s->recs[i].text);
            free(s->recs[i].error);
            continue;
        }
        s->recs[o++] = s->recs[i];
    }
    s->n = o;
    free(data);
    b->ops.complete = replay__complete;
    b->ops.close = replay__close;
    b->state = s;
    b->keeps_cost = 1;
    return CKB_OK;
fail:
    free(data);
    replay__close(s);
    return err ? err->code : CKB_E_USAGE;
}
