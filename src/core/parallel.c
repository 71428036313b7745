/* A plain parallel-for (see parallel.h). */
#include "core/parallel.h"

#include <pthread.h>

typedef struct {
    int n, next;
    void (*fn)(void *, int);
    void *ctx;
} parallel__state;

static void *parallel__worker(void *arg)
{
    parallel__state *s = arg;
    for (int i; (i = __atomic_fetch_add(&s->next, 1, __ATOMIC_RELAXED)) < s->n;)
        s->fn(s->ctx, i);
    return NULL;
}

void ckb_parallel_for(int n, int width, void (*fn)(void *ctx, int i), void *ctx)
{
    parallel__state s = {n, 0, fn, ctx};
    if (width > n)
        width = n;
    if (width <= 1) {
        parallel__worker(&s);
        return;
    }
    pthread_t th[width];
    int started = 0;
    for (int i = 0; i < width; i++)
        started += pthread_create(&th[started], NULL, parallel__worker, &s) == 0;
    if (started == 0)
        parallel__worker(&s); /* no threads to be had: do it here */
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
}
