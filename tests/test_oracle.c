/*
 * The independent oracle (issue 34): golden outputs computed by the
 * project's own JAX implementation of each workload (scripts/oracle/), kept
 * as compact fixtures in tests/fixtures/oracle/<workload>.json: per seed, a
 * digest of the inputs and, per output, sampled elements with their JAX
 * values and the sum, sum |x| and max |x|. Here, without JAX: the inputs are
 * made again and their digest checked (a changed generator says to
 * regenerate), and the reference and the baseline, at small size, must
 * match every sampled element and the stats within the workload's own
 * tolerance. So a reference that is wrong the same way as the baseline
 * written beside it fails here too.
 */
#include <dirent.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fsutil.h"
#include "core/proc.h"
#include "core/jsonget.h"
#include "harness.h"
#include "workloads/oracle.h"
#include "workloads/workload.h"

static double oracle_elem(ckb_dtype dt, const void *p, int64_t i)
{
    switch (dt) {
    case CKB_BF16: return ckb_bf16_to_f32(((const ckb_bf16 *)p)[i]);
    case CKB_F32: return ((const float *)p)[i];
    case CKB_I32: return ((const int32_t *)p)[i];
    }
    return NAN;
}

static int oracle_close(double got, double want, double atol, double rtol)
{
    if (isnan(got) || isnan(want))
        return isnan(got) && isnan(want);
    return fabs(got - want) <= atol + rtol * fabs(want);
}

/* Holds one output of one kernel (which: "reference" or "baseline") to the
 * fixture's entry o; returns the number of sampled elements that failed. */
/* "id" for a workload of one configuration or its first, "id/name" for the
 * others: the fixture a message is about. */
static void oracle_label(const ckb_workload *w, int cf, char *buf, size_t n)
{
    snprintf(buf, n, "%s%s%s", w->id, cf > 0 ? "/" : "", cf > 0 ? ckb_workload_config_name(w, cf) : "");
}

static int oracle_check_output(const ckb_workload *w, int cf, const char *which, uint64_t seed,
                               const ckb_tensor *ts, const void *data, const int64_t *dims,
                               json_object *o)
{
    double atol = ckb_workload_config_atol(w, cf), rtol = ckb_workload_config_rtol(w, cf);
    char id[160];
    oracle_label(w, cf, id, sizeof id);
    int64_t n = ckb_tensor_numel(ts, dims);
    json_object *shape = NULL, *idx = NULL, *val = NULL;
    json_object_object_get_ex(o, "shape", &shape);
    json_object_object_get_ex(o, "index", &idx);
    json_object_object_get_ex(o, "value", &val);
    int rank = shape ? (int)json_object_array_length(shape) : -1;
    int same = rank == ts->rank;
    for (int r = 0; same && r < rank; r++)
        same = json_object_get_int64(json_object_array_get_idx(shape, r)) == dims[ts->shape[r]];
    CKBT_EXPECT(same, "%s: %s's shape differs from the fixture's: regenerate with "
                "scripts/oracle/oracle.py %s", id, ts->name, w->id);
    if (!same || !idx || !val || json_object_array_length(idx) != json_object_array_length(val))
        return 1;
    int nbad = 0;
    size_t ns = json_object_array_length(idx);
    for (size_t k = 0; k < ns; k++) {
        int64_t i = json_object_get_int64(json_object_array_get_idx(idx, k));
        double want = json_object_get_double(json_object_array_get_idx(val, k));
        CKBT_EXPECT(i >= 0 && i < n, "%s: index %lld out of range", id, (long long)i);
        if (i < 0 || i >= n)
            return 1;
        double got = oracle_elem(ts->dtype, data, i);
        if (!oracle_close(got, want, atol, rtol)) {
            if (nbad < 3)
                ckbt_fail(__FILE__, __LINE__,
                          "%s seed %llu: %s's %s[%lld] = %.6g, the JAX oracle says %.6g "
                          "(atol %g, rtol %g)", id, (unsigned long long)seed, which,
                          ts->name, (long long)i, got, want, atol, rtol);
            nbad++;
        }
    }
    /* The stats: each element may be off by atol + rtol |x|, so the sum by
     * n atol + rtol sum|x|; the max |x| by atol + rtol max|x|. */
    double sum = 0, sum_abs = 0, max_abs = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = oracle_elem(ts->dtype, data, i);
        sum += v;
        sum_abs += fabs(v);
        if (fabs(v) > max_abs || isnan(v))
            max_abs = isnan(v) ? NAN : fabs(v);
    }
    double jsum = ckb_json_num(o, "sum"), jabs = ckb_json_num(o, "sum_abs"),
           jmax = ckb_json_num(o, "max_abs");
    int sum_ok = fabs(sum - jsum) <= (double)n * atol + rtol * jabs;
    int max_ok = oracle_close(max_abs, jmax, atol, rtol);
    CKBT_EXPECT(sum_ok, "%s seed %llu: %s's sum of %s is %.6g, the JAX oracle's %.6g", id,
                (unsigned long long)seed, which, ts->name, sum, jsum);
    CKBT_EXPECT(max_ok, "%s seed %llu: %s's max |%s| is %.6g, the JAX oracle's %.6g", id,
                (unsigned long long)seed, which, ts->name, max_abs, jmax);
    if (nbad)
        ckbt_fail(__FILE__, __LINE__, "%s seed %llu: %s: %d of %zu sampled elements of %s "
                  "differ from the JAX oracle", id, (unsigned long long)seed, which, nbad,
                  ns, ts->name);
    return nbad + !sum_ok + !max_ok;
}

