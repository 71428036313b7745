/*
 * `ckbench serve` through real HTTP on a loopback port: every route, a real
 * evaluation whose result is the one `ckbench eval` prints, bad input
 * answered with the right status and nothing stored, client keys, tokens
 * that cannot see each other, HTTPS, a cancel that leaves no process, a
 * kill -9 and restart that loses nothing, 500 queued evaluations answered
 * in order, a full disk answered 503 with the store intact.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <json-c/json.h>
#include <openssl/evp.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/fsutil.h"
#include "core/jsonget.h"
#include "core/proc.h"
#include "core/strbuf.h"
#include "eval_util.h"
#include "harness.h"
#include "serve_util.h"

static const char *servet_err_code(const ckbt_http *h)
{
    const char *c = ckb_json_str(ckb_json_obj(h->json, "error"), "code");
    return c ? c : "";
}

static const char *servet_err_msg(const ckbt_http *h)
{
    const char *c = ckb_json_str(ckb_json_obj(h->json, "error"), "message");
    return c ? c : "";
}

/* POSTs body to path; the id of the evaluation answered, or "" (buf). */
static const char *servet_submit(const ckbt_server *s, const char *body, const char *token,
                                 long *status, char id[32])
{
    ckbt_http h;
    ckbt_http_call(s, "POST", "/v1/evaluations", body, strlen(body), token, &h);
    snprintf(id, 32, "%s", ckb_json_str(h.json, "id") ? ckb_json_str(h.json, "id") : "");
    if (status)
        *status = h.status;
    ckbt_http_free(&h);
    return id;
}

/* Submits tests/candidates/FILE for workload at size small (extra: more
 * JSON members); the id as servet_submit gives it. */
static const char *servet_submit_file(const ckbt_server *s, const char *workload,
                                      const char *file, const char *extra, long *status,
                                      char id[32])
{
    char *body = ckbt_serve_request(workload, file, extra);
    servet_submit(s, body, NULL, status, id);
    free(body);
    return id;
}

static void servet_dir(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", ckbt_tmpdir(), name);
}


/* The keys of a JSON object, sorted, as one string. */
static void servet_keys(json_object *j, const char *skip, char *buf, size_t n)
{
    const char *k[128];
    int nk = 0;
    json_object_object_foreach(j, key, val) {
        (void)val;
        if (nk < 128 && (!skip || strcmp(key, skip) != 0))
            k[nk++] = key;
    }
    for (int i = 1; i < nk; i++)
        for (int m = i; m > 0 && strcmp(k[m - 1], k[m]) > 0; m--) {
            const char *t = k[m];
            k[m] = k[m - 1];
            k[m - 1] = t;
        }
    buf[0] = 0;
    for (int i = 0; i < nk; i++) {
        strncat(buf, k[i], n - strlen(buf) - 2);
        strncat(buf, " ", n - strlen(buf) - 1);
    }
}

CKBT_TEST(serve_routes_and_a_real_evaluation, "quick")
{
    ckbt_server s;
    if (ckbt_serve_start_in(&s, "routes", NULL) != 0)
        return;
    ckbt_http h;
    ckbt_http_call(&s, "GET", "/healthz", NULL, 0, NULL, &h);
    CKBT_EXPECT(h.status == 200 && !strcmp(ckb_json_str(h.json, "status"), "ok"), "%ld %s",
                h.status, h.body);
    ckbt_http_free(&h);
    ckbt_http_call(&s, "GET", "/v1/workloads", NULL, 0, NULL, &h);
    json_object *list = NULL;
    json_object_object_get_ex(h.json, "workloads", &list);
    CKBT_EXPECT(h.status == 200 && list && json_object_array_length(list) == 50,
                "%ld, %zu workloads: %.300s", h.status, list ? json_object_array_length(list) : 0,
                h.body);
    ckbt_http_free(&h);
    ckbt_http_call(&s, "GET", "/v1/workloads/12p?size=small", NULL, 0, NULL, &h);
    CKBT_EXPECT(h.status == 200 && !strcmp(ckb_json_str(h.json, "id"), "12p_RMSNorm") &&
                    strstr(ckb_json_str(h.json, "header"), "#define D 1024L") != NULL,
                "%ld %.300s", h.status, h.body);
    ckbt_http_free(&h);
    /* the prompt is exactly what `ckbench prompt` prints (its stdout) */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' prompt 12p --method refine-docs 2>/dev/null", ckbt_bin());
    FILE *p = popen(cmd, "r");
    ckb_strbuf said = {0};
    char buf[4096];
    for (size_t got; p && (got = fread(buf, 1, sizeof buf, p)) > 0;)
        ckb_strbuf_append(&said, buf, got);
    if (p)
        pclose(p);
    ckbt_http_call(&s, "GET", "/v1/workloads/12p/prompt?method=refine-docs", NULL, 0, NULL, &h);
    CKBT_EXPECT(h.status == 200 && said.len > 1000 && h.len == said.len &&
                    memcmp(h.body, said.data, h.len) == 0,
                "the prompt route differs from `ckbench prompt` (%zu vs %zu bytes)", h.len,
                said.len);
    ckbt_http_free(&h);
    ckb_strbuf_free(&said);
    /* a real evaluation; its result has every field `ckbench eval` prints */
    char id[32];
    long st;
    servet_submit_file(&s, "12p", "legit_rmsnorm_avx512.c", ",\"iters\":5,\"seeds\":1", &st, id);
    CKBT_EXPECT(st == 202 && id[0], "submit answered %ld", st);
    json_object *ev = ckbt_serve_wait(&s, id, NULL, 300);
    json_object *res = ckb_json_obj(ev, "result");
    CKBT_EXPECT(ev && !strcmp(ckb_json_str(ev, "state"), "done") &&
                    !strcmp(ckb_json_str(res, "status"), "ok") && ckbt_num(res, "speedup") > 0,
                "%s", ev ? json_object_to_json_string(ev) : "(no answer)");
    CKBT_EXPECT(ckbt_num(ev, "queue_s") >= 0 && ckbt_num(ev, "run_s") > 0, "queue and run times");
    int code = 0;
    json_object *cli = ckbt_eval("12p", "legit_rmsnorm_avx512.c", &code, "--iters", "5",
                                 "--seeds", "1", NULL);
    char k1[2048], k2[2048];
    servet_keys(res, "executor", k1, sizeof k1);
    servet_keys(cli, NULL, k2, sizeof k2);
    CKBT_EXPECT(strcmp(k1, k2) == 0, "server result keys [%s] vs ckbench eval's [%s]", k1, k2);
    json_object_put(cli);
    /* feedback as refine would send it */
    char fb[128];
    snprintf(fb, sizeof fb, "{\"id\":\"%s\"}", id);
    ckbt_http_call(&s, "POST", "/v1/feedback", fb, strlen(fb), NULL, &h);
    CKBT_EXPECT(h.status == 200 && strstr(h.content_type, "text/plain") && h.len > 20,
                "%ld %.300s", h.status, h.body);
    ckbt_http_free(&h);
    ckbt_http_call(&s, "GET", "/metrics", NULL, 0, NULL, &h);
    CKBT_EXPECT(h.status == 200 && strstr(h.body, "ckbench_evaluations_done_total{verdict=\"ok\"} 1\n") &&
                    strstr(h.body, "ckbench_queue_depth 0\n") &&
                    strstr(h.body, "ckbench_evaluation_seconds_count 1\n") &&
                    strstr(h.body, "ckbench_compile_seconds_count 1\n"),
                "%.1500s", h.body);
    ckbt_http_free(&h);
    json_object_put(ev);
    int rc = ckbt_serve_stop(&s, SIGTERM);
    CKBT_EXPECT(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "SIGTERM: a clean stop (status %d)", rc);
}

