#include "eval/perturb.h"

#include <math.h>
#include <string.h>

#include "ckbench.h"

int ckb_widen_exponent(const ckb_workload *w, uint64_t draw)
{
    if (w->wide_range <= 0)
        return 0;
    int e = w->wide_range - (int)(draw % 4);
    return (draw >> 8) & 1 ? e : -e;
}

void ckb_widen_inputs(const ckb_instance *in, void *const *t, int e)
{
    const ckb_workload *w = in->w;
    int nth = 0;
    for (int i = 0; i < w->ntensors; i++) {
        const ckb_tensor *ts = &w->tensors[i];
        if (ts->role != CKB_IN || (ts->dtype != CKB_BF16 && ts->dtype != CKB_F32))
            continue;
        int p = nth++ % 2 == 0 ? e : -e;
        int64_t n = in->tensor_numel[i];
        /* ldexpf by a product: 2^p is a normal float (|p| <= wide_range <=
         * 126, workload.h), and x * 2^p rounds exactly as ldexpf does (both
         * are the exact value, correctly rounded), in a loop that vectorises */
        const float scale = ldexpf(1.0f, p);
        if (ts->dtype == CKB_F32) {
            float *v = t[i];
#pragma omp parallel for simd schedule(static)
            for (int64_t x = 0; x < n; x++)
                v[x] *= scale;
        } else {
            ckb_bf16 *v = t[i];
#pragma omp parallel for simd schedule(static)
            for (int64_t x = 0; x < n; x++)
                v[x] = ckb_f32_to_bf16(ckb_bf16_to_f32(v[x]) * scale);
        }
    }
}
