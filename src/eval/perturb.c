#include "eval/perturb.h"

#include <math.h>
#include <string.h>

#include "ckbench.h"

static void perturb__swap(char *p, size_t esize, int64_t a, int64_t b)
{
    char tmp[8];
    memcpy(tmp, p + a * (int64_t)esize, esize);
    memcpy(p + a * (int64_t)esize, p + b * (int64_t)esize, esize);
    memcpy(p + b * (int64_t)esize, tmp, esize);
}

/* Each neighbouring pair of elements (2p, 2p+1) is swapped or not by one
 * random bit: about half of every stretch of the tensor moves, so even a
 * fingerprint of a few elements differs from call to call (a sparse choice
 * let a kernel that fingerprinted its first 32 elements hit its cache on a
 * third of the calls), while the pass streams like the copy beside it. */
void ckb_perturb_inputs(const ckb_workload *w, const int64_t *dims, void *const *t, uint64_t key,
                        int call)
{
    for (int i = 0; i < w->ntensors; i++) {
        const ckb_tensor *ts = &w->tensors[i];
        if (ts->role != CKB_IN || (ts->dtype != CKB_BF16 && ts->dtype != CKB_F32))
            continue;
        int64_t pairs = ckb_tensor_numel(ts, dims) / 2;
        size_t esize = ckb_dtype_size(ts->dtype);
        uint64_t k = ckb_hash64(key, ((uint64_t)(unsigned)call << 8) | (uint64_t)i);
        uint64_t bits = 0;
        for (int64_t p = 0; p < pairs; p++) {
            if (p % 64 == 0)
                bits = ckb_hash64(k, (uint64_t)(p / 64));
            if ((bits >> (p % 64)) & 1)
                perturb__swap(t[i], esize, 2 * p, 2 * p + 1);
        }
    }
}

void ckb_widen_inputs(const ckb_workload *w, const int64_t *dims, void *const *t, int e)
{
    int nth = 0;
    for (int i = 0; i < w->ntensors; i++) {
        const ckb_tensor *ts = &w->tensors[i];
        if (ts->role != CKB_IN || (ts->dtype != CKB_BF16 && ts->dtype != CKB_F32))
            continue;
        int p = nth++ % 2 == 0 ? e : -e;
        int64_t n = ckb_tensor_numel(ts, dims);
        for (int64_t x = 0; x < n; x++) {
            if (ts->dtype == CKB_F32) {
                float *v = t[i];
                v[x] = ldexpf(v[x], p);
            } else {
                ckb_bf16 *v = t[i];
                v[x] = ckb_f32_to_bf16(ldexpf(ckb_bf16_to_f32(v[x]), p));
            }
        }
    }
}
