/* Attack: runs a shell (to read the oracle, kill the parent, ...). */
#include <stdlib.h>

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    C[0] = (ckb_bf16)system("cat /etc/passwd");
    (void)A, (void)B;
}
