/* Attack: 100 GB of scratch, used without checking. The address-space
 * limit makes malloc fail; the volatile pointer keeps the compiler from
 * eliding the allocation. */
#include <stdlib.h>
#include <string.h>

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    size_t n = (size_t)100 << 30;
    char *volatile p = malloc(n);
    memset(p, 1, n);
    C[0] = (ckb_bf16)p[n - 1];
    free(p);
    (void)A, (void)B;
}
