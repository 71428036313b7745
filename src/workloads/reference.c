#include "workloads/reference.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

float *ckb_ref_matmul(const ckb_bf16 *A, const ckb_bf16 *B, int64_t M, int64_t K, int64_t N,
                      int b_transposed)
{
    float *Z = malloc((size_t)(M * N > 0 ? M * N : 1) * sizeof *Z);
    if (!Z)
        ckb_fatal("out of memory in a reference matmul");
#pragma omp parallel for
    for (int64_t i = 0; i < M; i++) {
        float *z = Z + i * N;
        memset(z, 0, (size_t)N * sizeof *z);
        for (int64_t k = 0; k < K; k++) {
            const float a = ckb_bf16_to_f32(A[i * K + k]);
            for (int64_t j = 0; j < N; j++)
                z[j] += a * ckb_bf16_to_f32(b_transposed ? B[j * K + k] : B[k * N + j]);
        }
    }
    return Z;
}
