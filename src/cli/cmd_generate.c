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
#include "core/alloc.h"
#include "core/fsutil.h"
#include "core/proc.h"
#include "docs/docs.h"
#include "gen/gen.h"
#include "machine/roofline.h"

typedef struct {
    ckb_gen_opts g;
    ckb_provider_config pc;
    const char *workloads, *out, *resume, *machine, *prices;
    int budget_set;
    int given[64]; /* which run-defining options the command line set */
} generate__opts;

/* Options that define the run: fixed at creation, read back on resume. */
enum { G_METHOD, G_PROVIDER, G_MODEL, G_WORKLOADS, G_BUDGET, G_SIZE, G_THREADS, G_CHAINS,
       G_TURNS, G_BEAM_W, G_BEAM_K, G_SEED, G_WARMUP, G_ITERS, G_SEEDS, G_DOCS, G_NOEXPERT,
       G_TEMPERATURE, G_MAXTOK, G_REPLAY, G_NDEF };

/* The option behind each G_*, in that order. */
static const char *const generate__defining[G_NDEF] = {
    "method", "provider", "model", "workloads", "budget", "size", "threads",
    "chains", "turns", "beam-width", "beam-candidates", "seed", "warmup", "iters",
    "seeds", "docs-target", "no-expert", "temperature", "max-tokens", "replay"};

