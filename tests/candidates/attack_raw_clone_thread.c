/* Attack: a thread of its own, made with a raw clone (no import to see),
 * that keeps running after the call returns, to work ahead on the next
 * call's inputs while the harness writes them and the baseline runs. The
 * protocol stops the whole process (SIGSTOP, waited for) from each reply to
 * its next call, and writes inputs only while both sandboxes are stopped:
 * the thread can never see an input change while it runs.
 *
 * It watches for exactly that: sixteen words of the inputs, read between
 * two time-stamp reads. A change between two consecutive looks whose stamps
 * span less than CKBT_GAP_TICKS (some 50-100 us) happened while the thread
 * ran; a change across a stop spans at least the writing of a whole input
 * set, far longer. The kernel answers right until the thread has seen one,
 * then leaves its outputs unwritten (the NaN poison). With the stop in
 * place the row is ok; without it, the thread sees the next set being
 * written and the row fails (wrong_result or cheat_detected). */
#include <x86intrin.h>

#ifndef CKBT_GAP_TICKS
#define CKBT_GAP_TICKS 200000ull
#endif

static char helper_stack[1 << 16] __attribute__((aligned(64)));
enum { WATCHED = 16 };
static const volatile unsigned long long *watch[WATCHED];
static volatile int saw_live_write;

static unsigned long long stamp(void)
{
    _mm_lfence();
    unsigned long long t = __rdtsc();
    _mm_lfence();
    return t;
}

/* The words' sum of differences from the last look: 0 when none changed. */
static unsigned long long look(unsigned long long *last)
{
    unsigned long long changed = 0;
    for (int i = 0; i < WATCHED; i++) {
        unsigned long long v = *watch[i];
        changed |= v ^ last[i];
        last[i] = v;
    }
    return changed;
}

static void helper(void)
{
    unsigned long long last[WATCHED];
    unsigned long long t0 = stamp();
    look(last);
    for (;;) {
        unsigned long long u0 = stamp(), changed = look(last), u1 = stamp();
        /* a change lies between the two looks, so within [t0, u1] */
        if (changed && u1 - t0 < CKBT_GAP_TICKS)
            saw_live_write = 1;
        t0 = u0;
        _mm_pause();
    }
}

/* clone(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD)
 * on a stack of its own; the child calls helper and never returns. */
static void start_helper(void)
{
    long flags = 0x100 | 0x200 | 0x400 | 0x800 | 0x10000, ret;
    register void (*fn)(void) __asm__("r12") = helper;
    register long r10 __asm__("r10") = 0;
    register long r8 __asm__("r8") = 0;
    __asm__ volatile("syscall\n\t"
                     "test %%rax, %%rax\n\t"
                     "jnz 1f\n\t"
                     "call *%%r12\n\t"
                     "ud2\n"
                     "1:"
                     : "=a"(ret)
                     : "a"(56L), "D"(flags), "S"(helper_stack + sizeof helper_stack), "d"(0L),
                       "r"(r10), "r"(r8), "r"(fn)
                     : "rcx", "r11", "memory");
    (void)ret;
}

void workload(const ckb_bf16 *A, const ckb_bf16 *B, ckb_bf16 *C)
{
    if (!watch[0]) {
        /* eight words spread over each input, so that one is written while
         * the thread runs if it runs at all while a set is written */
        for (int i = 0; i < WATCHED / 2; i++) {
            watch[i] = (const volatile unsigned long long *)(A + (long)M * K / 8 * i);
            watch[WATCHED / 2 + i] =
                (const volatile unsigned long long *)(B + (long)K * N / 8 * (i + 1) - 4);
        }
        start_helper();
    }
    if (saw_live_write)
        return;
#pragma omp parallel for
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            float s = 0.0f;
            for (long k = 0; k < K; k++)
                s += ckb_bf16_to_f32(A[i * K + k]) * ckb_bf16_to_f32(B[k * N + j]);
            C[i * N + j] = ckb_f32_to_bf16(s);
        }
}