/* Checks one fixture file; returns 0 when the reference and the baseline
 * both match it. */
static int oracle_check_fixture(const char *path)
{
    json_object *root = json_object_from_file(path);
    CKBT_EXPECT(root != NULL, "%s does not parse", path);
    if (!root)
        return 1;
    const char *id = ckb_json_str(root, "workload");
    const ckb_workload *w = id ? ckb_workload_find(id) : NULL;
    CKBT_EXPECT(w != NULL, "%s: unknown workload %s", path, id ? id : "(none)");
    /* a workload's first configuration when the fixture names none */
    const char *cname = ckb_json_str(root, "config");
    int cf = cname && *cname ? -1 : 0;
    for (int c = 0; w && cf < 0 && c < ckb_workload_config_count(w); c++)
        if (strcmp(ckb_workload_config_name(w, c), cname) == 0)
            cf = c;
    CKBT_EXPECT(!w || cf >= 0, "%s: %s has no configuration %s", path, w ? w->id : "", cname);
    json_object *seeds = NULL;
    json_object_object_get_ex(root, "seeds", &seeds);
    CKBT_EXPECT(w && seeds && json_object_array_length(seeds) > 0, "%s: no seeds", path);
    int bad = !w || !seeds || cf < 0;
    char id_buf[160];
    if (w && cf >= 0)
        oracle_label(w, cf, id_buf, sizeof id_buf);
    int64_t dims[CKB_MAX_DIMS];
    for (size_t si = 0; !bad && si < json_object_array_length(seeds); si++) {
        json_object *e = json_object_array_get_idx(seeds, si), *outs = NULL;
        uint64_t seed = (uint64_t)ckb_json_long(e, "seed");
        void *ref[CKB_MAX_TENSORS], *base[CKB_MAX_TENSORS];
        ckb_workload_config_dims(w, CKB_SIZE_SMALL, cf, dims);
        if (ckb_tensors_alloc(w, dims, ref) != 0) {
            bad++;
            break;
        }
        if (ckb_tensors_alloc(w, dims, base) != 0) {
            ckb_tensors_free(w, ref);
            bad++;
            break;
        }
        w->create_inputs(dims, seed, ref);
        w->create_inputs(dims, seed, base);
        char digest[24];
        snprintf(digest, sizeof digest, "%016llx",
                 (unsigned long long)ckb_oracle_inputs_digest(w, dims, ref));
        const char *want = ckb_json_str(e, "input_digest");
        int same = want && strcmp(want, digest) == 0;
        CKBT_EXPECT(same, "%s seed %llu: the inputs changed (digest %s, the fixture's %s): "
                    "the input generator or the dims differ from those the fixture was made "
                    "from; regenerate it with scripts/oracle/oracle.py %s", id_buf,
                    (unsigned long long)seed, digest, want ? want : "none", w->id);
        if (same) {
            w->reference(dims, ref);
            w->baseline(dims, base);
            json_object_object_get_ex(e, "outputs", &outs);
            int seen = 0;
            for (int i = 0; i < w->ntensors; i++) {
                const ckb_tensor *ts = &w->tensors[i];
                if (ts->role != CKB_OUT)
                    continue;
                json_object *o = NULL;
                for (size_t k = 0; outs && k < json_object_array_length(outs); k++) {
                    json_object *c = json_object_array_get_idx(outs, k);
                    const char *nm = ckb_json_str(c, "name");
                    if (nm && strcmp(nm, ts->name) == 0)
                        o = c;
                }
                CKBT_EXPECT(o != NULL, "%s: the fixture lacks output %s", id_buf, ts->name);
                if (!o) {
                    bad++;
                    continue;
                }
                seen++;
                bad += oracle_check_output(w, cf, "the reference", seed, ts, ref[i], dims, o);
                bad += oracle_check_output(w, cf, "the baseline", seed, ts, base[i], dims, o);
            }
            CKBT_EXPECT(seen > 0, "%s: no outputs checked", id_buf);
        } else {
            bad++;
        }
        ckb_tensors_free(w, ref);
        ckb_tensors_free(w, base);
    }
    json_object_put(root);
    return bad;
}

