/* stats.h — summary statistics of a timing series (median is the figure). */
#ifndef CKB_STATS_H
#define CKB_STATS_H

typedef struct {
    int n;
    double median, mean, std, min, max;
} ckb_stats;

/* Summarises x[0..n-1] (n may be 0: all fields zero). x is not modified. */
ckb_stats ckb_stats_of(const double *x, int n);

#endif /* CKB_STATS_H */
