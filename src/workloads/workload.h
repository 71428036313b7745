/*
 * workload.h — the contract every workload fulfils (DESIGN §2).
 *
 * A workload is one folder, workloads/<id>/, holding workload.c (this
 * contract, filled in), optional expert.c (a candidate file with tunable
 * macros) and README.md. It is registered by one line in registry.def.
 *
 * All kernels of the harness (baseline, reference) take the same two
 * arguments: the dims of the chosen size, indexed by the workload's own
 * enum, and the tensors in declaration order (inputs first, then outputs).
 */
#ifndef CKB_WORKLOAD_H
#define CKB_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

struct json_object;

#include "ckbench.h"

#define CKB_MAX_DIMS 16
#define CKB_MAX_CONSTS 8
#define CKB_MAX_TENSORS 12
#define CKB_MAX_RANK 6
#define CKB_MAX_PARAMS 8
#define CKB_MAX_PARAM_VALUES 8
#define CKB_MAX_CHAIN 10
#define CKB_MAX_CONFIGS 4

typedef enum { CKB_BF16, CKB_F32, CKB_I32 } ckb_dtype;
typedef enum { CKB_IN, CKB_OUT } ckb_role;
/* small, default and paper are declared by each workload (CKB_SIZE_COUNT of
 * them); host is default with the scale dim at the value `ckbench size`
 * chose on this host (machine/sizes.h), or default where none was chosen. */
typedef enum {
    CKB_SIZE_SMALL,
    CKB_SIZE_DEFAULT,
    CKB_SIZE_PAPER,
    CKB_SIZE_COUNT,
    CKB_SIZE_HOST = CKB_SIZE_COUNT
} ckb_size;

/* A named dimension; its value for each size (small, default, paper). */
typedef struct {
    const char *name;
    int64_t value[CKB_SIZE_COUNT];
} ckb_dim;

/* A named scalar constant, the same at every size (eps, a scale, dropout p). */
typedef struct {
    const char *name;
    double value;
} ckb_const;

/* A tensor: its shape lists indices into the workload's dims. */
typedef struct {
    const char *name;
    ckb_dtype dtype;
    ckb_role role;
    int rank;
    int shape[CKB_MAX_RANK];
    /* 1 when only an order-free function of it (its sum, say) reaches the
     * outputs, so that reordering it is invisible by the maths; the README
     * says why. The reorder test skips it (zeroing still applies). */
    int order_free;
    /* 1 when the maths cancels it entirely (a per-channel bias right before
     * a normalisation over that channel): kept because the original has
     * it; the README says so. The zero and reorder tests skip it. */
    int cancelled;
    /* 1 when its values are the same for every seed: part of a fixed
     * scenario the original defines (7p's serving step: its lengths and
     * sequence count); the README says so. The seed-dependence test skips
     * it. */
    int fixed;
} ckb_tensor;

/* One tunable parameter of an expert kernel: a macro name, its untuned
 * default and the grid `ckbench tune` searches. */

/* An untuned default that is the host's, not a constant: the matmul unit
 * the machine profile measured fastest for bf16 work, in the experts' MMA
 * encoding (0 vdpbf16ps, 1 f32 FMA, 2 AMX). Which one wins differs between
 * CPUs of the same ISA (AMD Zen 4: the bf16 dot at twice the FMA rate; an
 * Intel Xeon without AMX: FMA at twice the dot's), so no compile-time
 * default is right on both (bench/expert.h resolves it). */
#define CKB_PARAM_HOST_UNIT (-1)
/* Untuned defaults that are blocks of the host's analytical model
 * (machine/blocking.h, on the host unit): BLIS's micro-tile rows and
 * columns (register file), depth (L1), rows of A (L2), columns of B (L3),
 * and attention's query and key blocks (L2, for the head width `head`).
 * The model's value is fitted to what the expert accepts (see multiple). */
#define CKB_PARAM_HOST_MR (-2)
#define CKB_PARAM_HOST_NR (-3)
#define CKB_PARAM_HOST_KC (-4)
#define CKB_PARAM_HOST_MC (-5)
#define CKB_PARAM_HOST_NC (-6)
#define CKB_PARAM_HOST_BQ (-7)
#define CKB_PARAM_HOST_BK (-8)
/* A register tile's rows and vectors, each from its own grid, chosen as a
 * pair for the host's register file (machine/blocking.h, "tile"); an
 * expert declares both or neither. */
