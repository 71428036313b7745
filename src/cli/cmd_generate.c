/*
 * `ckbench generate`: a generation method over workloads with a model
 * behind a provider, into a run folder (docs/FORMATS.md); `--resume RUN`
 * continues a killed run from its records.
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "core/fsutil.h"
#include "core/proc.h"
#include "docs/docs.h"
#include "gen/gen.h"

typedef struct {
    ckb_gen_opts g;
    ckb_provider_config pc;
    const char *workloads, *out, *resume, *machine, *prices;
    ckb_exec_config ec; /* --executor and its Slurm options (not run-defining) */
    int budget_set;
    int given[64]; /* which run-defining options the command line set */
} generate__opts;

static const char generate__usage[] =
    "usage: ckbench generate --method best-of-n|refine|refine-docs|beam --provider P "
    "--model X\n"
    "         --workloads ID,ID... [--budget N] [--size small|default] [--threads N]\n"
    "         [--out RUN] [--jobs K] [--concurrency N] [--base-url U] [--command CMD]\n"
    "         [--replay RUN] [--prices FILE] [--max-retries N] [--timeout S]\n"
    "         [--temperature T] [--max-tokens N] [--chains C --turns T]\n"
    "         [--beam-width W --beam-candidates K] [--seed S] [--warmup N] [--iters N]\n"
    "         [--seeds N] [--timeout-scale X] [--docs-target T] [--no-expert] [--quiet]\n"
    "         [--executor local|slurm [--partition P] [--account A] [--slurm-max-jobs N]]\n"
    "       ckbench generate --resume RUN [--jobs K] [--concurrency N] [provider options]\n"
    "         [executor options]\n";

/* Options that define the run: fixed at creation, read back on resume. */
enum { G_METHOD, G_PROVIDER, G_MODEL, G_WORKLOADS, G_BUDGET, G_SIZE, G_THREADS, G_CHAINS,
       G_TURNS, G_BEAM_W, G_BEAM_K, G_SEED, G_WARMUP, G_ITERS, G_SEEDS, G_DOCS, G_NOEXPERT,
       G_TEMPERATURE, G_MAXTOK, G_REPLAY, G_NDEF };

static int generate__int(const char *flag, const char *v, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long x = v ? strtol(v, &end, 10) : 0;
    if (!v || errno || *end || x < lo || x > hi) {
        fprintf(stderr, "ckbench: %s needs an integer in %ld..%ld (got '%s')\n", flag, lo, hi,
                v ? v : "");
        return -1;
    }
    *out = (int)x;
    return 0;
}

static int generate__double(const char *flag, const char *v, double lo, double *out)
{
    char *end;
    double x = v ? strtod(v, &end) : NAN;
    if (!v || *end || !(x >= lo)) {
        fprintf(stderr, "ckbench: %s needs a number >= %g (got '%s')\n", flag, lo, v ? v : "");
        return -1;
    }
    *out = x;
    return 0;
}

