/* Attack: a thread of its own that could outlive the call and finish the
 * work after the timer stops. */
#include <pthread.h>

static void *attack__late(void *arg)
{
    return arg;
}

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    pthread_t t;
    pthread_create(&t, NULL, attack__late, C);
    (void)A, (void)B;
}
