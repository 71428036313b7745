/*
 * blocking.h — the experts' untuned block sizes from the host's facts
 * (DESIGN §6): an analytical model in the manner of BLIS (Low et al.,
 * "Analytical modeling is enough for high-performance BLIS", ACM TOMS 2016),
 * so a CPU nobody tuned for still runs each expert on blocks made for its
 * caches and register file. tuned.json refines these; it is never needed.
 *
 * The facts (ckb_blocking_facts): cache sizes, the threads sharing the
 * last level, the vector register file of the ISA level in force and the
 * matmul unit the expert runs on (the experts' MMA encoding). The model:
 *
 *   micro-tile   AMX: MR = NR = 32 (2 x 2 accumulator tiles of 16 x 16 f32,
 *                two A and two B tiles: all 8 tile registers). Vectors:
 *                nv = 4 vectors of B per tile row with 32 registers, 2 with
 *                16; NR = nv * lanes (f32 lanes of a vector); MR = the rows
 *                whose MR * nv accumulators fit beside nv B vectors and one
 *                broadcast: MR = min(8, (regs - nv - 1) / nv).
 *   KC (L1)      Low et al.'s L1 rule: the B micro-panel (KC x NR) stays in
 *                L1 while A micro-panels (MR x KC) stream through it. L1 is
 *                taken as ways of 4 KiB (an x86 L1 is indexed within a
 *                page: 32 KiB is 8 ways, 48 KiB 12), W = L1 / 4096. A gets
 *                CA = max(1, floor((W - 1) / (1 + NR / MR))) ways, KC =
 *                CA * 4096 / (MR * e), e the bytes of one packed element
 *                (4: f32 FMA works on f32 widened at packing; 2: the dot
 *                and AMX read bf16); B must keep its KC * NR * e within the
 *                W - 1 - CA ways left (one for C), else KC shrinks to fit.
 *                Rounded down to 32 (a tile's depth, every expert's step).
 *   MC (L2)      the packed A block (MC x KC) fills half of L2; the other
 *                half takes the B micro-panels passing through and C:
 *                MC = (L2 / 2) / (KC * e), rounded down to MR.
 *   NC (L3)      the packed B block (KC x NC) fills half of this thread's
 *                share of L3 (each expert's thread packs its own):
 *                NC = (L3 / threads / 2) / (KC * e), rounded down to NR;
 *                without an L3, L2 stands in.
 *   attention    a key block's K and V rows (BK x head elements, e' bytes:
 *                4 where f32 FMA widens them, 2 on the dot and AMX) are
 *                reused by every row tile of the query block, and the query
 *                block's q rows and f32 output rows (BQ x head/2 x (e' + 4))
 *                by every key block; each gets a quarter of L2, leaving half
 *                for the packed ring streaming in: BK = (L2 / 4) / (head *
 *                e'), BQ = (L2 / 4) / (head / 2 * (e' + 4)), rounded down to
 *                16 (AMX: BK to 32, a tile's depth).
 *   tile (grids) an expert whose register tile's rows and vectors each
 *                come from a grid (rows that must divide a dim: 33k's
 *                output channels) takes the pair with the most
 *                accumulators rows x vecs that fits beside a row of vecs
 *                inputs and one broadcast: rows x vecs + vecs + 1 <= regs.
 *                Fitting MR and NR to the grids one by one can miss it: on
 *                16 ymm, MR 6 goes to 8 rows, which leave room for one
 *                vector (8 accumulators) where 4 x 3 holds 12.
 *
 * Facts the profile lacks take assumed values (32 KiB L1, 512 KiB L2, no
 * L3; without an ISA level, 16 ymm registers unless a bf16 unit was
 * measured), so the model always answers.
 */
#ifndef CKB_MACHINE_BLOCKING_H
#define CKB_MACHINE_BLOCKING_H

#include <stdint.h>

#include "machine/profile.h"

typedef struct {
    int64_t l1, l2, l3; /* bytes per instance; 0: unknown (l3 0: none) */
    int threads;        /* threads sharing the L3 (each packs its own blocks) */
    int nregs;          /* vector registers: 32 (AVX-512), 16 (AVX2, SSE) */
    int vec_bytes;      /* bytes of one: 64, 32, 16 */
    int unit;           /* 0 the bf16 dot, 1 f32 FMA, 2 AMX */
} ckb_blocking_facts;

typedef struct {
    int64_t mr, nr; /* the micro-tile (register file) */
    int64_t kc;     /* depth of a packed block (L1) */
    int64_t mc;     /* rows of A per packed block (L2) */
    int64_t nc;     /* columns of B per packed block (L3) */
    int64_t elem;   /* bytes of one packed element the micro-kernel reads */
} ckb_blocking;

/* The facts of the host m profiles, for an expert on `unit` (the MMA
 * encoding; a bf16 unit the register file cannot hold, below AVX-512, is
 * taken as f32 FMA, as the experts fall back). m may be NULL: every fact
 * assumed. */
void ckb_blocking_facts_of(const ckb_machine *m, int unit, ckb_blocking_facts *f);

/* The GEMM blocks the model gives for f (see the equations above). */
void ckb_blocking_gemm(const ckb_blocking_facts *f, ckb_blocking *out);

/* Attention's query and key blocks for keys of `head` elements (a K row
 * plus a V row; a query's q plus out row alike). */
void ckb_blocking_attention(const ckb_blocking_facts *f, int64_t head, int64_t *bq, int64_t *bk);

/* The register tile of rows[0:nrows] x vecs[0:nvecs] for f (see "tile"
 * above); ties go to the fewer loads a step (rows + vecs), then the fewer
 * rows. 0 with *r, *v set; -1 where no pair fits (*r, *v untouched). */
int ckb_blocking_tile(const ckb_blocking_facts *f, const int64_t *rows, int nrows,
                      const int64_t *vecs, int nvecs, int64_t *r, int64_t *v);

#endif /* CKB_MACHINE_BLOCKING_H */
