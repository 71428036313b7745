/*
 * roofline.h — the one roofline model (DESIGN §6): every % of peak, roofline
 * time and bound that ckbench shows (eval and bench results, the report's
 * plot, the hardware doc block, the evaluator's beyond_roofline note) comes
 * from a ckb_roof made here from the machine profile.
 *
 * Compute roof: the fastest unit the profile measured for the work's
 * precision. bf16 work may run on f32 FMA after converting, on the bf16 dot
 * or on AMX, so its roof is the fastest of the three; f32 work has only f32
 * FMA. % of peak is then at most 100, up to measurement noise.
 * Memory roof: the bandwidth of the smallest level the working set fits in
 * (L2 of the team's cores, the L3, else DRAM), never below DRAM's; the DRAM
 * figure is kept beside it.
 */
#ifndef CKB_MACHINE_ROOFLINE_H
#define CKB_MACHINE_ROOFLINE_H

#include "machine/profile.h"
#include "workloads/instance.h"
#include "workloads/workload.h"

struct json_object;

typedef enum { CKB_PREC_F32, CKB_PREC_BF16 } ckb_precision;

typedef struct {
    double compute_gflops; /* the compute roof; 0 when the profile has none */
    const char *unit;      /* "f32_fma", "bf16_dot", "amx" (static) */
    double mem_gbs;        /* the memory roof for the working set; 0 when unknown */
    const char *mem_level; /* "l2", "l3", "dram" (static) */
    double dram_gbs;       /* the DRAM roof, beside it */
    double working_set;    /* bytes the roof was chosen for */
    ckb_precision precision;
} ckb_roof;

/* The compute roof for work of precision p; *unit (may be NULL) names it. */
double ckb_roof_compute(const ckb_machine *m, ckb_precision p, const char **unit);

/* The memory roof for a working set of `bytes` with m->threads threads;
 * *level (may be NULL) names it. Capacities: L2 x min(threads, cores)
 * (a private L2 per core), one L3. */
double ckb_roof_memory(const ckb_machine *m, double bytes, const char **level);

/* Both roofs for work of precision p over a working set of `bytes`. */
void ckb_roof_make(const ckb_machine *m, ckb_precision p, double bytes, ckb_roof *out);

/* A workload's precision (bf16 when any tensor is bf16) and working set
 * (every tensor at size s). */
ckb_precision ckb_roof_precision(const ckb_workload *w);
double ckb_roof_working_set(const ckb_workload *w, ckb_size s);

/* ckb_roof_make for workload w at size s. */
void ckb_roof_for_workload(const ckb_machine *m, const ckb_workload *w, ckb_size s,
                           ckb_roof *out);
/* The same for a resolved instance: the roof of its own working set (a
 * node's host scale value is the instance's, not this process's). */
void ckb_roof_for_instance(const ckb_machine *m, const ckb_instance *in, ckb_roof *out);

/* Time the roofline allows for flops and bytes, in ms (NAN when a roof is
 * unknown); "compute" or "memory" (NULL when unknown); % of the compute
 * roof for a rate in GFLOP/s (NAN when unknown); ridge in FLOP/byte. */
double ckb_roof_ms(const ckb_roof *r, double flops, double bytes);
const char *ckb_roof_bound(const ckb_roof *r, double flops, double bytes);
double ckb_roof_pct(const ckb_roof *r, double gflops);
double ckb_roof_ridge(const ckb_roof *r);

/* The one vocabulary (issue 32): what the prompt, the documentation, the
 * feedback, the result and the report call a unit and a level. A unit
 * ("f32_fma", "bf16_dot", "amx") reads "f32 FMA (vfmadd)", "bf16 dot
 * (vdpbf16ps)", "AMX (tdpbf16ps)"; a level ("l2", "l3", "dram") reads "L2",
 * "L3", "DRAM"; an unknown name reads as itself ("?" for NULL). */
const char *ckb_roof_unit_label(const char *unit);
const char *ckb_roof_level_label(const char *level);
/* How a compute roof and a memory level were measured, one clause each
 * (peak.c): the prompt and the docs quote them so a model knows the
 * compute roof is a register-only ceiling no real kernel reaches. */
const char *ckb_roof_compute_how(void);
const char *ckb_roof_level_how(const char *level);

/* A workload's working set at explicit dims (every tensor once): what
 * ckb_roof_working_set computes for a size, for dims read back from a
 * result (a host size included). */
double ckb_roof_working_set_dims(const ckb_workload *w, const int64_t *dims);

/* The roof an evaluation result's figures were divided by: its "roof"
 * object when it has one (eval, bench, an executor's node, generate);
 * else made from m for the result's workload and dims (m NULL: none).
 * 0 on success, -1 when neither gives one (then *out is zero). */
int ckb_roof_of_result(struct json_object *result, const ckb_machine *m, ckb_roof *out);

/* {"precision","unit","compute_gflops","memory","memory_gbs","dram_gbs",
 * "working_set_bytes"}; the caller owns it. */
struct json_object *ckb_roof_to_json(const ckb_roof *r);

/* Reads what ckb_roof_to_json wrote; 0 on success, -1 when j is not such an
 * object (then *out is zero). */
int ckb_roof_from_json(struct json_object *j, ckb_roof *out);

#endif /* CKB_MACHINE_ROOFLINE_H */
