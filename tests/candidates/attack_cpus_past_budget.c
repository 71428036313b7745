/* Attack: more CPUs than the thread budget, through more threads than it:
 * a team of 16 (libgomp clones what the pool lacks), each thread reading
 * its own CPU affinity with a raw sched_getaffinity (no import). The answer
 * is right only where no thread may run on more CPUs than the budget, so an
 * `ok` here is the budget holding; run with a budget smaller than the host's
 * CPUs. */
#include <omp.h>

static int cpus_of_this_thread(void)
{
    unsigned long mask[16] = {0};
    long r;
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "a"(204L), "D"(0L), "S"((long)sizeof mask), "d"(mask)
                     : "rcx", "r11", "memory");
    if (r < 0)
        return 1 << 20;
    int n = 0;
    for (int w = 0; w < 16; w++)
        n += __builtin_popcountl(mask[w]);
    return n;
}

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    const int budget = omp_get_max_threads();
    int over = 0;
#pragma omp parallel num_threads(16) reduction(| : over)
    over |= cpus_of_this_thread() > budget;
#pragma omp parallel for
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            float s = 0.0f;
            for (long k = 0; k < K; k++)
                s += ckb_bf16_to_f32(A[i * K + k]) * ckb_bf16_to_f32(B[k * N + j]);
            C[i * N + j] = over ? 0 : ckb_f32_to_bf16(s);
        }
}
