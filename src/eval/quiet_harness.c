/*
 * quiet_harness.c — see quiet_harness.h.
 *
 * Why: the trusted side draws every input set with OpenMP just before the
 * call it feeds. Under libgomp's default policy an idle worker spins for a
 * while after each parallel region (~7 ms on a Zen 4's PAUSE): a core taken
 * from the call that follows, which ran up to 1.5x slower. Ending the pool
 * before each call instead (omp_pause_resource_all) still left 25-34% of the
 * calls slow, where a pool that sleeps left 3-7% (41k at host size, 240
 * calls a variant, Zen 4). No OpenMP call sets the policy at run time, and
 * a preinit-array setenv comes too late (libgomp was initialised first in
 * that test), hence the re-exec.
 */
#include "eval/quiet_harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* Set across the re-exec: "-" when the caller had no OMP_WAIT_POLICY, else
 * "=" and the caller's value. */
#define QUIET_CALLER "CKBENCH_CALLER_OMP_WAIT_POLICY"

/* OMP_WAIT_POLICY as the caller had it, from a QUIET_CALLER value. */
static void quiet__restore(const char *caller)
{
    if (caller[0] == '=')
        setenv("OMP_WAIT_POLICY", caller + 1, 1);
    else
        unsetenv("OMP_WAIT_POLICY");
    unsetenv(QUIET_CALLER);
}

void ckb_harness_quiet_omp(char **argv)
{
    const char *caller = getenv(QUIET_CALLER);
    if (caller) { /* the passive image: the runtime has read its policy */
        quiet__restore(caller);
        return;
    }
    const char *now = getenv("OMP_WAIT_POLICY");
    if (now && strcasecmp(now, "passive") == 0)
        return;
    char *saved;
    if (asprintf(&saved, "%s%s", now ? "=" : "-", now ? now : "") < 0)
        return;
    if (setenv(QUIET_CALLER, saved, 1) == 0 && setenv("OMP_WAIT_POLICY", "passive", 1) == 0)
        execv("/proc/self/exe", argv);
    quiet__restore(saved); /* could not re-exec: carry on as we are */
    free(saved);
}
