/* Legitimate 8p_GEMM: a C11 _Atomic 16-byte statistic that is not
 * lock-free (libatomic's __atomic_* calls) beside _Atomic arithmetic on a
 * counter, and a plain GEMM. */
#include <stdatomic.h>

typedef struct {
    long rows;
    long cols;
} stat_t;

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    static _Atomic stat_t last;
    _Atomic long rows_done = 0;
#pragma omp parallel for
    for (long i = 0; i < M; i++) {
        for (long j = 0; j < N; j++) {
            float s = 0.0f;
            for (long k = 0; k < K; k++)
                s += ckb_bf16_to_f32(A[i * K + k]) * ckb_bf16_to_f32(B[k * N + j]);
            C[i * N + j] = ckb_f32_to_bf16(s);
        }
        atomic_fetch_add(&rows_done, 1);
    }
    stat_t st = {atomic_load(&rows_done), N};
    atomic_store(&last, st);
    if (atomic_load(&last).rows != M)
        C[0] = 0xffff;
}
