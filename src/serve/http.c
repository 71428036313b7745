/*
 * The HTTP side of the server on libmicrohttpd: its thread pool reads
 * requests, this file gathers bodies under a size limit, checks who calls,
 * hands the request to the routes (api.c) and sends the answer. A
 * long-poll is a suspended connection, resumed when an evaluation ends
 * (ckb_http_wake) and once a second to look at its deadline, so that it
 * holds no thread while it waits.
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "core/fsutil.h"
#include "core/proc.h"
#include "serve/serve_priv.h"

/* A request's whole receipt, headers to the last body byte, may take at
 * most this long: a client that sends a byte now and then is cut off. */
#define HTTP__RECEIVE_S 60.0

/* Bytes of request bodies held at once, every connection's together: past
 * it a body is refused (503) rather than the server's memory taken. */
#define HTTP__BODIES_MAX (256L << 20)
static long http__bodies; /* held now (atomic) */

typedef struct http__req {
    double t0;
    const ckb_token *tok;      /* who calls, checked before any body byte is read */
    int too_busy;
    char *body;
    size_t len, cap;
    int too_large;
    double deadline;           /* a long-poll's, kept across resumptions */
    struct MHD_Connection *conn;
    struct http__req *next;    /* in the list of suspended long-polls */
} http__req;

static http__req *http__waiting; /* guarded by s->wait_mu */

static const char *http__arg(void *ctx, const char *name)
{
    return MHD_lookup_connection_value((struct MHD_Connection *)ctx, MHD_GET_ARGUMENT_KIND, name);
}

static int http__loopback(const struct sockaddr *sa)
{
    if (!sa)
        return 0;
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (IN6_IS_ADDR_LOOPBACK(a))
            return 1;
        /* ::ffff:127.x.y.z */
        return IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127;
    }
    return 0;
}

static enum MHD_Result http__send(ckb_server *s, struct MHD_Connection *c, http__req *h,
                                  ckb_api_response *r)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(r->len, r->body, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(r->body);
        return MHD_NO;
    }
    r->body = NULL;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                            r->content_type ? r->content_type : "application/json");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    if (r->retry_after > 0) {
        char v[16];
        snprintf(v, sizeof v, "%d", r->retry_after);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, v);
    }
    if (r->allow)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, r->allow);
    if (r->status == 401)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)r->status, resp);
    MHD_destroy_response(resp);
    ckb_metrics_observe_http(s->metrics, r->status, ckb_now() - h->t0);
    return ret;
}

/* An error answered here, before the routes; retry_after 0: no Retry-After. */
static enum MHD_Result http__error(ckb_server *s, struct MHD_Connection *c, http__req *h,
                                   int status, const char *code, const char *msg,
                                   int retry_after)
{
    ckb_api_response r;
    memset(&r, 0, sizeof r);
    ckb_api_error_response(&r, status, code, msg);
    r.retry_after = retry_after;
    return http__send(s, c, h, &r);
}

/* The caller's token: 0 with *tok (NULL when the server has no token
 * file), or -1 when the request is refused (answered here). */
static int http__auth(ckb_server *s, struct MHD_Connection *c, http__req *h,
                      const ckb_token **tok, enum MHD_Result *ret)
{
    *tok = NULL;
    if (s->tokens.n == 0) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        if (ci && http__loopback(ci->client_addr))
            return 0;
        *ret = http__error(s, c, h, 403, "forbidden",
                           "this server has no token file and serves loopback callers only", 0);
        return -1;
    }
    const char *a = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (a && strncasecmp(a, "Bearer ", 7) == 0)
        *tok = ckb_tokens_check(&s->tokens, a + 7);
    if (!*tok) {
        *ret = http__error(s, c, h, 401, "unauthorized",
                           a ? "the token is not known here"
                             : "send the token as 'Authorization: Bearer TOKEN'",
                           0);
        return -1;
    }
    return 0;
}

