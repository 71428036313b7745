/* Attack: installs a SIGSEGV handler to swallow its own faults (or to
 * notice guard pages). */
#include <signal.h>
#include <string.h>

static void attack__ignore(int sig)
{
    (void)sig;
}

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = attack__ignore;
    sigaction(SIGSEGV, &sa, NULL);
    signal(SIGBUS, attack__ignore);
    C[0] = 0;
    (void)A, (void)B;
}
