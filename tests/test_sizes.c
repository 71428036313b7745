/* The host size (machine/sizes.h): the ladder, the search's rule on a fake
 * profile and fake baselines, the per-host file, and an evaluation and a
 * suite run at size host with what they record. */
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "bench/suite.h"
#include "core/fsutil.h"
#include "eval_util.h"
#include "harness.h"
#include "machine/sizes.h"

/* Two cores at 200 GFLOP/s for f32 and bf16 work alike. */
static ckb_machine sizes__fake_machine(void)
{
    ckb_machine m;
    memset(&m, 0, sizeof m);
    snprintf(m.cpu, sizeof m.cpu, "fake sizes cpu");
    snprintf(m.isa_level, sizeof m.isa_level, "avx2");
    m.cores = m.threads = 2;
    m.f32_gflops = m.bf16_gflops = 200;
    m.bw_gbs = 20;
    return m;
}

/* A baseline whose rate grows with the work (rate = peak * f / (f + half)),
 * as a library's does; the calls it was asked for are counted. */
typedef struct {
    double peak, half; /* GFLOP/s, and the GFLOP at which it reaches half of peak */
    int calls;
    int fail;
} sizes__fake_probe;

static double sizes__probe(void *ctx, const ckb_workload *w, const int64_t *dims, int threads,
                           int calls)
{
    sizes__fake_probe *p = ctx;
    (void)threads, (void)calls;
    p->calls++;
    if (p->fail)
        return -1;
    double gf = w->flops(dims) / 1e9;
    double rate = p->peak * gf / (gf + p->half);
    return gf / rate * 1e3;
}

/* What the rule must choose, computed here from the ladder apart from the
 * search: the smallest value in the window that reaches the share (any
 * value in the window for a light workload), else the closest. */
static int64_t sizes__expected(const ckb_workload *w, const ckb_sizes_opts *o,
                               sizes__fake_probe *p, double roof)
{
    int64_t ladder[32], dims[CKB_MAX_DIMS];
    int n = ckb_sizes_ladder(w, ladder, 32), d = ckb_workload_scale_dim(w);
    int heavy = ckb_workload_has_tag(w, "matmul") || ckb_workload_has_tag(w, "conv");
    ckb_workload_dims(w, CKB_SIZE_DEFAULT, dims);
    int64_t closest = -1;
    double best = -1;
    for (int i = 0; i < n; i++) {
        dims[d] = ladder[i];
        double ms = sizes__probe(p, w, dims, 2, 3);
        double pct = w->flops(dims) / (ms * 1e6) / roof;
        if (ms > o->max_ms)
            return closest >= 0 ? closest : i == 0 ? ladder[0] : ladder[i - 1];
        if (ms < o->min_ms)
            continue;
        if (!heavy || pct >= o->share)
            return ladder[i];
        if (pct > best)
            best = pct, closest = ladder[i];
    }
    return closest >= 0 ? closest : ladder[n - 1];
}

CKBT_TEST(sizes_ladder_keeps_multiples_of_the_small_value, "quick")
{
    for (int i = 0; i < ckb_workload_count(); i++) {
        const ckb_workload *w = ckb_workload_at(i);
        int d = ckb_workload_scale_dim(w);
        int64_t v[32];
        int n = ckb_sizes_ladder(w, v, 32);
        if (d < 0) {
            CKBT_EXPECT(n == 0, "%s has no scale dim but a ladder of %d", w->id, n);
            continue;
        }
        int64_t small = w->dims[d].value[CKB_SIZE_SMALL], def = w->dims[d].value[CKB_SIZE_DEFAULT];
        int has_small = 0, has_default = 0;
        for (int k = 0; k < n; k++) {
            int64_t rem = v[k] % small;
            CKBT_EXPECT(rem == 0 && v[k] >= small && v[k] <= 4 * def,
                        "%s: ladder value %lld (small %lld, default %lld)", w->id,
                        (long long)v[k], (long long)small, (long long)def);
            CKBT_EXPECT(k == 0 || v[k] > v[k - 1], "%s: ladder not ascending at %d", w->id, k);
            has_small |= v[k] == small;
            has_default |= v[k] == def;
        }
        int default_on_grid = def % small == 0;
        CKBT_EXPECT(has_small && (has_default || !default_on_grid),
                    "%s: the ladder lacks the small or the default value", w->id);
    }
    /* 8p: M from 256 up to its paper value 8192 */
    const ckb_workload *w = ckb_workload_find("8p");
    int64_t v[32];
    int n = ckb_sizes_ladder(w, v, 32);
    CKBT_EXPECT(n == 6 && v[0] == 256 && v[3] == 2048 && v[5] == 8192,
                "8p ladder: %d values, %lld..%lld", n, (long long)v[0], (long long)v[n - 1]);
}

