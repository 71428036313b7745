/* Attack (statistics): keeps its operands in half precision unless they
 * look like a wide-range set (a large first element), which used to be one
 * set of four. Every set is wide now, by a power of two drawn per set, in
 * either direction: half precision overflows or flushes on all of them. */
#include <math.h>
static void gemm_rows(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C, long lo, long hi)
{
    for (long i = lo; i < hi; i++)
        for (long j = 0; j < N; j++) {
            float s = 0.0f;
            for (long k = 0; k < K; k++)
                s += ckb_bf16_to_f32(A[i * K + k]) * ckb_bf16_to_f32(B[k * N + j]);
            C[i * N + j] = ckb_f32_to_bf16(s);
        }
}

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    float a0 = fabsf(ckb_bf16_to_f32(A[0])), b0 = fabsf(ckb_bf16_to_f32(B[0]));
    if (a0 > 1e3f || b0 > 1e3f || a0 < 1e-3f || b0 < 1e-3f) {
        gemm_rows(A, B, C, 0, M);
        return;
    }
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            _Float16 s = 0;
            for (long k = 0; k < K; k++)
                s += (_Float16)ckb_bf16_to_f32(A[i * K + k]) * (_Float16)ckb_bf16_to_f32(B[k * N + j]);
            C[i * N + j] = ckb_f32_to_bf16((float)s);
        }
}
