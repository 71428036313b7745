/* Valid UTF-8 out of any bytes (see utf8.h). */
#include "core/utf8.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"

/* The length of the valid character at s[0..n), or 0 when the byte there
 * does not start one (RFC 3629: no overlongs, no surrogates, <= U+10FFFF). */
static size_t utf8__char(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else
        return 0;
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    return len;
}

int ckb_utf8_valid(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t k = utf8__char(u + i, n - i);
        if (!k)
            return 0;
        i += k;
    }
    return 1;
}

size_t ckb_utf8_cut(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    /* Back over at most three continuation bytes to the lead byte of the
     * last character; keep it only if it is whole. */
    size_t i = n, back = 0;
    while (i > 0 && back < 3 && (u[i - 1] & 0xC0) == 0x80)
        i--, back++;
    if (i == 0 || u[i - 1] < 0x80)
        return n; /* ends in ASCII (or only continuation bytes: nothing to save) */
    size_t lead = i - 1;
    return utf8__char(u + lead, n - lead) == n - lead ? n : lead;
}

char *ckb_utf8_fix(const char *s, size_t n, size_t *outlen)
{
    const unsigned char *u = (const unsigned char *)s;
    char *out = ckb_xmalloc(3 * n + 1);
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        size_t k = utf8__char(u + i, n - i);
        if (k) {
            memcpy(out + o, s + i, k);
            o += k;
            i += k;
        } else {
            memcpy(out + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i++;
        }
    }
    out[o] = '\0';
    if (outlen)
        *outlen = o;
    return out;
}

int ckb_json_fix_utf8(json_object *o)
{
    int changed = 0;
    switch (json_object_get_type(o)) {
    case json_type_string: {
        const char *s = json_object_get_string(o);
        size_t n = (size_t)json_object_get_string_len(o);
        if (!ckb_utf8_valid(s, n)) {
            size_t m;
            char *fixed = ckb_utf8_fix(s, n, &m);
            json_object_set_string_len(o, fixed, (int)m);
            free(fixed);
            changed = 1;
        }
        break;
    }
    case json_type_array:
        for (size_t i = 0; i < json_object_array_length(o); i++)
            changed += ckb_json_fix_utf8(json_object_array_get_idx(o, i));
        break;
    case json_type_object: {
        json_object_object_foreach(o, key, val)
        {
            (void)key;
            changed += ckb_json_fix_utf8(val);
        }
        break;
    }
    default:
        break;
    }
    return changed;
}

const char *ckb_json_text(json_object *o, int flags)
{
    ckb_json_fix_utf8(o);
    return json_object_to_json_string_ext(o, flags);
}
