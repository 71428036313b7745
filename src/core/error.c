#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

ckb_err_code ckb_err_set(ckb_err *err, ckb_err_code code, const char *fmt, ...)
{
    if (!err)
        return code;
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return code;
}

ckb_err_code ckb_err_prefix(ckb_err *err, const char *fmt, ...)
{
    if (!err)
        return CKB_OK;
    char head[CKB_ERR_MSG];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    if (n > 0) {
        size_t h = strlen(head), m = strlen(err->msg);
        if (h + m >= sizeof err->msg)
            m = sizeof err->msg - 1 > h ? sizeof err->msg - 1 - h : 0;
        memmove(err->msg + h, err->msg, m);
        memcpy(err->msg, head, h < sizeof err->msg ? h : sizeof err->msg - 1);
        err->msg[h + m < sizeof err->msg ? h + m : sizeof err->msg - 1] = '\0';
    }
    return err->code;
}

void ckb_err_clear(ckb_err *err)
{
    if (err) {
        err->code = CKB_OK;
        err->msg[0] = '\0';
    }
}

const char *ckb_err_code_name(ckb_err_code code)
{
    switch (code) {
    case CKB_OK: return "ok";
    case CKB_E_USAGE: return "usage";
    case CKB_E_NOT_FOUND: return "not_found";
    case CKB_E_IO: return "io";
    case CKB_E_FORMAT: return "format";
    case CKB_E_CONFLICT: return "conflict";
    case CKB_E_OOM: return "oom";
    case CKB_E_HARNESS: return "harness";
    }
    return "unknown";
}

void ckb_fatal(const char *fmt, ...)
{
    char msg[600] = "ckbench: ";
    size_t n = strlen(msg);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + n, sizeof msg - n - 1, fmt, ap);
    va_end(ap);
    n = strlen(msg);
    msg[n++] = '\n';
    /* write(2), not stdio: stdio may need memory, and the sandbox allows it */
    if (write(2, msg, n) < 0) {
        /* nobody left to tell */
    }
    abort();
}
