/* Attack, on 8p_GEMM: a host file by absolute path; the compiler's error
 * would quote its first tokens, and the message goes back to the model. */
#include "/etc/passwd"
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C) { (void)A, (void)B, (void)C; }