static int generate__parse(int argc, char **argv, generate__opts *o)
{
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = 1, rc = 0;
        if (!strcmp(a, "--method")) {
            o->given[G_METHOD] = 1;
            if (ckb_gen_method_parse(v, &o->g.method) != 0) {
                fprintf(stderr, "ckbench: --method is best-of-n, refine, refine-docs or beam\n");
                return -1;
            }
        } else if (!strcmp(a, "--provider")) {
            o->given[G_PROVIDER] = 1, o->pc.name = v;
        } else if (!strcmp(a, "--model")) {
            o->given[G_MODEL] = 1, o->pc.model = v;
        } else if (!strcmp(a, "--workloads")) {
            o->given[G_WORKLOADS] = 1, o->workloads = v;
        } else if (!strcmp(a, "--budget")) {
            o->given[G_BUDGET] = 1, rc = generate__int(a, v, 1, 100000, &o->g.budget);
        } else if (!strcmp(a, "--size")) {
            o->given[G_SIZE] = 1;
            if (!v || ckb_size_parse(v, &o->g.eval.size) != 0) {
                fprintf(stderr, "ckbench: --size is small, default or paper\n");
                return -1;
            }
        } else if (!strcmp(a, "--threads")) {
            o->given[G_THREADS] = 1, rc = generate__int(a, v, 1, 1024, &o->g.eval.threads);
        } else if (!strcmp(a, "--chains")) {
            o->given[G_CHAINS] = 1, rc = generate__int(a, v, 1, 10000, &o->g.chains);
        } else if (!strcmp(a, "--turns")) {
            o->given[G_TURNS] = 1, rc = generate__int(a, v, 1, 10000, &o->g.turns);
        } else if (!strcmp(a, "--beam-width")) {
            o->given[G_BEAM_W] = 1, rc = generate__int(a, v, 1, 16, &o->g.beam_width);
        } else if (!strcmp(a, "--beam-candidates")) {
            o->given[G_BEAM_K] = 1, rc = generate__int(a, v, 1, 64, &o->g.beam_candidates);
        } else if (!strcmp(a, "--seed")) {
            char *end;
            o->given[G_SEED] = 1;
            o->g.seed = v ? strtoull(v, &end, 0) : 0;
            if (!v || *end) {
                fprintf(stderr, "ckbench: --seed needs an integer\n");
                return -1;
            }
        } else if (!strcmp(a, "--warmup")) {
            o->given[G_WARMUP] = 1, rc = generate__int(a, v, 0, 100, &o->g.eval.warmup);
        } else if (!strcmp(a, "--iters")) {
            o->given[G_ITERS] = 1, rc = generate__int(a, v, 1, 400, &o->g.eval.iters);
        } else if (!strcmp(a, "--seeds")) {
            o->given[G_SEEDS] = 1, rc = generate__int(a, v, 1, 7, &o->g.eval.nseeds);
        } else if (!strcmp(a, "--docs-target")) {
            o->given[G_DOCS] = 1, o->g.docs_target = v;
        } else if (!strcmp(a, "--temperature")) {
            o->given[G_TEMPERATURE] = 1, rc = generate__double(a, v, 0, &o->pc.temperature);
        } else if (!strcmp(a, "--max-tokens")) {
            o->given[G_MAXTOK] = 1, rc = generate__int(a, v, 1, 1000000, &o->pc.max_tokens);
        } else if (!strcmp(a, "--replay")) {
            o->given[G_REPLAY] = 1, o->pc.replay_run = v;
        } else if (!strcmp(a, "--timeout-scale")) {
            rc = generate__double(a, v, 0.01, &o->g.eval.timeout_scale);
        } else if (!strcmp(a, "--out")) {
            o->out = v;
        } else if (!strcmp(a, "--resume")) {
            o->resume = v;
        } else if (!strcmp(a, "--jobs")) {
            rc = generate__int(a, v, 1, 256, &o->g.jobs);
        } else if (!strcmp(a, "--concurrency")) {
            rc = generate__int(a, v, 1, 256, &o->pc.concurrency);
        } else if (!strcmp(a, "--base-url")) {
            o->pc.base_url = v;
        } else if (!strcmp(a, "--command")) {
            o->pc.command = v;
        } else if (!strcmp(a, "--prices")) {
            o->pc.price_file = v;
        } else if (!strcmp(a, "--max-retries")) {
            rc = generate__int(a, v, 0, 100, &o->pc.max_retries);
        } else if (!strcmp(a, "--timeout")) {
            rc = generate__double(a, v, 0.001, &o->pc.timeout_s);
        } else if (!strcmp(a, "--machine")) {
            o->machine = v;
        } else if (!strcmp(a, "--executor")) {
            if (ckb_exec_kind_parse(v, &o->ec.kind) != 0) {
                fprintf(stderr, "ckbench: --executor is local or slurm\n");
                return -1;
            }
        } else if (!strcmp(a, "--partition")) {
            o->ec.partition = v;
        } else if (!strcmp(a, "--account")) {
            o->ec.account = v;
        } else if (!strcmp(a, "--slurm-max-jobs")) {
            rc = generate__int(a, v, 1, 100000, &o->ec.max_jobs);
        } else {
            takes = 0;
            if (!strcmp(a, "--no-expert"))
                o->given[G_NOEXPERT] = 1, o->g.use_expert = 0;
            else if (!strcmp(a, "--quiet"))
                o->g.quiet = 1;
            else {
                fprintf(stderr, "ckbench: generate: unknown argument %s\n%s", a, generate__usage);
                return -1;
            }
        }
        if (rc != 0)
            return -1;
        if (takes && !v) {
            fprintf(stderr, "ckbench: %s needs a value\n", a);
            return -1;
        }
        i += takes;
    }
    return 0;
}

static const char *generate__jstr(json_object *c, const char *k)
{
    json_object *v;
    return json_object_object_get_ex(c, k, &v) && v ? json_object_get_string(v) : NULL;
}

