#include "core/say.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static ckb_say_fn say__hook;

void ckb_say_set_hook(ckb_say_fn fn)
{
    say__hook = fn;
}

static void say__v(ckb_say_to to, const char *fmt, va_list ap)
{
    if (!say__hook)
        return;
    char small[512];
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        say__hook(to, small);
        return;
    }
    char *big = NULL;
    if (vasprintf(&big, fmt, ap) < 0)
        big = NULL;
    say__hook(to, big ? big : small);
    free(big);
}

void ckb_say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say__v(CKB_SAY_LOG, fmt, ap);
    va_end(ap);
}

void ckb_say_out(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say__v(CKB_SAY_OUT, fmt, ap);
    va_end(ap);
}
