/* Legitimate: B widened into a posix_memalign'd f32 panel, per-thread row
 * accumulators from aligned_alloc, everything freed before returning. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    float *bf = NULL;
    if (posix_memalign((void **)&bf, 64, (size_t)K * N * sizeof(float)) != 0)
        return;
    for (long x = 0; x < K * N; x++)
        bf[x] = ckb_bf16_to_f32(B[x]);
#pragma omp parallel
    {
        float *acc = aligned_alloc(64, (size_t)N * sizeof(float));
#pragma omp for schedule(dynamic, 8)
        for (long i = 0; i < M; i++) {
            memset(acc, 0, (size_t)N * sizeof(float));
            for (long k = 0; k < K; k++) {
                float a = ckb_bf16_to_f32(A[i * K + k]);
#pragma omp simd
                for (long j = 0; j < N; j++)
                    acc[j] += a * bf[k * N + j];
            }
            for (long j = 0; j < N; j++)
                C[i * N + j] = ckb_f32_to_bf16(acc[j]);
        }
        free(acc);
    }
    free(bf);
}
