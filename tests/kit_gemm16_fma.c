/* The resident driver on f32 FMA (11p's MMA=1), its 6 x 64 tile. */
#define CKB_KIT_GEMM16_UNIT 1
#define CKB_KIT_GEMM16_MR 6
#define CKB_KIT_GEMM16_NR 64
#define CKB_KIT_GEMM16_EPI kit16_case_epi
#define CKB_KIT_GEMM16_EPI_AMX kit16_case_epi_amx
#define KIT_GEMM16_FN ckbt_kit_gemm16_fma
#include "kit_gemm16_case.h"