CKBT_TEST(serve_rejects_bad_input, "quick")
{
    const char *extra[] = {"--max-body", "4096", "--max-queue", "2", "--idle-timeout", "2", NULL};
    ckbt_server s;
    if (ckbt_serve_start_in(&s, "bad", extra) != 0)
        return;
    struct {
        const char *method, *path, *body;
        long status;
        const char *code, *says;
    } cases[] = {
        {"POST", "/v1/evaluations", "{\"workload\":", 400, "invalid_json", "not valid JSON"},
        {"POST", "/v1/evaluations", "{\"workload\":\"12p\",\"source\":\"\xff\xfe\"}", 400,
         "invalid_json", "JSON"},
        {"POST", "/v1/evaluations", "[1,2]", 400, "invalid_body", "JSON object"},
        {"POST", "/v1/evaluations", "{\"workload\":\"12p\",\"source\":\"x\"} {}", 400,
         "invalid_json", "JSON"},
        {"POST", "/v1/evaluations", "{\"workload\":12,\"source\":\"x\"}", 400, "invalid_field",
         "workload"},
        {"POST", "/v1/evaluations", "{\"workload\":\"12p\",\"source\":\"x\",\"iters\":\"5\"}",
         400, "invalid_field", "iters must be an integer"},
        {"POST", "/v1/evaluations", "{\"workload\":\"12p\",\"source\":\"x\",\"iters\":0}", 400,
         "invalid_field", "iters must be in 1..400"},
        {"POST", "/v1/evaluations", "{\"workload\":\"99z\",\"source\":\"x\"}", 404,
         "unknown_workload", "'99z'"},
        {"POST", "/v1/evaluations", "{\"workload\":\"12p\",\"source\":\"x\",\"size\":\"huge\"}",
         400, "invalid_field", "size"},
        {"POST", "/v1/evaluations", "{\"workload\":\"12p\",\"source\":\"x\",\"size\":\"host\"}",
         400, "invalid_field", "--host-size"},
        {"POST", "/v1/evaluations", "{\"workload\":\"12p\",\"source\":\"x\",\"bogus\":1}", 400,
         "unknown_field", "'bogus'"},
        {"POST", "/v1/evaluations", "{\"workload\":\"12p\",\"source\":\"a\\u0000b\"}", 400,
         "invalid_field", "NUL"},
        {"POST", "/v1/evaluations",
         "{\"workload\":\"12p\",\"source\":\"x\",\"client_key\":\"../etc\"}", 400,
         "invalid_field", "client_key"},
        {"POST", "/v1/evaluations/batch", "{\"evaluations\":[]}", 400, "invalid_body", "1 to"},
        {"POST", "/v1/evaluations/batch",
         "{\"evaluations\":[{\"workload\":\"12p\",\"source\":\"x\"},{\"workload\":\"12p\"}]}",
         400, "invalid_field", "evaluations[1].source"},
        {"GET", "/v1/evaluations/..%2F..%2Fetc%2Fpasswd", NULL, 404, "not_found", ""},
        {"GET", "/v1/evaluations/ev_..%00", NULL, 404, "not_found", ""},
        {"GET", "/v1/evaluations/ev_0123456789abcdef", NULL, 404, "not_found", "no evaluation"},
        {"GET", "/v1/evaluations/ev_0123456789abcdef?wait=nope", NULL, 400, "invalid_parameter",
         "wait"},
        {"GET", "/v1/evaluations/ev_0123456789abcdef?wait=61", NULL, 400, "invalid_parameter",
         "wait"},
        {"DELETE", "/v1/evaluations/x/../../y", NULL, 404, "not_found", ""},
        {"GET", "/v1/workloads/nope", NULL, 404, "unknown_workload", "'nope'"},
        {"GET", "/v1/workloads/12p/prompt?method=magic", NULL, 400, "invalid_parameter",
         "method"},
        {"PUT", "/v1/evaluations", "{}", 405, "method_not_allowed", "POST"},
        {"GET", "/v2/anything", NULL, 404, "not_found", "route"},
        {"POST", "/v1/feedback", "{\"evaluation\":{\"no\":1}}", 400, "invalid_body", "status"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ckbt_http h;
        ckbt_http_call(&s, cases[i].method, cases[i].path, cases[i].body,
                       cases[i].body ? strlen(cases[i].body) : 0, NULL, &h);
        CKBT_EXPECT(h.status == cases[i].status && !strcmp(servet_err_code(&h), cases[i].code) &&
                        strstr(servet_err_msg(&h), cases[i].says),
                    "%s %s: %ld %s", cases[i].method, cases[i].path, h.status, h.body);
        ckbt_http_free(&h);
    }
    /* a body over --max-body: 413 */
    size_t big = 10000;
    char *b = malloc(big + 1);
    memset(b, ' ', big);
    b[big] = 0;
    ckbt_http h;
    ckbt_http_call(&s, "POST", "/v1/evaluations", b, big, NULL, &h);
    CKBT_EXPECT(h.status == 413 && !strcmp(servet_err_code(&h), "body_too_large"), "%ld %s",
                h.status, h.body);
    ckbt_http_free(&h);
    free(b);
    /* past the queue's limit: 429 with Retry-After, and nothing of the batch stored */
    const char *three = "{\"evaluations\":[{\"workload\":\"12p\",\"source\":\"a\"},{\"workload\":"
                        "\"12p\",\"source\":\"b\"},{\"workload\":\"12p\",\"source\":\"c\"}]}";
    ckbt_http_call(&s, "POST", "/v1/evaluations/batch", three, strlen(three), NULL, &h);
    CKBT_EXPECT(h.status == 429 && atoi(h.retry_after) > 0 &&
                    !strcmp(servet_err_code(&h), "queue_full"),
                "%ld Retry-After '%s' %s", h.status, h.retry_after, h.body);
    ckbt_http_free(&h);
    ckbt_http_call(&s, "GET", "/metrics", NULL, 0, NULL, &h);
    CKBT_EXPECT(strstr(h.body, "ckbench_evaluations{state=\"queued\"} 0\n") &&
                    strstr(h.body, "ckbench_evaluations{state=\"done\"} 0\n"),
                "a refused request stored nothing: %.600s", h.body);
    ckbt_http_free(&h);
    /* a client that sends a byte and then nothing: cut off at the idle time-out */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)s.port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    double t0 = ckb_now();
    int closed = 0;
    if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0 && write(fd, "P", 1) == 1) {
        struct timeval tv = {8, 0};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        char c;
        closed = read(fd, &c, 1) <= 0 && errno != EAGAIN;
    }
    double took = ckb_now() - t0;
    close(fd);
    CKBT_EXPECT(closed && took < 7, "a silent client is cut off after ~2 s (closed %d, %.1f s)",
                closed, took);
    ckbt_http_call(&s, "GET", "/healthz", NULL, 0, NULL, &h);
    CKBT_EXPECT(h.status == 200, "the server still answers: %ld", h.status);
    ckbt_http_free(&h);
    ckbt_serve_stop(&s, SIGTERM);
}

