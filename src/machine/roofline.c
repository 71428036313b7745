/*
 * roofline.c — the roofs of a workload on a profiled machine (roofline.h).
 */
#include "machine/roofline.h"

#include <json-c/json.h>
#include <math.h>
#include <string.h>

static const char *const roof__units[] = {"f32_fma", "bf16_dot", "amx"};
static const char *const roof__levels[] = {"l2", "l3", "dram"};

double ckb_roof_compute(const ckb_machine *m, ckb_precision p, const char **unit)
{
    double best = m->f32_gflops > 0 ? m->f32_gflops : 0;
    const char *name = roof__units[0];
    if (p == CKB_PREC_BF16) {
        if (m->bf16_dot_gflops > best)
            best = m->bf16_dot_gflops, name = roof__units[1];
        if (m->bf16_amx_gflops > best)
            best = m->bf16_amx_gflops, name = roof__units[2];
        /* a profile that gives only the bf16 roof (older results, a test's
         * fake): that figure, under the unit that matches it, if any */
        if (m->bf16_gflops > best) {
            best = m->bf16_gflops;
            name = m->bf16_gflops == m->bf16_amx_gflops   ? roof__units[2]
                   : m->bf16_gflops == m->bf16_dot_gflops ? roof__units[1]
                                                          : "bf16";
        }
    }
    if (unit)
        *unit = name;
    return best;
}

double ckb_roof_memory(const ckb_machine *m, double bytes, const char **level)
{
    double dram = m->bw_gbs > 0 ? m->bw_gbs : 0, best = dram;
    const char *name = roof__levels[2];
    int team = m->threads < m->cores ? m->threads : m->cores;
    if (team < 1)
        team = 1;
    if (m->l2 > 0 && m->l2_gbs > 0 && bytes <= (double)m->l2 * team)
        best = m->l2_gbs, name = roof__levels[0];
    else if (m->l3 > 0 && m->l3_gbs > 0 && bytes <= (double)m->l3)
        best = m->l3_gbs, name = roof__levels[1];
    /* a cache level measured slower than DRAM (a noisy run) would make the
     * roof lower than what memory alone allows: never below DRAM */
    if (best < dram)
        best = dram, name = roof__levels[2];
    if (level)
        *level = name;
    return best;
}

void ckb_roof_make(const ckb_machine *m, ckb_precision p, double bytes, ckb_roof *out)
{
    memset(out, 0, sizeof *out);
    out->precision = p;
    out->working_set = bytes;
    out->compute_gflops = ckb_roof_compute(m, p, &out->unit);
    out->mem_gbs = ckb_roof_memory(m, bytes, &out->mem_level);
    out->dram_gbs = m->bw_gbs > 0 ? m->bw_gbs : 0;
}

ckb_precision ckb_roof_precision(const ckb_workload *w)
{
    for (int i = 0; i < w->ntensors; i++)
        if (w->tensors[i].dtype == CKB_BF16)
            return CKB_PREC_BF16;
    return CKB_PREC_F32;
}

double ckb_roof_working_set_dims(const ckb_workload *w, const int64_t *dims)
{
    double total = 0;
    for (int i = 0; i < w->ntensors; i++)
        total += (double)ckb_tensor_bytes(&w->tensors[i], dims);
    return total;
}

double ckb_roof_working_set(const ckb_workload *w, ckb_size s)
{
    int64_t dims[CKB_MAX_DIMS];
    ckb_workload_dims(w, s, dims);
    return ckb_roof_working_set_dims(w, dims);
}

const char *ckb_roof_unit_label(const char *unit)
{
    if (!unit)
        return "?";
    if (strcmp(unit, "f32_fma") == 0)
        return "f32 FMA (vfmadd)";
    if (strcmp(unit, "bf16_dot") == 0)
        return "bf16 dot (vdpbf16ps)";
    if (strcmp(unit, "amx") == 0)
        return "AMX (tdpbf16ps)";
    return unit;
}

const char *ckb_roof_level_label(const char *level)
{
    if (!level)
        return "?";
    if (strcmp(level, "l2") == 0)
        return "L2";
    if (strcmp(level, "l3") == 0)
        return "L3";
    if (strcmp(level, "dram") == 0)
        return "DRAM";
    return level;
}

const char *ckb_roof_compute_how(void)
{
    return "measured by a register-only loop (independent accumulators, no loads or stores, "
           "best of a few runs): a ceiling no real kernel reaches";
}

const char *ckb_roof_level_how(const char *level)
{
    if (level && strcmp(level, "dram") == 0)
        return "STREAM-triad-like over arrays far larger than the L3";
    if (level && strcmp(level, "l2") == 0)
        return "streaming reads, each thread over its own buffer that fits its core's L2";
    return "streaming reads over buffers that together fit the L3";
}

void ckb_roof_for_workload(const ckb_machine *m, const ckb_workload *w, ckb_size s,
                           ckb_roof *out)
{
    ckb_roof_make(m, ckb_roof_precision(w), ckb_roof_working_set(w, s), out);
}

void ckb_roof_for_instance(const ckb_machine *m, const ckb_instance *in, ckb_roof *out)
{
    ckb_roof_make(m, ckb_roof_precision(in->w), ckb_roof_working_set_dims(in->w, in->dims), out);
}

