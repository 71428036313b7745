/* Attack: talks to the network (or a local service holding answers). */
#include <sys/socket.h>

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    C[0] = (ckb_bf16)socket(AF_INET, SOCK_STREAM, 0);
    (void)A, (void)B;
}
