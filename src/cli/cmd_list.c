/* `ckbench list` and `ckbench describe`: the suite as the registry has it. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench/expert.h"
#include "cli/cli.h"
#include "core/strbuf.h"
#include "docs/docs.h"
#include "workloads/instance.h"

static int list__run(const ckb_cli_args *a)
{
    (void)a;
    printf("%-58s %-24s %10s %10s %10s  %-6s %s\n", "workload", "model", "small GF",
           "default GF", "paper GF", "expert", "tags");
    for (int i = 0; i < ckb_workload_count(); i++) {
        const ckb_workload *w = ckb_workload_at(i);
        double gf[CKB_SIZE_COUNT];
        for (int s = 0; s < CKB_SIZE_COUNT; s++) {
            int64_t d[CKB_MAX_DIMS];
            ckb_workload_dims(w, (ckb_size)s, d);
            gf[s] = w->flops(d) / 1e9;
        }
        char path[512];
        printf("%-58s %-24.24s %10.3f %10.2f %10.1f  %-6s %s\n", w->id, w->model, gf[0], gf[1],
               gf[2], ckb_expert_path(w, path, sizeof path) ? "yes" : "-", w->tags);
    }
    printf("\n%d workloads. Sizes: small (tests), default (benchmarks), paper (JAXBench's "
           "dims). `ckbench describe ID` for dims and tensors.\n",
           ckb_workload_count());
    return 0;
}

/* The documentation blocks a model would get for w (docs/docs.h), and
 * their size; nothing is written to the cache. */
static void describe__docs(const ckb_workload *w)
{
    ckb_strbuf text = {0};
    ckb_docs_info info;
    ckb_err err;
    ckb_docs_opts o = {.cache_dir = ""};
    if (ckb_docs_build(w, &o, &text, &info, &err) != 0) {
        printf("\n  documentation: unavailable (%s)\n", err.msg);
        ckb_strbuf_free(&text);
        return;
    }
    printf("\n  documentation (docs/%s): %d blocks, %ld chars, ~%ld tokens\n", info.target,
           info.nblocks, info.chars, info.tokens);
    for (int i = 0; i < info.nblocks; i++)
        printf("    %-8s %-28s %7ld chars ~%6ld tokens  %s\n",
               ckb_docs_kind_name(info.block[i].kind), info.block[i].file, info.block[i].chars,
               info.block[i].chars / 4, info.block[i].title);
    ckb_strbuf_free(&text);
}

/* A parameter value as a reader wants it: CKB_PARAM_HOST_UNIT and the
 * CKB_PARAM_HOST_<block>s are the host's (the unit the machine profile
 * measured fastest, a block of the host model), resolved when it runs. */
static const char *describe__param_value(int64_t v, char *buf, size_t n)
{
    if (v <= CKB_PARAM_HOST_UNIT && v >= CKB_PARAM_HOST_LAST)
        return "host";
    snprintf(buf, n, "%lld", (long long)v);
    return buf;
}

