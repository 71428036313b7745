/* Attack, on 8p_GEMM: a compile that spins. Three nested .rept of 1000
 * make the assembler read 10^9 empty lines: minutes of CPU in a few MB.
 * Must end as compile_error (cpu_limit), within the CPU-time limit. */
__asm__(".rept 1000\n.rept 1000\n.rept 1000\n\n.endr\n.endr\n.endr");

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    for (long i = 0; i < M * N; i++)
        C[i] = ckb_f32_to_bf16(ckb_bf16_to_f32(A[0]) * ckb_bf16_to_f32(B[0]));
}
