/* The fake model API of fake_llm.h: an accept thread and one thread per
 * connection, all woken by one stop pipe. */
#include "fake_llm.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/strbuf.h"

#define FAKE_IO_TIMEOUT_MS 10000

typedef struct fake__conn {
    pthread_t thread;
    int fd;
    struct ckbt_fake_llm *server;
    struct fake__conn *next;
} fake__conn;

struct ckbt_fake_llm {
    int listen_fd;
    int stop_pipe[2]; /* written once at stop; never read, so it stays readable */
    char url[64];
    pthread_t accept_thread;

    ckbt_fake_reply *script;
    int nscript, next_reply;
    ckbt_fake_answer_fn fn;
    void *fn_ctx;

    pthread_mutex_t lock; /* guards everything below */
    ckbt_fake_request **requests;
    int nrequests, cap_requests;
    int in_flight, max_in_flight;
    fake__conn *conns;
};

/* Waits until fd is readable or the server stops: 1 readable, 0 timeout,
 * -1 stopping. */
static int fake__wait(ckbt_fake_llm *f, int fd, int timeout_ms)
{
    struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = f->stop_pipe[0], .events = POLLIN}};
    for (;;) {
        int r = poll(p, 2, timeout_ms);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return 0;
        if (p[1].revents)
            return -1;
        return 1;
    }
}

static void fake__send_all(int fd, const char *data, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, data, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        data += w;
        n -= (size_t)w;
    }
}

static void fake__request_free(ckbt_fake_request *rq)
{
    if (!rq)
        return;
    for (int i = 0; i < rq->nheaders; i++) {
        free(rq->names[i]);
        free(rq->values[i]);
    }
    free(rq->names);
    free(rq->values);
    free(rq->method);
    free(rq->path);
    free(rq->body);
    free(rq);
}

/* Reads one request off fd; NULL when the client sent no whole request. */
static ckbt_fake_request *fake__read_request(ckbt_fake_llm *f, int fd)
{
    ckb_strbuf in = {0};
    ckbt_fake_request *rq = NULL;
    char buf[16384];
    char *end_of_head = NULL;
    while (!(end_of_head = in.data ? strstr(in.data, "\r\n\r\n") : NULL)) {
        if (fake__wait(f, fd, FAKE_IO_TIMEOUT_MS) != 1)
            goto fail;
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n <= 0)
            goto fail;
        ckb_strbuf_append(&in, buf, (size_t)n);
    }
    size_t head_len = (size_t)(end_of_head - in.data) + 4;
    *end_of_head = '\0';

    rq = calloc(1, sizeof *rq);
    char *save = NULL;
    char *line = strtok_r(in.data, "\r\n", &save);
    char *sp1 = line ? strchr(line, ' ') : NULL;
    char *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
    if (!sp2)
        goto fail;
    rq->method = strndup(line, (size_t)(sp1 - line));
    rq->path = strndup(sp1 + 1, (size_t)(sp2 - sp1 - 1));
    size_t content_length = 0;
    int expect_continue = 0;
    while ((line = strtok_r(NULL, "\r\n", &save)) != NULL) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        char *value = colon + 1;
        while (*value == ' ' || *value == '\t')
            value++;
        rq->names = realloc(rq->names, (size_t)(rq->nheaders + 1) * sizeof *rq->names);
        rq->values = realloc(rq->values, (size_t)(rq->nheaders + 1) * sizeof *rq->values);
        rq->names[rq->nheaders] = strndup(line, (size_t)(colon - line));
        rq->values[rq->nheaders] = strdup(value);
        if (strcasecmp(rq->names[rq->nheaders], "Content-Length") == 0)
            content_length = strtoul(value, NULL, 10);
        if (strcasecmp(rq->names[rq->nheaders], "Expect") == 0 &&
            strcasecmp(value, "100-continue") == 0)
            expect_continue = 1;
        rq->nheaders++;
    }
    if (expect_continue)
        fake__send_all(fd, "HTTP/1.1 100 Continue\r\n\r\n", 25);
    ckb_strbuf body = {0};
    if (in.len > head_len)
        ckb_strbuf_append(&body, in.data + head_len, in.len - head_len);
    while (body.len < content_length) {
        if (fake__wait(f, fd, FAKE_IO_TIMEOUT_MS) != 1) {
            ckb_strbuf_free(&body);
            goto fail;
        }
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n <= 0) {
            ckb_strbuf_free(&body);
            goto fail;
        }
        ckb_strbuf_append(&body, buf, (size_t)n);
    }
    rq->body_len = body.len;
    rq->body = ckb_strbuf_take(&body);
    ckb_strbuf_free(&in);
    return rq;
