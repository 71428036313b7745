/*
 * fsutil.h — files and paths: where ckbench lives, the user's cache,
 * directories, atomic writes that never leave a half-written file behind
 * (a full disk loses the new file, not the old one).
 */
#ifndef CKB_FSUTIL_H
#define CKB_FSUTIL_H

#include <stddef.h>

/* The project root: $CKBENCH_HOME, else the folder above the binary's
 * folder (build/ckbench -> .). Holds include/ and workloads/. */
const char *ckb_home(void);
/* $XDG_CACHE_HOME/ckbench or ~/.cache/ckbench (not created). */
const char *ckb_cache_dir(void);
/* mkdir -p; 0 on success. */
int ckb_mkdirs(const char *path);
/* Writes data to path via a temporary file, fsync and rename. 0 on
 * success; -1 with errno set and the old file untouched otherwise. */
int ckb_write_file_atomic(const char *path, const char *data, size_t len);
/* Reads a whole file; caller frees. NULL when unreadable. *len may be NULL. */
char *ckb_read_file(const char *path, size_t *len);
/* rm -rf of a directory ckbench made; 0 on success. */
int ckb_remove_tree(const char *path);

#endif /* CKB_FSUTIL_H */
