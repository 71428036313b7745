/*
 * isa.c — the ISA ladder, the host's rung (from /proc/cpuinfo, which also
 * says what the kernel lets a process use) and the CKBENCH_ISA switch.
 */
#include "machine/isa.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/say.h"

static const char *const isa__names[CKB_ISA_COUNT] = {"portable", "avx2", "avx512", "avx512bf16",
                                                      "amx"};

/* The /proc/cpuinfo flags each level adds to the one below. */
static const char *const isa__needs[CKB_ISA_COUNT][6] = {
    [CKB_ISA_PORTABLE] = {NULL},
    [CKB_ISA_AVX2] = {"avx2", "fma", NULL},
    [CKB_ISA_AVX512] = {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512cd", NULL},
    [CKB_ISA_AVX512BF16] = {"avx512_bf16", NULL},
    [CKB_ISA_AMX] = {"amx_tile", "amx_bf16", NULL},
};

/* Features ranked beyond isa__needs: the lowest level at which the
 * compiler flags of ckb_isa_march enable them. */
static const struct {
    const char *name;
    ckb_isa level;
} isa__ranked[] = {
    {"avx512_vnni", CKB_ISA_AVX512}, {"avx_vnni", CKB_ISA_AVX512},
    {"avx512_fp16", CKB_ISA_AVX512BF16}, {"amx_int8", CKB_ISA_AMX},
};

const char *ckb_isa_name(ckb_isa level)
{
    return (unsigned)level < CKB_ISA_COUNT ? isa__names[level] : "?";
}

int ckb_isa_parse(const char *s, ckb_isa *out)
{
    for (int i = 0; s && i < CKB_ISA_COUNT; i++)
        if (strcmp(s, isa__names[i]) == 0) {
            *out = (ckb_isa)i;
            return 0;
        }
    return -1;
}

int ckb_isa_flags_have(const char *flags, const char *word)
{
    size_t w = strlen(word);
    for (const char *p = flags; (p = strstr(p, word)) != NULL; p += w) {
        int start = p == flags || p[-1] == ' ' || p[-1] == '\t';
        int end = p[w] == '\0' || p[w] == ' ' || p[w] == '\n' || p[w] == '\t';
        if (start && end)
            return 1;
    }
    return 0;
}

ckb_isa ckb_isa_of_flags(const char *flags)
{
    ckb_isa level = CKB_ISA_PORTABLE;
    for (int l = CKB_ISA_AVX2; flags && l < CKB_ISA_COUNT; l++) {
        for (int k = 0; isa__needs[l][k]; k++)
            if (!ckb_isa_flags_have(flags, isa__needs[l][k]))
                return level;
        level = (ckb_isa)l;
    }
    return level;
}

ckb_isa ckb_isa_host(void)
{
    static int host = -1;
    if (host >= 0)
        return (ckb_isa)host;
    ckb_isa level = CKB_ISA_PORTABLE;
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[8192];
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "flags", 5) == 0 && strchr(line, ':')) {
            level = ckb_isa_of_flags(strchr(line, ':') + 1);
            break;
        }
    if (f)
        fclose(f);
    host = (int)level;
    return level;
}

ckb_isa ckb_isa_level(void)
{
    static int warned;
    ckb_isa host = ckb_isa_host(), cap;
    const char *env = getenv("CKBENCH_ISA");
    if (!env || !*env)
        return host;
    if (ckb_isa_parse(env, &cap) != 0) {
        if (!warned++)
            ckb_say("ckbench: warning: CKBENCH_ISA='%s' is not one of portable, avx2, avx512, "
                    "avx512bf16, amx; ignored (unset it, or name the highest level to use)\n",
                    env);
        return host;
    }
    return cap < host ? cap : host;
}

int ckb_isa_feature_allowed(const char *feature, ckb_isa level)
{
    for (int l = 0; l < CKB_ISA_COUNT; l++)
        for (int k = 0; isa__needs[l][k]; k++)
            if (strcmp(feature, isa__needs[l][k]) == 0)
                return l <= (int)level;
    for (size_t i = 0; i < sizeof isa__ranked / sizeof *isa__ranked; i++)
        if (strcmp(feature, isa__ranked[i].name) == 0)
            return isa__ranked[i].level <= level || level >= ckb_isa_host();
    return level >= ckb_isa_host();
}

int ckb_isa_march(ckb_isa level, const char **flags)
{
    int n = 0;
    if (level >= ckb_isa_host()) {
        flags[n++] = "-march=native";
        return n;
    }
    switch (level) {
    case CKB_ISA_PORTABLE:
        /* SSE4.2, no AVX: what every x86-64 of the last decade runs */
        flags[n++] = "-march=x86-64-v2";
        break;
    case CKB_ISA_AVX2:
        flags[n++] = "-march=x86-64-v3";
        break;
    case CKB_ISA_AVX512:
    case CKB_ISA_AVX512BF16:
        /* native keeps the host's tuning and AVX-512 subsets; drop the rest */
        flags[n++] = "-march=native";
        if (level == CKB_ISA_AVX512) {
            flags[n++] = "-mno-avx512bf16";
            flags[n++] = "-mno-avx512fp16";
        }
        flags[n++] = "-mno-amx-tile";
        flags[n++] = "-mno-amx-bf16";
        flags[n++] = "-mno-amx-int8";
        break;
    default:
        flags[n++] = "-march=native";
        break;
    }
    return n;
}
