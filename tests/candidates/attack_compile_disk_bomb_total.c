/* Attack, on 8p_GEMM: a compile that fills the disk with files that are
 * each under the limit. A 200 MiB object file, then the linker's 200 MiB
 * shared object: only a bound on all the compile's files together (not
 * RLIMIT_FSIZE, which is per file) stops it. Must end as compile_error
 * (disk_limit). */
__asm__(".pushsection .data\n.globl ckb_fill\nckb_fill:\n.fill 0xc800000, 1, 0x5a\n"
        ".popsection");

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    for (long i = 0; i < M * N; i++)
        C[i] = ckb_f32_to_bf16(ckb_bf16_to_f32(A[0]) * ckb_bf16_to_f32(B[0]));
}
