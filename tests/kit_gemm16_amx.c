/* The resident driver on AMX, its tile intrinsics emulated in C
 * (tests/amx_emu.h; this host need not have AMX): the layouts, strides and
 * blocking of the tile path, not its speed. The emulation replaces the
 * intrinsics only if it comes before any other include of immintrin.h. */
#define __AMX_TILE__ 1
#define __AMX_BF16__ 1
#include "amx_emu.h"

#define CKB_KIT_GEMM16_UNIT 2
#define CKB_KIT_GEMM16_MR 6
#define CKB_KIT_GEMM16_NR 32
#define CKB_KIT_GEMM16_EPI kit16_case_epi
#define CKB_KIT_GEMM16_EPI_AMX kit16_case_epi_amx
#define KIT_GEMM16_FN ckbt_kit_gemm16_amx
#include "kit_gemm16_case.h"

long ckbt_kit_amx_products(void)
{
    return amx_emu_products;
}

/* The panel GEMM on the same emulated tiles. */
#define KIT_PANEL_FN ckbt_kit_panel_amx
#include "kit_panel_case.h"
