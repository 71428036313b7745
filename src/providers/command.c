/*
 * command.c — any program as a model: `/bin/sh -c COMMAND` gets the prompt
 * on stdin and answers on stdout. The child runs in its own process group
 * under a keeper (core/proc.h), which a timeout, the end of the call, a
 * signal to ckbench or its death kills whole. The environment carries CKB_REQUEST_KEY (the
 * call's key) and CKB_MODEL (the configured model, possibly empty).
 *
 * The prompt is the messages in order, each under a header line:
 *   [system]\n<content>\n\n[user]\n<content>\n\n
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/proc.h"
#include "core/strbuf.h"
#include "providers/backend.h"

#define COMMAND_NAME "command"
#define COMMAND_MAX_STDOUT ((size_t)16 << 20)
#define COMMAND_MAX_STDERR ((size_t)64 << 10)

extern char **environ;

typedef struct {
    char *command;
    char *model;
    double timeout_s;
} command_state;

static char *command__prompt(const ckb_chat_msg *msgs, int nmsgs)
{
    ckb_strbuf sb = {0};
    for (int i = 0; i < nmsgs; i++) {
        const char *role = msgs[i].role ? msgs[i].role : "user";
        ckb_strbuf_printf(&sb, "[%s]\n%s\n\n", role, msgs[i].content ? msgs[i].content : "");
    }
    return ckb_strbuf_take(&sb);
}

/* environ plus our two variables; built before fork (the child may only
 * call async-signal-safe functions). The strings after environ's are ours. */
static char **command__env(const char *key, const char *model, char **mine)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = ckb_xcalloc(n + 3, sizeof *env);
    size_t o = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "CKB_REQUEST_KEY=", 16) != 0 &&
            strncmp(environ[i], "CKB_MODEL=", 10) != 0)
            env[o++] = environ[i];
    ckb_strbuf a = {0}, b = {0};
    ckb_strbuf_printf(&a, "CKB_REQUEST_KEY=%s", key ? key : "");
    ckb_strbuf_printf(&b, "CKB_MODEL=%s", model ? model : "");
    mine[0] = env[o++] = ckb_strbuf_take(&a);
    mine[1] = env[o++] = ckb_strbuf_take(&b);
    return env;
}

static void command__append_capped(ckb_strbuf *sb, const char *data, size_t n, size_t cap)
{
    if (sb->len >= cap)
        return;
    ckb_strbuf_append(sb, data, sb->len + n > cap ? cap - sb->len : n);
}

static int command__blank(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\n' && *s != '\r' && *s != '\t')
            return 0;
    return 1;
}

