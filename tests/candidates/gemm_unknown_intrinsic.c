/* Calls an intrinsic that does not exist. */
#include <immintrin.h>
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    __m512 x = _mm512_magic_matmul_ps(A, B);
    _mm512_storeu_ps((float *)C, x);
}
