/* The kit's GEMM driver on the bf16 dot unit (f32 FMA where the target has
 * no AVX-512 BF16). */
#define CKB_KIT_GEMM_UNIT 0
#define KIT_GEMM_FN ckbt_kit_gemm_dot
#include "kit_gemm.h"
#include "kit_gemm_case.h"