CKBT_TEST(serve_client_key_is_idempotent, "quick")
{
    ckbt_server s;
    if (ckbt_serve_start_in(&s, "keys", NULL) != 0)
        return;
    const char *a = "{\"workload\":\"12p\",\"source\":\"int x;\",\"size\":\"small\",\"client_key\":"
                    "\"k-1\"}";
    const char *b = "{\"workload\":\"12p\",\"source\":\"int y;\",\"size\":\"small\",\"client_key\":"
                    "\"k-1\"}";
    char id1[32], id2[32], id3[32];
    long s1, s2, s3;
    servet_submit(&s, a, NULL, &s1, id1);
    servet_submit(&s, a, NULL, &s2, id2);
    servet_submit(&s, b, NULL, &s3, id3);
    CKBT_EXPECT(s1 == 202 && s2 == 200 && !strcmp(id1, id2), "a retried submit: %ld %ld %s %s", s1,
                s2, id1, id2);
    CKBT_EXPECT(s3 == 409 && !id3[0], "the key with another source: %ld", s3);
    /* a batch replaying it and one new */
    const char *batch = "{\"evaluations\":[{\"workload\":\"12p\",\"source\":\"int x;\",\"size\":"
                        "\"small\",\"client_key\":\"k-1\"},{\"workload\":\"12p\",\"source\":\"int "
                        "z;\",\"size\":\"small\",\"client_key\":\"k-2\"}]}";
    ckbt_http h;
    ckbt_http_call(&s, "POST", "/v1/evaluations/batch", batch, strlen(batch), NULL, &h);
    json_object *evs = NULL;
    json_object_object_get_ex(h.json, "evaluations", &evs);
    CKBT_EXPECT(h.status == 202 && evs && json_object_array_length(evs) == 2 &&
                    !strcmp(ckb_json_str(json_object_array_get_idx(evs, 0), "id"), id1),
                "%ld %s", h.status, h.body);
    ckbt_http_free(&h);
    json_object *ev = ckbt_serve_wait(&s, id1, NULL, 120);
    CKBT_EXPECT(ev && !strcmp(ckb_json_str(ckb_json_obj(ev, "result"), "status"), "compile_error"),
                "%s", ev ? json_object_to_json_string(ev) : "(none)");
    json_object_put(ev);
    ckbt_serve_stop(&s, SIGTERM);
}