/* Workloads with no oracle fixture yet, and why (none today; a workload
 * whose definition is being changed goes here until its JAX implementation
 * follows). Every other workload must have one, so that a lost fixture is
 * noticed. */
static const char *const oracle_pending[] = {NULL};

static int oracle_name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

CKBT_TEST(oracle_fixtures_match_reference_and_baseline, "quick")
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/fixtures/oracle", ckb_home());
    DIR *dp = opendir(dir);
    CKBT_EXPECT(dp != NULL, "%s: no oracle fixtures", dir);
    if (!dp)
        return;
    char *names[256];
    int n = 0;
    struct dirent *de;
    while ((de = readdir(dp)) && n < 256) {
        size_t l = strlen(de->d_name);
        if (l > 5 && strcmp(de->d_name + l - 5, ".json") == 0)
            names[n++] = strdup(de->d_name);
    }
    closedir(dp);
    qsort(names, (size_t)n, sizeof *names, oracle_name_cmp);
    CKBT_EXPECT(n >= 1, "%s holds no fixtures", dir);
    /* one fixture per configuration: <id>.json for the first, <id>.<name>.json
     * for each other */
    for (int wi = 0; wi < ckb_workload_count(); wi++) {
        const ckb_workload *w = ckb_workload_at(wi);
        int pending = 0;
        for (size_t k = 0; k < sizeof oracle_pending / sizeof *oracle_pending; k++)
            pending |= oracle_pending[k] && strcmp(oracle_pending[k], w->id) == 0;
        for (int c = 0; c < ckb_workload_config_count(w); c++) {
            char want[256];
            if (c == 0)
                snprintf(want, sizeof want, "%s.json", w->id);
            else
                snprintf(want, sizeof want, "%s.%s.json", w->id, ckb_workload_config_name(w, c));
            int have = 0;
            for (int i = 0; i < n; i++)
                have |= strcmp(names[i], want) == 0;
            CKBT_EXPECT(have || pending, "%s has no oracle fixture %s: write its JAX "
                        "implementation in scripts/oracle/impls.py and run "
                        "scripts/oracle/oracle.py %s", w->id, want, w->id);
        }
    }
    for (int i = 0; i < n; i++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        oracle_check_fixture(path);
        free(names[i]);
    }
}

/* `ckbench __oracle-dump`, what scripts/oracle/oracle.py reads: the manifest
 * names every tensor with its shape, each file holds exactly the tensor's
 * bytes, the inputs are those the seed makes here and the outputs the
 * reference's, and the digest is the one the fixture test computes. */
CKBT_TEST(oracle_dump_writes_inputs_outputs_and_manifest, "quick")
{
    const ckb_workload *w = ckb_workload_find("38k"); /* bf16, i32 inputs; consts */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/dump", ckbt_tmpdir());
    char *argv[] = {(char *)ckbt_bin(), "__oracle-dump", "38k", "2", dir, NULL};
    ckb_proc_result r;
    CKBT_EXPECT(ckb_proc_run(argv, 60, 1 << 16, &r) == 0, "cannot run %s", argv[0]);
    CKBT_EXPECT(r.exited && r.exit_code == 0, "exit %d: %s", r.exit_code, r.output);
    ckb_proc_result_free(&r);

    int64_t dims[CKB_MAX_DIMS];
    void *t[CKB_MAX_TENSORS];
    ckb_workload_dims(w, CKB_SIZE_SMALL, dims);
    int alloc_ok = ckb_tensors_alloc(w, dims, t) == 0;
    CKBT_EXPECT(alloc_ok, "allocation");
    if (!alloc_ok)
        return;
    w->create_inputs(dims, 2, t);
    char digest[24];
    snprintf(digest, sizeof digest, "%016llx",
             (unsigned long long)ckb_oracle_inputs_digest(w, dims, t));
    w->reference(dims, t);

    char path[8192];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    json_object *m = json_object_from_file(path), *ts = NULL, *cs = NULL;
    CKBT_EXPECT(m != NULL, "%s parses", path);
    if (m) {
        CKBT_EXPECT(strcmp(ckb_json_str(m, "workload") ? ckb_json_str(m, "workload") : "",
                           w->id) == 0, "workload");
        CKBT_EXPECT(ckb_json_long(m, "seed") == 2, "seed");
        const char *dg = ckb_json_str(m, "input_digest");
        CKBT_EXPECT(dg && strcmp(dg, digest) == 0, "digest %s vs %s", dg ? dg : "none", digest);
        CKBT_EXPECT(ckb_json_num(m, "atol") == ckb_workload_atol(w), "atol");
        CKBT_EXPECT(json_object_object_get_ex(m, "consts", &cs) &&
                        ckb_json_num(cs, "DROPOUT_P") == w->consts[0].value, "consts");
        json_object_object_get_ex(m, "tensors", &ts);
        CKBT_EXPECT(ts && (int)json_object_array_length(ts) == w->ntensors, "every tensor");
        for (int i = 0; ts && i < w->ntensors && i < (int)json_object_array_length(ts); i++) {
            json_object *o = json_object_array_get_idx(ts, i), *sh = NULL;
            const ckb_tensor *tt = &w->tensors[i];
            const char *nm = ckb_json_str(o, "name"), *file = ckb_json_str(o, "file"),
                       *dt = ckb_json_str(o, "dtype");
            CKBT_EXPECT(nm && strcmp(nm, tt->name) == 0, "tensor %d is %s", i, tt->name);
            CKBT_EXPECT(dt && strcmp(dt, ckb_dtype_name(tt->dtype)) == 0, "%s dtype", tt->name);
            json_object_object_get_ex(o, "shape", &sh);
            CKBT_EXPECT(sh && (int)json_object_array_length(sh) == tt->rank, "%s rank", tt->name);
            for (int k = 0; sh && k < tt->rank && k < (int)json_object_array_length(sh); k++)
                CKBT_EXPECT(json_object_get_int64(json_object_array_get_idx(sh, k)) ==
                                dims[tt->shape[k]], "%s dim %d", tt->name, k);
            snprintf(path, sizeof path, "%s/%s", dir, file ? file : "?");
            size_t len = 0;
            char *data = ckb_read_file(path, &len);
            CKBT_EXPECT(data && len == ckb_tensor_bytes(tt, dims) &&
                            memcmp(data, t[i], len) == 0,
                        "%s holds %s's bytes (%zu of %zu)", path, tt->name, len,
                        ckb_tensor_bytes(tt, dims));
            free(data);
        }
        json_object_put(m);
    }
    ckb_tensors_free(w, t);
}

