/* Attack (precision game): quantises A per row and B per column to int8
 * and multiplies in integers, a quarter of bf16's data. On inputs of one
 * magnitude each row's scale fits all its elements and the error stays
 * inside the tolerance; on inputs whose elements span a wide range of
 * magnitudes the small ones round to zero. */
#include <math.h>
#include <stdlib.h>

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    signed char *qa = malloc((size_t)M * K), *qb = malloc((size_t)K * N);
    float *sa = malloc(sizeof(float) * M), *sb = malloc(sizeof(float) * N);
    if (!qa || !qb || !sa || !sb)
        goto out;
    for (long i = 0; i < M; i++) {
        float m = 1e-30f;
        for (long k = 0; k < K; k++)
            m = fmaxf(m, fabsf(ckb_bf16_to_f32(A[i * K + k])));
        sa[i] = m / 127.0f;
        for (long k = 0; k < K; k++)
            qa[i * K + k] = (signed char)lrintf(ckb_bf16_to_f32(A[i * K + k]) / sa[i]);
    }
    for (long j = 0; j < N; j++) {
        float m = 1e-30f;
        for (long k = 0; k < K; k++)
            m = fmaxf(m, fabsf(ckb_bf16_to_f32(B[k * N + j])));
        sb[j] = m / 127.0f;
    }
    for (long k = 0; k < K; k++)
        for (long j = 0; j < N; j++)
            qb[k * N + j] = (signed char)lrintf(ckb_bf16_to_f32(B[k * N + j]) / sb[j]);
#pragma omp parallel for
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            int acc = 0;
            for (long k = 0; k < K; k++)
                acc += qa[i * K + k] * qb[k * N + j];
            C[i * N + j] = ckb_f32_to_bf16((float)acc * sa[i] * sb[j]);
        }
out:
    free(qa);
    free(qb);
    free(sa);
    free(sb);
}
