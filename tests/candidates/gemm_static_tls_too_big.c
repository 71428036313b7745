/* A kernel that compiles and links but cannot be loaded: 4 MiB of
 * initial-exec thread-local storage, which a dlopen'ed object must find in
 * the static TLS block the process reserved at start (a few kilobytes).
 * dlopen refuses it: compile_error (load). */
static __thread __attribute__((tls_model("initial-exec"))) float scratch[1 << 20];

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            scratch[j] = 0.0f;
            for (long k = 0; k < K; k++)
                scratch[j] += ckb_bf16_to_f32(A[i * K + k]) * ckb_bf16_to_f32(B[k * N + j]);
            C[i * N + j] = ckb_f32_to_bf16(scratch[j]);
        }
}
