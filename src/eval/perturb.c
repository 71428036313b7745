#include "eval/perturb.h"

#include <math.h>
#include <string.h>

#include "ckbench.h"

/* One swap per this many elements: dense enough that every row of a
 * matrix operand changes (so a stale answer is wrong almost everywhere),
 * sparse enough to cost far less than the copy of the inputs beside it. */
enum { PERTURB_STRIDE = 128 };

static void perturb__swap(char *p, size_t esize, int64_t a, int64_t b)
{
    char tmp[8];
    memcpy(tmp, p + a * (int64_t)esize, esize);
    memcpy(p + a * (int64_t)esize, p + b * (int64_t)esize, esize);
    memcpy(p + b * (int64_t)esize, tmp, esize);
}

void ckb_perturb_inputs(const ckb_workload *w, const int64_t *dims, void *const *t, uint64_t key,
                        int call)
{
    for (int i = 0; i < w->ntensors; i++) {
        const ckb_tensor *ts = &w->tensors[i];
        if (ts->role != CKB_IN || (ts->dtype != CKB_BF16 && ts->dtype != CKB_F32))
            continue;
        int64_t n = ckb_tensor_numel(ts, dims);
        if (n < 2)
            continue;
        size_t esize = ckb_dtype_size(ts->dtype);
        uint64_t k = ckb_hash64(key, ((uint64_t)(unsigned)call << 8) | (uint64_t)i);
        int64_t swaps = n / PERTURB_STRIDE + 1;
        for (int64_t s = 0; s < swaps; s++) {
            uint64_t r = ckb_hash64(k, (uint64_t)s);
            int64_t a = (int64_t)((r & 0xffffffffu) % (uint64_t)n);
            int64_t b = (int64_t)((r >> 32) % (uint64_t)n);
            if (a == b)
                b = (a + 1) % n;
            perturb__swap(t[i], esize, a, b);
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
