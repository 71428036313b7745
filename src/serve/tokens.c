/* The token file (see tokens.h). */
#include "serve/tokens.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/error.h"

static int tokens__hex(const char *s, unsigned char *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        if (!isxdigit((unsigned char)s[2 * i]) || !isxdigit((unsigned char)s[2 * i + 1]) ||
            sscanf(s + 2 * i, "%2x", &v) != 1)
            return -1;
        out[i] = (unsigned char)v;
    }
    return s[2 * n] == 0 ? 0 : -1;
}

static int tokens__name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 63)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("._-", s[i]))
            return 0;
    return 1;
}

/* "key=N" into *v; 1 when key matched. */
static int tokens__limit(const char *word, const char *key, int64_t *v, int *bad)
{
    size_t k = strlen(key);
    if (strncmp(word, key, k) != 0 || word[k] != '=')
        return 0;
    char *end;
    long long x = strtoll(word + k + 1, &end, 10);
    if (*end || x < 1)
        *bad = 1;
    *v = x;
    return 1;
}

int ckb_tokens_load(const char *path, ckb_tokens *out, ckb_err *err)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f) {
        return ckb_err_set(err, CKB_E_IO, "cannot read the token file %s: %s", path,
                           strerror(errno));
    }
    char line[1024];
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *save = NULL, *name = strtok_r(line, " \t\r\n", &save);
        if (!name || name[0] == '#')
            continue;
        char *hash = strtok_r(NULL, " \t\r\n", &save);
        ckb_token t = {.max_queued = CKB_TOKEN_DEFAULT_QUEUED,
                       .max_source_bytes = CKB_TOKEN_DEFAULT_SOURCE_BYTES};
        int bad = !tokens__name_ok(name) || !hash || strncmp(hash, "sha256:", 7) != 0 ||
                  tokens__hex(hash + 7, t.hash, 32) != 0;
        for (char *wd; !bad && (wd = strtok_r(NULL, " \t\r\n", &save));)
            if (!tokens__limit(wd, "queued", &t.max_queued, &bad) &&
                !tokens__limit(wd, "source_bytes", &t.max_source_bytes, &bad))
                bad = 1;
        for (int i = 0; !bad && i < out->n; i++)
            bad = strcmp(out->t[i].name, name) == 0;
        if (bad) {
            ckb_err_set(err, CKB_E_FORMAT,
                        "%s:%d: not a token line (NAME sha256:<64 hex digits> [queued=N] "
                        "[source_bytes=N], names unique, of letters, digits, '.', '_', '-')",
                        path, lineno);
            fclose(f);
            ckb_tokens_free(out);
            return CKB_E_FORMAT;
        }
        snprintf(t.name, sizeof t.name, "%s", name);
        out->t = ckb_xrealloc(out->t, (size_t)(out->n + 1) * sizeof *out->t);
        out->t[out->n++] = t;
    }
    fclose(f);
    if (out->n == 0) {
        return ckb_err_set(err, CKB_E_FORMAT,
                           "the token file %s holds no token (ckbench serve --add-token NAME "
                           "--tokens %s makes one)",
                           path, path);
    }
    return 0;
}

void ckb_tokens_free(ckb_tokens *t)
{
    free(t->t);
    t->t = NULL;
    t->n = 0;
}

const ckb_token *ckb_tokens_check(const ckb_tokens *t, const char *bearer)
{
    if (!bearer)
        return NULL;
    unsigned char h[32];
    SHA256((const unsigned char *)bearer, strlen(bearer), h);
    const ckb_token *found = NULL;
    /* every line compared, in constant time: the timing says nothing */
    for (int i = 0; i < t->n; i++)
        if (CRYPTO_memcmp(h, t->t[i].hash, 32) == 0)
            found = &t->t[i];
    return found;
}

int ckb_tokens_add(const char *path, const char *name, char token[65], ckb_err *err)
{
    if (!tokens__name_ok(name)) {
        return ckb_err_set(err, CKB_E_USAGE,
                           "a token's name is 1 to 63 letters, digits, '.', '_' or '-' "
                           "(got '%s')",
                           name);
    }
    ckb_tokens have;
    ckb_err ignore;
    if (access(path, F_OK) == 0 && ckb_tokens_load(path, &have, &ignore) == 0) {
        int dup = 0;
        for (int i = 0; i < have.n; i++)
            dup |= strcmp(have.t[i].name, name) == 0;
        ckb_tokens_free(&have);
        if (dup) {
            return ckb_err_set(err, CKB_E_CONFLICT, "%s already has a token named %s", path, name);
        }
    }
    unsigned char raw[32], h[32];
    if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw) {
        return ckb_err_set(err, CKB_E_HARNESS, "no random bytes from the OS: %s", strerror(errno));
    }
    for (int i = 0; i < 32; i++)
        snprintf(token + 2 * i, 3, "%02x", raw[i]);
    SHA256((const unsigned char *)token, 64, h);
    char line[256];
    int len = snprintf(line, sizeof line, "%s sha256:", name);
    for (int i = 0; i < 32; i++)
        len += snprintf(line + len, sizeof line - (size_t)len, "%02x", h[i]);
    len += snprintf(line + len, sizeof line - (size_t)len, " queued=%d source_bytes=%d\n",
                    CKB_TOKEN_DEFAULT_QUEUED, CKB_TOKEN_DEFAULT_SOURCE_BYTES);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, line, (size_t)len) != len || fsync(fd) != 0) {
        ckb_err_set(err, CKB_E_IO, "cannot append to %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return CKB_E_IO;
    }
    close(fd);
    return CKB_OK;
}
