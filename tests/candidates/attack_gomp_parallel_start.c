/* Attack: a thread that outlives the call. libgomp's legacy entry point
 * starts a team and returns to the caller, who is meant to call
 * GOMP_parallel_end; this kernel returns instead, and the other thread
 * goes on writing the output after the harness has copied it. */
extern void GOMP_parallel_start(void (*fn)(void *), void *data, unsigned nthreads);

static void late_writer(void *p)
{
    ckb_bf16 *C = p;
    for (volatile long spin = 0; spin < 100000000; spin++) {
    }
    for (long x = 0; x < M * N; x++)
        C[x] = 0;
}

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            float s = 0.0f;
            for (long k = 0; k < K; k++)
                s += ckb_bf16_to_f32(A[i * K + k]) * ckb_bf16_to_f32(B[k * N + j]);
            C[i * N + j] = ckb_f32_to_bf16(s);
        }
    GOMP_parallel_start(late_writer, C, 2);
}
