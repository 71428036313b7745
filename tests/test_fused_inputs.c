/*
 * The fused KernelBench workloads' inputs are not degenerate (JAXBench's
 * are: zero weights and biases, so a kernel that writes zeros or a uniform
 * softmax passes). At small size, against the baseline: an all-zero output
 * fails, and for a softmax each row's largest probability is above 0.05,
 * so that no row can be skipped either.
 */
#include <stdlib.h>

#include "eval/check.h"
#include "harness.h"
#include "workloads/workload.h"

static const char *const fused__ids[] = {
    "18k_Conv2D_ReLU_BiasAdd",
    "38k_Matmul_Dropout_Softmax",
    "41k_Gemm_Add_ReLU",
    "50k_Matmul_GELU_Softmax",
};
enum { FUSED_COUNT = sizeof fused__ids / sizeof fused__ids[0] };

/* The last tensor of each of these workloads is its only output. */
static const ckb_tensor *fused__output(const ckb_workload *w)
{
    const ckb_tensor *t = &w->tensors[w->ntensors - 1];
    return t->role == CKB_OUT ? t : NULL;
}

CKBT_TEST(fused_zero_output_fails_the_check, "quick")
{
    for (int k = 0; k < FUSED_COUNT; k++) {
        const ckb_workload *w = ckb_workload_find(fused__ids[k]);
        CKBT_EXPECT(w != NULL, "%s registered", fused__ids[k]);
        if (!w)
            continue;
        const ckb_tensor *out = fused__output(w);
        CKBT_EXPECT(out != NULL, "%s: last tensor is its output", w->id);
        if (!out)
            continue;
        int64_t dims[CKB_MAX_DIMS];
        void *t[CKB_MAX_TENSORS];
        ckb_workload_dims(w, CKB_SIZE_SMALL, dims);
        const int i = w->ntensors - 1;
        const int64_t n = ckb_tensor_numel(out, dims);
        void *zero = calloc(1, ckb_tensor_bytes(out, dims));
        CKBT_EXPECT(zero != NULL, "%s: allocation", w->id);
        if (!zero)
            continue;
        const int have = ckb_tensors_alloc(w, dims, t) == 0;
        CKBT_EXPECT(have, "%s: allocation", w->id);
        for (uint64_t seed = 1; seed <= 2 && have; seed++) {
            w->create_inputs(dims, seed, t);
            w->baseline(dims, t);
            ckb_check c;
            ckb_check_allclose(out->dtype, zero, t[i], n, ckb_workload_atol(w),
                               ckb_workload_rtol(w), &c);
            CKBT_EXPECT(!c.ok, "%s seed %llu: an all-zero output passed", w->id,
                        (unsigned long long)seed);

            if (!ckb_workload_has_tag(w, "softmax"))
                continue;
            /* Softmax over the last dim: rows of its extent. */
            const int64_t cols = dims[out->shape[out->rank - 1]], rows = n / cols;
            const ckb_bf16 *o = t[i];
            int64_t low_rows = 0;
            float lowest = 1.0f;
            for (int64_t r = 0; r < rows; r++) {
                float mx = 0.0f;
                for (int64_t j = 0; j < cols; j++) {
                    float v = ckb_bf16_to_f32(o[r * cols + j]);
                    mx = v > mx ? v : mx;
                }
                low_rows += mx <= 0.05f;
                lowest = mx < lowest ? mx : lowest;
            }
            CKBT_EXPECT(low_rows == 0,
                        "%s seed %llu: %lld of %lld rows peak at or below 0.05 (lowest %g)",
                        w->id, (unsigned long long)seed, (long long)low_rows, (long long)rows,
                        lowest);
        }
        if (have)
            ckb_tensors_free(w, t);
        free(zero);
    }
}
