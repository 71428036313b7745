/*
 * serve.h — `ckbench serve`: the evaluator as an HTTP/1.1 JSON service for
 * training loops and agents (docs/SERVE.md; the API is docs/openapi.yaml).
 *
 * A thin door onto the same engine as the CLI: every evaluation runs
 * through the executor (exec/executor.h) exactly as `ckbench eval` or a
 * Slurm node runs it, and its result is the JSON `ckbench eval` prints.
 * The pieces, one job each:
 *   http.c     libmicrohttpd: connections, bodies, limits, long-polls
 *   api.c      the routes: a request in, a status and a body out
 *   request.c  an evaluation request's JSON, validated
 *   store.c    the durable queue (SQLite, WAL)
 *   runner.c   the workers that take queued evaluations to the executor
 *   tokens.c   who may call, and their limits
 *   metrics.c  /metrics in Prometheus' text format
 */
#ifndef CKB_SERVE_SERVE_H
#define CKB_SERVE_SERVE_H

#include "exec/executor.h"
#include "machine/profile.h"

typedef struct {
    const char *listen;      /* "ADDR:PORT" ("[v6]:PORT"); default 127.0.0.1:8714 */
    const char *db;          /* the SQLite file; its evaluations' folders go beside it */
    const char *tokens;      /* the token file, or NULL: loopback callers only */
    ckb_exec_config exec;    /* local (isolated) or slurm */
    int threads;             /* default thread budget of an evaluation (every core) */
    long max_queue;          /* queued + running evaluations of everyone (default 10000) */
    long max_body;           /* bytes of one request body (default 64 MiB) */
    int http_threads;        /* the HTTP thread pool (default 4) */
    int idle_timeout_s;      /* a connection idle this long is closed (default 30) */
    double timeout_scale;    /* of every evaluation's time limits (default 1) */
    int host_size;           /* 1: accept size "host": the caller has made every workload's
                                host size this host's (cli/cli.h, ckb_cli_host_sizes) */
    const ckb_machine *machine; /* this host's profile for the host speed check at the
                                   start (local), or NULL: none */
    const char *version, *commit; /* what /healthz says of the build */
    const char *port_file;   /* NULL, or where to write the port bound (for --listen :0) */
    const char *tls_cert, *tls_key; /* PEM files: HTTPS by libmicrohttpd itself (both, or
                                       neither: then plain HTTP, e.g. behind a proxy) */
} ckb_serve_config;

void ckb_serve_config_default(ckb_serve_config *c);

/* Runs the server until SIGTERM or SIGINT. 0 after a clean stop, 1 when it
 * could not start (said on stderr). */
int ckb_serve_run(const ckb_serve_config *c);

#endif /* CKB_SERVE_SERVE_H */
