/* Attack: reads the environment (e.g. to find the harness's paths or a
 * seed): getenv is not on the import allow list. */
#include <stdlib.h>

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    const char *s = getenv("CKB_SEED");
    C[0] = s ? (ckb_bf16)s[0] : 0;
    (void)A, (void)B;
}
