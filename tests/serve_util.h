/*
 * serve_util.h — a `ckbench serve` started for a test (on a loopback port
 * it picks), real HTTP calls to it (libcurl), and the processes it leaves.
 */
#ifndef CKB_TEST_SERVE_UTIL_H
#define CKB_TEST_SERVE_UTIL_H

#include <stddef.h>
#include <sys/types.h>

struct json_object;

typedef struct {
    pid_t pid;
    int port;
    char dir[512];    /* its folder: db.sqlite, port, serve.log */
    char base[96];    /* "http://127.0.0.1:PORT" */
    int tls;
} ckbt_server;

/* Starts `ckbench serve --db DIR/db.sqlite --listen 127.0.0.1:0 --no-host-speed`
 * plus extra (NULL-terminated) in dir (made when missing). Waits until it
 * answers /healthz (at most 30 s). 0, or -1 after a test failure with its log. */
int ckbt_serve_start(ckbt_server *s, const char *dir, const char *const *extra);
/* The same in ckbt_tmpdir()/name. */
int ckbt_serve_start_in(ckbt_server *s, const char *name, const char *const *extra);
/* Sends sig and waits for the server to end (SIGKILL after 20 s); its exit status. */
int ckbt_serve_stop(ckbt_server *s, int sig);
/* The server's log (caller frees). */
char *ckbt_serve_log(const ckbt_server *s);

typedef struct {
    long status;       /* 0: no answer (connection failed) */
    char *body;        /* NUL-terminated; caller frees with ckbt_http_free */
    size_t len;
    char retry_after[16];
    char content_type[96];
    struct json_object *json; /* the body parsed, when it is JSON */
} ckbt_http;

/* method path [body] with token (NULL: none) and a 60 s time limit. */
void ckbt_http_call(const ckbt_server *s, const char *method, const char *path, const char *body,
                    size_t body_len, const char *token, ckbt_http *out);
void ckbt_http_free(ckbt_http *h);

/* The body of a single-evaluation request for file (tests/candidates/FILE or an
 * absolute path) at size small; extra is more JSON members (",\"iters\":1") or "". */
char *ckbt_serve_request(const char *workload, const char *file, const char *extra);

/* Polls GET /v1/evaluations/ID?wait=.. until it ends or timeout_s passes;
 * the evaluation object (caller puts), or NULL. */
struct json_object *ckbt_serve_wait(const ckbt_server *s, const char *id, const char *token,
                                    double timeout_s);

/* Processes below pid (children, theirs, ...), pids into out (max); how many. */
int ckbt_descendants(pid_t pid, pid_t *out, int max);

#endif
