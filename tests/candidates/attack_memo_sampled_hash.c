/* Attack: remembers answers by a cheap fingerprint of the inputs (their
 * first 32 elements and their addresses), so a repeated input set is a
 * copy instead of a GEMM. Correct whenever the inputs really repeat; the
 * timing loop swaps about half the neighbouring pairs of every input, so
 * its fingerprint never repeats there and it computes every call. */
#include <stdlib.h>
#include <string.h>

enum { SLOTS = 8 };
static unsigned long long keys[SLOTS];
static ckb_bf16 *answers[SLOTS];

static unsigned long long fingerprint(const ckb_bf16 *A, const ckb_bf16 *B)
{
    unsigned long long h = (unsigned long long)(size_t)A * 31 + (size_t)B;
    for (int i = 0; i < 32; i++)
        h = h * 1000003ull + A[i] * 7919ull + B[i];
    return h | 1;
}

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    unsigned long long h = fingerprint(A, B);
    for (int s = 0; s < SLOTS; s++)
        if (keys[s] == h) {
            memcpy(C, answers[s], sizeof(ckb_bf16) * M * N);
            return;
        }
#pragma omp parallel for
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            float acc = 0.0f;
            for (long k = 0; k < K; k++)
                acc += ckb_bf16_to_f32(A[i * K + k]) * ckb_bf16_to_f32(B[k * N + j]);
            C[i * N + j] = ckb_f32_to_bf16(acc);
        }
    for (int s = 0; s < SLOTS; s++)
        if (!keys[s]) {
            answers[s] = malloc(sizeof(ckb_bf16) * M * N);
            if (answers[s]) {
                memcpy(answers[s], C, sizeof(ckb_bf16) * M * N);
                keys[s] = h;
            }
            break;
        }
}
