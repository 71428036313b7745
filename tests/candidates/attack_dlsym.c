/* Attack: looks up the baseline library or the harness at run time to fall
 * back on the reference or patch it. */
#include <dlfcn.h>

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    void *h = dlopen("libdnnl.so", RTLD_NOW);
    void *f = h ? dlsym(h, "dnnl_sgemm") : NULL;
    C[0] = f ? 1 : 0;
    (void)A, (void)B;
}