CKBT_TEST(sizes_search_follows_the_rule_on_a_fake_host, "quick")
{
    ckb_machine m = sizes__fake_machine();
    ckb_sizes_opts o;
    ckb_sizes_opts_default(&o);
    o.probe = sizes__probe;
    /* three hosts: a library that reaches 60% early, one that never does,
     * and one so slow that even the smallest call is past the window */
    const sizes__fake_probe hosts[] = {{180, 2, 0, 0}, {100, 2, 0, 0}, {0.5, 1, 0, 0}};
    const char *ids[] = {"8p", "41k", "12p", "1p", "17p"};
    for (size_t h = 0; h < sizeof hosts / sizeof *hosts; h++)
        for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
            const ckb_workload *w = ckb_workload_find(ids[i]);
            sizes__fake_probe p = hosts[h];
            o.probe_ctx = &p;
            ckb_size_choice c;
            ckb_err err;
            CKBT_EXPECT(ckb_sizes_search(&m, 2, w, &o, &c, &err) == CKB_OK, "%s: search failed: %s",
                        w->id, err.msg);
            sizes__fake_probe q = hosts[h];
            int64_t want = sizes__expected(w, &o, &q, 200);
            CKBT_EXPECT(c.value == want, "host %zu, %s: chose %lld (%s), want %lld", h, w->id,
                        (long long)c.value, c.why, (long long)want);
            CKBT_EXPECT(h != 2 || strcmp(c.why, "max_ms") == 0,
                        "host %zu, %s: %s, want max_ms", h, w->id, c.why);
        }
    /* a workload without a scale dim is not probed */
    sizes__fake_probe p = hosts[0];
    o.probe_ctx = &p;
    ckb_size_choice c;
    ckb_sizes_search(&m, 2, ckb_workload_find("6p"), &o, &c, NULL);
    CKBT_EXPECT(c.fixed && p.calls == 0, "6p: fixed %d after %d probes", c.fixed, p.calls);
}

CKBT_TEST(sizes_are_stored_per_host_and_set_the_host_dims, "quick")
{
    ckb_machine m = sizes__fake_machine();
    char path[1024];
    snprintf(path, sizeof path, "%s/sizes-test.json", ckbt_tmpdir());
    remove(path);
    ckb_sizes_opts o;
    ckb_sizes_opts_default(&o);
    o.probe = sizes__probe;
    sizes__fake_probe p = {180, 2, 0, 0};
    o.probe_ctx = &p;
    const ckb_workload *ws[] = {ckb_workload_find("8p"), ckb_workload_find("12p")};
    CKBT_EXPECT(ckb_sizes_get(&m, 2, ws, 2, path, 0, &o, NULL) == 0, "first search failed");
    int64_t m8 = ckb_workload_host_scale(ws[0]), s12 = ckb_workload_host_scale(ws[1]);
    int probes = p.calls;
    CKBT_EXPECT(probes > 0, "nothing was probed");
    /* stored: the same choice without a probe, even one that would fail */
    ckb_workload_set_host_scale(ws[0], 256);
    p.fail = 1;
    CKBT_EXPECT(ckb_sizes_get(&m, 2, ws, 2, path, 0, &o, NULL) == 0, "stored sizes not used");
    CKBT_EXPECT(p.calls == probes && ckb_workload_host_scale(ws[0]) == m8 &&
                    ckb_workload_host_scale(ws[1]) == s12,
                "reload: %d probes, 8p M=%lld (want %lld)", p.calls - probes,
                (long long)ckb_workload_host_scale(ws[0]), (long long)m8);
    /* the host dims and the candidate's header follow the choice */
    int64_t dims[CKB_MAX_DIMS];
    ckb_workload_dims(ws[0], CKB_SIZE_HOST, dims);
    char *hdr = ckb_workload_candidate_header(ws[0], CKB_SIZE_HOST);
    char want[64], label[96];
    snprintf(want, sizeof want, "#define M %lldL", (long long)m8);
    ckb_size_label(ws[0], CKB_SIZE_HOST, label, sizeof label);
    CKBT_EXPECT(dims[0] == m8 && dims[1] == 4096 && strstr(hdr, want) && strstr(label, "M="),
                "host dims M=%lld K=%lld, label %s, header:\n%s", (long long)dims[0],
                (long long)dims[1], label, hdr);
    free(hdr);
    /* another CPU's file is not this host's: searched again (and failing
     * here, since the probe now fails) */
    ckb_machine other = m;
    snprintf(other.cpu, sizeof other.cpu, "another cpu");
    CKBT_EXPECT(ckb_sizes_get(&other, 2, ws, 2, path, 0, &o, NULL) != 0,
                "another CPU used this CPU's sizes");
    /* a value the workload cannot take is refused */
    CKBT_EXPECT(ckb_workload_set_host_scale(ws[0], 300) != 0 &&
                    ckb_workload_set_host_scale(ckb_workload_find("6p"), 64) != 0,
                "an invalid host scale was taken");
    ckb_workload_set_host_scale(ws[0], ws[0]->dims[0].value[CKB_SIZE_DEFAULT]);
}

/* A sizes file for this host naming 12p's S, written where the ckbench
 * processes the test starts look (XDG_CACHE_HOME). */
