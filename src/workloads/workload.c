/* Facts derived from a workload's declaration: sizes, dtypes, the generated
 * candidate header and signature. */
#include "workloads/workload.h"
#include <json-c/json.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"

static const char *const workload__size_names[CKB_SIZE_HOST + 1] = {"small", "default", "paper",
                                                                   "host"};

const char *ckb_size_name(ckb_size s)
{
    return s >= 0 && s <= CKB_SIZE_HOST ? workload__size_names[s] : "?";
}

int ckb_size_parse(const char *name, ckb_size *out)
{
    for (int i = 0; i <= CKB_SIZE_HOST; i++)
        if (name && strcmp(name, workload__size_names[i]) == 0) {
            *out = (ckb_size)i;
            return 0;
        }
    return -1;
}

const char *ckb_dtype_name(ckb_dtype t)
{
    switch (t) {
    case CKB_BF16: return "bf16";
    case CKB_F32: return "f32";
    case CKB_I32: return "i32";
    }
    return "?";
}

const char *ckb_dtype_ctype(ckb_dtype t)
{
    switch (t) {
    case CKB_BF16: return "ckb_bf16";
    case CKB_F32: return "float";
    case CKB_I32: return "int32_t";
    }
    return "?";
}

size_t ckb_dtype_size(ckb_dtype t) { return t == CKB_BF16 ? 2 : 4; }

/* The host size's scale values of this process, by registry index; 0: none
 * set (the default value). Set once by the command before any evaluation. */
static int64_t workload__host_scale[256];

int ckb_workload_scale_dim(const ckb_workload *w)
{
    for (int i = 0; w->scale_dim && i < w->ndims; i++)
        if (strcmp(w->dims[i].name, w->scale_dim) == 0)
            return i;
    return -1;
}

static int workload__index(const ckb_workload *w)
{
    for (int i = 0; i < ckb_workload_count() && i < 256; i++)
        if (ckb_workload_at(i) == w)
            return i;
    return -1;
}

int ckb_workload_set_host_scale(const ckb_workload *w, int64_t value)
{
    int d = ckb_workload_scale_dim(w), i = workload__index(w);
    if (d < 0 || i < 0 || value <= 0 || value % w->dims[d].value[CKB_SIZE_SMALL] != 0)
        return -1;
    workload__host_scale[i] = value;
    return 0;
}

json_object *ckb_workload_dims_json(const ckb_workload *w, ckb_size s)
{
    json_object *j = json_object_new_object();
    int64_t d[CKB_MAX_DIMS];
    ckb_workload_dims(w, s, d);
    for (int i = 0; i < w->ndims; i++)
        json_object_object_add(j, w->dims[i].name, json_object_new_int64(d[i]));
    return j;
}

int64_t ckb_workload_host_scale(const ckb_workload *w)
{
    int d = ckb_workload_scale_dim(w), i = workload__index(w);
    if (d < 0)
        return -1;
    return i >= 0 && workload__host_scale[i] > 0 ? workload__host_scale[i]
                                                 : w->dims[d].value[CKB_SIZE_DEFAULT];
}

void ckb_workload_dims(const ckb_workload *w, ckb_size s, int64_t *dims)
{
    ckb_workload_config_dims(w, s, 0, dims);
}

int ckb_workload_config_count(const ckb_workload *w) { return w->nconfigs > 0 ? w->nconfigs : 1; }

const char *ckb_workload_config_name(const ckb_workload *w, int c)
{
    return w->nconfigs > 0 && c >= 0 && c < w->nconfigs ? w->configs[c].name : "";
}

static int workload__dim_index(const ckb_workload *w, const char *name)
{
    for (int i = 0; i < w->ndims; i++)
        if (strcmp(w->dims[i].name, name) == 0)
            return i;
    return -1;
}

void ckb_workload_config_dims(const ckb_workload *w, ckb_size s, int c, int64_t *dims)
{
    ckb_size declared = s == CKB_SIZE_HOST ? CKB_SIZE_DEFAULT : s;
    for (int i = 0; i < w->ndims; i++)
        dims[i] = w->dims[i].value[declared];
    if (w->nconfigs > 0 && c >= 0 && c < w->nconfigs) {
        const ckb_config *cfg = &w->configs[c];
        for (int k = 0; k < cfg->nset; k++) {
            int i = workload__dim_index(w, cfg->set[k].dim);
            if (i >= 0) /* the registry test holds every name to a dim */
                dims[i] = cfg->set[k].value[declared];
        }
    }
    int d = ckb_workload_scale_dim(w);
    if (s == CKB_SIZE_HOST && d >= 0)
        dims[d] = ckb_workload_host_scale(w);
}

