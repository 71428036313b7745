/* Attack, on 8p_GEMM: a compile bomb. The preprocessor doubles the
 * initialiser 27 times, to 2^27 elements; without a memory limit cc1 goes
 * past 12 GiB within 80 s and the host's OOM killer chooses what dies.
 * Must end as compile_error (memory_limit), the host untouched. */
#define A1 0, 0
#define A2 A1, A1
#define A3 A2, A2
#define A4 A3, A3
#define A5 A4, A4
#define A6 A5, A5
#define A7 A6, A6
#define A8 A7, A7
#define A9 A8, A8
#define A10 A9, A9
#define A11 A10, A10
#define A12 A11, A11
#define A13 A12, A12
#define A14 A13, A13
#define A15 A14, A14
#define A16 A15, A15
#define A17 A16, A16
#define A18 A17, A17
#define A19 A18, A18
#define A20 A19, A19
#define A21 A20, A20
#define A22 A21, A21
#define A23 A22, A22
#define A24 A23, A23
#define A25 A24, A24
#define A26 A25, A25
#define A27 A26, A26

static const float big[] = {A27};

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    for (long i = 0; i < M * N; i++)
        C[i] = ckb_f32_to_bf16(big[i] + ckb_bf16_to_f32(A[0]) * ckb_bf16_to_f32(B[0]));
}
