#include "core/digest.h"

#include <string.h>

static inline uint64_t digest__mix(uint64_t h, uint64_t v)
{
    h ^= v * 0x9e3779b97f4a7c15ull;
    h = (h << 27) | (h >> 37);
    return h * 0xbf58476d1ce4e5b9ull + 0x94d049bb133111ebull;
}

uint64_t ckb_digest(const void *p, size_t n, uint64_t seed)
{
    const unsigned char *b = p;
    /* Four independent lanes keep the multiplies in flight. */
    uint64_t h[4] = {seed, seed ^ 0x1234567ull, seed ^ 0x89abcdefull, ~seed};
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int l = 0; l < 4; l++) {
            uint64_t v;
            memcpy(&v, b + i + 8 * l, 8);
            h[l] = digest__mix(h[l], v);
        }
    uint64_t tail = 0;
    for (size_t k = 0; i < n; i++, k++)
        tail = digest__mix(tail, b[i] + (k << 8));
    return digest__mix(digest__mix(h[0], h[1]), digest__mix(h[2], h[3] ^ tail)) ^ n;
}
