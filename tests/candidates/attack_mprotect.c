/* Attack: makes the harness's code writable to detour its timer (GOT or
 * inline patching). */
#include <stdint.h>
#include <sys/mman.h>

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    uintptr_t page = (uintptr_t)&workload & ~(uintptr_t)4095;
    mprotect((void *)page, 4096, PROT_READ | PROT_WRITE | PROT_EXEC);
    C[0] = 0;
    (void)A, (void)B;
}
