/* Legitimate: B transposed to f32 once, then a collapse(2) loop over
 * (i, j) with an `omp simd` dot-product reduction. */
#include <stdlib.h>

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    float *bt = malloc((size_t)K * N * sizeof(float));
    float *af = malloc((size_t)M * K * sizeof(float));
    if (!bt || !af)
        goto done;
#pragma omp parallel for collapse(2)
    for (long k = 0; k < K; k++)
        for (long j = 0; j < N; j++)
            bt[j * K + k] = ckb_bf16_to_f32(B[k * N + j]);
#pragma omp parallel for
    for (long x = 0; x < M * K; x++)
        af[x] = ckb_bf16_to_f32(A[x]);
#pragma omp parallel for collapse(2) schedule(static)
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            const float *a = af + i * K, *b = bt + j * K;
            float s = 0.0f;
#pragma omp simd reduction(+ : s)
            for (long k = 0; k < K; k++)
                s += a[k] * b[k];
            C[i * N + j] = ckb_f32_to_bf16(s);
        }
done:
    free(bt);
    free(af);
}
