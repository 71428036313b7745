/* Attack (statistics): right on the first calls, then lazy on every other
 * call, a quarter of the rows only. Every timed call is checked against the
 * baseline's output on the same fresh inputs, so the first lazy call is
 * caught, whatever the number of calls. */
static void gemm_rows(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C, long lo, long hi)
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
    static int calls;
    calls++;
    long rows = calls > 6 && calls % 2 == 0 ? M / 4 : M;
#pragma omp parallel for
    for (long i = 0; i < rows; i++)
        gemm_rows(A, B, C, i, i + 1);
}
