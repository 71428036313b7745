/* oracle.c — input digests and tensor dumps for the independent oracle
 * (oracle.h). */
#include "workloads/oracle.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/digest.h"
#include "core/fsutil.h"

uint64_t ckb_oracle_inputs_digest(const ckb_workload *w, const int64_t *dims, void *const *t)
{
    uint64_t h = ckb_digest(dims, sizeof(int64_t) * (size_t)w->ndims, 0x6f7261636c65ull);
    for (int i = 0; i < w->ntensors; i++) {
        const ckb_tensor *ts = &w->tensors[i];
        if (ts->role != CKB_IN)
            continue;
        int64_t shape[CKB_MAX_RANK];
        for (int r = 0; r < ts->rank; r++)
            shape[r] = dims[ts->shape[r]];
        h = ckb_digest(shape, sizeof(int64_t) * (size_t)ts->rank, h ^ (uint64_t)ts->dtype);
        h = ckb_digest(t[i], ckb_tensor_bytes(ts, dims), h);
    }
    return h;
}

static int oracle__write(const char *path, const void *p, size_t n, ckb_err *err)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return ckb_err_set(err, CKB_E_IO, "%s: %s", path, strerror(errno));
    int ok = fwrite(p, 1, n, f) == n;
    ok &= fclose(f) == 0;
    return ok ? CKB_OK : ckb_err_set(err, CKB_E_IO, "%s: write failed", path);
}

int ckb_oracle_dump(const ckb_workload *w, ckb_size s, int config, uint64_t seed,
                    const char *dir, ckb_err *err)
{
    int64_t dims[CKB_MAX_DIMS];
    void *t[CKB_MAX_TENSORS];
    ckb_workload_config_dims(w, s, config, dims);
    if (ckb_mkdirs(dir) != 0)
        return ckb_err_set(err, CKB_E_IO, "%s: %s", dir, strerror(errno));
    if (ckb_tensors_alloc(w, dims, t) != 0)
        return ckb_err_set(err, CKB_E_OOM, "%s: out of memory", w->id);
    w->create_inputs(dims, seed, t);
    char digest[24];
    snprintf(digest, sizeof digest, "%016llx",
             (unsigned long long)ckb_oracle_inputs_digest(w, dims, t));
    w->reference(dims, t);

    json_object *m = json_object_new_object();
    json_object_object_add(m, "workload", json_object_new_string(w->id));
    json_object_object_add(m, "size", json_object_new_string(ckb_size_name(s)));
    json_object_object_add(m, "seed", json_object_new_int64((int64_t)seed));
    json_object_object_add(m, "input_digest", json_object_new_string(digest));
    json_object_object_add(m, "config",
                           json_object_new_string(ckb_workload_config_name(w, config)));
    json_object *jn = json_object_new_array();
    for (int c = 0; c < w->nconfigs; c++)
        json_object_array_add(jn, json_object_new_string(w->configs[c].name));
    json_object_object_add(m, "configs", jn);
    json_object_object_add(m, "atol", json_object_new_double(ckb_workload_config_atol(w, config)));
    json_object_object_add(m, "rtol", json_object_new_double(ckb_workload_config_rtol(w, config)));
    json_object *jd = json_object_new_object(), *jc = json_object_new_object();
    for (int i = 0; i < w->ndims; i++)
        json_object_object_add(jd, w->dims[i].name, json_object_new_int64(dims[i]));
    for (int i = 0; i < w->nconsts; i++)
        json_object_object_add(jc, w->consts[i].name, json_object_new_double(w->consts[i].value));
    json_object_object_add(m, "dims", jd);
    json_object_object_add(m, "consts", jc);
    json_object *jt = json_object_new_array();
    int rc = 0;
    for (int i = 0; i < w->ntensors && rc == 0; i++) {
        const ckb_tensor *ts = &w->tensors[i];
        char path[4096], file[256];
        snprintf(file, sizeof file, "%s.bin", ts->name);
        snprintf(path, sizeof path, "%s/%s", dir, file);
        rc = oracle__write(path, t[i], ckb_tensor_bytes(ts, dims), err);
        json_object *o = json_object_new_object();
        json_object_object_add(o, "name", json_object_new_string(ts->name));
        json_object_object_add(o, "dtype", json_object_new_string(ckb_dtype_name(ts->dtype)));
        json_object_object_add(o, "role", json_object_new_string(ts->role == CKB_IN ? "in" : "out"));
        json_object *sh = json_object_new_array();
        for (int r = 0; r < ts->rank; r++)
            json_object_array_add(sh, json_object_new_int64(dims[ts->shape[r]]));
        json_object_object_add(o, "shape", sh);
        json_object_object_add(o, "file", json_object_new_string(file));
        json_object_array_add(jt, o);
    }
    json_object_object_add(m, "tensors", jt);
    if (rc == 0) {
        char path[4096];
        snprintf(path, sizeof path, "%s/manifest.json", dir);
        const char *txt = json_object_to_json_string_ext(m, JSON_C_TO_STRING_PRETTY);
        rc = oracle__write(path, txt, strlen(txt), err);
    }
    json_object_put(m);
    ckb_tensors_free(w, t);
    return rc;
}
