/*
 * excl.h — one timed evaluation at a time on this machine: a process-wide
 * mutex (workloads run in threads) and an flock on a file under
 * $XDG_RUNTIME_DIR (else /tmp), so that no two ckbench processes (eval,
 * bench, tune, generate) ever time at once. Every evaluation takes it from
 * the start of its sandboxes to their end; a caller may hold it around a
 * whole evaluation too (it nests within a thread).
 */
#ifndef CKB_CORE_EXCL_H
#define CKB_CORE_EXCL_H

/* Blocks until this process and no other holds the machine. */
void ckb_excl_lock(void);
void ckb_excl_unlock(void);
/* The lock file's path. */
const char *ckb_excl_path(void);

#endif /* CKB_CORE_EXCL_H */
