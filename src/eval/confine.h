/*
 * confine.h — the compiler, confined. The compiler reads whatever a source
 * names (`#include "/etc/shadow"`, `.incbin`), so the whole of it runs in
 * namespaces of its own under a root that holds only the system's
 * toolchain, an empty /tmp and the compile folder's pieces (confine.c says
 * exactly what).
 */
#ifndef CKB_CONFINE_H
#define CKB_CONFINE_H

#include <stddef.h>

#include "core/proc.h"

/* Where the compiler's root puts the folders it may see. */
#define CKB_CONFINED_WORK "/ckbench/work"
#define CKB_CONFINED_INCLUDE "/ckbench/include"
#define CKB_CONFINED_KIT "/ckbench/expert-kit"

/* The limits of one compile (docs/SECURITY.md). A source can make the
 * compiler build something huge or spin (a 35-line initialiser of 2^27
 * elements took it past 12 GiB in 80 s), so every process of it is bounded
 * and so is what it writes. The margins come from measurement: compiling
 * every workload's expert (with the expert kit) and every candidate under
 * tests/candidates with the fixed flags, gcc 12.2, -march=native on an
 * AVX-512 Xeon, /usr/bin/time -v (wait4's ru_maxrss: the largest process
 * of the compile). The largest of each, all from 3p_MLA_Attention's
 * expert, is written next to its limit. */

/* The wall-clock limit of one compile. */
#define CKB_CONFINED_TIMEOUT_S 120
/* Address space (RLIMIT_AS) of each process: driver, cc1, as, collect2,
 * ld each get their own, inherited over fork and exec. Measured: peak RSS
 * 121 MiB; the compile needs between 150 and 200 MiB of address space
 * (it fails under `ulimit -v` 150 MiB, passes at 200 MiB): 2 GiB is ten
 * times that. */
#define CKB_CONFINED_MEM_BYTES (2ull << 30)
/* CPU seconds (RLIMIT_CPU) of each process, beside the wall clock: SIGXCPU
 * at this many, SIGKILL 5 s later. Measured: 1.3 s (user + system, the
 * whole compile): 30 s is over twenty times that. */
#define CKB_CONFINED_CPU_S 30
/* Everything the compile writes: its work folder (the source's copy,
 * dims.h, the object) and its temporaries (the assembler file, the
 * object file) share one tmpfs of this size, and no file may be larger
 * (RLIMIT_FSIZE). Measured: 205 KB of .s and .o, a 53 KB object: 256 MiB
 * is a thousand times that. */
#define CKB_CONFINED_DISK_BYTES (256ull << 20)
/* The compiler's messages (stdout and stderr) that are kept; past them the
 * compile is stopped. Measured: 555 bytes (the classified compile errors
 * of tests/candidates; the experts print nothing). */
#define CKB_CONFINED_OUTPUT_BYTES (1u << 20)
/* Processes and threads of the compile at once (RLIMIT_NPROC; counted in
 * the compile's own user namespace on Linux 5.14 and later). gcc runs at
 * most three at a time (the driver, collect2 and ld). */
#define CKB_CONFINED_PROCS 64

/* What one confined compile did. */
typedef struct {
    ckb_proc_result proc; /* the compiler's exit status, its messages (the first
                             CKB_CONFINED_OUTPUT_BYTES), wall seconds, timed_out */
    int output_limit;     /* 1: it wrote more than CKB_CONFINED_OUTPUT_BYTES and
                             was stopped there */
    double cpu_s;         /* user + system seconds of all its processes */
} ckb_confined_result;

/* Runs argv confined (argv[0]: the compiler's name, ckb_compiler() of
 * compile.h, $CKBENCH_CC or cc; its real file, found in PATH, runs and
 * replaces argv[0]), with the limits above, in the compile folder dir: its
 * include/ and, with expert_kit, expert-kit/ are what the compiler sees of
 * ckbench. inputs (NULL-terminated, relative to dir/work) are copied from
 * dir/work into the compile's tmpfs, where the compiler runs; output, when
 * the compiler succeeds, is copied back from there to dir/work. 0 when
 * the compiler ran (out filled; free out->proc), -1 when the confinement
 * or the compiler could not be set up, or the output not copied back
 * (why). */
int ckb_confined_cc(char **argv, const char *dir, int expert_kit, const char *const *inputs,
                    const char *output, ckb_confined_result *out, char *why, size_t n);

#endif /* CKB_CONFINE_H */
