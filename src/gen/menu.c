/* The beam search's static menu of optimizations per workload category. */
#include <string.h>

#include "gen/menu.h"

typedef struct {
    const char *tag; /* NULL: every workload */
    const char *item;
} menu__entry;

static const menu__entry menu__entries[] = {
    {NULL, "split the outer loops across the thread budget with OpenMP (static schedule, "
           "balanced chunks, one parallel region)"},
    {NULL, "vectorise the innermost loop with AVX-512 intrinsics (16 f32 lanes), masked "
           "loads/stores for the tail"},
    {NULL, "reorder the loops so the innermost one walks contiguous memory"},
    {NULL, "unroll the hot loop and keep several independent accumulators in registers"},
    {NULL, "convert bf16 to f32 with shifts on whole vectors (_mm512_cvtepu16_epi32 + "
           "_mm512_slli_epi32) instead of per element"},
    {NULL, "software-prefetch the next block of the streamed operand"},
    {NULL, "fuse the passes over the data into one, so each element is read once"},
    {"matmul", "tile the matmul into cache blocks (MC x KC of A in L2, KC x NC of B in L3)"},
    {"matmul", "register-block the micro-kernel (e.g. 6 rows x 32 columns of f32 "
               "accumulators in zmm registers)"},
    {"matmul", "pack B (and A) into the micro-kernel's layout, bf16 pairs interleaved (VNNI "
               "layout) for _mm512_dpbf16_ps"},
    {"matmul", "use the AVX512-BF16 dot product _mm512_dpbf16_ps on packed bf16 pairs"},
    {"matmul", "fuse the epilogue (bias, activation, scaling, rounding to bf16) into the "
               "micro-kernel's store of the accumulator tile"},
    {"matmul", "split the threads over blocks of N (or M) so each thread owns whole output "
               "tiles"},
    {"attention", "online softmax: one pass over K/V blocks with a running max and sum "
                  "(flash attention)"},
    {"attention", "block the queries so a Q block and a K/V block stay in L1/L2"},
    {"attention", "compute Q K^T and P V with the bf16 dot product on packed operands"},
    {"attention", "skip fully masked blocks (causal or sparse masks) instead of masking "
                  "them"},
    {"attention", "parallelise over (batch, head, query block) with OpenMP collapse"},
    {"paged", "gather a sequence's KV pages once into a contiguous buffer per thread"},
    {"conv", "express the convolution as an implicit GEMM over output pixels x output "
             "channels"},
    {"conv", "repack the weights to [K/16][C][R][S][16] so the output channels are the "
             "vector lanes"},
    {"conv", "block over output rows and channels so the input window stays in cache"},
    {"norm", "compute the row statistics (sum and sum of squares, or Welford) in one "
             "vectorised pass, apply in a second pass while the row is in cache"},
    {"norm", "fuse the normalisation into the producer's output pass"},
    {"softmax", "fuse max, exp-sum and normalise into one pass per row block in cache"},
    {"softmax", "a vectorised exp (range reduction + polynomial) accurate to ~1e-6 relative"},
    {"elementwise", "vectorise the activation with an accurate polynomial exp/tanh/erf "
                    "instead of libm calls per element"},
    {"reduction", "reduce in registers per thread, combine the partial results once at the "
                  "end"},
    {"pool", "fuse the pooling into the pass that produces its input"},
    {"scan", "chunk the sequence: intra-chunk work as small matmuls, the state carried "
             "between chunks"},
    {"moe", "group the tokens by expert first, then run one dense matmul per expert"},
    {"mlp", "fuse the gate and up projections into one matmul pass and apply the "
            "activation product in its epilogue"},
    {"loss", "fuse the logits matmul with the log-softmax so the logits are never stored "
             "whole"},
    {"dropout", "generate the dropout mask with ckb_hash64 inline, vectorised, in the pass "
                "that applies it"},
};

int ckb_gen_menu(const ckb_workload *w, const char **items, int max)
{
    int n = 0;
    for (size_t i = 0; i < sizeof menu__entries / sizeof *menu__entries && n < max; i++)
        if (!menu__entries[i].tag || ckb_workload_has_tag(w, menu__entries[i].tag))
            items[n++] = menu__entries[i].item;
    return n;
}
