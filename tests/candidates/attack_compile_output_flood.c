/* Attack, on 8p_GEMM: a compile that floods its messages. One #pragma
 * message, doubled 16 times by the preprocessor, prints 65536 notes, each
 * with its chain of macro expansions: tens of MB. Must end as
 * compile_error (output_limit), stopped at the limit, not drained. */
#define P0 _Pragma("message \"ckbench: the compiler's messages are bounded, too\"")
#define P1 P0 P0
#define P2 P1 P1
#define P3 P2 P2
#define P4 P3 P3
#define P5 P4 P4
#define P6 P5 P5
#define P7 P6 P6
#define P8 P7 P7
#define P9 P8 P8
#define P10 P9 P9
#define P11 P10 P10
#define P12 P11 P11
#define P13 P12 P12
#define P14 P13 P13
#define P15 P14 P14
#define P16 P15 P15

P16

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    for (long i = 0; i < M * N; i++)
        C[i] = ckb_f32_to_bf16(ckb_bf16_to_f32(A[0]) * ckb_bf16_to_f32(B[0]));
}