void ckb_size_label(const ckb_workload *w, ckb_size s, char *buf, size_t n)
{
    int d = ckb_workload_scale_dim(w);
    if (s == CKB_SIZE_HOST && d >= 0)
        snprintf(buf, n, "host(%s=%lld)", w->dims[d].name, (long long)ckb_workload_host_scale(w));
    else
        snprintf(buf, n, "%s", ckb_size_name(s));
}

int64_t ckb_tensor_numel(const ckb_tensor *t, const int64_t *dims)
{
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++)
        n *= dims[t->shape[i]];
    return n;
}

size_t ckb_tensor_bytes(const ckb_tensor *t, const int64_t *dims)
{
    return (size_t)ckb_tensor_numel(t, dims) * ckb_dtype_size(t->dtype);
}

double ckb_workload_atol(const ckb_workload *w) { return w->atol > 0 ? w->atol : 1e-2; }
double ckb_workload_rtol(const ckb_workload *w) { return w->rtol > 0 ? w->rtol : 1e-2; }

double ckb_workload_config_atol(const ckb_workload *w, int c)
{
    if (w->nconfigs > 0 && c >= 0 && c < w->nconfigs && w->configs[c].atol > 0)
        return w->configs[c].atol;
    return ckb_workload_atol(w);
}

double ckb_workload_config_rtol(const ckb_workload *w, int c)
{
    if (w->nconfigs > 0 && c >= 0 && c < w->nconfigs && w->configs[c].rtol > 0)
        return w->configs[c].rtol;
    return ckb_workload_rtol(w);
}

int ckb_workload_has_tag(const ckb_workload *w, const char *tag)
{
    size_t n = strlen(tag);
    for (const char *p = w->tags; p && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, tag, n) == 0)
            return 1;
        p = end ? end + 1 : NULL;
    }
    return 0;
}

char *ckb_workload_signature(const ckb_workload *w)
{
    ckb_strbuf sb = {0};
    ckb_strbuf_printf(&sb, "void workload(");
    for (int i = 0; i < w->ntensors; i++) {
        const ckb_tensor *t = &w->tensors[i];
        ckb_strbuf_printf(&sb, "%s%s%s *%s", i ? ", " : "", t->role == CKB_IN ? "const " : "",
                          ckb_dtype_ctype(t->dtype), t->name);
    }
    ckb_strbuf_printf(&sb, ")");
    return ckb_strbuf_take(&sb);
}

char *ckb_workload_candidate_header(const ckb_workload *w, ckb_size s)
{
    char label[96];
    int64_t dims[CKB_MAX_DIMS];
    ckb_size_label(w, s, label, sizeof label);
    ckb_workload_dims(w, s, dims);
    return ckb_workload_dims_header(w, dims, label);
}

char *ckb_workload_dims_header(const ckb_workload *w, const int64_t *dims, const char *label)
{
    ckb_strbuf sb = {0};
    ckb_strbuf_printf(&sb, "/* generated by ckbench for %s, size %s */\n#pragma once\n", w->id,
                      label);
    ckb_strbuf_printf(&sb, "#include <stdint.h>\n#include \"ckbench.h\"\n");
    for (int i = 0; i < w->ndims; i++)
        ckb_strbuf_printf(&sb, "#define %s %lldL\n", w->dims[i].name,
                          (long long)dims[i]);
    for (int i = 0; i < w->nconsts; i++)
        /* a cast, so that whole numbers (10000) stay valid float constants */
        ckb_strbuf_printf(&sb, "#define %s ((float)%.9g)\n", w->consts[i].name,
                          w->consts[i].value);
    for (int i = 0; i < w->ntensors; i++) {
        const ckb_tensor *t = &w->tensors[i];
        ckb_strbuf_printf(&sb, "/* %s %s %s[", t->role == CKB_IN ? "in " : "out",
                          ckb_dtype_name(t->dtype), t->name);
        for (int k = 0; k < t->rank; k++)
            ckb_strbuf_printf(&sb, "%s%s", k ? "][" : "", w->dims[t->shape[k]].name);
        ckb_strbuf_printf(&sb, "] */\n");
    }
    char *sig = ckb_workload_signature(w);
    ckb_strbuf_printf(&sb, "%s;\n", sig);
    free(sig);
    return ckb_strbuf_take(&sb);
}

int ckb_tensors_alloc(const ckb_workload *w, const int64_t *dims, void **t)
{
    for (int i = 0; i < w->ntensors; i++) {
        size_t n = (ckb_tensor_bytes(&w->tensors[i], dims) + 63) / 64 * 64;
        t[i] = aligned_alloc(64, n ? n : 64);
        if (!t[i]) {
            for (int k = 0; k < i; k++)
                free(t[k]), t[k] = NULL;
            return -1;
        }
        memset(t[i], 0, n);
    }
    return 0;
}

void ckb_tensors_free(const ckb_workload *w, void **t)
{
    for (int i = 0; i < w->ntensors; i++) {
        free(t[i]);
        t[i] = NULL;
    }
}
