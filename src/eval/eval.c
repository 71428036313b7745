/*
 * eval.c — the pipeline of one evaluation (DESIGN §4): its stages in
 * order, with one exit path that releases what it holds, and the options'
 * defaults. The stages are eval_compile.c's, eval_calls.c's (the sandboxes'
 * start) and eval_timing.c's; eval__fail is the one place a verdict is set.
 * A workload of several configurations goes through eval_configs.c, which
 * runs this pipeline once per configuration.
 */
#include "eval/eval.h"

#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include "core/cleanup.h"
#include "core/excl.h"
#include "core/fsutil.h"
#include "core/proc.h"
#include "eval/eval_priv.h"
#include "eval/limits.h"
#include "eval/sandbox.h"
#include "eval/verdict.h"

void ckb_eval_opts_default(ckb_eval_opts *o)
{
    memset(o, 0, sizeof *o);
    o->size = CKB_SIZE_DEFAULT;
    o->threads = omp_get_num_procs();
    o->nseeds = CKB_EVAL_DEFAULT_SEEDS;
    o->warmup = CKB_EVAL_DEFAULT_WARMUP;
    o->iters = CKB_EVAL_DEFAULT_ITERS;
    o->mode = CKB_MODE_CANDIDATE;
    o->timeout_scale = 1.0;
    o->max_timing_s = CKB_EVAL_DEFAULT_MAX_TIMING_S;
    o->max_steal_pct = CKB_EVAL_DEFAULT_MAX_DISTURBED_PCT;
    /* $CKBENCH_MAX_DISTURBED_PCT replaces it: the share of the machine's CPU
     * time other work may take during a timing run before the run counts as
     * disturbed (a negative value makes every timing disturbed, for tests). */
    const char *v = getenv("CKBENCH_MAX_DISTURBED_PCT");
    char *end;
    double x = v && *v ? strtod(v, &end) : NAN;
    if (v && *v && !*end && isfinite(x))
        o->max_steal_pct = x;
}

void eval__fail(eval__ctx *c, ckb_verdict v, const char *fmt, ...)
{
    c->r->status = ckb_verdict_status(v);
    snprintf(c->r->detail, sizeof c->r->detail, "%s", ckb_verdict_detail(v));
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->r->message, sizeof c->r->message, fmt, ap);
    va_end(ap);
}

/* A random number drawn now (or from --seed, for a reproducible run),
 * out of the child's reach. */
static uint64_t eval__draw(const ckb_eval_opts *o, int i)
{
    if (o->seed)
        return ckb_hash64(o->seed, (uint64_t)i);
    uint64_t s = 0;
    while (getrandom(&s, sizeof s, 0) != sizeof s) {
    }
    return s;
}

/* Seeds are odd (eval_priv.h). */
uint64_t eval__draw_seed(const ckb_eval_opts *o, int i)
{
    return eval__draw(o, i) | 1;
}

static int eval__make_workdir(eval__ctx *c)
{
    if (c->o->workdir) {
        snprintf(c->workdir, sizeof c->workdir, "%s", c->o->workdir);
        return ckb_mkdirs(c->workdir);
    }
    /* $TMPDIR/ckbench-<pid>-XXXXXX, removed on a signal, swept when stale */
    if (ckb_tmpdir_make(c->workdir, sizeof c->workdir) != 0)
        return -1;
    c->own_workdir = 1;
    return 0;
}

static void eval__release_proc(eval__ctx *c, eval__proc *p)
{
    if (p->started)
        ckb_sandbox_stop(&p->sb);
    if (p->out)
        munmap(p->out, c->lay.out_bytes);
    if (p->out_fd > 0)
        close(p->out_fd);
}

static void eval__release(eval__ctx *c)
{
    eval__release_proc(c, &c->expert);
    eval__release_proc(c, &c->cand);
    eval__release_proc(c, &c->base);
    for (int i = 0; i < CKB_MAX_TENSORS; i++) {
        free(c->want[i]);
    }
    if (c->inst)
        munmap(c->in, c->lay.in_bytes);
    if (c->in_fd > 0)
        close(c->in_fd);
    if (c->root_fd > 0)
        close(c->root_fd);
    if (c->expert_root_fd > 0)
        close(c->expert_root_fd);
    if (c->own_workdir && c->workdir[0])
        ckb_remove_tree(c->workdir);
}

int ckb_eval_instance(const ckb_workload *w, const ckb_eval_opts *o, int config,
                      ckb_instance *in)
{
    int64_t scale = o->host_scale > 0 ? o->host_scale : ckb_workload_host_scale(w);
    return ckb_instance_resolve_scaled(w, o->size, config, scale, in);
}

