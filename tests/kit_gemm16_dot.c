/* The resident driver on vdpbf16ps, an odd tile (5 x 48). */
#define CKB_KIT_GEMM16_UNIT 0
#define CKB_KIT_GEMM16_MR 5
#define CKB_KIT_GEMM16_NR 48
#define CKB_KIT_GEMM16_EPI kit16_case_epi
#define CKB_KIT_GEMM16_EPI_AMX kit16_case_epi_amx
#define KIT_GEMM16_FN ckbt_kit_gemm16_dot
#include "kit_gemm16_case.h"

/* The panel GEMM on vdpbf16ps. */
#define CKB_KIT_PANEL_UNIT 0
#define KIT_PANEL_FN ckbt_kit_panel_dot
#include "kit_panel_case.h"