static double generate__jnum(json_object *c, const char *k, double dflt)
{
    json_object *v;
    return json_object_object_get_ex(c, k, &v) && v ? json_object_get_double(v) : dflt;
}

/* The run-defining options from a run's config (resume): 0, -1 when the
 * command line tries to change one (said), -2 when the config is unusable. */
static int generate__from_config(json_object *c, generate__opts *o, char *wl, size_t wln)
{
    for (int i = 0; i < G_NDEF; i++)
        if (o->given[i]) {
            fprintf(stderr, "ckbench: --resume continues a run as it was configured; only "
                            "--jobs, --concurrency, the executor's options and the provider's "
                            "connection options (--base-url, --command, --prices, "
                            "--max-retries, --timeout) may be given\n");
            return -1;
        }
    if (ckb_gen_method_parse(generate__jstr(c, "method"), &o->g.method) != 0 ||
        ckb_size_parse(generate__jstr(c, "size") ? generate__jstr(c, "size") : "", &o->g.eval.size))
        return -2;
    o->pc.name = generate__jstr(c, "provider");
    o->pc.model = generate__jstr(c, "model");
    if (!o->pc.base_url)
        o->pc.base_url = generate__jstr(c, "base_url");
    if (!o->pc.command)
        o->pc.command = generate__jstr(c, "command");
    o->pc.replay_run = generate__jstr(c, "replay_run");
    o->pc.temperature = generate__jnum(c, "temperature", -1);
    o->pc.max_tokens = (int)generate__jnum(c, "max_tokens", 0);
    o->g.budget = (int)generate__jnum(c, "budget", 144);
    o->g.chains = (int)generate__jnum(c, "chains", 0);
    o->g.turns = (int)generate__jnum(c, "turns", 8);
    o->g.beam_width = (int)generate__jnum(c, "beam_width", 3);
    o->g.beam_candidates = (int)generate__jnum(c, "beam_candidates", 6);
    o->g.translate_iters = (int)generate__jnum(c, "translate_iters", 4);
    o->g.eval.threads = (int)generate__jnum(c, "threads", o->g.eval.threads);
    o->g.eval.warmup = (int)generate__jnum(c, "warmup", 5);
    o->g.eval.iters = (int)generate__jnum(c, "iters", 50);
    o->g.eval.nseeds = (int)generate__jnum(c, "seeds", 3);
    const char *seed = generate__jstr(c, "seed");
    o->g.seed = seed ? strtoull(seed, NULL, 10) : 0;
    o->g.docs_target = generate__jstr(c, "docs_target");
    json_object *e;
    o->g.use_expert = !json_object_object_get_ex(c, "expert", &e) || json_object_get_boolean(e);
    json_object *wls;
    if (!json_object_object_get_ex(c, "workloads", &wls))
        return -2;
    wl[0] = 0;
    for (size_t i = 0; i < json_object_array_length(wls); i++) {
        size_t used = strlen(wl);
        snprintf(wl + used, wln - used, "%s%s", i ? "," : "",
                 json_object_get_string(json_object_array_get_idx(wls, i)));
    }
    o->workloads = wl;
    return 0;
}

static char *generate__commit(void)
{
    char *argv[] = {"git", "-C", (char *)ckb_home(), "rev-parse", "--short", "HEAD", NULL};
    ckb_proc_result pr;
    if (ckb_proc_run(argv, 10, 256, &pr) != 0)
        return strdup("unknown");
    pr.output[strcspn(pr.output, "\n")] = 0;
    char *s = strdup(pr.exited && pr.exit_code == 0 ? pr.output : "unknown");
    ckb_proc_result_free(&pr);
    return s;
}

