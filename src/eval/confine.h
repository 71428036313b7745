/*
 * confine.h — the compiler, confined. The compiler reads whatever a source
 * names (`#include "/etc/shadow"`, `.incbin`), so the whole of it runs in
 * namespaces of its own under a root that holds only the system's
 * toolchain, an empty /tmp and the compile folder's pieces (confine.c says
 * exactly what).
 */
#ifndef CKB_CONFINE_H
#define CKB_CONFINE_H

#include <stddef.h>

#include "core/proc.h"

/* Where the compiler's root puts the folders it may see. */
#define CKB_CONFINED_WORK "/ckbench/work"
#define CKB_CONFINED_INCLUDE "/ckbench/include"
#define CKB_CONFINED_KIT "/ckbench/expert-kit"
/* The wall-clock limit of one compile. */
#define CKB_CONFINED_TIMEOUT_S 120

/* Runs argv (argv[0] ignored: the compiler's real file, $CKBENCH_CC or cc,
 * runs) confined, in the compile folder dir (its work/, include/ and, with
 * expert_kit, expert-kit/ are what the compiler sees of ckbench), with the
 * wall-clock limit. 0 when the compiler ran (out filled), -1 when the
 * confinement or the compiler could not be set up (why). */
int ckb_confined_cc(char **argv, const char *dir, int expert_kit, ckb_proc_result *out,
                    char *why, size_t n);

#endif /* CKB_CONFINE_H */
