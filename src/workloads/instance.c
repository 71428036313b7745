/* One resolved problem instance (instance.h). */
#include "workloads/instance.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ckb_instance_resolve_scaled(const ckb_workload *w, ckb_size s, int config,
                                int64_t host_scale, ckb_instance *out)
{
    memset(out, 0, sizeof *out);
    int n = ckb_workload_config_count(w), d = ckb_workload_scale_dim(w);
    if (config < 0 || config >= n || s < 0 || s > CKB_SIZE_HOST)
        return -1;
    int scaled = s == CKB_SIZE_HOST && d >= 0;
    /* the values ckb_workload_set_host_scale takes, or the default (17p's
     * default is no multiple of its small value) */
    if (scaled && (host_scale <= 0 || (host_scale % w->dims[d].value[CKB_SIZE_SMALL] != 0 &&
                                       host_scale != w->dims[d].value[CKB_SIZE_DEFAULT])))
        return -1;
    out->w = w;
    out->size = s;
    out->config = config;
    out->nconfigs = n;
    out->config_name = ckb_workload_config_name(w, config);
    out->host_scale = scaled ? host_scale : -1;
    /* the declared dims of the configuration, then the host's scale value */
    ckb_workload_config_dims(w, s == CKB_SIZE_HOST ? CKB_SIZE_DEFAULT : s, config, out->dims);
    if (scaled) {
        out->dims[d] = host_scale;
        snprintf(out->size_label, sizeof out->size_label, "host(%s=%lld)", w->dims[d].name,
                 (long long)host_scale);
    } else {
        snprintf(out->size_label, sizeof out->size_label, "%s", ckb_size_name(s));
    }
    out->atol = ckb_workload_config_atol(w, config);
    out->rtol = ckb_workload_config_rtol(w, config);
    for (int i = 0; i < w->ntensors; i++) {
        out->tensor_numel[i] = ckb_tensor_numel(&w->tensors[i], out->dims);
        out->tensor_bytes[i] = ckb_tensor_bytes(&w->tensors[i], out->dims);
    }
    /* a test's workload may declare no cost */
    out->flops = w->flops ? w->flops(out->dims) : 0;
    out->bytes = w->bytes ? w->bytes(out->dims) : 0;
    return 0;
}

int ckb_instance_resolve(const ckb_workload *w, ckb_size s, int config, ckb_instance *out)
{
    return ckb_instance_resolve_scaled(w, s, config, ckb_workload_host_scale(w), out);
}

void ckb_instance_id(const ckb_instance *in, char *buf, size_t n)
{
    snprintf(buf, n, "%s:%d:%lld", ckb_size_name(in->size), in->config,
             (long long)in->host_scale);
}

int ckb_instance_from_id(const ckb_workload *w, const char *id, ckb_instance *out)
{
    char size[16];
    int config, used = 0;
    long long scale;
    ckb_size s;
    memset(out, 0, sizeof *out);
    if (!id || sscanf(id, "%15[a-z]:%d:%lld%n", size, &config, &scale, &used) != 3 ||
        id[used] != '\0' || ckb_size_parse(size, &s) != 0)
        return -1;
    if (ckb_instance_resolve_scaled(w, s, config, scale, out) != 0)
        return -1;
    /* the id names exactly this instance: no scale where none applies */
    if (out->host_scale != scale) {
        memset(out, 0, sizeof *out);
        return -1;
    }
    return 0;
}

json_object *ckb_instance_dims_json(const ckb_instance *in)
{
    json_object *j = json_object_new_object();
    for (int i = 0; i < in->w->ndims; i++)
        json_object_object_add(j, in->w->dims[i].name, json_object_new_int64(in->dims[i]));
    return j;
}

char *ckb_instance_header(const ckb_instance *in)
{
    if (in->nconfigs <= 1)
        return ckb_workload_dims_header(in->w, in->dims, in->size_label);
    char label[160];
    snprintf(label, sizeof label, "%s, configuration %s", in->size_label, in->config_name);
    return ckb_workload_dims_header(in->w, in->dims, label);
}

int64_t ckb_instance_output_numel(const ckb_instance *in)
{
    int64_t n = 0;
    for (int i = 0; i < in->w->ntensors; i++)
        if (in->w->tensors[i].role == CKB_OUT)
            n += in->tensor_numel[i];
    return n;
}
