/* Legitimate 8p_GEMM: row blocks as OpenMP tasks with taskwait, a lock
 * around a shared counter of finished blocks, omp_in_final in the task. */
#include <omp.h>

static void block(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C, long lo, long hi)
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
    omp_lock_t lock;
    omp_init_lock(&lock);
    long done = 0;
#pragma omp parallel
#pragma omp single
    {
        for (long lo = 0; lo < M; lo += 16) {
#pragma omp task firstprivate(lo) shared(done, lock)
            {
                long hi = lo + 16 < M ? lo + 16 : M;
                if (!omp_in_final())
                    block(A, B, C, lo, hi);
                omp_set_lock(&lock);
                done += hi - lo;
                omp_unset_lock(&lock);
            }
        }
#pragma omp taskwait
    }
    omp_destroy_lock(&lock);
    if (done != M)
        C[0] = 0xffff;
}
