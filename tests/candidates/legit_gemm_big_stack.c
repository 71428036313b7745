/* Legitimate: a 1 MiB array on the (calling thread's) stack holding B in
 * f64, then a serial i-k-j product. */
#include <string.h>

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    double bd[K * N]; /* 256 * 512 * 8 = 1 MiB at the small size */
    double acc[N];
    for (long x = 0; x < K * N; x++)
        bd[x] = ckb_bf16_to_f32(B[x]);
    for (long i = 0; i < M; i++) {
        memset(acc, 0, sizeof acc);
        for (long k = 0; k < K; k++) {
            double a = ckb_bf16_to_f32(A[i * K + k]);
            for (long j = 0; j < N; j++)
                acc[j] += a * bd[k * N + j];
        }
        for (long j = 0; j < N; j++)
            C[i * N + j] = ckb_f32_to_bf16((float)acc[j]);
    }
}
