/*
 * isa.h — the ISA level ckbench targets: the highest of a fixed ladder of
 * x86-64 levels that the CPU supports, lowered by the environment switch
 * CKBENCH_ISA=portable|avx2|avx512|avx512bf16|amx. Everything that depends on
 * the ISA asks here (the machine probe, the candidates' -march, the docs
 * target, the profile's cache key), so a CI host with AMX can act as one
 * with AVX-512 BF16 only, AVX-512 only, AVX2 only, or none of them.
 */
#ifndef CKB_MACHINE_ISA_H
#define CKB_MACHINE_ISA_H

typedef enum {
    CKB_ISA_PORTABLE,   /* x86-64 baseline, plain C */
    CKB_ISA_AVX2,       /* AVX2 + FMA (x86-64-v3) */
    CKB_ISA_AVX512,     /* AVX-512 F/BW/VL (x86-64-v4) */
    CKB_ISA_AVX512BF16, /* + AVX512_BF16 (vdpbf16ps) */
    CKB_ISA_AMX,        /* + AMX tiles with bf16 (tdpbf16ps) */
    CKB_ISA_COUNT
} ckb_isa;

/* "portable", "avx2", "avx512", "avx512bf16", "amx"; "?" out of range. */
const char *ckb_isa_name(ckb_isa level);

/* 0 and *out set when s names a level (as ckb_isa_name spells it); -1 otherwise. */
int ckb_isa_parse(const char *s, ckb_isa *out);

/* The highest level a space-separated /proc/cpuinfo flag list supports
 * (each level needs every level below it). */
ckb_isa ckb_isa_of_flags(const char *flags);

/* Whether the space-separated /proc/cpuinfo list `flags` holds `word` as a
 * whole word ("avx512f" is not "avx512fp16"). */
int ckb_isa_flags_have(const char *flags, const char *word);

/* The highest level this CPU supports, whatever CKBENCH_ISA says (read
 * once from /proc/cpuinfo). */
ckb_isa ckb_isa_host(void);

/* The level in force: the host's, lowered to CKBENCH_ISA when that is set
 * (read at every call, so a test may change it). A value that names no
 * level is ignored with a warning, said once (core/say.h). */
ckb_isa ckb_isa_level(void);

/* Whether a /proc/cpuinfo feature name ("avx512_bf16", "amx_tile", "fma")
 * is available at `level`; names ckbench does not rank are kept only when
 * nothing is hidden (level >= the host's). */
int ckb_isa_feature_allowed(const char *feature, ckb_isa level);

/* The -march flags that make the compiler target `level` on this host:
 * -march=native when nothing is hidden, else a level's x86-64-vN, or native
 * minus what lies above. Fills flags[0..n) with static strings, returns n
 * (at most CKB_ISA_MAX_FLAGS). */
enum { CKB_ISA_MAX_FLAGS = 8 };
int ckb_isa_march(ckb_isa level, const char **flags);

#endif /* CKB_MACHINE_ISA_H */
