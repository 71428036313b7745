/*
 * No workload's inputs are degenerate (JAXBench's fused ones are: zero
 * weights and biases, so a kernel that writes zeros or a uniform softmax
 * passes). At small size, against the baseline: an all-zero output fails
 * for every workload, and for a softmax each row's largest probability is
 * above 0.05, so that no row can be skipped either.
 */
#include <stdlib.h>

#include "eval/check.h"
#include "harness.h"
#include "workloads/workload.h"

CKBT_TEST(zero_output_fails_the_check_for_every_workload, "quick")
{
    for (int k = 0; k < ckb_workload_count(); k++) {
        const ckb_workload *w = ckb_workload_at(k);
        int i = 0;
        while (i < w->ntensors && w->tensors[i].role != CKB_OUT)
            i++;
        const ckb_tensor *out = &w->tensors[i];
        int64_t dims[CKB_MAX_DIMS];
        void *t[CKB_MAX_TENSORS];
        ckb_workload_dims(w, CKB_SIZE_SMALL, dims);
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

            if (!ckb_workload_has_tag(w, "softmax") || out->dtype != CKB_BF16)
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
