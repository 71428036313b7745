/* Returns zeros: a wrong result. */
#include <string.h>
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    memset(C, 0, sizeof(ckb_bf16) * M * N);
    (void)A, (void)B;
}
