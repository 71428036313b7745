/* Attack: maps memory of its own (e.g. a file, or a fixed address over
 * the harness). */
#include <sys/mman.h>

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    C[0] = p == MAP_FAILED ? 0 : 1;
    (void)A, (void)B;
}
