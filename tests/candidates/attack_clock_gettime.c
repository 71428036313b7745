/* Attack: reads the clock to tell warm-up from timed calls (or to pace
 * itself against the timer). */
#include <time.h>

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    C[0] = (ckb_bf16)(t.tv_nsec + time(NULL));
    (void)A, (void)B;
}
