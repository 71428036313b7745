/*
 * oracle.h — what the independent oracle (scripts/oracle/, issue 34) needs
 * of a workload instance: a digest of its inputs, so that a fixture made
 * from one input generator is known stale under another, and a dump of its
 * tensors to files the oracle's JAX code reads (DESIGN §2; FORMATS.md).
 */
#ifndef CKB_ORACLE_H
#define CKB_ORACLE_H

#include <stdint.h>

#include "core/error.h"
#include "workloads/workload.h"

/* A digest of the dims and of every input tensor's bytes, in order: it
 * changes when an input generator, a dim or a tensor's shape does. */
uint64_t ckb_oracle_inputs_digest(const ckb_workload *w, const int64_t *dims, void *const *t);

/* Makes w's inputs at size s in configuration config for seed, runs its
 * reference, and writes into dir (created) one raw little-endian file per
 * tensor, <name>.bin (bf16 as its 16-bit pattern), and manifest.json naming
 * each file's dtype and shape with the dims, consts, tolerance, input
 * digest and the configuration (with the names of all of w's). CKB_OK, or
 * a code with err filled (core/error.h). */
int ckb_oracle_dump(const ckb_workload *w, ckb_size s, int config, uint64_t seed,
                    const char *dir, ckb_err *err);

#endif /* CKB_ORACLE_H */