static json_object *generate__config(const generate__opts *o, const ckb_workload *const *wl,
                                     int n)
{
    json_object *c = json_object_new_object();
    char when[32], seed[32];
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    int chains, turns;
    ckb_gen_refine_shape(&o->g, &chains, &turns);
    json_object_object_add(c, "format", json_object_new_int(1));
    json_object_object_add(c, "method", json_object_new_string(ckb_gen_method_name(o->g.method)));
    json_object_object_add(c, "budget", json_object_new_int(o->g.budget));
    if (o->g.method == CKB_GEN_REFINE || o->g.method == CKB_GEN_REFINE_DOCS) {
        json_object_object_add(c, "chains", json_object_new_int(chains));
        json_object_object_add(c, "turns", json_object_new_int(turns));
    }
    if (o->g.method == CKB_GEN_BEAM) {
        json_object_object_add(c, "beam_width", json_object_new_int(o->g.beam_width));
        json_object_object_add(c, "beam_candidates", json_object_new_int(o->g.beam_candidates));
        json_object_object_add(c, "translate_iters", json_object_new_int(o->g.translate_iters));
    }
    json_object_object_add(c, "provider", json_object_new_string(o->pc.name));
    json_object_object_add(c, "model", o->pc.model ? json_object_new_string(o->pc.model) : NULL);
    json_object_object_add(c, "base_url",
                           o->pc.base_url ? json_object_new_string(o->pc.base_url) : NULL);
    if (o->pc.command)
        json_object_object_add(c, "command", json_object_new_string(o->pc.command));
    if (o->pc.replay_run)
        json_object_object_add(c, "replay_run", json_object_new_string(o->pc.replay_run));
    json_object_object_add(c, "temperature", o->pc.temperature >= 0
                                                 ? json_object_new_double(o->pc.temperature)
                                                 : NULL);
    json_object_object_add(c, "max_tokens", o->pc.max_tokens > 0
                                                ? json_object_new_int(o->pc.max_tokens)
                                                : NULL);
    json_object *arr = json_object_new_array();
    for (int i = 0; i < n; i++)
        json_object_array_add(arr, json_object_new_string(wl[i]->id));
    json_object_object_add(c, "workloads", arr);
    json_object_object_add(c, "size", json_object_new_string(ckb_size_name(o->g.eval.size)));
    json_object_object_add(c, "threads", json_object_new_int(o->g.eval.threads));
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)o->g.seed);
    json_object_object_add(c, "seed", o->g.seed ? json_object_new_string(seed) : NULL);
    json_object_object_add(c, "warmup", json_object_new_int(o->g.eval.warmup));
    json_object_object_add(c, "iters", json_object_new_int(o->g.eval.iters));
    json_object_object_add(c, "seeds", json_object_new_int(o->g.eval.nseeds));
    json_object_object_add(c, "docs_target",
                           ckb_gen_method_uses_docs(o->g.method)
                               ? json_object_new_string(o->g.docs_target
                                                            ? o->g.docs_target
                                                            : ckb_docs_default_target())
                               : NULL);
    json_object_object_add(c, "expert", json_object_new_boolean(o->g.use_expert));
    char *commit = generate__commit();
    json_object_object_add(c, "ckbench_commit", json_object_new_string(commit));
    free(commit);
    json_object_object_add(c, "started", json_object_new_string(when));
    return c;
}

/* The workloads named by a comma-separated list; -1 after printing. */
static int generate__workloads(const char *list, const ckb_workload **wl, int max)
{
    int n = 0;
    char *copy = strdup(list), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        const ckb_workload *w = ckb_cli_workload(t);
        if (!w || n == max) {
            free(copy);
            return -1;
        }
        for (int i = 0; i < n; i++)
            if (wl[i] == w) {
                fprintf(stderr, "ckbench: workload %s named twice\n", w->id);
                free(copy);
                return -1;
            }
        wl[n++] = w;
    }
    free(copy);
    return n;
}

static void generate__report(ckb_run *run, const ckb_workload *const *wl, int n)
{
    fprintf(stderr, "\n%-44s %8s %8s %9s %8s\n", "workload", "samples", "correct", "best", "expert");
    for (int i = 0; i < n; i++) {
        int s, c;
        double best;
        ckb_run_workload_totals(run, wl[i]->id, &s, &c, &best);
        fprintf(stderr, "%-44s %8d %8d ", wl[i]->id, s, c);
        if (best > 0)
            fprintf(stderr, "%8.3gx", best);
        else
            fprintf(stderr, "%9s", "-");
        double e = ckb_run_expert(run, wl[i]->id);
        if (isfinite(e))
            fprintf(stderr, " %7.3gx\n", e);
        else
            fprintf(stderr, " %8s\n", "-");
    }
    fprintf(stderr, "run: %s (summary.json, best/, records.jsonl)\n", ckb_run_dir(run));
}

