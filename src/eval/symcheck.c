#include "eval/symcheck.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fsutil.h"

static const char *const symcheck__exact[] = {
    /* memory */
    "memcpy", "memmove", "memset", "memcmp", "malloc", "calloc", "realloc", "free",
    "aligned_alloc", "posix_memalign", "__memcpy_chk", "__memset_chk", "__memmove_chk",
    "qsort", "bsearch", "abs", "labs", "llabs", "strlen",
    /* toolchain glue every shared object carries */
    "__stack_chk_fail", "__cxa_finalize", "__gmon_start__", "_ITM_registerTMCloneTable",
    "_ITM_deregisterTMCloneTable", "__errno_location", "__assert_fail",
    /* OpenMP queries (setting the thread count is not allowed: the budget is ours) */
    "omp_get_thread_num", "omp_get_num_threads", "omp_get_max_threads", "omp_in_parallel",
    "omp_get_num_procs", "omp_get_level", "omp_get_team_size", "omp_get_ancestor_thread_num",
    "omp_in_final", "omp_get_active_level", "omp_get_thread_limit",
    /* OpenMP locks, plain and nested */
    "omp_init_lock", "omp_destroy_lock", "omp_set_lock", "omp_unset_lock", "omp_test_lock",
    "omp_init_nest_lock", "omp_destroy_nest_lock", "omp_set_nest_lock", "omp_unset_nest_lock",
    "omp_test_nest_lock",
    /* _Thread_local data in a shared object */
    "__tls_get_addr",
};

/* libm, float and double variants: the name, and the name with 'f' suffix. */
static const char *const symcheck__math[] = {
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "pow", "sqrt", "cbrt", "sin",
    "cos", "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan", "atan2", "asinh", "acosh",
    "atanh", "erf", "erfc", "fabs", "fmax", "fmin", "floor", "ceil", "round", "lround",
    "llround", "rint", "lrint", "llrint", "nearbyint", "trunc", "fmod", "remainder", "ldexp",
    "frexp", "scalbn", "hypot", "fma", "copysign", "nan", "modf", "ilogb", "logb", "fdim",
    "tgamma", "lgamma",
    /* gcc turns sin(x) and cos(x) of one x into one sincos call */
    "sincos",
};

/* libgomp's legacy entry points that return to the caller with the team
 * still running (the caller is meant to call the matching _end): a kernel
 * could return with its threads still at work. Compilers since GCC 4.9
 * never emit them. */
static const char *const symcheck__gomp_denied[] = {
    "GOMP_parallel_start", "GOMP_parallel_end", "GOMP_parallel_sections_start",
    "GOMP_parallel_loop_static_start", "GOMP_parallel_loop_dynamic_start",
    "GOMP_parallel_loop_guided_start", "GOMP_parallel_loop_runtime_start",
};

int ckb_symcheck_allowed(const char *name)
{
    for (size_t i = 0; i < sizeof symcheck__gomp_denied / sizeof *symcheck__gomp_denied; i++)
        if (strcmp(name, symcheck__gomp_denied[i]) == 0)
            return 0;
    for (size_t i = 0; i < sizeof symcheck__exact / sizeof *symcheck__exact; i++)
        if (strcmp(name, symcheck__exact[i]) == 0)
            return 1;
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof symcheck__math / sizeof *symcheck__math; i++) {
        size_t m = strlen(symcheck__math[i]);
        if (strncmp(name, symcheck__math[i], m) == 0 &&
            (n == m || (n == m + 1 && name[m] == 'f')))
            return 1;
    }
    /* The OpenMP runtime's entry points generated for pragmas, and libmvec's
     * vector math (e.g. _ZGVeN16v_expf) generated for `omp simd` loops. */
    if (strncmp(name, "GOMP_", 5) == 0 || strncmp(name, "_ZGV", 4) == 0)
        return 1;
    /* C11 _Atomic operations too wide to be lock-free go to libatomic. */
    if (strncmp(name, "__atomic_", 9) == 0)
        return 1;
    return 0;
}

int ckb_symcheck_file(const char *so_path, ckb_symcheck *out)
{
    memset(out, 0, sizeof *out);
    size_t len = 0;
    unsigned char *img = (unsigned char *)ckb_read_file(so_path, &len);
    int rc = -1;
    if (!img) {
        snprintf(out->error, sizeof out->error, "cannot read %s", so_path);
        return -1;
    }
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
    if (len < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
        eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_type != ET_DYN) {
        snprintf(out->error, sizeof out->error, "not an ELF64 shared object");
        goto done;
    }
    if (eh->e_shoff == 0 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
        eh->e_shoff + (size_t)eh->e_shnum * sizeof(Elf64_Shdr) > len) {
        snprintf(out->error, sizeof out->error, "malformed section table");
        goto done;
    }
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(img + eh->e_shoff);
    const Elf64_Shdr *dynsym = NULL;
    for (int i = 0; i < eh->e_shnum; i++)
        if (sh[i].sh_type == SHT_DYNSYM)
            dynsym = &sh[i];
    if (!dynsym || dynsym->sh_link >= eh->e_shnum) {
        snprintf(out->error, sizeof out->error, "no dynamic symbol table");
        goto done;
    }
    const Elf64_Shdr *strtab = &sh[dynsym->sh_link];
    if (dynsym->sh_offset + dynsym->sh_size > len || strtab->sh_offset + strtab->sh_size > len ||
        dynsym->sh_entsize != sizeof(Elf64_Sym)) {
        snprintf(out->error, sizeof out->error, "malformed dynamic symbol table");
        goto done;
    }
    const Elf64_Sym *sym = (const Elf64_Sym *)(img + dynsym->sh_offset);
    const char *str = (const char *)(img + strtab->sh_offset);
    size_t nsym = dynsym->sh_size / sizeof(Elf64_Sym);
    for (size_t i = 1; i < nsym; i++) {
        if (sym[i].st_name >= strtab->sh_size)
            continue;
        const char *name = str + sym[i].st_name;
        if (!*name)
            continue;
        if (sym[i].st_shndx != SHN_UNDEF) {
            /* target_clones and ifunc make workload an IFUNC symbol. */
            int type = ELF64_ST_TYPE(sym[i].st_info);
            if (strcmp(name, "workload") == 0 && (type == STT_FUNC || type == STT_GNU_IFUNC))
                out->has_workload = 1;
            continue;
        }
        /* Strip a version suffix ("memcpy@GLIBC_2.14" never appears in
         * dynsym names, but be strict about what we compare). */
        if (!ckb_symcheck_allowed(name)) {
            out->nforbidden++;
            size_t used = strlen(out->forbidden);
            if (used + strlen(name) + 3 < sizeof out->forbidden)
                snprintf(out->forbidden + used, sizeof out->forbidden - used, "%s%s",
                         used ? ", " : "", name);
        }
    }
    out->ok = out->has_workload && out->nforbidden == 0;
    rc = 0;
done:
    free(img);
    return rc;
}
