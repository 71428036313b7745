/* The kit's GEMM driver on the f32 FMA unit. */
#define CKB_GEMM_UNIT 1
#define KIT_GEMM_FN ckbt_kit_gemm_fma
#include "kit_gemm.h"
#include "kit_gemm_case.h"