int eval__run_instance(const ckb_instance *in, const char *src, const ckb_eval_opts *o,
                       ckb_eval_result *r)
{
    const ckb_workload *w = in->w;
    memset(r, 0, sizeof *r);
    eval__ctx c = {.inst = in, .w = w, .o = o, .r = r, .in_fd = -1, .root_fd = -1,
                   .expert_root_fd = -1, .base = {.out_fd = -1, .root_fd = -1},
                   .cand = {.out_fd = -1, .root_fd = -1}, .expert = {.out_fd = -1, .root_fd = -1}};
    double t_start = ckb_now();
    int locked = 0;
    ckb_proto_layout_of(in, &c.lay);
    snprintf(r->size_label, sizeof r->size_label, "%s", in->size_label);
    memcpy(r->dims, in->dims, sizeof r->dims);
    r->failed_config = -1;
    r->flops = in->flops;
    r->bytes = in->bytes;
    r->worst_index = -1;
    if (o->nseeds < 1 || o->nseeds > CKB_PROTO_MAX_SEEDS) {
        eval__fail(&c, CKB_V_HARNESS_OPTIONS, "--seeds must be 1..%d",
                   CKB_PROTO_MAX_SEEDS);
        goto done;
    }
    if (eval__make_workdir(&c) != 0) {
        eval__fail(&c, CKB_V_HARNESS_WORKDIR, "cannot create a work folder: %s",
                   strerror(errno));
        goto done;
    }

    if (o->mode == CKB_MODE_CANDIDATE &&
        (eval__compile_kernel(&c, src, 0) != 0 ||
         (o->expert_src && eval__compile_kernel(&c, o->expert_src, 1) != 0)))
        goto done;

    r->stage = CKB_STAGE_LOAD;
    double t_setup = ckb_now();
    if (eval__map_in(&c) != 0 || eval__alloc_outputs(&c) != 0) {
        eval__fail(&c, CKB_V_HARNESS_MEMORY, "cannot map the shared buffers: %s",
                   strerror(errno));
        goto done;
    }
    r->nseeds = o->nseeds;
    for (int i = 0; i < o->nseeds; i++)
        r->seeds[i] = eval__draw_seed(o, i);
    /* From here to the end no other ckbench on this machine times. */
    ckb_excl_lock();
    locked = 1;
    if (eval__start(&c, &c.base, 0) != 0)
        goto done;
    if (o->mode != CKB_MODE_BASELINE &&
        eval__start(&c, &c.cand, o->mode == CKB_MODE_CANDIDATE) != 0)
        goto done;
    if (r->has_expert && eval__start(&c, &c.expert, 1) != 0) {
        if (r->status != CKB_ST_HARNESS_ERROR) /* its own failure, not the candidate's */
            eval__fail(&c, CKB_V_HARNESS_EXPERT, "the expert's sandbox did not start: %s",
                       r->message);
        goto done;
    }
    r->setup_s = ckb_now() - t_setup;
    if (eval__correctness(&c) != 0)
        goto done;
    if (eval__timing(&c) != 0)
        goto done;
    if (o->mode != CKB_MODE_BASELINE && eval__final_check(&c) != 0)
        goto done;
    r->correct = o->mode != CKB_MODE_BASELINE;
    r->status = CKB_ST_OK;
    r->stage = CKB_STAGE_DONE;
done:
    /* The one exit: -1 only when the harness itself could not run (eval.h). */
    if (r->status != CKB_ST_OK)
        r->correct = 0;
    int rc = r->status == CKB_ST_HARNESS_ERROR ? -1 : 0;
    eval__release(&c);
    if (locked)
        ckb_excl_unlock();
    r->total_s = ckb_now() - t_start;
    return rc;
}

int ckb_eval_run(const ckb_workload *w, const char *src, const ckb_eval_opts *o,
                 ckb_eval_result *r)
{
    if (ckb_workload_config_count(w) > 1)
        return eval__run_configs(w, src, o, r);
    ckb_instance in;
    if (ckb_eval_instance(w, o, 0, &in) != 0) {
        memset(r, 0, sizeof *r);
        r->failed_config = -1;
        eval__ctx c = {.w = w, .o = o, .r = r};
        eval__fail(&c, CKB_V_HARNESS_OPTIONS, "%s has no instance at size %s", w->id,
                   ckb_size_name(o->size));
        return -1;
    }
    int rc = eval__run_instance(&in, src, o, r);
    eval__keep_config(&in, r, &r->configs[0]);
    r->nconfigs = 1;
    if (r->status != CKB_ST_OK && r->status != CKB_ST_HARNESS_ERROR)
        r->failed_config = 0;
    return rc;
}
