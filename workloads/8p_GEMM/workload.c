/*
 * 8p_GEMM — dense bf16 GEMM at Llama-3.1-70B FFN shape (JAXBench
 * benchmark/8p_GEMM): C = A @ B, A [M, K], B [K, N], bf16 in, f32
 * accumulation, bf16 out (jnp.dot of two bf16 arrays).
 */
#include "workloads/dnnl_ops.h"
#include "workloads/inputs.h"
#include "workloads/workload.h"

enum { M, K, N };
enum { T_A, T_B, T_C };

static void gemm_create_inputs(const int64_t *d, uint64_t seed, void *const *t)
{
    /* JAXBench: A ~ N(0, 1), B ~ N(0, 1) * 0.02. A per-seed scale keeps a
     * kernel from relying on one input distribution. */
    float sa = ckb_seed_factor(seed, T_A, 0.5f, 2.0f);
    ckb_fill_normal_bf16(t[T_A], d[M] * d[K], seed, T_A, 0.0f, sa);
    ckb_fill_normal_bf16(t[T_B], d[K] * d[N], seed, T_B, 0.0f, 0.02f);
}

static void gemm_baseline(const int64_t *d, void *const *t)
{
    ckb_matmul_spec s = {0};
    s.M = d[M], s.K = d[K], s.N = d[N];
    s.a_type = s.b_type = s.c_type = CKB_BF16;
    ckb_dnnl_matmul(&s, t[T_A], t[T_B], NULL, t[T_C]);
}

static void gemm_reference(const int64_t *d, void *const *t)
{
    const ckb_bf16 *A = t[T_A], *B = t[T_B];
    ckb_bf16 *C = t[T_C];
#pragma omp parallel for
    for (int64_t i = 0; i < d[M]; i++) {
        for (int64_t j = 0; j < d[N]; j++) {
            float acc = 0.0f;
            for (int64_t k = 0; k < d[K]; k++)
                acc += ckb_bf16_to_f32(A[i * d[K] + k]) * ckb_bf16_to_f32(B[k * d[N] + j]);
            C[i * d[N] + j] = ckb_f32_to_bf16(acc);
        }
    }
}

static double gemm_flops(const int64_t *d) { return 2.0 * d[M] * d[K] * d[N]; }

static double gemm_bytes(const int64_t *d)
{
    return 2.0 * ((double)d[M] * d[K] + (double)d[K] * d[N] + (double)d[M] * d[N]);
}

const ckb_workload ckb_wl_8p_GEMM = {
    .id = "8p_GEMM",
    .model = "Llama-3.1-70B",
    .op = "dense_matmul",
    .tags = "matmul",
    .wide_range = 20,
    .summary = "C = A @ B, bf16 in, f32 accumulate, bf16 out",
    .ndims = 3,
    .scale_dim = "M",
    .dims = {{"M", {256, 2048, 8192}}, {"K", {256, 4096, 8192}}, {"N", {512, 4096, 28672}}},
    .ntensors = 3,
    .tensors = {{"A", CKB_BF16, CKB_IN, 2, {M, K}},
                {"B", CKB_BF16, CKB_IN, 2, {K, N}},
                {"C", CKB_BF16, CKB_OUT, 2, {M, N}}},
    .create_inputs = gemm_create_inputs,
    .baseline = gemm_baseline,
    .reference = gemm_reference,
    .flops = gemm_flops,
    .bytes = gemm_bytes,
    /* expert.c: micro-kernel rows, rows of A and columns of B per block, the
     * threading split (0: all threads along N, 1: along M), and the matmul
     * unit (the host's fastest, not searched). */
    .nparams = 5,
    .params = {{"MR", CKB_PARAM_HOST_MR, 2, {5, 6}},
               {"MC", CKB_PARAM_HOST_MC, 3, {256, 1024, 4096}, .multiple = 32},
               {"NC", CKB_PARAM_HOST_NC, 3, {64, 256, 1024}, .multiple = 64},
               {"TN", 0, 2, {0, 1}},
               {"MMA", CKB_PARAM_HOST_UNIT, 1, {CKB_PARAM_HOST_UNIT}}},
};
