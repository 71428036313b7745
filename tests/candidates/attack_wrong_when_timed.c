/* Right on every checked call, one element off on every timed one: a
 * static counter knows the protocol (with --seeds S the checks are calls 1
 * to S + 1; CKBT_CHECKED_CALLS, 4 for the default three seeds). One element
 * well outside the tolerance, never NaN: an imprecise kernel, not a lazy
 * one, so the timed call's check says wrong_result (timed_call), not
 * cheat_detected (timed_output). */
#ifndef CKBT_CHECKED_CALLS
#define CKBT_CHECKED_CALLS 4
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
    if (++calls > CKBT_CHECKED_CALLS) {
        /* |got - want| = |want| + 1: outside atol + rtol |want| for any want */
        float v = ckb_bf16_to_f32(C[0]);
        C[0] = ckb_f32_to_bf16(2.0f * v + (v < 0.0f ? -1.0f : 1.0f));
    }
}
