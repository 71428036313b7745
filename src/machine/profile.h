/*
 * profile.h — what this machine can do, measured once (DESIGN §5, §6): for a
 * thread budget, the peak of each compute unit the ISA level in force has
 * (f32 FMA, the bf16 dot, AMX), the streaming-read bandwidth of L2 and L3,
 * the DRAM bandwidth, and the facts they depend on (CPU model, ISA features
 * and level, caches). Every result divides by a roof made from these
 * (machine/roofline.h) for % of peak and the roofline, so a profile is
 * cached per host (CPU, ISA level, thread budget) and re-measured only when
 * that changes or its format is older.
 *
 * The peaks are best-case figures (best of a few repetitions of a loop that
 * no real kernel beats); the DRAM bandwidth is STREAM-triad-like over arrays
 * far larger than the last-level cache.
 */
#ifndef CKB_MACHINE_PROFILE_H
#define CKB_MACHINE_PROFILE_H

#include <stddef.h>
#include <stdint.h>

struct json_object;

typedef struct {
    char cpu[128];          /* model name from /proc/cpuinfo */
    char isa[128];          /* e.g. "avx512f avx512bw avx512vl avx512_bf16 avx512_vnni fma":
                               the features usable at isa_level */
    char isa_level[16];     /* the ISA level in force (machine/isa.h, CKBENCH_ISA) */
    int cores;              /* online CPUs */
    int threads;            /* the thread budget this profile was measured with */
    int64_t l1d, l2, l3;    /* bytes per instance, from sysfs; 0 when unknown */
    double f32_gflops;      /* peak f32 FMA throughput, all `threads` */
    double bf16_dot_gflops; /* vdpbf16ps dot alone; 0 below the avx512bf16 level */
    double bf16_amx_gflops; /* AMX tdpbf16ps alone; 0 below the amx level */
    double bf16_gflops;     /* the roof for bf16 work: the fastest of f32 FMA (after a
                               conversion), the bf16 dot and AMX (machine/roofline.h) */
    double l2_gbs, l3_gbs;  /* streaming-read bandwidth from a buffer that fits L2, L3
                               (all `threads`); 0 when the level's size is unknown */
    double bw_gbs;          /* DRAM bandwidth (STREAM-triad-like, arrays >> L3) */
    double f32_gflops_1t, bf16_gflops_1t; /* single-thread peaks (bf16: the roof, the
                                             fastest unit), to detect a missing core */
    double bf16_dot_gflops_1t;            /* the bf16 dot on one thread; 0 without it */
    char measured_at[32];   /* ISO 8601 UTC */
    char compiler[64];      /* __VERSION__ of the compiler that built ckbench */
    double disturbed_pct;   /* of the machine's CPU time that went to other work (or the
                               hypervisor) while it was measured; 0 when not known */
} ckb_machine;

/* A profile measured while other work took more than this (%) is measured
 * again, and not stored if it stays so. */
#define CKB_MACHINE_MAX_DISTURBED_PCT 10.0

/* Fills the facts that need no measurement (cpu, isa, isa_level, cores,
 * caches, compiler; threads as given); the figures and measured_at are zero.
 * Fast: reads /proc and sysfs. These facts identify the machine a cached
 * profile belongs to; features above the ISA level in force are left out. */
void ckb_machine_probe(int threads, ckb_machine *out);

/* Fills *out with this machine's facts and measures its peaks with exactly
 * `threads` OpenMP threads (and with one, for the _1t fields). Takes a few
 * seconds and allocates several hundred MiB for the bandwidth arrays.
 * 0 on success; -1 when threads < 1 or a measurement could not run (out of
 * memory, fewer threads than asked). */
int ckb_machine_measure(int threads, ckb_machine *out);

/* Writes m as JSON to path atomically (temporary file + rename), creating
 * the parent directories. 0 on success; -1 with errno set otherwise, the
 * old file left as it was. */
int ckb_machine_save(const ckb_machine *m, const char *path);

/* Reads a profile written by ckb_machine_save. 0 on success; -1 when the
 * file is missing, not JSON, of another format version, lacks a field or
 * holds an implausible figure (then *out is unspecified). */
int ckb_machine_load(const char *path, ckb_machine *out);

/* The default path: $XDG_CACHE_HOME/ckbench/machine-<threads>t-<level>.json,
 * else ~/.cache/ckbench/machine-<threads>t-<level>.json, where level is the ISA
 * level in force (so CKBENCH_ISA=avx2 keeps a profile of its own). Writes into
 * buf (truncated to n). */
void ckb_machine_default_path(int threads, char *buf, size_t n);

/* Whether profile a was measured on the host b describes: same CPU model,
 * ISA features and level, online cores and thread budget. */
int ckb_machine_same_host(const ckb_machine *a, const ckb_machine *b);

/* Loads the profile at path (or the default path when NULL) if it matches
 * `threads` and this CPU (ckb_machine_same_host); otherwise measures,
 * saves, and says so (core/say.h: "measuring this machine (once)..."). A
 * profile that cannot be saved is still returned, with a warning.
 * 0 on success; -1 when the measurement failed. */
int ckb_machine_get(int threads, const char *path, ckb_machine *out);

/* The profile as a JSON object (every field, plus "format"); the caller
 * owns it and releases it with json_object_put. */
struct json_object *ckb_machine_to_json(const ckb_machine *m);

/* The DRAM roofline's ridge point for bf16 work: the bf16 roof / DRAM
 * bandwidth, in FLOP per byte (0 when the bandwidth is unknown). The
 * per-workload roof, with the cache levels, is machine/roofline.h's. */
double ckb_machine_ridge(const ckb_machine *m);

/*
 * The measurements behind ckb_machine_measure (peak.c), for `ckbench size`
 * and the tests. Each runs with exactly `threads` OpenMP threads and returns
 * the best of a few repetitions, or a negative value when it could not run.
 */

/* Peak f32 FMA throughput in GFLOP/s with the widest vectors the ISA level
 * in force allows (AVX-512, else AVX2+FMA, else plain C without AVX). */
double ckb_machine_peak_f32(int threads);
/* Peak bf16 dot throughput (vdpbf16ps) in GFLOP/s; 0 below the avx512bf16
 * level (the CPU lacks it, or CKBENCH_ISA hides it). */
double ckb_machine_peak_bf16_dot(int threads);
/* AMX tdpbf16ps alone; 0 below the amx level, or when Linux refuses the
 * tile state. */
double ckb_machine_peak_bf16_amx(int threads);
/* Triad bandwidth in GB/s over arrays of at least 8 x l3 bytes each (l3 may
 * be 0: unknown) and 256 MiB in all, capped to a quarter of the RAM. */
double ckb_machine_bandwidth(int threads, int64_t l3);
/* Streaming-read bandwidth in GB/s: each of `threads` threads reads its own
 * buffer of bytes_per_thread over and over (size it to fit the level to
 * measure); the widest loads the ISA level allows. */
double ckb_machine_read_bandwidth(int threads, int64_t bytes_per_thread);
/* The L3 read bandwidth (GB/s) measured now as m's l3_gbs was: the same
 * buffer size for m's L3 and `threads`; -1 when it failed or m has no L3. */
double ckb_machine_l3_read_now(const ckb_machine *m, int threads);
/* Whether bf16 is measured with vdpbf16ps at the ISA level in force. */
int ckb_machine_has_bf16_kernel(void);

#endif /* CKB_MACHINE_PROFILE_H */
