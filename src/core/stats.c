#include "core/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"

static int stats__cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

ckb_stats ckb_stats_of(const double *x, int n)
{
    ckb_stats s = {0};
    if (n <= 0)
        return s;
    double *v = ckb_xmalloc(sizeof *v * (size_t)n);
    memcpy(v, x, sizeof *v * (size_t)n);
    qsort(v, (size_t)n, sizeof *v, stats__cmp);
    s.n = n;
    s.min = v[0];
    s.max = v[n - 1];
    s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += v[i];
    s.mean = sum / n;
    double ss = 0;
    for (int i = 0; i < n; i++)
        ss += (v[i] - s.mean) * (v[i] - s.mean);
    s.std = n > 1 ? sqrt(ss / (n - 1)) : 0.0;
    free(v);
    return s;
}
