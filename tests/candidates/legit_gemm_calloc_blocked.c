/* Legitimate: cache-blocked over k and j with a calloc'd f32 result,
 * tiles of B copied with memcpy before widening. */
#include <stdlib.h>
#include <string.h>

#define BK 64
#define BJ 128

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    float *cf = calloc((size_t)M * N, sizeof(float));
    if (!cf)
        return;
#pragma omp parallel
    {
        ckb_bf16 tile[BK][BJ];
        for (long k0 = 0; k0 < K; k0 += BK) {
            long kb = K - k0 < BK ? K - k0 : BK;
            for (long j0 = 0; j0 < N; j0 += BJ) {
                long jb = N - j0 < BJ ? N - j0 : BJ;
                for (long k = 0; k < kb; k++)
                    memcpy(tile[k], B + (k0 + k) * N + j0, (size_t)jb * sizeof(ckb_bf16));
#pragma omp for schedule(static)
                for (long i = 0; i < M; i++)
                    for (long k = 0; k < kb; k++) {
                        float a = ckb_bf16_to_f32(A[i * K + k0 + k]);
                        for (long j = 0; j < jb; j++)
                            cf[i * N + j0 + j] += a * ckb_bf16_to_f32(tile[k][j]);
                    }
            }
        }
    }
    for (long x = 0; x < M * N; x++)
        C[x] = ckb_f32_to_bf16(cf[x]);
    free(cf);
}
