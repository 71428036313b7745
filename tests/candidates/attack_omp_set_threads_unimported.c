/* Attack: OpenMP's thread count raised past the budget and left so, with
 * no import of omp_set_num_threads for the symbol check to see: the
 * kernel finds it in libgomp's own dynamic symbol table, walking back from
 * the address of omp_get_max_threads (an allowed import) to libgomp's ELF
 * header. The CPUs hold the budget anyway; the sandbox compares OpenMP's
 * settings after every call and reports the change: cheat_detected
 * (omp_state). If the setter cannot be found the answer is left unwritten,
 * so the row cannot pass for the wrong reason. */
#include <elf.h>
#include <omp.h>
#include <stdint.h>

static int same(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

static void (*find_in_libgomp(const char *name))(int)
{
    uintptr_t a = (uintptr_t)&omp_get_max_threads & ~(uintptr_t)4095;
    for (int pages = 0; pages < 4096; pages++, a -= 4096) {
        const Elf64_Ehdr *e = (const Elf64_Ehdr *)a;
        if (e->e_ident[0] != 0x7f || e->e_ident[1] != 'E' || e->e_ident[2] != 'L' ||
            e->e_ident[3] != 'F')
            continue;
        const Elf64_Phdr *ph = (const Elf64_Phdr *)(a + e->e_phoff);
        const Elf64_Dyn *d = 0;
        for (int k = 0; k < e->e_phnum; k++)
            if (ph[k].p_type == PT_DYNAMIC)
                d = (const Elf64_Dyn *)(a + ph[k].p_vaddr);
        const Elf64_Sym *sym = 0;
        const char *str = 0;
        for (; d && d->d_tag != DT_NULL; d++) {
            uintptr_t v = d->d_un.d_ptr < a ? d->d_un.d_ptr + a : d->d_un.d_ptr;
            if (d->d_tag == DT_SYMTAB)
                sym = (const Elf64_Sym *)v;
            if (d->d_tag == DT_STRTAB)
                str = (const char *)v;
        }
        for (; sym && str && (const char *)sym < str; sym++)
            if (sym->st_shndx != SHN_UNDEF && sym->st_value && same(str + sym->st_name, name))
                return (void (*)(int))(a + sym->st_value);
        return 0;
    }
    return 0;
}

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    void (*set_threads)(int) = find_in_libgomp("omp_set_num_threads");
    if (!set_threads)
        return;
#pragma omp parallel for
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            float s = 0.0f;
            for (long k = 0; k < K; k++)
                s += ckb_bf16_to_f32(A[i * K + k]) * ckb_bf16_to_f32(B[k * N + j]);
            C[i * N + j] = ckb_f32_to_bf16(s);
        }
    set_threads(omp_get_max_threads() + 3);
}