static void command__complete(void *state, const ckb_chat_msg *msgs, int nmsgs, const char *key,
                              ckb_reply *out)
{
    command_state *s = state;
    int in[2] = {-1, -1}, outp[2] = {-1, -1}, errp[2] = {-1, -1};
    char *mine[2] = {NULL, NULL};
    char **env = NULL;
    char *prompt = command__prompt(msgs, nmsgs);
    size_t prompt_len = strlen(prompt), written = 0;
    ckb_strbuf so = {0}, se = {0};
    pid_t pid = -1;
    int timed_out = 0, wstatus = 0, reaped = 0;
    sigset_t pipe_only, old_mask;

    out->status = CKB_REPLY_TRANSPORT;
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(outp, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0) {
        ckb_provider_set_error(out->error, sizeof out->error, COMMAND_NAME, strerror(errno));
        goto cleanup;
    }
    env = command__env(key, s->model, mine);
    char *const argv[] = {"sh", "-c", s->command, NULL};

    /* A child that stops reading its stdin must not kill us with SIGPIPE:
     * block it in this thread (write then fails with EPIPE) and let the
     * child start with the mask we had. */
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, &old_mask);

    /* The shell runs under a keeper (proc.h): its whole tree ends with
     * the call, with a signal to ckbench, and with a kill -9 of it. */
    int fds[3] = {in[0], outp[1], errp[1]};
    pid = ckb_proc_spawn_kept("/bin/sh", argv, env, fds, &old_mask);
    if (pid < 0) {
        ckb_provider_set_error(out->error, sizeof out->error, COMMAND_NAME, strerror(errno));
        goto restore;
    }
    close(in[0]), in[0] = -1;
    close(outp[1]), outp[1] = -1;
    close(errp[1]), errp[1] = -1;
    fcntl(in[1], F_SETFL, O_NONBLOCK);
    if (prompt_len == 0)
        close(in[1]), in[1] = -1;

    double deadline = ckb_now() + s->timeout_s;
    while (outp[0] >= 0 || errp[0] >= 0) {
        double left = deadline - ckb_now();
        if (left <= 0) {
            timed_out = 1;
            break;
        }
        /* The shell gone, what it wrote is in the pipes: a process it left
         * in the background may hold them open, so stop at the first
         * moment nothing more is there. */
        if (!reaped && waitpid(pid, &wstatus, WNOHANG) == pid)
            reaped = 1;
        struct pollfd p[3] = {{.fd = in[1], .events = POLLOUT},
                              {.fd = outp[0], .events = POLLIN},
                              {.fd = errp[0], .events = POLLIN}};
        int wait_ms = reaped ? 0 : left > 0.1 ? 100 : (int)(left * 1000) + 1;
        int r = poll(p, 3, wait_ms);
        if (r < 0 && errno != EINTR)
            break;
        if (r == 0 && reaped)
            break;
        if (r <= 0)
            continue;
        if (in[1] >= 0 && p[0].revents) {
            ssize_t n = write(in[1], prompt + written, prompt_len - written);
            if (n > 0)
                written += (size_t)n;
            /* done, or the child closed its stdin (EPIPE): it has what it wants */
            if (written == prompt_len || (n < 0 && errno != EAGAIN && errno != EINTR))
                close(in[1]), in[1] = -1;
        }
        for (int k = 1; k <= 2; k++) {
            int *fd = k == 1 ? &outp[0] : &errp[0];
            if (*fd < 0 || !p[k].revents)
                continue;
            char buf[65536];
            ssize_t n = read(*fd, buf, sizeof buf);
            if (n > 0)
                command__append_capped(k == 1 ? &so : &se, buf, (size_t)n,
                                       k == 1 ? COMMAND_MAX_STDOUT : COMMAND_MAX_STDERR);
            else if (n == 0 || (errno != EINTR && errno != EAGAIN))
                close(*fd), *fd = -1;
        }
    }
    /* its output is closed; give the shell the time left to exit */
    while (!timed_out && !reaped) {
        pid_t w = waitpid(pid, &wstatus, WNOHANG);
        if (w == pid) {
            reaped = 1;
            break;
        }
        if (w < 0 && errno != EINTR)
            break;
        if (ckb_now() >= deadline) {
            timed_out = 1;
            break;
        }
        struct timespec t = {0, 5 * 1000 * 1000};
        nanosleep(&t, NULL);
    }
    /* the whole group goes: a timed-out command, or children it left behind */
    kill(-pid, SIGKILL);
    if (!reaped)
        waitpid(pid, &wstatus, 0);
    ckb_proc_kill_group(pid);

    if (timed_out) {
        char msg[128];
        snprintf(msg, sizeof msg, "no reply within %.3g s: killed", s->timeout_s);
        out->status = CKB_REPLY_TIMEOUT;
        ckb_provider_set_error(out->error, sizeof out->error, COMMAND_NAME, msg);
    } else if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
        ckb_strbuf msg = {0};
        if (WIFEXITED(wstatus))
            ckb_strbuf_printf(&msg, "exited with status %d", WEXITSTATUS(wstatus));
        else
            ckb_strbuf_printf(&msg, "killed by signal %d", WTERMSIG(wstatus));
        /* the end of stderr is where programs say what went wrong */
        const char *tail = se.data ? se.data : "";
        if (strlen(tail) > 350)
            tail += strlen(tail) - 350;
        while ((*tail & 0xC0) == 0x80) /* start on a character, not inside one */
            tail++;
        if (!command__blank(tail))
            ckb_strbuf_printf(&msg, ": %s", tail);
        out->status = CKB_REPLY_TRANSPORT;
        ckb_provider_set_error(out->error, sizeof out->error, COMMAND_NAME, msg.data);
        ckb_strbuf_free(&msg);
    } else if (!so.data || command__blank(so.data)) {
        out->status = CKB_REPLY_EMPTY;
        ckb_provider_set_error(out->error, sizeof out->error, COMMAND_NAME,
                               "the command printed nothing");
    } else {
        out->status = CKB_REPLY_OK;
        out->text = ckb_strbuf_take(&so);
    }

restore:;
    /* a SIGPIPE our writes raised is pending on this thread: take it */
    struct timespec zero = {0, 0};
    while (sigtimedwait(&pipe_only, NULL, &zero) == SIGPIPE)
        ;
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
cleanup:
    for (int k = 0; k < 2; k++) {
        if (in[k] >= 0)
            close(in[k]);
        if (outp[k] >= 0)
            close(outp[k]);
        if (errp[k] >= 0)
            close(errp[k]);
    }
    free(mine[0]);
    free(mine[1]);
    free(env);
    free(prompt);
    ckb_strbuf_free(&so);
    ckb_strbuf_free(&se);
}

static void command__close(void *state)
{
    command_state *s = state;
    if (!s)
        return;
    free(s->command);
    free(s->model);
    free(s);
}

int ckb_command_open(const ckb_provider_config *c, ckb_backend *b, ckb_err *err)
{
    if (!c->command || !*c->command) {
        return ckb_err_set(err, CKB_E_USAGE,
                           "command: no command line given: name the program that reads the "
                           "prompt on stdin and prints the reply (--command 'CMD')");
    }
    command_state *s = ckb_xcalloc(1, sizeof *s);
    s->command = ckb_xstrdup(c->command);
    s->model = c->model ? ckb_xstrdup(c->model) : NULL;
    s->timeout_s = c->timeout_s > 0 ? c->timeout_s : 300.0;
    b->ops.complete = command__complete;
    b->ops.close = command__close;
    b->state = s;
    b->keeps_cost = 0;
    return 0;
}
