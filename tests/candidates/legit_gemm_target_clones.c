/* Legitimate 8p_GEMM: the inner loop built twice with target_clones (the
 * loader picks one through an IFUNC resolver when the object is loaded),
 * and a variable-length array and alloca for a row of scratch. */
#include <alloca.h>

__attribute__((target_clones("avx2", "default"))) static void row_gemm(
    const ckb_bf16 *A, const ckb_bf16 *B, float *acc, long i)
{
    for (long k = 0; k < K; k++) {
        float a = ckb_bf16_to_f32(A[i * K + k]);
        for (long j = 0; j < N; j++)
            acc[j] += a * ckb_bf16_to_f32(B[k * N + j]);
    }
}

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
#pragma omp parallel for
    for (long i = 0; i < M; i++) {
        float vla[N];
        float *acc = alloca(N * sizeof(float));
        for (long j = 0; j < N; j++)
            acc[j] = vla[j] = 0.0f;
        row_gemm(A, B, acc, i);
        for (long j = 0; j < N; j++)
            C[i * N + j] = ckb_f32_to_bf16(acc[j] + vla[j]);
    }
}
