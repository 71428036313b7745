/*
 * instance.h — one resolved problem instance (DESIGN §2, §4): a workload at
 * one size in one of its configurations, with everything that follows from
 * that choice worked out once: the dims (the host's scale value in them),
 * the label that names the size, the tolerances, every tensor's bytes and
 * the declared cost.
 *
 * An evaluation resolves its instance once and hands it to every part
 * that needs a dim or a byte count (compile's dims.h, the sandbox child,
 * the checks, the perturbation, the result, an executor's job file), so no
 * two of them can work from different dims. The sandbox child and an
 * executor's node cannot read the host's sizes file: they get the
 * instance's identity (ckb_instance_id) on their command line or in their
 * job file and rebuild it with ckb_instance_from_id.
 */
#ifndef CKB_INSTANCE_H
#define CKB_INSTANCE_H

#include <stddef.h>
#include <stdint.h>

#include "workloads/workload.h"

struct json_object;

/* Longest identity ckb_instance_id writes: "host:3:9223372036854775807". */
#define CKB_INSTANCE_ID_MAX 48

typedef struct {
    const ckb_workload *w;
    ckb_size size;
    int config;          /* 0 .. ckb_workload_config_count(w) - 1 */
    int nconfigs;        /* ckb_workload_config_count(w) */
    const char *config_name; /* "" for a workload of one configuration */
    int64_t host_scale;  /* the scale dim's value at size host; -1 at other sizes
                            or for a workload without a scale dim */
    int64_t dims[CKB_MAX_DIMS];
    char size_label[96]; /* "default", "host(B=512)" (ckb_size_label) */
    double atol, rtol;   /* the configuration's allclose tolerances */
    size_t tensor_bytes[CKB_MAX_TENSORS];
    int64_t tensor_numel[CKB_MAX_TENSORS];
    double flops, bytes; /* the workload's declared cost at these dims */
} ckb_instance;

/* w at size s in configuration config, with this process's host scale
 * value (ckb_workload_host_scale) when s is host. 0, or -1 (out left
 * zeroed) for a configuration w does not have. */
int ckb_instance_resolve(const ckb_workload *w, ckb_size s, int config, ckb_instance *out);
/* The same with the host scale value given (ignored below size host, or
 * for a workload without a scale dim): what a process that cannot read the
 * sizes file resolves. -1 also for a value ckb_workload_set_host_scale
 * would refuse (other than the scale dim's default). */
int ckb_instance_resolve_scaled(const ckb_workload *w, ckb_size s, int config,
                                int64_t host_scale, ckb_instance *out);

/* What identifies in besides its workload: "SIZE:CONFIG:HOST_SCALE", e.g.
 * "default:0:-1", "host:1:512". buf holds CKB_INSTANCE_ID_MAX bytes. */
void ckb_instance_id(const ckb_instance *in, char *buf, size_t n);
/* Rebuilds the instance id names for w. 0, or -1 for an id that is not
 * one of w's instances. */
int ckb_instance_from_id(const ckb_workload *w, const char *id, ckb_instance *out);

/* The dims as a JSON object {"B": 1, ...}; the caller owns it. */
struct json_object *ckb_instance_dims_json(const ckb_instance *in);
/* dims.h: the header force-included into a candidate compiled for in (its
 * dims and consts as macros, the prototype). Caller frees. */
char *ckb_instance_header(const ckb_instance *in);
/* Elements over every output tensor. */
int64_t ckb_instance_output_numel(const ckb_instance *in);

#endif /* CKB_INSTANCE_H */