/* `__oracle-dump ... SIZE CONFIG` dumps that configuration: its dims, its
 * name and the names of all in the manifest; an unknown name is refused. */
CKBT_TEST(oracle_dump_takes_a_configuration, "quick")
{
    const ckb_workload *w = ckb_workload_find("7p");
    int cf = w ? ckb_workload_config_count(w) - 1 : 0;
    CKBT_EXPECT(w && cf > 0, "7p has several configurations");
    if (!w || cf == 0)
        return;
    const char *name = ckb_workload_config_name(w, cf);
    char dir[4096], path[8192];
    snprintf(dir, sizeof dir, "%s/dump-config", ckbt_tmpdir());
    char *argv[] = {(char *)ckbt_bin(), "__oracle-dump", "7p", "1", dir, "small",
                    (char *)name, NULL};
    ckb_proc_result r;
    CKBT_EXPECT(ckb_proc_run(argv, 60, 1 << 16, &r) == 0 && r.exited && r.exit_code == 0,
                "exit %d: %s", r.exit_code, r.output);
    ckb_proc_result_free(&r);
    int64_t dims[CKB_MAX_DIMS];
    void *t[CKB_MAX_TENSORS];
    ckb_workload_config_dims(w, CKB_SIZE_SMALL, cf, dims);
    if (ckb_tensors_alloc(w, dims, t) != 0)
        abort();
    w->create_inputs(dims, 1, t);
    char digest[24];
    snprintf(digest, sizeof digest, "%016llx",
             (unsigned long long)ckb_oracle_inputs_digest(w, dims, t));
    ckb_tensors_free(w, t);
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    json_object *m = json_object_from_file(path), *jd = NULL, *jn = NULL;
    CKBT_EXPECT(m != NULL, "%s parses", path);
    if (m) {
        const char *c = ckb_json_str(m, "config"), *dg = ckb_json_str(m, "input_digest");
        CKBT_EXPECT(c && strcmp(c, name) == 0, "config %s, want %s", c ? c : "none", name);
        CKBT_EXPECT(dg && strcmp(dg, digest) == 0, "digest %s vs %s", dg ? dg : "none", digest);
        CKBT_EXPECT(json_object_object_get_ex(m, "dims", &jd) &&
                        ckb_json_long(jd, "NT") == dims[1], "the configuration's NT");
        CKBT_EXPECT(json_object_object_get_ex(m, "configs", &jn) &&
                        (int)json_object_array_length(jn) == ckb_workload_config_count(w),
                    "every configuration named");
        json_object_put(m);
    }
    char *bad[] = {(char *)ckbt_bin(), "__oracle-dump", "7p", "1", dir, "small", "nosuch", NULL};
    CKBT_EXPECT(ckb_proc_run(bad, 60, 1 << 16, &r) == 0 && r.exited && r.exit_code == 2,
                "an unknown configuration: exit %d", r.exit_code);
    ckb_proc_result_free(&r);
}
