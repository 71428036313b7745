/* The kit's GEMM driver on the bf16 dot with an odd tile (5 x 48: a panel
 * of three zmm, rows that do not fill the 8-row sliver). */
#define CKB_KIT_GEMM_UNIT 0
#define CKB_KIT_GEMM8_MR 5
#define CKB_KIT_GEMM8_NR 48
#define KIT_GEMM_FN ckbt_kit_gemm_dot_odd
#include "kit_gemm.h"
#include "kit_gemm_case.h"
