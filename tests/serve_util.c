#include "serve_util.h"

#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/fsutil.h"
#include "core/jsonget.h"
#include "core/proc.h"
#include "core/strbuf.h"
#include "harness.h"

char *ckbt_serve_log(const ckbt_server *s)
{
    char path[600];
    snprintf(path, sizeof path, "%s/serve.log", s->dir);
    char *t = ckb_read_file(path, NULL);
    return t ? t : strdup("(no log)");
}

int ckbt_serve_start(ckbt_server *s, const char *dir, const char *const *extra)
{
    memset(s, 0, sizeof s->dir);
    s->pid = -1;
    snprintf(s->dir, sizeof s->dir, "%s", dir);
    ckb_mkdirs(dir);
    char db[600], portf[600], logf[600];
    snprintf(db, sizeof db, "%s/db.sqlite", dir);
    snprintf(portf, sizeof portf, "%s/port", dir);
    snprintf(logf, sizeof logf, "%s/serve.log", dir);
    unlink(portf);
    char *argv[64];
    int n = 0;
    argv[n++] = (char *)ckbt_bin();
    argv[n++] = "serve";
    argv[n++] = "--db";
    argv[n++] = db;
    argv[n++] = "--listen";
    argv[n++] = "127.0.0.1:0";
    argv[n++] = "--port-file";
    argv[n++] = portf;
    argv[n++] = "--no-host-speed";
    s->tls = 0;
    for (int i = 0; extra && extra[i] && n < 62; i++) {
        s->tls |= strcmp(extra[i], "--tls-cert") == 0;
        argv[n++] = (char *)extra[i];
    }
    argv[n] = NULL;
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(logf, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    s->pid = pid;
    for (int i = 0; i < 300; i++) {
        char *t = ckb_read_file(portf, NULL);
        s->port = t ? atoi(t) : 0;
        free(t);
        if (s->port > 0)
            break;
        if (waitpid(pid, NULL, WNOHANG) == pid) {
            s->pid = -1;
            break;
        }
        ckbt_sleep_ms(100);
    }
    snprintf(s->base, sizeof s->base, "%s://127.0.0.1:%d", s->tls ? "https" : "http", s->port);
    if (s->port <= 0) {
        char *log = ckbt_serve_log(s);
        ckbt_fail(__FILE__, __LINE__, "the server did not start: %.2000s", log);
        free(log);
        if (s->pid > 0)
            ckbt_serve_stop(s, SIGKILL);
        return -1;
    }
    return 0;
}

int ckbt_serve_start_in(ckbt_server *s, const char *name, const char *const *extra)
{
    char dir[600];
    snprintf(dir, sizeof dir, "%s/%s", ckbt_tmpdir(), name);
    return ckbt_serve_start(s, dir, extra);
}

int ckbt_serve_stop(ckbt_server *s, int sig)
{
    if (s->pid <= 0)
        return -1;
    kill(s->pid, sig);
    int st = 0;
    for (int i = 0; i < 200; i++) {
        if (waitpid(s->pid, &st, WNOHANG) == s->pid) {
            s->pid = -1;
            return st;
        }
        ckbt_sleep_ms(100);
    }
    kill(s->pid, SIGKILL);
    waitpid(s->pid, &st, 0);
    s->pid = -1;
    return st;
}

static size_t serve_util__body(char *p, size_t size, size_t n, void *ctx)
{
    ckb_strbuf_append(ctx, p, size * n);
    return size * n;
}

static size_t serve_util__header(char *p, size_t size, size_t n, void *ctx)
{
    ckbt_http *h = ctx;
    size_t len = size * n;
    if (len > 12 && strncasecmp(p, "Retry-After:", 12) == 0)
        snprintf(h->retry_after, sizeof h->retry_after, "%.*s", (int)strcspn(p + 13, "\r\n"),
                 p + 13);
    return len;
}

void ckbt_http_call(const ckbt_server *s, const char *method, const char *path, const char *body,
                    size_t body_len, const char *token, ckbt_http *out)
{
    memset(out, 0, sizeof *out);
    CURL *c = curl_easy_init();
    char url[2048], auth[256];
    snprintf(url, sizeof url, "%s%s", s->base, path);
    ckb_strbuf sb = {0};
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
    if (token) {
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
        hdr = curl_slist_append(hdr, auth);
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 700L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, serve_util__body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &sb);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, serve_util__header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, out);
    if (s->tls) {
        char ca[600];
        snprintf(ca, sizeof ca, "%s/cert.pem", s->dir);
        curl_easy_setopt(c, CURLOPT_CAINFO, ca);
    }
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)body_len);
    }
    if (curl_easy_perform(c) == CURLE_OK) {
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
        char *ct = NULL;
        curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
        snprintf(out->content_type, sizeof out->content_type, "%s", ct ? ct : "");
    }
    out->len = sb.len;
    out->body = ckb_strbuf_take(&sb);
    if (strncmp(out->content_type, "application/json", 16) == 0)
        out->json = json_tokener_parse(out->body);
    curl_slist_free_all(hdr);
    curl_easy_cleanup(c);
}

