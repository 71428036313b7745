/*
 * say.h — how library code talks to the user while it works (DESIGN
 * "Errors"). Progress lines (bench's per-workload lines, generate's samples,
 * "measuring this machine"), warnings and the tables a command prints go
 * through ckb_say and ckb_say_out; the hook that src/cli installs decides
 * where they land (stderr and stdout), so no module below src/cli writes to
 * a stream of the process. Without a hook, nothing is said.
 *
 * Errors are not said: they are returned (core/error.h). Text is passed as
 * is (no newline added), so a caller may redraw a line with "\r\033[K". One
 * call is one write: say a line in one call when threads share the stream.
 */
#ifndef CKB_SAY_H
#define CKB_SAY_H

typedef enum {
    CKB_SAY_LOG, /* progress and warnings: the CLI's stderr */
    CKB_SAY_OUT, /* what the command was asked to print: the CLI's stdout */
} ckb_say_to;

typedef void (*ckb_say_fn)(ckb_say_to to, const char *text);

/* Installs the hook (NULL: be silent). Set once, before any thread starts. */
void ckb_say_set_hook(ckb_say_fn fn);

void ckb_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ckb_say_out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* CKB_SAY_H */