double ckb_roof_ms(const ckb_roof *r, double flops, double bytes)
{
    if (!(r->compute_gflops > 0) || !(r->mem_gbs > 0) || !(flops >= 0) || !(bytes >= 0))
        return NAN;
    double tc = flops / (r->compute_gflops * 1e9), tm = bytes / (r->mem_gbs * 1e9);
    return 1e3 * (tc > tm ? tc : tm);
}

const char *ckb_roof_bound(const ckb_roof *r, double flops, double bytes)
{
    if (!(r->compute_gflops > 0) || !(r->mem_gbs > 0) || !(flops >= 0) || !(bytes >= 0))
        return NULL;
    /* the same test as the eval result's (compute time >= memory time) */
    return flops / (r->compute_gflops * 1e9) >= bytes / (r->mem_gbs * 1e9) ? "compute" : "memory";
}

double ckb_roof_pct(const ckb_roof *r, double gflops)
{
    return r->compute_gflops > 0 && gflops >= 0 ? 100.0 * gflops / r->compute_gflops : NAN;
}

double ckb_roof_ridge(const ckb_roof *r)
{
    return r->mem_gbs > 0 ? r->compute_gflops / r->mem_gbs : NAN;
}

json_object *ckb_roof_to_json(const ckb_roof *r)
{
    json_object *j = json_object_new_object();
    json_object_object_add(j, "precision",
                           json_object_new_string(r->precision == CKB_PREC_BF16 ? "bf16" : "f32"));
    json_object_object_add(j, "unit", json_object_new_string(r->unit ? r->unit : "?"));
    json_object_object_add(j, "compute_gflops", json_object_new_double(r->compute_gflops));
    json_object_object_add(j, "memory", json_object_new_string(r->mem_level ? r->mem_level : "?"));
    json_object_object_add(j, "memory_gbs", json_object_new_double(r->mem_gbs));
    json_object_object_add(j, "dram_gbs", json_object_new_double(r->dram_gbs));
    json_object_object_add(j, "working_set_bytes", json_object_new_double(r->working_set));
    return j;
}

/* The static name equal to s among names[0..n), else NULL. */
static const char *roof__intern(const char *s, const char *const *names, size_t n)
{
    for (size_t i = 0; s && i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return names[i];
    return s && strcmp(s, "bf16") == 0 ? "bf16" : NULL;
}

static double roof__num(json_object *j, const char *key)
{
    json_object *v;
    if (!json_object_object_get_ex(j, key, &v) ||
        !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
        return NAN;
    return json_object_get_double(v);
}

int ckb_roof_of_result(json_object *result, const ckb_machine *m, ckb_roof *out)
{
    json_object *v, *dj;
    memset(out, 0, sizeof *out);
    if (!result)
        return -1;
    if (json_object_object_get_ex(result, "roof", &v) && ckb_roof_from_json(v, out) == 0)
        return 0;
    const ckb_workload *w = json_object_object_get_ex(result, "workload", &v)
                                ? ckb_workload_find(json_object_get_string(v))
                                : NULL;
    if (!m || !w)
        return -1;
    int64_t dims[CKB_MAX_DIMS];
    ckb_workload_dims(w, CKB_SIZE_DEFAULT, dims);
    if (json_object_object_get_ex(result, "size", &v))
        for (int s = 0; s <= CKB_SIZE_HOST; s++)
            if (strcmp(json_object_get_string(v), ckb_size_name((ckb_size)s)) == 0)
                ckb_workload_dims(w, (ckb_size)s, dims);
    /* the dims the result records win over its size's (a host size) */
    if (json_object_object_get_ex(result, "dims", &dj) && json_object_is_type(dj, json_type_object))
        for (int i = 0; i < w->ndims; i++)
            if (json_object_object_get_ex(dj, w->dims[i].name, &v))
                dims[i] = json_object_get_int64(v);
    ckb_roof_make(m, ckb_roof_precision(w), ckb_roof_working_set_dims(w, dims), out);
    return out->compute_gflops > 0 && out->mem_gbs > 0 ? 0 : -1;
}

int ckb_roof_from_json(json_object *j, ckb_roof *out)
{
    memset(out, 0, sizeof *out);
    json_object *v;
    if (!j || !json_object_is_type(j, json_type_object))
        return -1;
    double c = roof__num(j, "compute_gflops"), mem = roof__num(j, "memory_gbs");
    if (!(c > 0) || !(mem > 0))
        return -1;
    out->compute_gflops = c;
    out->mem_gbs = mem;
    out->dram_gbs = roof__num(j, "dram_gbs") > 0 ? roof__num(j, "dram_gbs") : 0;
    out->working_set = roof__num(j, "working_set_bytes") >= 0 ? roof__num(j, "working_set_bytes")
                                                               : 0;
    out->unit = json_object_object_get_ex(j, "unit", &v)
                    ? roof__intern(json_object_get_string(v), roof__units, 3)
                    : NULL;
    out->mem_level = json_object_object_get_ex(j, "memory", &v)
                         ? roof__intern(json_object_get_string(v), roof__levels, 3)
                         : NULL;
    out->precision = json_object_object_get_ex(j, "precision", &v) &&
                             strcmp(json_object_get_string(v), "f32") == 0
                         ? CKB_PREC_F32
                         : CKB_PREC_BF16;
    return 0;
}