void ckbt_http_free(ckbt_http *h)
{
    free(h->body);
    json_object_put(h->json);
    memset(h, 0, sizeof *h);
}

char *ckbt_serve_request(const char *workload, const char *file, const char *extra)
{
    char path[600];
    snprintf(path, sizeof path, "%s%s", file[0] == '/' ? "" : "tests/candidates/", file);
    char *src = ckb_read_file(path, NULL);
    json_object *j = json_object_new_object();
    json_object_object_add(j, "workload", json_object_new_string(workload));
    json_object_object_add(j, "source", json_object_new_string(src ? src : ""));
    json_object_object_add(j, "size", json_object_new_string("small"));
    free(src);
    const char *t = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN);
    ckb_strbuf sb = {0};
    ckb_strbuf_append(&sb, t, strlen(t) - 1); /* without the closing brace */
    ckb_strbuf_printf(&sb, "%s}", extra ? extra : "");
    json_object_put(j);
    return ckb_strbuf_take(&sb);
}

json_object *ckbt_serve_wait(const ckbt_server *s, const char *id, const char *token,
                             double timeout_s)
{
    double t0 = ckb_now();
    char path[256];
    while (ckb_now() - t0 < timeout_s) {
        snprintf(path, sizeof path, "/v1/evaluations/%s?wait=%d", id, 5);
        ckbt_http h;
        ckbt_http_call(s, "GET", path, NULL, 0, token, &h);
        const char *st = ckb_json_str(h.json, "state");
        if (h.status == 200 && st && strcmp(st, "queued") && strcmp(st, "running")) {
            json_object *j = json_object_get(h.json);
            ckbt_http_free(&h);
            return j;
        }
        if (h.status != 200)
            ckbt_sleep_ms(200);
        ckbt_http_free(&h);
    }
    return NULL;
}

int ckbt_descendants(pid_t pid, pid_t *out, int max)
{
    int n = 0, head = 0;
    pid_t queue[4096];
    queue[n++] = pid;
    int found = 0;
    while (head < n) {
        pid_t p = queue[head++];
        char dir[64];
        snprintf(dir, sizeof dir, "/proc/%d/task", (int)p);
        DIR *d = opendir(dir);
        for (struct dirent *e; d && (e = readdir(d));) {
            if (e->d_name[0] == '.')
                continue;
            char path[400];
            snprintf(path, sizeof path, "/proc/%d/task/%s/children", (int)p, e->d_name);
            FILE *f = fopen(path, "r");
            int c;
            while (f && fscanf(f, "%d", &c) == 1 && n < 4096) {
                queue[n++] = c;
                if (found < max)
                    out[found] = c;
                found++;
            }
            if (f)
                fclose(f);
        }
        if (d)
            closedir(d);
    }
    return found;
}