int ckb_cmd_generate(int argc, char **argv)
{
    generate__opts o;
    memset(&o, 0, sizeof o);
    ckb_gen_opts_default(&o.g);
    ckb_provider_config_default(&o.pc);
    ckb_exec_config_default(&o.ec);
    o.g.eval.threads = omp_get_num_procs();
    if (generate__parse(argc, argv, &o) != 0)
        return 2;
    if (argc < 3) {
        fputs(generate__usage, stderr);
        return 2;
    }
    char err[1024], wlbuf[8192], outbuf[512];
    ckb_run *run = NULL;
    ckb_provider *p = NULL;
    ckb_exec *exec = NULL;
    json_object *config = NULL;
    int rc = 1;
    const ckb_workload *wl[128];
    int nwl;
    if (o.resume) {
        /* The run first: its lock refuses a second process before anything else. */
        if (ckb_run_resume(o.resume, &run, err, sizeof err) != 0) {
            fprintf(stderr, "ckbench: %s\n", err);
            return 1;
        }
        int bad = generate__from_config(ckb_run_config(run), &o, wlbuf, sizeof wlbuf);
        if (bad != 0) {
            if (bad == -2)
                fprintf(stderr, "ckbench: cannot resume %s: its config.json is not usable\n",
                        o.resume);
            rc = 2;
            goto cleanup;
        }
    }
    /* --chains and --turns alone set the budget they add up to. */
    if (!o.resume && o.given[G_CHAINS] && o.given[G_TURNS] && !o.given[G_BUDGET])
        o.g.budget = o.g.chains * o.g.turns;
    if (!o.pc.name || !o.workloads) {
        fprintf(stderr, "ckbench: generate needs --provider and --workloads\n%s", generate__usage);
        rc = 2;
        goto cleanup;
    }
    if ((nwl = generate__workloads(o.workloads, wl, 128)) <= 0) {
        rc = 2;
        goto cleanup;
    }
    o.g.provider = o.pc.name;
    o.g.model = o.pc.model;
    o.g.concurrency = o.pc.concurrency > 0 ? o.pc.concurrency : 4;
    p = ckb_provider_open(&o.pc, err, sizeof err);
    if (!p) {
        fprintf(stderr, "ckbench: %s\n", err);
        rc = 2;
        goto cleanup;
    }
    ckb_machine m;
    ckb_cli_opts co;
    memset(&co, 0, sizeof co);
    co.threads = o.g.eval.threads;
    co.machine = o.machine;
    if (ckb_cli_machine(&co, &m) != 0)
        goto cleanup;
    o.g.eval.peak_gflops = m.bf16_gflops;
    o.g.eval.bw_gbs = m.bw_gbs;
    if (!run) {
        if (!o.out) {
            time_t now = time(NULL);
            char when[32];
            strftime(when, sizeof when, "%Y%m%d-%H%M%S", gmtime(&now));
            snprintf(outbuf, sizeof outbuf, "runs/%s-%s", ckb_gen_method_name(o.g.method), when);
            o.out = outbuf;
        }
        config = generate__config(&o, wl, nwl);
        if (ckb_run_create(o.out, config, &run, err, sizeof err) != 0) {
            fprintf(stderr, "ckbench: %s\n", err);
            goto cleanup;
        }
        fprintf(stderr, "ckbench: generating into %s\n", o.out);
    } else {
        fprintf(stderr, "ckbench: resuming %s\n", o.resume);
    }
    o.ec.quiet = o.g.quiet;
    if (!(exec = ckb_exec_open(&o.ec, err, sizeof err))) {
        fprintf(stderr, "ckbench: %s\n", err);
        goto cleanup;
    }
    o.g.exec = exec;
    /* A provider's program that exits early must not kill us with SIGPIPE. */
    signal(SIGPIPE, SIG_IGN);
    rc = ckb_gen_run(p, run, wl, nwl, &o.g) == 0 ? 0 : 1;
    generate__report(run, wl, nwl);
    /* Which nodes ran the evaluations, and whether their CPUs differ. */
    json_object *nodes = ckb_exec_nodes_json(exec);
    char npath[1100];
    snprintf(npath, sizeof npath, "%s/nodes.json", ckb_run_dir(run));
    const char *nt = json_object_to_json_string_ext(nodes, JSON_C_TO_STRING_PRETTY);
    if (ckb_write_file_atomic(npath, nt, strlen(nt)) != 0)
        fprintf(stderr, "ckbench: cannot write %s: %s\n", npath, strerror(errno));
    json_object_put(nodes);
cleanup:
    ckb_exec_close(exec);
    json_object_put(config);
    ckb_provider_close(p);
    ckb_run_close(run);
    return rc;
}
