/* Attack, on 8p_GEMM: a compile that fills the disk. One data directive
 * asks the assembler for 512 MiB of non-zero bytes: an object file past
 * the compile's disk limit (a huge initialiser of distinct values does
 * the same through a GB-sized assembler file, slowly). Must end as
 * compile_error (disk_limit). */
__asm__(".pushsection .data\n.globl ckb_fill\nckb_fill:\n.fill 0x20000000, 1, 0x5a\n"
        ".popsection");

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    for (long i = 0; i < M * N; i++)
        C[i] = ckb_f32_to_bf16(ckb_bf16_to_f32(A[0]) * ckb_bf16_to_f32(B[0]));
}
