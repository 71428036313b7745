/* Declares a helper it never defines: the object cannot be linked, or loaded,
 * so the verdict is compile_error (kind "link"), never a crash at load. */
float ckb_missing_helper(float x);

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    for (long i = 0; i < M * N; i++)
        C[i] = ckb_f32_to_bf16(ckb_missing_helper(ckb_bf16_to_f32(A[i % (M * K)])));
    (void)B;
}