static enum MHD_Result http__handler(void *cls, struct MHD_Connection *c, const char *url,
                                     const char *method, const char *version,
                                     const char *upload, size_t *upload_size, void **con_cls)
{
    (void)version;
    ckb_server *s = cls;
    http__req *h = *con_cls;
    if (!h) {
        if (!(h = calloc(1, sizeof *h)))
            return MHD_NO;
        h->t0 = ckb_now();
        h->conn = c;
        *con_cls = h;
        /* Who calls and how much they send are known from the headers: a
         * refusal needs no body byte read. */
        enum MHD_Result ret = MHD_NO;
        if (strcmp(url, "/healthz") != 0 && http__auth(s, c, h, &h->tok, &ret) != 0)
            return ret;
        const char *cl =
            MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoll(cl, NULL, 10) > s->c.max_body)
            h->too_large = 1;
        return MHD_YES;
    }
    if (*upload_size) {
        if (ckb_now() - h->t0 > HTTP__RECEIVE_S)
            return MHD_NO; /* too slow a sender: the connection is closed */
        if (!h->too_large && h->len + *upload_size > (size_t)s->c.max_body) {
            h->too_large = 1;
        } else if (!h->too_large && !h->too_busy) {
            if (h->len + *upload_size + 1 > h->cap) {
                size_t cap = (h->len + *upload_size + 1) * 2;
                if (cap > (size_t)s->c.max_body + 1)
                    cap = (size_t)s->c.max_body + 1;
                long grow = (long)(cap - h->cap);
                if (__atomic_add_fetch(&http__bodies, grow, __ATOMIC_RELAXED) >
                    HTTP__BODIES_MAX) {
                    __atomic_sub_fetch(&http__bodies, grow, __ATOMIC_RELAXED);
                    h->too_busy = 1;
                    *upload_size = 0;
                    return MHD_YES;
                }
                char *b = realloc(h->body, cap);
                if (!b) {
                    __atomic_sub_fetch(&http__bodies, grow, __ATOMIC_RELAXED);
                    return MHD_NO;
                }
                h->body = b;
                h->cap = cap;
            }
            memcpy(h->body + h->len, upload, *upload_size);
            h->len += *upload_size;
            h->body[h->len] = 0;
        }
        *upload_size = 0;
        return MHD_YES;
    }
    if (h->too_large) {
        char msg[128];
        snprintf(msg, sizeof msg, "the body is over the server's limit of %ld bytes",
                 s->c.max_body);
        return http__error(s, c, h, 413, "body_too_large", msg, 0);
    }
    if (h->too_busy)
        return http__error(s, c, h, 503, "busy",
                           "the server holds as many request bodies as it takes at once; send "
                           "again shortly",
                           5);
    const ckb_token *tok = h->tok;
    ckb_api_request q = {.method = method, .path = url, .arg = http__arg, .arg_ctx = c,
                         .body = h->body, .body_len = h->len, .token = tok,
                         .owner = tok ? tok->name : "local", .deadline = h->deadline};
    /* a stopping server answers long-polls with what it has, now */
    if (__atomic_load_n(&s->stopping, __ATOMIC_ACQUIRE))
        q.deadline = 1e-9;
    ckb_api_response r;
    ckb_api_handle(s, &q, &r);
    h->deadline = q.deadline;
    if (r.wait) {
        pthread_mutex_lock(&s->wait_mu);
        h->next = http__waiting;
        http__waiting = h;
        MHD_suspend_connection(c);
        pthread_mutex_unlock(&s->wait_mu);
        return MHD_YES;
    }
    return http__send(s, c, h, &r);
}

static void http__completed(void *cls, struct MHD_Connection *c, void **con_cls,
                            enum MHD_RequestTerminationCode why)
{
    (void)c, (void)why;
    ckb_server *s = cls;
    http__req *h = *con_cls;
    if (!h)
        return;
    pthread_mutex_lock(&s->wait_mu);
    for (http__req **p = &http__waiting; *p; p = &(*p)->next)
        if (*p == h) {
            *p = h->next;
            break;
        }
    pthread_mutex_unlock(&s->wait_mu);
    __atomic_sub_fetch(&http__bodies, (long)h->cap, __ATOMIC_RELAXED);
    free(h->body);
    free(h);
    *con_cls = NULL;
}

/* Resumes every suspended long-poll (s->wait_mu held). */
static void http__resume_all(void)
{
    for (http__req *h = http__waiting, *next; h; h = next) {
        next = h->next;
        h->next = NULL;
        MHD_resume_connection(h->conn);
    }
    http__waiting = NULL;
}

void ckb_http_wake(ckb_server *s)
{
    pthread_mutex_lock(&s->wait_mu);
    pthread_cond_broadcast(&s->wait_cv);
    pthread_mutex_unlock(&s->wait_mu);
}

/* "ADDR:PORT" or "[V6]:PORT" into a socket address. */
static int http__parse_listen(const char *spec, struct sockaddr_storage *ss, socklen_t *len)
{
    char host[128];
    const char *colon = strrchr(spec, ':');
    if (!colon || colon == spec)
        return -1;
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (*end || port < 0 || port > 65535 || colon[1] == 0)
        return -1;
    size_t n = (size_t)(colon - spec);
    if (spec[0] == '[') {
        if (n < 3 || spec[n - 1] != ']' || n - 2 >= sizeof host)
            return -1;
        snprintf(host, sizeof host, "%.*s", (int)(n - 2), spec + 1);
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
        memset(ss, 0, sizeof *ss);
        a->sin6_family = AF_INET6;
        a->sin6_port = htons((uint16_t)port);
        *len = sizeof *a;
        return inet_pton(AF_INET6, host, &a->sin6_addr) == 1 ? 0 : -1;
    }
    if (n >= sizeof host)
        return -1;
    snprintf(host, sizeof host, "%.*s", (int)n, spec);
    if (!strcmp(host, "localhost"))
        snprintf(host, sizeof host, "127.0.0.1");
    struct sockaddr_in *a = (struct sockaddr_in *)ss;
    memset(ss, 0, sizeof *ss);
    a->sin_family = AF_INET;
    a->sin_port = htons((uint16_t)port);
    *len = sizeof *a;
    return inet_pton(AF_INET, host, &a->sin_addr) == 1 ? 0 : -1;
}

