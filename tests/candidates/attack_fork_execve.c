/* Attack: a second process outside the budget. */
#include <unistd.h>

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    if (fork() == 0) {
        char *argv[] = {"/bin/true", NULL};
        execve(argv[0], argv, NULL);
    }
    C[0] = 0;
    (void)A, (void)B;
}