fail:
    ckb_strbuf_free(&in);
    fake__request_free(rq);
    return NULL;
}

static const char *fake__reason(int code)
{
    switch (code) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Status";
    }
}

static void *fake__serve(void *arg)
{
    fake__conn *c = arg;
    ckbt_fake_llm *f = c->server;
    ckbt_fake_request *rq = fake__read_request(f, c->fd);
    if (!rq)
        goto done;

    int code = 200, delay_ms = 0;
    char *body = NULL;
    const char *extra = NULL;
    pthread_mutex_lock(&f->lock);
    if (f->nrequests == f->cap_requests) {
        f->cap_requests = f->cap_requests ? 2 * f->cap_requests : 16;
        f->requests = realloc(f->requests, (size_t)f->cap_requests * sizeof *f->requests);
    }
    f->requests[f->nrequests++] = rq;
    if (++f->in_flight > f->max_in_flight)
        f->max_in_flight = f->in_flight;
    int index = f->next_reply++;
    pthread_mutex_unlock(&f->lock);

    if (f->fn) {
        body = f->fn(f->fn_ctx, rq, &code);
    } else if (index < f->nscript) {
        const ckbt_fake_reply *r = &f->script[index];
        code = r->code ? r->code : 200;
        body = strdup(r->body ? r->body : "");
        delay_ms = r->delay_ms;
        extra = r->headers;
    } else {
        code = 500;
        body = strdup("{\"error\":{\"message\":\"fake server: script exhausted\"}}");
    }
    /* a delay ends early when the client hangs up or the server stops */
    int hung_up = delay_ms > 0 && fake__wait(f, c->fd, delay_ms) != 0;

    pthread_mutex_lock(&f->lock);
    f->in_flight--;
    pthread_mutex_unlock(&f->lock);

    if (!hung_up && code >= 0) {
        ckb_strbuf out = {0};
        size_t blen = body ? strlen(body) : 0;
        ckb_strbuf_printf(&out,
                          "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
                          "Content-Length: %zu\r\nConnection: close\r\n%s\r\n",
                          code, fake__reason(code), blen, extra ? extra : "");
        if (blen)
            ckb_strbuf_append(&out, body, blen);
        fake__send_all(c->fd, out.data, out.len);
        ckb_strbuf_free(&out);
    }
    free(body);
done:
    shutdown(c->fd, SHUT_WR);
    close(c->fd);
    c->fd = -1;
    return NULL;
}

