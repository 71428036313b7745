/* Attack, on 8p_GEMM: an expert's shared code is not a candidate's to include. */
#include "ckb_kit_gemm.h"
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C) { (void)A, (void)B, (void)C; }
