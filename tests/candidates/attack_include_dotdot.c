/* Attack, on 8p_GEMM: a host file by a path relative to the source, with
 * enough ../ to reach / from wherever the compile runs. */
#include "../../../../../../../../../../../../../../../etc/passwd"
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C) { (void)A, (void)B, (void)C; }