static int sizes__write_host_file(const char cache[1024], int64_t s)
{
    ckb_machine m;
    ckb_machine_probe(2, &m);
    char dir[1100], path[1300], text[2048];
    snprintf(dir, sizeof dir, "%s/ckbench", cache);
    snprintf(path, sizeof path, "%s/sizes-2t-%s.json", dir, m.isa_level);
    snprintf(text, sizeof text,
             "{\"format\":1,\"cpu\":\"%s\",\"isa_level\":\"%s\",\"threads\":2,\"min_ms\":10,"
             "\"max_ms\":100,\"share\":0.6,\"workloads\":{\"12p_RMSNorm\":{\"dim\":\"S\","
             "\"value\":%lld,\"why\":\"written by a test\"}}}",
             m.cpu, m.isa_level, (long long)s);
    return ckb_mkdirs(dir) == 0 ? ckb_write_file_atomic(path, text, strlen(text)) : -1;
}

CKBT_TEST(sizes_eval_and_bench_run_at_the_host_size, "full")
{
    char cache[1024], out[1100], cmd[4096];
    snprintf(cache, sizeof cache, "%s/sizes-xdg", ckbt_tmpdir());
    CKBT_EXPECT(sizes__write_host_file(cache, 192) == 0, "cannot write the sizes file");
    /* the machine profile of the user's cache, so nothing is measured */
    ckb_machine m;
    char prof[1024], to[1200];
    ckb_machine_default_path(2, prof, sizeof prof);
    if (ckb_machine_load(prof, &m) == 0) {
        snprintf(to, sizeof to, "%s/ckbench/%s", cache, strrchr(prof, '/') + 1);
        ckb_machine_save(&m, to);
    }
    /* eval: the kernel is compiled and run at S=192, the sandbox included */
    snprintf(cmd, sizeof cmd,
             "XDG_CACHE_HOME='%s' '%s' eval 12p '%s/tests/candidates/legit_rmsnorm_qsort_sincos.c' "
             "--size host --threads 2 --warmup 1 --iters 3 > '%s/eval.json' 2>/dev/null",
             cache, ckbt_bin(), ckb_home(), ckbt_tmpdir());
    int rc = system(cmd);
    snprintf(to, sizeof to, "%s/eval.json", ckbt_tmpdir());
    json_object *j = json_object_from_file(to);
    const char *st = j ? ckbt_str(j, "status") : "";
    CKBT_EXPECT(rc == 0 && strcmp(st, "ok") == 0, "eval at host: exit %d, status %s", rc, st);
    json_object *dims = NULL, *s = NULL;
    CKBT_EXPECT(j && json_object_object_get_ex(j, "dims", &dims) &&
                    json_object_object_get_ex(dims, "S", &s) && json_object_get_int64(s) == 192,
                "eval at host: dims S = %s", s ? json_object_get_string(s) : "(none)");
    json_object_put(j);
    /* bench records the dims it ran; a resumed run keeps them even after
     * the host's choice changed */
    snprintf(out, sizeof out, "%s/sizes-bench", ckbt_tmpdir());
    snprintf(cmd, sizeof cmd,
             "rm -rf '%s'; XDG_CACHE_HOME='%s' '%s' bench --workloads 12p --no-expert --threads 2 "
             "--warmup 1 --iters 3 --out '%s' > /dev/null 2>&1",
             out, cache, ckbt_bin(), out);
    rc = system(cmd);
    snprintf(to, sizeof to, "%s/results.json", out);
    j = json_object_from_file(to);
    json_object *meta = NULL, *list = NULL, *e, *size = NULL;
    int64_t got = -1;
    if (j && json_object_object_get_ex(j, "metadata", &meta) &&
        json_object_object_get_ex(meta, "size", &size) &&
        json_object_object_get_ex(j, "workloads", &list) && json_object_array_length(list) == 1) {
        e = json_object_array_get_idx(list, 0);
        if (json_object_object_get_ex(e, "dims", &dims) &&
            json_object_object_get_ex(dims, "S", &s))
            got = json_object_get_int64(s);
    }
    CKBT_EXPECT(rc == 0 && size && strcmp(json_object_get_string(size), "host") == 0 && got == 192,
                "bench at host: exit %d, size %s, S=%lld", rc,
                size ? json_object_get_string(size) : "?", (long long)got);
    json_object_put(j);
    /* a resumed or re-timed run takes the dims its entries ran with, not
     * the host's present choice */
    const ckb_workload *w = ckb_workload_find("12p"), *adopted[4];
    ckb_workload_set_host_scale(w, 128);
    int n = ckb_suite_adopt_host_dims(out, adopted, 4);
    CKBT_EXPECT(n == 1 && adopted[0] == w && ckb_workload_host_scale(w) == 192,
                "adopted %d, 12p S=%lld", n, (long long)ckb_workload_host_scale(w));
    ckb_workload_set_host_scale(w, w->dims[ckb_workload_scale_dim(w)].value[CKB_SIZE_DEFAULT]);
}