CKBT_TEST(serve_tokens_keep_clients_apart, "quick")
{
    char dir[600], tokens[700], out[700];
    servet_dir(dir, sizeof dir, "tokens");
    ckb_mkdirs(dir);
    snprintf(tokens, sizeof tokens, "%s/tokens", dir);
    char tok[2][80];
    const char *names[2] = {"alice", "bob"};
    for (int i = 0; i < 2; i++) {
        char *argv[] = {(char *)ckbt_bin(), "serve", "--add-token", (char *)names[i], "--tokens",
                        tokens, NULL};
        ckb_proc_result pr;
        ckb_proc_run(argv, 30, 4096, &pr);
        /* the line of 64 hex digits (stdout), whatever stderr said around it */
        tok[i][0] = 0;
        for (char *l = pr.output; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
            if (strspn(l, "0123456789abcdef") == 64 && (l[64] == '\n' || !l[64]))
                snprintf(tok[i], sizeof tok[i], "%.64s", l);
        CKBT_EXPECT(pr.exited && pr.exit_code == 0 && strlen(tok[i]) == 64, "%s", pr.output);
        ckb_proc_result_free(&pr);
    }
    char *file = ckb_read_file(tokens, NULL);
    CKBT_EXPECT(file && !strstr(file, tok[0]) && !strstr(file, tok[1]),
                "the file holds hashes, never the tokens");
    free(file);
    /* carol's limits: one evaluation queued, 64 bytes of source */
    unsigned char hash[32];
    unsigned hlen = 0;
    EVP_Digest("carol-secret", 12, hash, &hlen, EVP_sha256(), NULL);
    FILE *tf = fopen(tokens, "a");
    fprintf(tf, "carol sha256:");
    for (int i = 0; i < 32; i++)
        fprintf(tf, "%02x", hash[i]);
    fprintf(tf, " queued=1 source_bytes=64\n");
    fclose(tf);
    /* no token file, not loopback: refused */
    snprintf(out, sizeof out, "%s/refused", dir);
    char *argv[] = {(char *)ckbt_bin(), "serve", "--listen", "0.0.0.0:0", "--db", out, NULL};
    ckb_proc_result pr;
    ckb_proc_run(argv, 30, 4096, &pr);
    CKBT_EXPECT(pr.exited && pr.exit_code == 1 && strstr(pr.output, "without a token file"),
                "%s", pr.output);
    ckb_proc_result_free(&pr);
    ckbt_server s;
    const char *extra[] = {"--tokens", tokens, NULL};
    if (ckbt_serve_start(&s, dir, extra) != 0)
        return;
    ckbt_http h;
    ckbt_http_call(&s, "GET", "/v1/workloads", NULL, 0, NULL, &h);
    CKBT_EXPECT(h.status == 401 && !strcmp(servet_err_code(&h), "unauthorized"), "%ld", h.status);
    ckbt_http_free(&h);
    ckbt_http_call(&s, "GET", "/v1/workloads", NULL, 0, "0123", &h);
    CKBT_EXPECT(h.status == 401, "a wrong token: %ld", h.status);
    ckbt_http_free(&h);
    /* refused from its headers: no body byte of a stranger is held */
    size_t blen = 3u << 20;
    char *junk = malloc(blen);
    memset(junk, 'x', blen);
    ckbt_http_call(&s, "POST", "/v1/evaluations", junk, blen, NULL, &h);
    CKBT_EXPECT(h.status == 401, "a body without a token: %ld", h.status);
    ckbt_http_free(&h);
    free(junk);
    ckbt_http_call(&s, "GET", "/healthz", NULL, 0, NULL, &h);
    CKBT_EXPECT(h.status == 200, "health needs no token: %ld", h.status);
    ckbt_http_free(&h);
    char id[32], path[128];
    long st;
    servet_submit(&s, "{\"workload\":\"12p\",\"source\":\"int x;\",\"size\":\"small\"}", tok[0],
                  &st, id);
    CKBT_EXPECT(st == 202, "alice submits: %ld", st);
    snprintf(path, sizeof path, "/v1/evaluations/%s", id);
    ckbt_http_call(&s, "GET", path, NULL, 0, tok[1], &h);
    CKBT_EXPECT(h.status == 404, "bob cannot see alice's evaluation: %ld", h.status);
    ckbt_http_free(&h);
    ckbt_http_call(&s, "DELETE", path, NULL, 0, tok[1], &h);
    CKBT_EXPECT(h.status == 404, "nor cancel it: %ld", h.status);
    ckbt_http_free(&h);
    ckbt_http_call(&s, "GET", path, NULL, 0, tok[0], &h);
    CKBT_EXPECT(h.status == 200, "alice sees it: %ld", h.status);
    ckbt_http_free(&h);
    /* the same client_key from two tokens is two evaluations */
    const char *k = "{\"workload\":\"12p\",\"source\":\"int q;\",\"size\":\"small\",\"client_key\":"
                    "\"same\"}";
    char ida[32], idb[32];
    servet_submit(&s, k, tok[0], NULL, ida);
    servet_submit(&s, k, tok[1], NULL, idb);
    CKBT_EXPECT(ida[0] && idb[0] && strcmp(ida, idb) != 0, "%s %s", ida, idb);
    /* a token's own limits */
    char big[256];
    snprintf(big, sizeof big, "{\"workload\":\"12p\",\"source\":\"%0100d\"}", 0);
    ckbt_http_call(&s, "POST", "/v1/evaluations", big, strlen(big), "carol-secret", &h);
    CKBT_EXPECT(h.status == 413 && !strcmp(servet_err_code(&h), "source_too_large"), "%ld %s",
                h.status, h.body);
    ckbt_http_free(&h);
    const char *two = "{\"evaluations\":[{\"workload\":\"12p\",\"source\":\"int a;\"},"
                      "{\"workload\":\"12p\",\"source\":\"int b;\"}]}";
    ckbt_http_call(&s, "POST", "/v1/evaluations/batch", two, strlen(two), "carol-secret", &h);
    CKBT_EXPECT(h.status == 429 && !strcmp(servet_err_code(&h), "token_queue_full") &&
                    atoi(h.retry_after) > 0,
                "%ld %s", h.status, h.body);
    ckbt_http_free(&h);
    ckbt_serve_stop(&s, SIGTERM);
}

CKBT_TEST(serve_https_with_its_own_tls, "quick")
{
    char dir[600], cmd[2048];
    servet_dir(dir, sizeof dir, "tls");
    ckb_mkdirs(dir);
    snprintf(cmd, sizeof cmd,
             "openssl req -x509 -newkey rsa:2048 -nodes -keyout %s/key.pem -out %s/cert.pem "
             "-days 1 -subj /CN=localhost -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1",
             dir, dir);
    if (system(cmd) != 0) {
        ckbt_skip("openssl cannot make a test certificate here");
        return;
    }
    char cert[700], key[700];
    snprintf(cert, sizeof cert, "%s/cert.pem", dir);
    snprintf(key, sizeof key, "%s/key.pem", dir);
    const char *extra[] = {"--tls-cert", cert, "--tls-key", key, NULL};
    ckbt_server s;
    if (ckbt_serve_start(&s, dir, extra) != 0)
        return;
    ckbt_http h;
    ckbt_http_call(&s, "GET", "/v1/workloads/8p", NULL, 0, NULL, &h);
    CKBT_EXPECT(h.status == 200 && !strcmp(ckb_json_str(h.json, "id"), "8p_GEMM"),
                "over HTTPS, verified against the server's certificate: %ld", h.status);
    ckbt_http_free(&h);
    /* the same port in plain HTTP gets no answer */
    ckbt_server plain = s;
    snprintf(plain.base, sizeof plain.base, "http://127.0.0.1:%d", s.port);
    plain.tls = 0;
    ckbt_http_call(&plain, "GET", "/healthz", NULL, 0, NULL, &h);
    CKBT_EXPECT(h.status == 0, "plain HTTP to the HTTPS port: %ld", h.status);
    ckbt_http_free(&h);
    ckbt_serve_stop(&s, SIGTERM);
}

/* Processes of this ckbench binary now running, but the server (pid). */
static int servet_ckbench_procs(pid_t except)
{
    char self[1024], exe[1024], path[64];
    if (!realpath(ckbt_bin(), self))
        return -1;
    int n = 0;
    DIR *d = opendir("/proc");
    for (struct dirent *e; d && (e = readdir(d));) {
        int pid = atoi(e->d_name);
        if (pid <= 0 || pid == except)
            continue;
        snprintf(path, sizeof path, "/proc/%d/exe", pid);
        ssize_t len = readlink(path, exe, sizeof exe - 1);
        if (len <= 0)
            continue;
        exe[len] = 0;
        n += strcmp(exe, self) == 0;
    }
    if (d)
        closedir(d);
    return n;
}

CKBT_TEST(serve_cancel_leaves_no_process, "quick")
{
    ckbt_server s;
    if (ckbt_serve_start_in(&s, "cancel", NULL) != 0)
        return;
    char id[32], path[128];
    long st;
    servet_submit_file(&s, "8p", "gemm_infinite_loop.c", "", &st, id);
    snprintf(path, sizeof path, "/v1/evaluations/%s", id);
    /* running, with its sandbox up */
    pid_t kids[64];
    int n = 0;
    for (int i = 0; i < 300 && n < 2; i++) {
        ckbt_sleep_ms(100);
        n = ckbt_descendants(s.pid, kids, 64);
    }
    ckbt_sleep_ms(500);
    ckbt_http h;
    ckbt_http_call(&s, "GET", path, NULL, 0, NULL, &h);
    CKBT_EXPECT(!strcmp(ckb_json_str(h.json, "state"), "running") && n >= 2,
                "the evaluation runs, with its processes (%d): %s", n, h.body);
    ckbt_http_free(&h);
    ckbt_http_call(&s, "DELETE", path, NULL, 0, NULL, &h);
    CKBT_EXPECT(h.status == 200 && !strcmp(ckb_json_str(h.json, "state"), "cancelled"), "%ld %s",
                h.status, h.body);
    ckbt_http_free(&h);
    int left = 0;
    for (int i = 0; i < 30; i++) {
        left = ckbt_descendants(s.pid, kids, 64) + servet_ckbench_procs(s.pid);
        if (left == 0)
            break;
        ckbt_sleep_ms(100);
    }
    CKBT_EXPECT(left == 0, "no process of the evaluation is left (%d)", left);
    ckbt_http_call(&s, "DELETE", path, NULL, 0, NULL, &h);
    CKBT_EXPECT(h.status == 409 && !strcmp(servet_err_code(&h), "already_finished"), "%ld",
                h.status);
    ckbt_http_free(&h);
    /* the queue goes on: the next evaluation runs */
    servet_submit(&s, "{\"workload\":\"12p\",\"source\":\"int x;\",\"size\":\"small\"}", NULL, &st,
                  id);
    json_object *ev = ckbt_serve_wait(&s, id, NULL, 120);
    CKBT_EXPECT(ev && !strcmp(ckb_json_str(ev, "state"), "done"), "after a cancel");
    json_object_put(ev);
    ckbt_serve_stop(&s, SIGTERM);
}

/* Counts rows of db by state with sqlite3 (read-only). */
static int servet_count(const char *db, const char *where)
{
    sqlite3 *h = NULL;
    int n = -1;
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM evaluations WHERE %s", where);
    if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
            n = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(h);
    return n;
}

CKBT_TEST(serve_kill9_and_restart_loses_nothing, "full")
{
    char dir[600], db[700];
    servet_dir(dir, sizeof dir, "kill9");
    snprintf(db, sizeof db, "%s/db.sqlite", dir);
    ckbt_server s;
    if (ckbt_serve_start(&s, dir, NULL) != 0)
        return;
    /* the first runs long (an infinite loop, ended by its time limit); the
     * others wait behind it */
    enum { N = 6 };
    char ids[N][32];
    servet_submit_file(&s, "8p", "gemm_infinite_loop.c", "", NULL, ids[0]);
    for (int i = 1; i < N; i++) {
        char src[128];
        snprintf(src, sizeof src,
                 "{\"workload\":\"12p\",\"source\":\"int v%d;\",\"size\":\"small\"}", i);
        servet_submit(&s, src, NULL, NULL, ids[i]);
    }
    pid_t kids[64];
    for (int i = 0; i < 300 && ckbt_descendants(s.pid, kids, 64) < 2; i++)
        ckbt_sleep_ms(100);
    ckbt_sleep_ms(300);
    ckbt_serve_stop(&s, SIGKILL);
    int left = 0;
    for (int i = 0; i < 50; i++) {
        left = servet_ckbench_procs(-1);
        if (!left)
            break;
        ckbt_sleep_ms(100);
    }
    CKBT_EXPECT(left == 0, "a server killed with -9 leaves no process (%d)", left);
    CKBT_EXPECT(servet_count(db, "1") == N && servet_count(db, "state='running'") == 1,
                "every request is stored, one running: %d rows, %d running",
                servet_count(db, "1"), servet_count(db, "state='running'"));
    /* restarted with a short time limit so the loop ends soon */
    const char *extra[] = {"--timeout-scale", "0.05", NULL};
    if (ckbt_serve_start(&s, dir, extra) != 0)
        return;
    for (int i = 0; i < N; i++) {
        json_object *ev = ckbt_serve_wait(&s, ids[i], NULL, 300);
        const char *st = ckb_json_str(ev, "state");
        CKBT_EXPECT(ev && !strcmp(st, "done"), "%s ended %s", ids[i], st ? st : "(no answer)");
        if (i == 0)
            CKBT_EXPECT(ckbt_num(ev, "attempts") == 2, "the one that was running ran again (%g)",
                        ckbt_num(ev, "attempts"));
        else
            CKBT_EXPECT(ckbt_num(ev, "attempts") == 1, "the queued ones ran once (%g)",
                        ckbt_num(ev, "attempts"));
        json_object_put(ev);
    }
    char *log = ckbt_serve_log(&s);
    CKBT_EXPECT(strstr(log, "1 evaluation left running by the last server queued again") != NULL,
                "%.1000s", log);
    free(log);
    ckbt_serve_stop(&s, SIGTERM);
}

CKBT_TEST(serve_500_queued_all_answered_in_order, "full")
{
    ckbt_server s;
    if (ckbt_serve_start_in(&s, "many", NULL) != 0)
        return;
    enum { N = 500, PER = 250 };
    static char ids[N][32];
    /* two batches of 250: distinct sources, each a quick compile error but
     * the first of each batch, a correct kernel */
    for (int b = 0; b < N / PER; b++) {
        json_object *root = json_object_new_object(), *arr = json_object_new_array();
        char *legit = ckbt_serve_request("12p", "legit_rmsnorm_avx512.c", ",\"iters\":3,\"seeds\":1");
        for (int i = 0; i < PER; i++) {
            if (i == 0) {
                json_object_array_add(arr, json_tokener_parse(legit));
                continue;
            }
            json_object *q = json_object_new_object();
            char src[64];
            snprintf(src, sizeof src, "int v%d_%d;", b, i);
            json_object_object_add(q, "workload", json_object_new_string("12p"));
            json_object_object_add(q, "source", json_object_new_string(src));
            json_object_object_add(q, "size", json_object_new_string("small"));
            json_object_array_add(arr, q);
        }
        free(legit);
        json_object_object_add(root, "evaluations", arr);
        const char *t = json_object_to_json_string(root);
        ckbt_http h;
        ckbt_http_call(&s, "POST", "/v1/evaluations/batch", t, strlen(t), NULL, &h);
        json_object *evs = NULL;
        json_object_object_get_ex(h.json, "evaluations", &evs);
        CKBT_EXPECT(h.status == 202 && evs && json_object_array_length(evs) == PER, "%ld %.300s",
                    h.status, h.body);
        /* the queued ones hold consecutive places, the last one's no nearer
         * the head than a read of it a moment later says */
        int64_t prev = -1, last = -1;
        int consecutive = 1;
        for (int i = 0; evs && i < PER; i++) {
            json_object *e = json_object_array_get_idx(evs, i);
            snprintf(ids[b * PER + i], 32, "%s", ckb_json_str(e, "id"));
            if (strcmp(ckb_json_str(e, "state"), "queued") != 0)
                continue;
            last = ckb_json_long(e, "queue_position");
            consecutive &= prev < 0 || last == prev + 1;
            prev = last;
        }
        char path[128];
        snprintf(path, sizeof path, "/v1/evaluations/%s", ids[b * PER + PER - 1]);
        ckbt_http g;
        ckbt_http_call(&s, "GET", path, NULL, 0, NULL, &g);
        CKBT_EXPECT(consecutive && last >= 0 &&
                        (strcmp(ckb_json_str(g.json, "state"), "queued") != 0 ||
                         ckb_json_long(g.json, "queue_position") <= last),
                    "batch %d: queue positions consecutive (%d), the last %lld then %s", b,
                    consecutive, (long long)last, g.body);
        ckbt_http_free(&g);
        ckbt_http_free(&h);
        json_object_put(root);
    }
    int done = 0, ok = 0, ordered = 1;
    char prev[40] = "";
    for (int i = 0; i < N; i++) {
        json_object *ev = ckbt_serve_wait(&s, ids[i], NULL, 600);
        done += ev && !strcmp(ckb_json_str(ev, "state"), "done");
        ok += ev && !strcmp(ckb_json_str(ckb_json_obj(ev, "result"), "status"), "ok");
        /* started in submission order (RFC 3339 of one format compare as text) */
        const char *started = ckb_json_str(ev, "started_at");
        if (started && strcmp(prev, started) > 0)
            ordered = 0;
        snprintf(prev, sizeof prev, "%s", started ? started : "");
        json_object_put(ev);
    }
    CKBT_EXPECT(done == N && ok == N / PER && ordered, "%d of %d done, %d ok, in order %d", done, N,
                ok, ordered);
    ckbt_serve_stop(&s, SIGTERM);
}

CKBT_TEST(serve_full_disk_is_503_and_the_store_survives, "full")
{
    if (geteuid() != 0) {
        ckbt_skip("mounting a small tmpfs for the full disk needs root");
        return;
    }
    char dir[600], mnt[700], db[800], fill[800];
    servet_dir(dir, sizeof dir, "fulldisk");
    snprintf(mnt, sizeof mnt, "%s/mnt", dir);
    ckb_mkdirs(mnt);
    if (mount("ckbt-full", mnt, "tmpfs", 0, "size=2m") != 0) {
        ckbt_skip("cannot mount a tmpfs here: %s", strerror(errno));
        return;
    }
    snprintf(db, sizeof db, "%s/srv", mnt);
    snprintf(fill, sizeof fill, "%s/fill", mnt);
    ckbt_server s;
    if (ckbt_serve_start(&s, db, NULL) != 0) {
        umount2(mnt, MNT_DETACH);
        return;
    }
    char id[32], id2[32];
    long st;
    servet_submit(&s, "{\"workload\":\"12p\",\"source\":\"int a;\",\"size\":\"small\"}", NULL,
                  &st, id);
    CKBT_EXPECT(st == 202, "before the disk fills: %ld", st);
    json_object_put(ckbt_serve_wait(&s, id, NULL, 60));
    /* fill every byte left */
    int fd = open(fill, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    static char zeros[65536];
    while (fd >= 0 && write(fd, zeros, sizeof zeros) > 0) {
    }
    while (fd >= 0 && write(fd, zeros, 1) > 0) {
    }
    if (fd >= 0)
        close(fd);
    int refused = 0;
    ckbt_http h;
    for (int i = 0; i < 20 && !refused; i++) {
        char body[256];
        snprintf(body, sizeof body,
                 "{\"workload\":\"12p\",\"source\":\"int b%d; /* %0100d */\",\"size\":\"small\"}", i,
                 0);
        ckbt_http_call(&s, "POST", "/v1/evaluations", body, strlen(body), NULL, &h);
        refused = h.status == 503;
        if (refused)
            CKBT_EXPECT(!strcmp(servet_err_code(&h), "disk_full") && atoi(h.retry_after) > 0 &&
                            strstr(servet_err_msg(&h), "full"),
                        "%s", h.body);
        else
            CKBT_EXPECT(h.status == 202, "%ld %s", h.status, h.body);
        ckbt_http_free(&h);
    }
    CKBT_EXPECT(refused, "a full disk is answered 503");
    char path[128];
    snprintf(path, sizeof path, "/v1/evaluations/%s", id);
    ckbt_http_call(&s, "GET", path, NULL, 0, NULL, &h);
    CKBT_EXPECT(h.status == 200 && !strcmp(ckb_json_str(h.json, "state"), "done"),
                "what was stored still reads: %ld", h.status);
    ckbt_http_free(&h);
    unlink(fill);
    servet_submit(&s, "{\"workload\":\"12p\",\"source\":\"int c;\",\"size\":\"small\"}", NULL,
                  &st, id2);
    CKBT_EXPECT(st == 202, "with room again: %ld", st);
    json_object *ev = ckbt_serve_wait(&s, id2, NULL, 60);
    CKBT_EXPECT(ev && !strcmp(ckb_json_str(ev, "state"), "done"), "and it runs");
    json_object_put(ev);
    ckbt_serve_stop(&s, SIGKILL);
    /* the store is whole */
    char dbfile[900];
    snprintf(dbfile, sizeof dbfile, "%s/db.sqlite", db);
    sqlite3 *hd = NULL;
    const char *ok = "";
    sqlite3_stmt *q = NULL;
    if (sqlite3_open_v2(dbfile, &hd, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(hd, "PRAGMA integrity_check", -1, &q, NULL) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW)
        ok = (const char *)sqlite3_column_text(q, 0);
    CKBT_EXPECT(ok && !strcmp(ok, "ok"), "integrity_check: %s", ok ? ok : "(none)");
    sqlite3_finalize(q);
    sqlite3_close(hd);
    umount2(mnt, MNT_DETACH);
}

/* The compile bomb (a 35-line initialiser the preprocessor expands to 2^27
 * elements): through the server it ends compile_error naming the memory
 * limit, and the server, whose host the OOM killer would otherwise pick
 * from, goes on answering. */
CKBT_TEST(serve_compile_bomb_leaves_the_server_standing, "full")
{
    ckbt_server s;
    if (ckbt_serve_start_in(&s, "bomb", NULL) != 0)
        return;
    char id[32];
    long st;
    servet_submit_file(&s, "8p", "attack_compile_memory_bomb.c", "", &st, id);
    json_object *ev = ckbt_serve_wait(&s, id, NULL, 180);
    json_object *res = ckb_json_obj(ev, "result");
    const char *detail = ckb_json_str(res, "detail");
    CKBT_EXPECT(ev && !strcmp(ckb_json_str(res, "status"), "compile_error") && detail &&
                    (!strcmp(detail, "memory_limit") || !strcmp(detail, "cpu_limit")) &&
                    strstr(ckb_json_str(res, "message"), "limit"),
                "%s", ev ? json_object_to_json_string(ev) : "(no answer)");
    json_object_put(ev);
    ckbt_http h;
    ckbt_http_call(&s, "GET", "/healthz", NULL, 0, NULL, &h);
    CKBT_EXPECT(h.status == 200, "the server still answers: %ld", h.status);
    ckbt_http_free(&h);
    int rc = ckbt_serve_stop(&s, SIGTERM);
    CKBT_EXPECT(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "and stops cleanly (%d)", rc);
}

typedef struct {
    const ckbt_server *s;
    const char *path;
    long status;
    char state[16];
} servet_poll;

static void *servet_poll_thread(void *arg)
{
    servet_poll *p = arg;
    ckbt_http h;
    ckbt_http_call(p->s, "GET", p->path, NULL, 0, NULL, &h);
    p->status = h.status;
    snprintf(p->state, sizeof p->state, "%s",
             ckb_json_str(h.json, "state") ? ckb_json_str(h.json, "state") : "");
    ckbt_http_free(&h);
    return NULL;
}

/* 200 long-polls at once on an evaluation that runs for seconds: a
 * suspended connection holds no thread, so all of them wait, the server
 * goes on answering others meanwhile, and every one is answered "done". */
CKBT_TEST(serve_200_long_polls_wait_without_holding_threads, "full")
{
    const char *extra[] = {"--timeout-scale", "0.05", NULL};
    ckbt_server s;
    if (ckbt_serve_start_in(&s, "polls", extra) != 0)
        return;
    char id[32], path[128];
    long st;
    servet_submit_file(&s, "8p", "gemm_infinite_loop.c", "", &st, id);
    snprintf(path, sizeof path, "/v1/evaluations/%s?wait=60", id);
    enum { N = 200 };
    static servet_poll polls[N];
    pthread_t th[N];
    int started = 0;
    for (int i = 0; i < N; i++) {
        polls[i] = (servet_poll){.s = &s, .path = path};
        started += pthread_create(&th[i], NULL, servet_poll_thread, &polls[i]) == 0;
    }
    /* while they wait, the server answers: 4 HTTP threads, 200 waiting */
    ckbt_sleep_ms(500);
    double t0 = ckb_now();
    ckbt_http h;
    ckbt_http_call(&s, "GET", "/healthz", NULL, 0, NULL, &h);
    double took = ckb_now() - t0;
    CKBT_EXPECT(h.status == 200 && took < 2, "health answered in %.2f s beside %d long-polls",
                took, started);
    ckbt_http_free(&h);
    int done = 0;
    for (int i = 0; i < started; i++) {
        pthread_join(th[i], NULL);
        done += polls[i].status == 200 && !strcmp(polls[i].state, "done");
    }
    CKBT_EXPECT(started == N && done == N, "%d of %d long-polls answered done", done, N);
    ckbt_serve_stop(&s, SIGTERM);
}
