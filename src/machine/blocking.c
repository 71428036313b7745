#include "machine/blocking.h"

#include <string.h>

#include "machine/isa.h"

/* An x86 L1 is virtually indexed within a 4 KiB page, so one way is 4 KiB
 * whatever its size: the unit Low et al.'s L1 rule counts in. */
#define BLOCKING_WAY 4096

/* Assumed where the profile does not know (sysfs without cache entries, a
 * profile made up by a test): a small modern core's. */
#define BLOCKING_L1 (32 << 10)
#define BLOCKING_L2 (512 << 10)

static int64_t blocking__down(int64_t v, int64_t step)
{
    return v < step ? step : v / step * step;
}

void ckb_blocking_facts_of(const ckb_machine *m, int unit, ckb_blocking_facts *f)
{
    memset(f, 0, sizeof *f);
    f->l1 = m && m->l1d > 0 ? m->l1d : BLOCKING_L1;
    f->l2 = m && m->l2 > 0 ? m->l2 : BLOCKING_L2;
    f->l3 = m && m->l3 > 0 ? m->l3 : 0;
    f->threads = m && m->threads > 0 ? m->threads : 1;
    ckb_isa level;
    if (!m || ckb_isa_parse(m->isa_level, &level) != 0)
        /* a profile without its level: a measured bf16 unit means AVX-512 */
        level = m && (m->bf16_dot_gflops > 0 || m->bf16_amx_gflops > 0) ? CKB_ISA_AVX512BF16
                                                                         : CKB_ISA_AVX2;
    f->nregs = level >= CKB_ISA_AVX512 ? 32 : 16;
    f->vec_bytes = level >= CKB_ISA_AVX512 ? 64 : level >= CKB_ISA_AVX2 ? 32 : 16;
    /* the experts run the dot only from AVX-512 BF16 and AMX only at its
     * level; below, they fall back to f32 FMA */
    if ((unit == 0 && level < CKB_ISA_AVX512BF16) || (unit == 2 && level < CKB_ISA_AMX) ||
        unit < 0 || unit > 2)
        unit = 1;
    f->unit = unit;
}

void ckb_blocking_gemm(const ckb_blocking_facts *f, ckb_blocking *out)
{
    memset(out, 0, sizeof *out);
    if (f->unit == 2) { /* 2 x 2 tiles of 16 x 16 f32; A and B bf16 */
        out->mr = out->nr = 32;
        out->elem = 2;
    } else {
        const int64_t lanes = f->vec_bytes / 4, nv = f->nregs >= 32 ? 4 : 2;
        int64_t mr = (f->nregs - nv - 1) / nv;
        out->mr = mr > 8 ? 8 : mr;
        out->nr = nv * lanes;
        out->elem = f->unit == 0 ? 2 : 4;
    }
    const int64_t e = out->elem, mr = out->mr, nr = out->nr;

    /* L1: A's ways in the ratio of what one k step of A and of B brings in */
    int64_t ways = f->l1 / BLOCKING_WAY;
    if (ways < 3)
        ways = 3;
    int64_t ca = (ways - 1) * mr / (mr + nr);
    if (ca < 1)
        ca = 1;
    int64_t kc = ca * BLOCKING_WAY / (mr * e);
    const int64_t cb = ways - 1 - ca; /* B's ways; one is left to C */
    if ((nr * kc * e + BLOCKING_WAY - 1) / BLOCKING_WAY > cb)
        kc = cb * BLOCKING_WAY / (nr * e);
    out->kc = blocking__down(kc, 32);

    out->mc = blocking__down(f->l2 / 2 / (out->kc * e), mr);
    const int64_t share = f->l3 > 0 ? f->l3 / f->threads : f->l2;
    out->nc = blocking__down(share / 2 / (out->kc * e), nr);
}

void ckb_blocking_attention(const ckb_blocking_facts *f, int64_t head, int64_t *bq, int64_t *bk)
{
    const int64_t e = f->unit == 1 ? 4 : 2, quarter = f->l2 / 4;
    if (head < 1)
        head = 1;
    *bk = blocking__down(quarter / (head * e), f->unit == 2 ? 32 : 16);
    *bq = blocking__down(quarter / (head * (e + 4) / 2), 16);
}

int ckb_blocking_tile(const ckb_blocking_facts *f, const int64_t *rows, int nrows,
                      const int64_t *vecs, int nvecs, int64_t *r, int64_t *v)
{
    int64_t best_r = 0, best_v = 0;
    for (int i = 0; i < nrows; i++)
        for (int j = 0; j < nvecs; j++) {
            const int64_t a = rows[i], b = vecs[j];
            if (a < 1 || b < 1 || a * b + b + 1 > f->nregs)
                continue;
            const int64_t acc = a * b, best = best_r * best_v;
            if (acc > best || (acc == best && (a + b < best_r + best_v ||
                                               (a + b == best_r + best_v && a < best_r))))
                best_r = a, best_v = b;
        }
    if (best_r == 0)
        return -1;
    *r = best_r, *v = best_v;
    return 0;
}
