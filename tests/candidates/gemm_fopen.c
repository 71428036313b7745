/* Reads a file: a forbidden import. */
#include <stdio.h>
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    FILE *f = fopen("/etc/hostname", "r");
    if (f)
        fclose(f);
    (void)A, (void)B, (void)C;
}