#define CKB_PARAM_HOST_TILE_ROWS (-9)
#define CKB_PARAM_HOST_TILE_VECS (-10)
#define CKB_PARAM_HOST_LAST CKB_PARAM_HOST_TILE_VECS /* the last host kind */
typedef struct {
    const char *name;
    int64_t fallback;
    int nvalues;
    int64_t values[CKB_MAX_PARAM_VALUES];
    /* For a CKB_PARAM_HOST_<block> default only. multiple > 0: the expert
     * takes any multiple of it, so the model's value is rounded down to one
     * and kept within the grid's range; 0: the expert takes only its grid
     * (a divisor of a dim, a register budget), so the model's value becomes
     * the nearest grid value. per > 0: the macro counts groups of per model
     * units (6p's NPB: pages of 16 keys). head: attention's elements per key
     * (its K row plus its V row), for BQ and BK. */
    int64_t multiple, per, head;
} ckb_param;

typedef void (*ckb_kernel_fn)(const int64_t *dims, void *const *tensors);

/* One dim a configuration sets, with its value at each declared size. */
typedef struct {
    const char *dim;
    int64_t value[CKB_SIZE_COUNT];
} ckb_config_dim;

/* One input configuration, as upstream JAXBench's get_inputs() may return a
 * list of shapes: the same operator on other dims (a decode-heavy and a
 * prefill-heavy serving step, say), checked with its own tolerance. A
 * candidate is correct only when it passes every configuration, and its
 * speedup is the geometric mean over them. A configuration never sets the
 * scale dim: size host scales every configuration alike. */
typedef struct {
    const char *name; /* "decode", "prefill": a C identifier */
    int nset;
    ckb_config_dim set[CKB_MAX_DIMS];
    double atol, rtol; /* 0: the workload's own */
} ckb_config;

typedef struct ckb_workload {
    const char *id;      /* "8p_GEMM": also the folder name under workloads/ */
    const char *model;   /* the model the operator comes from */
    const char *op;      /* operator type, as in JAXBench's CONFIG */
    const char *tags;    /* comma-separated categories that choose the docs */
    const char *summary; /* what it computes, one line */

    int ndims;
    ckb_dim dims[CKB_MAX_DIMS];
    int nconsts;
    ckb_const consts[CKB_MAX_CONSTS];
    int ntensors;
    ckb_tensor tensors[CKB_MAX_TENSORS];

    /* allclose(out, oracle): |a-b| <= atol + rtol*|b|. 0 means the default
     * 1e-2 (bf16); a workload that changes it says why. */
    double atol, rtol;
    const char *tolerance_reason;

    /* Fills every input tensor, deterministically for (dims, seed). */
    void (*create_inputs)(const int64_t *dims, uint64_t seed, void *const *t);
    ckb_kernel_fn baseline;  /* oneDNN + loops: the speedup denominator */
    ckb_kernel_fn reference; /* plain loops, to validate the baseline in tests */
    double (*flops)(const int64_t *dims);
    double (*bytes)(const int64_t *dims); /* compulsory traffic: inputs + outputs */

    /* The chain of ops after the heavy one, by name ("bias", "relu", ...),
     * and the reference with one of them left out (skip = -1: none). A
     * test shows that leaving out any one makes the check fail, so that
     * every op of the chain is observable in the output. */
    int nchain;
    const char *chain[CKB_MAX_CHAIN];
    void (*reference_without)(const int64_t *dims, void *const *tensors, int skip);

    /* > 0: in the last seed set of a check the floating-point inputs are
     * scaled by 2^wide_range and 2^-wide_range alternately (eval/perturb.h):
     * a kernel that keeps operands in half precision or fp8, exact on
     * inputs of one magnitude, overflows there. Only for workloads whose
     * output is a product of the two operands, where the scaling changes
     * no bit of the answer. At most 126, so that 2^wide_range is a normal
     * float (tests/test_eval.c holds every workload to it). */
    int wide_range;

    /* The dim `ckbench size` scales for this host (DESIGN §6): a batch-like
     * dim the work is linear in and no other dim or input invariant depends
     * on, so any multiple of its small value keeps the workload valid.
     * NULL: the workload keeps its default dims on every host. */
    const char *scale_dim;

    /* nconfigs == 0: one configuration, the dims above. Otherwise the
     * configurations a candidate is judged on, each the dims above with
     * some set otherwise (the first is the one shown where one is). */
    int nconfigs;
    ckb_config configs[CKB_MAX_CONFIGS];

    /* The expert's tunable macros; nparams == 0 and no expert.c if none. */
    int nparams;
    ckb_param params[CKB_MAX_PARAMS];
} ckb_workload;