static int describe__run(const ckb_cli_args *a)
{
    ckb_size size = ckb_cli_size(a, "size", CKB_SIZE_DEFAULT);
    const ckb_workload *w = ckb_cli_workload(a->pos[0]);
    if (!w)
        return 2;
    int threads = omp_get_num_procs();
    ckb_machine m;
    if (size == CKB_SIZE_HOST && (ckb_cli_machine(threads, NULL, &m) != 0 ||
                                  ckb_cli_host_sizes(size, &m, threads, &w, 1) != 0))
        return 1;
    printf("%s — %s\n  model: %s   operator: %s   tags: %s\n\n", w->id, w->summary, w->model,
           w->op, w->tags);
    /* the host column: "=" where host keeps the default, the value chosen
     * here with --size host, "scaled" (by `ckbench size`) otherwise */
    printf("  %-10s %12s %12s %12s %12s\n", "dim", "small", "default", "paper", "host");
    int64_t host[CKB_MAX_DIMS];
    ckb_workload_dims(w, CKB_SIZE_HOST, host);
    for (int i = 0; i < w->ndims; i++) {
        char hv[24] = "=";
        if (ckb_workload_scale_dim(w) == i && size == CKB_SIZE_HOST)
            snprintf(hv, sizeof hv, "%lld", (long long)host[i]);
        else if (ckb_workload_scale_dim(w) == i)
            snprintf(hv, sizeof hv, "scaled");
        printf("  %-10s %12lld %12lld %12lld %12s\n", w->dims[i].name,
               (long long)w->dims[i].value[0], (long long)w->dims[i].value[1],
               (long long)w->dims[i].value[2], hv);
    }
    /* the work of one call at each size, as the roofline and GFLOP/s count it */
    printf("  %-10s", "flops");
    for (int z = 0; z <= CKB_SIZE_PAPER; z++) {
        int64_t d[CKB_MAX_DIMS];
        ckb_workload_dims(w, (ckb_size)z, d);
        printf(" %12.6g", w->flops(d));
    }
    if (size == CKB_SIZE_HOST) /* the host column holds values only with --size host */
        printf(" %12.6g\n", w->flops(host));
    else
        printf(" %12s\n", "-");
    for (int i = 0; i < w->nconsts; i++)
        printf("  const %s = %g\n", w->consts[i].name, w->consts[i].value);
    printf("\n  tolerance: atol %g, rtol %g%s%s\n", ckb_workload_atol(w), ckb_workload_rtol(w),
           w->tolerance_reason ? " — " : "", w->tolerance_reason ? w->tolerance_reason : "");
    /* the configurations a candidate is judged on, each its own instance */
    for (int c = 0; ckb_workload_config_count(w) > 1 && c < ckb_workload_config_count(w); c++) {
        ckb_instance in;
        if (ckb_instance_resolve(w, size, c, &in) != 0)
            continue;
        printf("%s  configuration %s at size %s:", c ? "" : "\n", in.config_name, in.size_label);
        for (int i = 0; i < w->ndims; i++)
            printf(" %s=%lld", w->dims[i].name, (long long)in.dims[i]);
        printf(" (atol %g, rtol %g)\n", in.atol, in.rtol);
    }
    char *sig = ckb_workload_signature(w);
    printf("\n  candidate signature:\n    %s;\n", sig);
    free(sig);
    char *hdr = ckb_workload_candidate_header(w, size);
    printf("\n  generated header at size %s:\n%s", ckb_size_name(size), hdr);
    free(hdr);
    if (w->nparams) {
        printf("\n  expert parameters:\n");
        for (int i = 0; i < w->nparams; i++) {
            char v[24];
            printf("    %-10s default %-6s grid", w->params[i].name,
                   describe__param_value(w->params[i].fallback, v, sizeof v));
            for (int k = 0; k < w->params[i].nvalues; k++)
                printf(" %s", describe__param_value(w->params[i].values[k], v, sizeof v));
            printf("\n");
        }
    }
    describe__docs(w);
    return 0;
}

const ckb_cli_cmd ckb_cmd_list = {
    .name = "list", .args = "", .min_pos = 0, .max_pos = 0,
    .summary = "the workloads: sizes, GFLOP, tags, expert",
    .opts = NULL, .nopts = 0, .run = list__run,
};

static const ckb_cli_opt describe__opts[] = {
    {"size", 0, CKB_CLI_SIZE, "S", 0, 0, 0,
     "the size whose dims the generated header shows (default: default)", NULL},
};

const ckb_cli_cmd ckb_cmd_describe = {
    .name = "describe", .args = "WORKLOAD", .min_pos = 1, .max_pos = 1,
    .missing = "needs a WORKLOAD, e.g. ckbench describe 8p",
    .summary = "one workload: dims, tensors, the candidate signature and header, docs blocks",
    .opts = describe__opts, .nopts = CKB_CLI_NOPTS(describe__opts), .run = describe__run,
};
