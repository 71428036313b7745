/* `ckbench serve`: the evaluator as an HTTP service (serve/serve.h). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "serve/serve.h"
#include "serve/tokens.h"

static int serve__add_token(const ckb_cli_args *a, const char *name)
{
    const char *file = ckb_cli_str(a, "tokens", NULL);
    if (!file)
        return ckb_cli_usage_error(a, "--add-token NAME needs --tokens FILE (the file the "
                                      "token's hash is appended to)");
    ckb_err err;
    char token[65];
    if (ckb_tokens_add(file, name, token, &err) != 0) {
        fprintf(stderr, "ckbench serve: %s\n", err.msg);
        return 1;
    }
    /* the token itself exists only here: the file keeps its hash */
    printf("%s\n", token);
    fflush(stdout);
    fprintf(stderr, "ckbench serve: token '%s' added to %s; it is printed once, above: give it "
                    "to the client as 'Authorization: Bearer TOKEN'\n", name, file);
    return 0;
}

static int serve__run(const ckb_cli_args *a)
{
    const char *add = ckb_cli_str(a, "add-token", NULL);
    if (add)
        return serve__add_token(a, add);
    ckb_serve_config c;
    ckb_serve_config_default(&c);
    if (ckb_cli_executor(a, &c.exec) != 0)
        return 2;
    c.listen = ckb_cli_str(a, "listen", c.listen);
    c.db = ckb_cli_str(a, "db", c.db);
    c.tokens = ckb_cli_str(a, "tokens", NULL);
    c.threads = (int)ckb_cli_int(a, "threads", c.threads);
    c.max_queue = ckb_cli_int(a, "max-queue", c.max_queue);
    c.max_body = ckb_cli_int(a, "max-body", c.max_body);
    c.http_threads = (int)ckb_cli_int(a, "http-threads", c.http_threads);
    c.idle_timeout_s = (int)ckb_cli_int(a, "idle-timeout", c.idle_timeout_s);
    c.timeout_scale = ckb_cli_num(a, "timeout-scale", c.timeout_scale);
    c.host_size = ckb_cli_given(a, "host-size") > 0;
    c.version = ckb_cli_version();
    c.commit = ckb_cli_build_commit();
    c.port_file = ckb_cli_str(a, "port-file", NULL);
    c.tls_cert = ckb_cli_str(a, "tls-cert", NULL);
    c.tls_key = ckb_cli_str(a, "tls-key", NULL);
    if (!c.tls_cert != !c.tls_key)
        return ckb_cli_usage_error(a, "--tls-cert and --tls-key go together");
    /* this host's profile: the host speed check, and the host sizes */
    ckb_machine m;
    int speed = !ckb_cli_given(a, "no-host-speed") && c.exec.kind == CKB_EXEC_LOCAL;
    if ((speed || c.host_size) && ckb_cli_machine(c.threads, NULL, &m) != 0)
        return 1;
    if (speed)
        c.machine = &m;
    if (c.host_size) {
        int n = ckb_workload_count();
        const ckb_workload *ws[256];
        for (int i = 0; i < n && i < 256; i++)
            ws[i] = ckb_workload_at(i);
        if (ckb_cli_host_sizes(CKB_SIZE_HOST, &m, c.threads, ws, n < 256 ? n : 256) != 0)
            return 1;
    }
    return ckb_serve_run(&c) == 0 ? 0 : 1;
}

static const ckb_cli_opt serve__opts[] = {
    {"listen", 0, CKB_CLI_STR, "ADDR:PORT", 0, 0, 0,
     "where to listen (default: 127.0.0.1:8714; port 0: any free port); an address other "
     "than loopback needs --tokens", NULL},
    {"db", 0, CKB_CLI_STR, "PATH", 0, 0, 0,
     "the SQLite database of requests and results (default: ckbench-serve.db); running "
     "evaluations' folders go in PATH.d/", NULL},
    {"tokens", 0, CKB_CLI_STR, "FILE", 0, 0, 0,
     "the token file (hashes, names, limits); without it only loopback callers are served",
     NULL},
    {"add-token", 0, CKB_CLI_STR, "NAME", 0, 0, 0,
     "make a token for NAME, append its hash to --tokens FILE, print the token, and exit",
     NULL},
    CKB_CLI_OPTS_EXECUTOR,
    {"threads", 0, CKB_CLI_INT, "N", 1, 1024, 0,
     "an evaluation's thread budget when the request names none (default: every core)", NULL},
    {"max-queue", 0, CKB_CLI_INT, "N", 1, 10000000, 0,
     "evaluations queued or running at once, everyone's (default: 10000); past it: 429",
     NULL},
    {"max-body", 0, CKB_CLI_INT, "BYTES", 1024, 1L << 31, 0,
     "the largest request body (default: 64 MiB); past it: 413", NULL},
    {"http-threads", 0, CKB_CLI_INT, "N", 1, 256, 0,
     "the HTTP server's thread pool (default: 4)", NULL},
    {"idle-timeout", 0, CKB_CLI_INT, "S", 1, 3600, 0,
     "close a connection idle this many seconds (default: 30)", NULL},
    {"timeout-scale", 0, CKB_CLI_NUM, "X", 1e-3, 1e6, 0,
     "multiply every evaluation's time limits by X (default: 1)", NULL},
    {"host-size", 0, CKB_CLI_FLAG, NULL, 0, 0, 0,
     "serve size \"host\" too: this host's sizes are loaded, or searched, at the start", NULL},
    {"no-host-speed", 0, CKB_CLI_FLAG, NULL, 0, 0, 0,
     "skip the host speed check at the start (its figures in /metrics)", NULL},
    {"tls-cert", 0, CKB_CLI_STR, "PEM", 0, 0, 0,
     "serve HTTPS with this certificate (and --tls-key); else plain HTTP, e.g. behind a "
     "TLS proxy", NULL},
    {"tls-key", 0, CKB_CLI_STR, "PEM", 0, 0, 0, "the certificate's private key", NULL},
    {"port-file", 0, CKB_CLI_STR, "FILE", 0, 0, 0,
     "write the port listened on to FILE once the server is up", NULL},
};

const ckb_cli_cmd ckb_cmd_serve = {
    .name = "serve", .args = "", .min_pos = 0, .max_pos = 0,
    .summary = "the evaluator as an HTTP service (docs/openapi.yaml) for training loops and "
               "agents",
    .about = "Runs until SIGTERM or SIGINT; a running evaluation goes back to the queue and\n"
             "runs again at the next start. Every accepted request is in the database before\n"
             "it is answered, so a killed server loses none.\n",
    .opts = serve__opts, .nopts = CKB_CLI_NOPTS(serve__opts), .run = serve__run,
};