/* The checked command line into o; -1 after saying what is wrong. */
static int generate__parse(const ckb_cli_args *a, generate__opts *o)
{
    for (int i = 0; i < G_NDEF; i++)
        o->given[i] = ckb_cli_given(a, generate__defining[i]) > 0;
    const char *method = ckb_cli_str(a, "method", NULL);
    if (method && ckb_gen_method_parse(method, &o->g.method) != 0) {
        ckb_cli_usage_error(a, "--method is best-of-n, refine, refine-docs or beam (got '%s')",
                            method);
        return -1;
    }
    o->pc.name = ckb_cli_str(a, "provider", NULL);
    o->pc.model = ckb_cli_str(a, "model", NULL);
    o->workloads = ckb_cli_str(a, "workloads", NULL);
    o->g.budget = (int)ckb_cli_int(a, "budget", o->g.budget);
    o->g.eval.size = ckb_cli_size(a, "size", o->g.eval.size);
    o->g.eval.threads = (int)ckb_cli_int(a, "threads", o->g.eval.threads);
    o->g.chains = (int)ckb_cli_int(a, "chains", o->g.chains);
    o->g.turns = (int)ckb_cli_int(a, "turns", o->g.turns);
    o->g.beam_width = (int)ckb_cli_int(a, "beam-width", o->g.beam_width);
    o->g.beam_candidates = (int)ckb_cli_int(a, "beam-candidates", o->g.beam_candidates);
    o->g.seed = ckb_cli_u64(a, "seed", o->g.seed);
    o->g.eval.warmup = (int)ckb_cli_int(a, "warmup", o->g.eval.warmup);
    o->g.eval.iters = (int)ckb_cli_int(a, "iters", o->g.eval.iters);
    o->g.eval.nseeds = (int)ckb_cli_int(a, "seeds", o->g.eval.nseeds);
    o->g.docs_target = ckb_cli_str(a, "docs-target", o->g.docs_target);
    o->pc.temperature = ckb_cli_num(a, "temperature", o->pc.temperature);
    o->pc.max_tokens = (int)ckb_cli_int(a, "max-tokens", o->pc.max_tokens);
    o->pc.replay_run = ckb_cli_str(a, "replay", NULL);
    o->g.eval.timeout_scale = ckb_cli_num(a, "timeout-scale", o->g.eval.timeout_scale);
    o->out = ckb_cli_str(a, "out", NULL);
    o->resume = ckb_cli_str(a, "resume", NULL);
    o->g.jobs = (int)ckb_cli_int(a, "jobs", o->g.jobs);
    o->pc.concurrency = (int)ckb_cli_int(a, "concurrency", o->pc.concurrency);
    o->pc.base_url = ckb_cli_str(a, "base-url", NULL);
    o->pc.command = ckb_cli_str(a, "command", NULL);
    o->pc.price_file = ckb_cli_str(a, "prices", NULL);
    o->pc.max_retries = (int)ckb_cli_int(a, "max-retries", o->pc.max_retries);
    o->pc.timeout_s = ckb_cli_num(a, "timeout", o->pc.timeout_s);
    o->machine = ckb_cli_str(a, "machine", NULL);
    if (ckb_cli_given(a, "no-expert"))
        o->g.use_expert = 0;
    if (ckb_cli_given(a, "quiet"))
        o->g.quiet = 1;
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
        return ckb_xstrdup("unknown");
    pr.output[strcspn(pr.output, "\n")] = 0;
    char *s = ckb_xstrdup(pr.exited && pr.exit_code == 0 ? pr.output : "unknown");
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
        /* The budget need not fill the last chain: say how long it is. */
        if (chains * turns != o->g.budget)
            json_object_object_add(c, "last_chain_turns",
                                   json_object_new_int(o->g.budget - (chains - 1) * turns));
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
    char *copy = ckb_xstrdup(list), *save = NULL;
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

/* The method's shape from the command line, so that config.json says what
 * will run: for refine, chains x turns is the budget (two of --budget,
 * --chains, --turns set the third; three that disagree are refused); an
 * option of another method is refused. -1 after saying why. */
static int generate__shape(const ckb_cli_args *a, generate__opts *o)
{
    int refine = o->g.method == CKB_GEN_REFINE || o->g.method == CKB_GEN_REFINE_DOCS;
    const char *m = ckb_gen_method_name(o->g.method);
    if (!refine && (o->given[G_CHAINS] || o->given[G_TURNS])) {
        ckb_cli_usage_error(a, "--chains and --turns apply to --method refine and refine-docs, "
                               "not %s",
                            m);
        return -1;
    }
    if (o->g.method != CKB_GEN_BEAM && (o->given[G_BEAM_W] || o->given[G_BEAM_K])) {
        ckb_cli_usage_error(a, "--beam-width and --beam-candidates apply to --method beam, not %s",
                            m);
        return -1;
    }
    if (!refine)
        return 0;
    int c = o->given[G_CHAINS], t = o->given[G_TURNS], b = o->given[G_BUDGET];
    if (c && t && !b) {
        o->g.budget = o->g.chains * o->g.turns;
    } else if (c && t && o->g.chains * o->g.turns != o->g.budget) {
        ckb_cli_usage_error(a, "--budget %d is not --chains %d x --turns %d (= %d); give two of "
                               "the three, or three that agree",
                            o->g.budget, o->g.chains, o->g.turns, o->g.chains * o->g.turns);
        return -1;
    } else if (c && !t) {
        if (o->g.budget % o->g.chains != 0) {
            ckb_cli_usage_error(a, "a budget of %d does not split into %d chains of equal "
                                   "length; give --turns, or a --budget that --chains divides",
                                o->g.budget, o->g.chains);
            return -1;
        }
        o->g.turns = o->g.budget / o->g.chains;
    }
    /* --turns alone (or neither): as many chains as the budget needs; the
     * last may be shorter, and config.json says so (last_chain_turns). */
    return 0;
}

static int generate__run(const ckb_cli_args *a)
{
    generate__opts o;
    memset(&o, 0, sizeof o);
    ckb_gen_opts_default(&o.g);
    ckb_provider_config_default(&o.pc);
    o.g.eval.threads = omp_get_num_procs();
    if (generate__parse(a, &o) != 0)
        return 2;
    ckb_err err;
    char wlbuf[8192], outbuf[512];
    ckb_run *run = NULL;
    ckb_provider *p = NULL;
    json_object *config = NULL;
    ckb_exec *exec = NULL;
    ckb_exec_config ec;
    int rc = 1;
    const ckb_workload *wl[128];
    int nwl;
    if (o.resume) {
        /* The run first: its lock refuses a second process before anything else. */
        if (ckb_run_resume(o.resume, &run, &err) != 0) {
            fprintf(stderr, "ckbench: %s\n", err.msg);
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
    } else if (generate__shape(a, &o) != 0) {
        rc = 2;
        goto cleanup;
    }
    if (!o.pc.name || !o.workloads) {
        rc = ckb_cli_usage_error(a, "a new run needs --provider and --workloads (or --resume "
                                    "RUN)");
        goto cleanup;
    }
    if ((nwl = generate__workloads(o.workloads, wl, 128)) <= 0) {
        rc = 2;
        goto cleanup;
    }
    o.g.provider = o.pc.name;
    o.g.model = o.pc.model;
    o.g.concurrency = o.pc.concurrency > 0 ? o.pc.concurrency : 4;
    p = ckb_provider_open(&o.pc, &err);
    if (!p) {
        fprintf(stderr, "ckbench: %s\n", err.msg);
        rc = 2;
        goto cleanup;
    }
    ckb_machine m;
    if (ckb_cli_machine(o.g.eval.threads, o.machine, &m) != 0 ||
        ckb_cli_host_sizes(o.g.eval.size, &m, o.g.eval.threads, wl, nwl) != 0)
        goto cleanup;
    /* A default only: each evaluation replaces it by its workload's roofs
     * at the run's size (ckb_gen_eval, as `eval` and `bench` do), which the
     * prompt states and the feedback quotes. */
    ckb_roof roof;
    ckb_roof_make(&m, CKB_PREC_BF16, 0, &roof);
    o.g.eval.peak_gflops = roof.compute_gflops;
    o.g.eval.bw_gbs = roof.mem_gbs;
    o.g.machine = &m;
    if (!run) {
        if (!o.out) {
            time_t now = time(NULL);
            char when[32];
            strftime(when, sizeof when, "%Y%m%d-%H%M%S", gmtime(&now));
            snprintf(outbuf, sizeof outbuf, "runs/%s-%s", ckb_gen_method_name(o.g.method), when);
            o.out = outbuf;
        }
        config = generate__config(&o, wl, nwl);
        if (ckb_run_create(o.out, config, &run, &err) != 0) {
            fprintf(stderr, "ckbench: %s\n", err.msg);
            goto cleanup;
        }
        fprintf(stderr, "ckbench: generating into %s\n", o.out);
    } else {
        fprintf(stderr, "ckbench: resuming %s\n", o.resume);
    }
    if (ckb_cli_executor(a, &ec) != 0) {
        rc = 2;
        goto cleanup;
    }
    ec.quiet = o.g.quiet;
    if (!(exec = ckb_exec_open(&ec, &err))) {
        fprintf(stderr, "ckbench: %s\n", err.msg);
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

static const ckb_cli_opt generate__table[] = {
    {"method", 0, CKB_CLI_STR, "M", 0, 0, 0,
     "best-of-n, refine, refine-docs or beam (default: best-of-n)", NULL},
    {"provider", 0, CKB_CLI_STR, "P", 0, 0, 0, "openai, anthropic, gemini, command or replay",
     "resume"},
    {"model", 0, CKB_CLI_STR, "X", 0, 0, 0,
     "the model; required by openai, anthropic and gemini, optional for command (its "
     "CKB_MODEL) and replay", NULL},
    {"workloads", 0, CKB_CLI_STR, "ID,ID...", 0, 0, 0, "the workloads", "resume"},
    {"budget", 0, CKB_CLI_INT, "N", 1, 100000, 0, "samples per workload (default: 144)", NULL},
    CKB_CLI_OPT_SIZE,
    CKB_CLI_OPT_THREADS,
    {"out", 0, CKB_CLI_STR, "RUN", 0, 0, 0,
     "the run folder, new or empty (default: runs/<method>-<UTC time>)", NULL},
    {"resume", 0, CKB_CLI_STR, "RUN", 0, 0, 0,
     "continue a killed run as it was configured (only --jobs, --concurrency, the "
     "connection options and the executor's may be given with it)", NULL},
    {"jobs", 0, CKB_CLI_INT, "K", 1, 256, 0, "workloads worked on at once (default: 1)", NULL},
    {"concurrency", 0, CKB_CLI_INT, "N", 1, 256, 0, "model calls at once (default: 4)", NULL},
    {"base-url", 0, CKB_CLI_STR, "U", 0, 0, 0, "the provider's endpoint (an OpenAI-compatible "
                                               "server, a proxy)", NULL},
    {"command", 0, CKB_CLI_STR, "CMD", 0, 0, 0,
     "provider command: run with /bin/sh -c, prompt on stdin, reply on stdout", NULL},
    {"replay", 0, CKB_CLI_STR, "RUN", 0, 0, 0, "provider replay: the run whose replies to give",
     NULL},
    {"prices", 0, CKB_CLI_STR, "FILE", 0, 0, 0, "a price table (docs/FORMATS.md) for cost_usd",
     NULL},
    {"max-retries", 0, CKB_CLI_INT, "N", 0, 100, 0, "provider retries (default: 5)", NULL},
    {"timeout", 0, CKB_CLI_NUM, "S", 0.001, 1e9, 0, "seconds per model call (default: 300)", NULL},
    {"temperature", 0, CKB_CLI_NUM, "T", 0, 100, 0,
     "sampling temperature (default: the provider's)", NULL},
    {"max-tokens", 0, CKB_CLI_INT, "N", 1, 1000000, 0, "reply token limit (default: 8192)", NULL},
    {"chains", 0, CKB_CLI_INT, "C", 1, 10000, 0,
     "refine: chains; C x T must be the budget (two of --budget/--chains/--turns set the "
     "third)", NULL},
    {"turns", 0, CKB_CLI_INT, "T", 1, 10000, 0, "refine: turns per chain (default: 8)", NULL},
    {"beam-width", 0, CKB_CLI_INT, "W", 1, 16, 0, "beam: beam width (default: 3)", NULL},
    {"beam-candidates", 0, CKB_CLI_INT, "K", 1, 64, 0,
     "beam: candidates per beam element (default: 6)", NULL},
    {"seed", 0, CKB_CLI_U64, "S", 0, 0, 0, "a fixed seed for the evaluations (default: drawn)",
     NULL},
    CKB_CLI_OPT_WARMUP,
    CKB_CLI_OPT_ITERS,
    {"seeds", 0, CKB_CLI_INT, "N", 1, 7, 0, "input sets for each correctness check (default: 3)",
     NULL},
    {"timeout-scale", 0, CKB_CLI_NUM, "X", 0.01, 1e6, 0,
     "multiply every evaluation time limit by X (default: 1)", NULL},
    {"docs-target", 0, CKB_CLI_STR, "T", 0, 0, 0,
     "documentation target for refine-docs and beam (default: chosen by the host)", NULL},
    {"no-expert", 0, CKB_CLI_FLAG, NULL, 0, 0, 0, "do not time the expert for % of expert", NULL},
    {"quiet", 0, CKB_CLI_FLAG, NULL, 0, 0, 0, "no progress lines", NULL},
    CKB_CLI_OPT_MACHINE,
    CKB_CLI_OPTS_EXECUTOR,
};

const ckb_cli_cmd ckb_cmd_generate = {
    .name = "generate", .args = "", .min_pos = 0, .max_pos = 0,
    .summary = "a generation method on a sample budget per workload, into a run folder",
    .about = "A new run needs --provider and --workloads (and --model for the HTTP providers);\n"
             "`ckbench generate --resume RUN` continues a killed run where its records stop.\n"
             "The run folder holds config.json, records.jsonl, best/ and summary.json\n"
             "(docs/FORMATS.md). API keys come from the environment.\n",
    .opts = generate__table, .nopts = CKB_CLI_NOPTS(generate__table), .run = generate__run,
};
