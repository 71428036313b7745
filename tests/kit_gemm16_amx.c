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

/* c[m][16 np] = a[m][k] @ b[k][16 np] through ckb_kit_amx_gemm_f32 (k in
 * passes of kc), b packed here into its 16-column pair panels. */
int ckbt_kit_amx_gemm_f32(const ckb_bf16 *a, const ckb_bf16 *b, int64_t m, int64_t np, int64_t k,
                          int64_t kc, float *c)
{
#if defined(__AVX512BF16__) && defined(__AVX512BW__) && defined(__AVX512VL__)
    const int64_t n = 16 * np;
    uint32_t *bp = ckb_kit_alloc64((size_t)(np * k / 2 * 16) * 4);
    if (!bp)
        return -1;
    for (int64_t q = 0; q < np; q++)
        for (int64_t p = 0; p < k / 2; p++)
            for (int64_t j = 0; j < 16; j++)
                bp[(q * (k / 2) + p) * 16 + j] = (uint32_t)b[2 * p * n + 16 * q + j] |
                                                 (uint32_t)b[(2 * p + 1) * n + 16 * q + j] << 16;
    ckb_kit_amx_on();
    ckb_kit_amx_gemm_f32(a, k, bp, k, kc, c, n, m, np);
    ckb_kit_amx_off();
    free(bp);
    return 2;
#else
    (void)a, (void)b, (void)m, (void)np, (void)k, (void)kc, (void)c;
    return -2;
#endif
}
