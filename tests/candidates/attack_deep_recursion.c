/* Attack (or bug): unbounded recursion overflows the stack. */
static long attack__depth(volatile char *prev, long n)
{
    volatile char frame[4096];
    frame[0] = prev ? prev[0] + 1 : 0;
    return n + attack__depth(frame, n + 1) + frame[0];
}

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    C[0] = (ckb_bf16)attack__depth(0, 0);
    (void)A, (void)B;
}