/* ---- registry ---------------------------------------------------------- */

int ckb_workload_count(void);
const ckb_workload *ckb_workload_at(int i);
/* By exact id ("8p_GEMM") or by its number prefix ("8p"); NULL if unknown. */
const ckb_workload *ckb_workload_find(const char *name);
/* Tests only: makes w (not one of the suite's) found by its exact id, as the
 * sandbox child finds its workload, and nowhere else (not counted, not
 * listed). Call from a constructor, so that the re-executed test binary
 * that is the sandbox has it too. 0, or -1 when 4 are added already. */
int ckb_workload_add_for_tests(const ckb_workload *w);

/* ---- derived facts ----------------------------------------------------- */

const char *ckb_size_name(ckb_size s);
int ckb_size_parse(const char *name, ckb_size *out); /* 0 on success */
const char *ckb_dtype_name(ckb_dtype t);
const char *ckb_dtype_ctype(ckb_dtype t); /* "ckb_bf16", "float", "int32_t" */
size_t ckb_dtype_size(ckb_dtype t);

/* Fills dims[] with the values of size s (of its first configuration). */
void ckb_workload_dims(const ckb_workload *w, ckb_size s, int64_t *dims);
/* How many configurations w is judged on: nconfigs, or 1. */
int ckb_workload_config_count(const ckb_workload *w);
/* The name of configuration c ("" for a workload of one). */
const char *ckb_workload_config_name(const ckb_workload *w, int c);
/* Fills dims[] with the values of size s in configuration c. */
void ckb_workload_config_dims(const ckb_workload *w, ckb_size s, int c, int64_t *dims);
/* The tolerances configuration c is checked with. */
double ckb_workload_config_atol(const ckb_workload *w, int c);
double ckb_workload_config_rtol(const ckb_workload *w, int c);
/* The index of w's scale dim, or -1 when it has none. */
int ckb_workload_scale_dim(const ckb_workload *w);
/* The scale dim's value at size host: the one set here for this process
 * (by the sizes `ckbench size` chose, or those a results file recorded),
 * else its default value. set returns -1 (nothing changed) for a value that
 * is not a positive multiple of the small value, or a workload without a
 * scale dim. */
int ckb_workload_set_host_scale(const ckb_workload *w, int64_t value);
int64_t ckb_workload_host_scale(const ckb_workload *w);
/* w's dims at size s as a JSON object {"B": 1, ...} (the caller owns it). */
struct json_object *ckb_workload_dims_json(const ckb_workload *w, ckb_size s);
/* What names a size of w exactly: "default", or "host(B=512)". */
void ckb_size_label(const ckb_workload *w, ckb_size s, char *buf, size_t n);
int64_t ckb_tensor_numel(const ckb_tensor *t, const int64_t *dims);
size_t ckb_tensor_bytes(const ckb_tensor *t, const int64_t *dims);
double ckb_workload_atol(const ckb_workload *w);
double ckb_workload_rtol(const ckb_workload *w);
int ckb_workload_has_tag(const ckb_workload *w, const char *tag);

/* Allocates every tensor of w at dims, 64-byte aligned and zeroed, into
 * t[0..ntensors-1]. Returns 0, or -1 (nothing left allocated) when out of
 * memory. Free with ckb_tensors_free. */
int ckb_tensors_alloc(const ckb_workload *w, const int64_t *dims, void **t);
void ckb_tensors_free(const ckb_workload *w, void **t);

/* The generated header force-included into candidates: the dims and consts
 * as macros and the prototype of workload(). Caller frees. */
char *ckb_workload_candidate_header(const ckb_workload *w, ckb_size s);
/* The same for any dims (a size's or others); label names them in its
 * first line. Caller frees. */
char *ckb_workload_dims_header(const ckb_workload *w, const int64_t *dims, const char *label);
/* The candidate's signature, e.g. "void workload(const ckb_bf16 *A, ...)".
 * Caller frees. */
char *ckb_workload_signature(const ckb_workload *w);

#endif /* CKB_WORKLOAD_H */
