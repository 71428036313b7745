/* The CLI's side of the error contract (core/error.h, core/say.h): what
 * the library says goes to the process's streams, and what it returned is
 * printed here. stdout is flushed at each line, as tune's progress always
 * was, so a piped run shows its lines as they come. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "core/error.h"
#include "core/say.h"

static void say_stdio(ckb_say_to to, const char *text)
{
    FILE *f = to == CKB_SAY_OUT ? stdout : stderr;
    fputs(text, f);
    if (f == stdout && strchr(text, '\n'))
        fflush(stdout);
}

void ckb_cli_say_install(void)
{
    ckb_say_set_hook(say_stdio);
}

int ckb_cli_fail(const ckb_err *err, int exit_code)
{
    fprintf(stderr, "ckbench: %s\n", err->msg[0] ? err->msg : ckb_err_code_name(err->code));
    return exit_code;
}
