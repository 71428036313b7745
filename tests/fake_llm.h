/*
 * fake_llm.h — a fake model API for tests: a real HTTP/1.1 server on
 * 127.0.0.1 (an ephemeral port), run by threads of the test process, that
 * answers either from a script (replies consumed in order of arrival) or
 * from a callback that reads each request. It records every request (path,
 * headers, body) for the test to assert on, and how many it held at once.
 *
 *   ckbt_fake_reply script[] = {{429, "{}", 0, "Retry-After: 0\r\n"},
 *                               {200, body, 0, NULL}};
 *   ckbt_fake_llm *f = ckbt_fake_llm_start(script, 2);
 *   ... point a provider (or `ckbench generate --base-url`) at ckbt_fake_llm_url(f) ...
 *   CKBT_EXPECT(ckbt_fake_llm_nrequests(f) == 2, ...);
 *   ckbt_fake_llm_stop(f);
 *
 * One connection per request (the server answers "Connection: close").
 * Starting also sets NO_PROXY so that libcurl never sends 127.0.0.1
 * through a proxy from the environment.
 */
#ifndef CKBT_FAKE_LLM_H
#define CKBT_FAKE_LLM_H

#include <stddef.h>

typedef struct {
    int code;            /* HTTP status; 0 means 200; < 0: hang up without answering */
    const char *body;    /* the response body (copied at start); NULL: empty */
    int delay_ms;        /* wait before answering; a client that hangs up ends the wait */
    const char *headers; /* extra header lines, each ending "\r\n"; NULL: none */
} ckbt_fake_reply;

typedef struct {
    char *method, *path;
    int nheaders;
    char **names, **values;
    char *body; /* NUL-terminated */
    size_t body_len;
} ckbt_fake_request;

/* Callback mode: returns the body to send (malloc'd; the server frees it)
 * and may change *code (preset to 200; < 0 hangs up without answering).
 * Called from the server's connection threads, possibly at once: it must
 * be thread-safe. */
typedef char *(*ckbt_fake_answer_fn)(void *ctx, const ckbt_fake_request *rq, int *code);

typedef struct ckbt_fake_llm ckbt_fake_llm;

/* NULL (with a message on stderr) when no socket could be had. Once the
 * script is used up, each further request gets a 500 saying so. */
ckbt_fake_llm *ckbt_fake_llm_start(const ckbt_fake_reply *script, int n);
ckbt_fake_llm *ckbt_fake_llm_start_fn(ckbt_fake_answer_fn fn, void *ctx);

/* "http://127.0.0.1:PORT", no trailing slash. Valid until stop. */
const char *ckbt_fake_llm_url(const ckbt_fake_llm *f);

/* Requests received so far (complete ones), in order of arrival. */
int ckbt_fake_llm_nrequests(ckbt_fake_llm *f);
/* The i-th request; valid until stop. NULL when there is none. */
const ckbt_fake_request *ckbt_fake_llm_request(ckbt_fake_llm *f, int i);
/* A header's value (name matched case-insensitively), NULL when absent. */
const char *ckbt_fake_llm_header(const ckbt_fake_request *rq, const char *name);
/* The most requests the server held unanswered at one time. */
int ckbt_fake_llm_max_in_flight(ckbt_fake_llm *f);

/* Stops the server, ends pending delays, joins its threads, frees it. */
void ckbt_fake_llm_stop(ckbt_fake_llm *f);

/* An OpenAI chat-completions body answering `content` (malloc'd). */
char *ckbt_fake_openai_body(const char *content, long tokens_in, long tokens_out,
                            const char *model);

#endif /* CKBT_FAKE_LLM_H */
