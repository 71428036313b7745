/* Right on every call until the last one, the final check on fresh inputs:
 * a static counter knows the protocol (CKBT_RIGHT_CALLS calls before it:
 * seeds + 1 checks, then warm-up + timed calls of one timing run; 8 for
 * --seeds 3 --warmup 1 --iters 3 with the run never redone). One element
 * off there: wrong_result (final_check). */
#ifndef CKBT_RIGHT_CALLS
#define CKBT_RIGHT_CALLS 8
#endif

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    static int calls;
#pragma omp parallel for
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            float s = 0.0f;
            for (long k = 0; k < K; k++)
                s += ckb_bf16_to_f32(A[i * K + k]) * ckb_bf16_to_f32(B[k * N + j]);
            C[i * N + j] = ckb_f32_to_bf16(s);
        }
    if (++calls > CKBT_RIGHT_CALLS) {
        float v = ckb_bf16_to_f32(C[0]);
        C[0] = ckb_f32_to_bf16(2.0f * v + (v < 0.0f ? -1.0f : 1.0f));
    }
}
