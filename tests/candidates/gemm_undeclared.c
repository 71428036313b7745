/* Uses a name it never declares: compile_error, kind "undeclared". */
void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    for (long i = 0; i < M * N; i++)
        C[i] = ckb_f32_to_bf16(ckb_bf16_to_f32(A[i % (M * K)]) * scale_factor);
    (void)B;
}
