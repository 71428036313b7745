/* digest.h — a fast 64-bit fingerprint of a buffer, to see that memory a
 * sandboxed kernel could reach was left as the harness wrote it. Not a
 * cryptographic hash: the kernel never learns which digest is kept. */
#ifndef CKB_DIGEST_H
#define CKB_DIGEST_H

#include <stddef.h>
#include <stdint.h>

uint64_t ckb_digest(const void *p, size_t n, uint64_t seed);

#endif /* CKB_DIGEST_H */
