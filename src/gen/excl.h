/*
 * excl.h — one timed evaluation at a time on this machine: a process-wide
 * mutex (workloads run in threads) and an flock on a file under
 * $XDG_RUNTIME_DIR (else /tmp), so that two ckbench processes never time
 * at once. The whole evaluation is held, compile included: simple, and the
 * compile is short next to the provider calls that overlap it.
 */
#ifndef CKB_GEN_EXCL_H
#define CKB_GEN_EXCL_H

/* Blocks until this process and no other holds the machine. */
void ckb_excl_lock(void);
void ckb_excl_unlock(void);
/* The lock file's path. */
const char *ckb_excl_path(void);

#endif /* CKB_GEN_EXCL_H */