static void *fake__accept_loop(void *arg)
{
    ckbt_fake_llm *f = arg;
    for (;;) {
        if (fake__wait(f, f->listen_fd, -1) != 1)
            break;
        int fd = accept4(f->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        fake__conn *c = calloc(1, sizeof *c);
        c->fd = fd;
        c->server = f;
        if (pthread_create(&c->thread, NULL, fake__serve, c) != 0) {
            close(fd);
            free(c);
            continue;
        }
        pthread_mutex_lock(&f->lock);
        c->next = f->conns;
        f->conns = c;
        pthread_mutex_unlock(&f->lock);
    }
    return NULL;
}

static ckbt_fake_llm *fake__start(const ckbt_fake_reply *script, int n, ckbt_fake_answer_fn fn,
                                  void *ctx)
{
    ckbt_fake_llm *f = calloc(1, sizeof *f);
    f->listen_fd = -1;
    f->stop_pipe[0] = f->stop_pipe[1] = -1;
    pthread_mutex_init(&f->lock, NULL);
    f->fn = fn;
    f->fn_ctx = ctx;
    if (n > 0) {
        f->script = calloc((size_t)n, sizeof *f->script);
        for (int i = 0; i < n; i++) {
            f->script[i] = script[i];
            f->script[i].body = script[i].body ? strdup(script[i].body) : NULL;
            f->script[i].headers = script[i].headers ? strdup(script[i].headers) : NULL;
        }
        f->nscript = n;
    }
    setenv("NO_PROXY", "127.0.0.1,localhost", 1);
    setenv("no_proxy", "127.0.0.1,localhost", 1);

    struct sockaddr_in a = {
        .sin_family = AF_INET, .sin_port = 0, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    if (pipe2(f->stop_pipe, O_CLOEXEC) != 0 ||
        (f->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
        bind(f->listen_fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(f->listen_fd, 64) != 0 ||
        getsockname(f->listen_fd, (struct sockaddr *)&a, &alen) != 0) {
        fprintf(stderr, "fake_llm: no listening socket on 127.0.0.1: %s\n", strerror(errno));
        goto fail;
    }
    snprintf(f->url, sizeof f->url, "http://127.0.0.1:%d", ntohs(a.sin_port));
    if (pthread_create(&f->accept_thread, NULL, fake__accept_loop, f) != 0) {
        fprintf(stderr, "fake_llm: no accept thread\n");
        goto fail;
    }
    return f;
fail:
    if (f->listen_fd >= 0)
        close(f->listen_fd);
    f->listen_fd = -1;
    f->accept_thread = 0;
    ckbt_fake_llm_stop(f);
    return NULL;
}

ckbt_fake_llm *ckbt_fake_llm_start(const ckbt_fake_reply *script, int n)
{
    return fake__start(script, n, NULL, NULL);
}

ckbt_fake_llm *ckbt_fake_llm_start_fn(ckbt_fake_answer_fn fn, void *ctx)
{
    return fake__start(NULL, 0, fn, ctx);
}

const char *ckbt_fake_llm_url(const ckbt_fake_llm *f)
{
    return f->url;
}

int ckbt_fake_llm_nrequests(ckbt_fake_llm *f)
{
    pthread_mutex_lock(&f->lock);
    int n = f->nrequests;
    pthread_mutex_unlock(&f->lock);
    return n;
}

const ckbt_fake_request *ckbt_fake_llm_request(ckbt_fake_llm *f, int i)
{
    pthread_mutex_lock(&f->lock);
    const ckbt_fake_request *rq = i >= 0 && i < f->nrequests ? f->requests[i] : NULL;
    pthread_mutex_unlock(&f->lock);
    return rq;
}

const char *ckbt_fake_llm_header(const ckbt_fake_request *rq, const char *name)
{
    for (int i = 0; rq && i < rq->nheaders; i++)
        if (strcasecmp(rq->names[i], name) == 0)
            return rq->values[i];
    return NULL;
}

int ckbt_fake_llm_max_in_flight(ckbt_fake_llm *f)
{
    pthread_mutex_lock(&f->lock);
    int n = f->max_in_flight;
    pthread_mutex_unlock(&f->lock);
    return n;
}

void ckbt_fake_llm_stop(ckbt_fake_llm *f)
{
    if (!f)
        return;
    if (f->stop_pipe[1] >= 0 && write(f->stop_pipe[1], "x", 1) < 0)
        perror("fake_llm: stop");
    if (f->accept_thread)
        pthread_join(f->accept_thread, NULL);
    /* no new connections now: join the ones there are */
    for (fake__conn *c = f->conns, *next; c; c = next) {
        next = c->next;
        pthread_join(c->thread, NULL);
        free(c);
    }
    for (int i = 0; i < f->nrequests; i++)
        fake__request_free(f->requests[i]);
    free(f->requests);
    for (int i = 0; i < f->nscript; i++) {
        free((char *)f->script[i].body);
        free((char *)f->script[i].headers);
    }
    free(f->script);
    if (f->listen_fd >= 0)
        close(f->listen_fd);
    for (int k = 0; k < 2; k++)
        if (f->stop_pipe[k] >= 0)
            close(f->stop_pipe[k]);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

char *ckbt_fake_openai_body(const char *content, long tokens_in, long tokens_out, const char *model)
{
    json_object *root = json_object_new_object();
    json_object_object_add(root, "id", json_object_new_string("chatcmpl-fake"));
    json_object_object_add(root, "object", json_object_new_string("chat.completion"));
    json_object_object_add(root, "model", json_object_new_string(model ? model : "fake-model"));
    json_object *msg = json_object_new_object();
    json_object_object_add(msg, "role", json_object_new_string("assistant"));
    json_object_object_add(msg, "content", json_object_new_string(content ? content : ""));
    json_object *choice = json_object_new_object();
    json_object_object_add(choice, "index", json_object_new_int(0));
    json_object_object_add(choice, "message", msg);
    json_object_object_add(choice, "finish_reason", json_object_new_string("stop"));
    json_object *choices = json_object_new_array();
    json_object_array_add(choices, choice);
    json_object_object_add(root, "choices", choices);
    json_object *usage = json_object_new_object();
    json_object_object_add(usage, "prompt_tokens", json_object_new_int64(tokens_in));
    json_object_object_add(usage, "completion_tokens", json_object_new_int64(tokens_out));
    json_object_object_add(root, "usage", usage);
    char *s = strdup(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN));
    json_object_put(root);
    return s;
}