static pthread_t http__waker_th;
static int http__waker_stop;

/* Once a second, or when an evaluation ends, every long-poll looks again. */
static void *http__waker(void *arg)
{
    ckb_server *s = arg;
    pthread_mutex_lock(&s->wait_mu);
    while (!http__waker_stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        pthread_cond_timedwait(&s->wait_cv, &s->wait_mu, &ts);
        http__resume_all();
    }
    pthread_mutex_unlock(&s->wait_mu);
    return NULL;
}

int ckb_http_start(ckb_server *s)
{
    struct sockaddr_storage ss;
    socklen_t sslen = 0;
    if (http__parse_listen(s->c.listen, &ss, &sslen) != 0) {
        fprintf(stderr, "ckbench serve: --listen %s: not ADDR:PORT (e.g. 127.0.0.1:8714 or "
                        "[::1]:8714)\n", s->c.listen);
        return -1;
    }
    if (s->tokens.n == 0 && !http__loopback((struct sockaddr *)&ss)) {
        fprintf(stderr, "ckbench serve: refusing to listen on %s without a token file: anyone "
                        "who reaches it could run code here. Give --tokens FILE (ckbench serve "
                        "--add-token NAME --tokens FILE makes one), or listen on 127.0.0.1\n",
                s->c.listen);
        return -1;
    }
    char *cert = NULL, *key = NULL;
    if (s->c.tls_cert || s->c.tls_key) {
        cert = s->c.tls_cert ? ckb_read_file(s->c.tls_cert, NULL) : NULL;
        key = s->c.tls_key ? ckb_read_file(s->c.tls_key, NULL) : NULL;
        if (!cert || !key) {
            fprintf(stderr, "ckbench serve: HTTPS needs both --tls-cert and --tls-key, readable "
                            "PEM files (%s)\n", !cert ? "no certificate" : "no key");
            free(cert);
            free(key);
            return -1;
        }
    }
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_ITC | MHD_USE_ERROR_LOG;
    if (ss.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    if (cert)
        flags |= MHD_USE_TLS;
    /* the key and certificate go last: MHD_OPTION_END ends the list early without TLS */
    s->daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, http__handler, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)s->c.http_threads,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)s->c.idle_timeout_s,
        MHD_OPTION_CONNECTION_LIMIT, 1000u, MHD_OPTION_NOTIFY_COMPLETED, http__completed, s,
        MHD_OPTION_LISTENING_ADDRESS_REUSE, 1u,
        cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, cert, MHD_OPTION_HTTPS_MEM_KEY, key,
        MHD_OPTION_END);
    free(cert);
    free(key);
    if (!s->daemon) {
        fprintf(stderr, "ckbench serve: cannot listen on %s (in use, not an address of this "
                        "host, or a certificate and key that do not load)\n", s->c.listen);
        return -1;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    unsigned port = di ? di->port : 0;
    if (s->c.port_file) {
        FILE *f = fopen(s->c.port_file, "w");
        if (f) {
            fprintf(f, "%u\n", port);
            fclose(f);
        }
    }
    fprintf(stderr, "ckbench serve: listening on port %u (%s, %s), executor %s\n", port,
            s->c.listen, s->c.tls_cert ? "HTTPS" : "HTTP", ckb_exec_kind_name(s->c.exec.kind));
    http__waker_stop = 0;
    pthread_create(&http__waker_th, NULL, http__waker, s);
    return 0;
}

void ckb_http_stop(ckb_server *s)
{
    if (!s->daemon)
        return;
    pthread_mutex_lock(&s->wait_mu);
    http__waker_stop = 1;
    pthread_cond_broadcast(&s->wait_cv);
    pthread_mutex_unlock(&s->wait_mu);
    pthread_join(http__waker_th, NULL);
    /* no new connections; the suspended ones are answered before the stop */
    MHD_quiesce_daemon(s->daemon);
    pthread_mutex_lock(&s->wait_mu);
    http__resume_all();
    pthread_mutex_unlock(&s->wait_mu);
    MHD_stop_daemon(s->daemon);
    s->daemon = NULL;
}
