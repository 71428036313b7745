/*
 * anchor.c — what a user could run instead of an expert: a BLAS library's
 * GEMM (MKL or OpenBLAS, chosen at link time) at the expert's shapes, plus
 * one pass of the workload's epilogue in plain OpenMP C, timed the way
 * ckbench times a kernel (warm-up calls, then the median of timed calls).
 * Built and run by scripts/anchors.sh only: never part of `make`.
 *
 *   anchor WORKLOAD UNIT THREADS WARMUP ITERS DIM=VALUE...
 *
 * WORKLOAD: 8p 29k 32k 41k 50k. UNIT: bf16 (the library's bf16 GEMM:
 * MKL cblas_gemm_bf16bf16f32, OpenBLAS cblas_sbgemm where it was built with
 * bf16, else its sgemm, said in the output) or f32 (cblas_sgemm on
 * operands widened once, outside the timing: that flatters the anchor,
 * which then reads less memory than the expert). Prints one JSON line.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <omp.h>

#ifdef ANCHOR_MKL
#include <mkl.h>
#define ANCHOR_LIB "mkl"
typedef MKL_BF16 anchor_bf16_t;
#else
#include <cblas.h>
#define ANCHOR_LIB "openblas"
#ifdef ANCHOR_SBGEMM
typedef bfloat16 anchor_bf16_t;
#endif
#endif

typedef uint16_t bf16;

static float widen(bf16 v)
{
    uint32_t u = (uint32_t)v << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static bf16 narrow(float f) /* round to nearest even, NaN kept a NaN */
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (bf16)((u >> 16) | 0x40);
    return (bf16)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static bf16 *random_bf16(long n, float scale, unsigned seed)
{
    bf16 *p = malloc((size_t)n * sizeof *p);
    for (long i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = narrow(scale * ((float)(seed >> 8) / 16777216.0f * 2 - 1));
    }
    return p;
}

static float *widened(const bf16 *p, long n)
{
    float *f = malloc((size_t)n * sizeof *f);
    for (long i = 0; i < n; i++)
        f[i] = widen(p[i]);
    return f;
}

/* C[m,n] = A[m,k] @ B (B [k,n], or [n,k] when tb), f32 out. */
typedef struct {
    int bf16_unit;
    const bf16 *a, *b;
    const float *af, *bf;
} gemm_in;

static void gemm(const gemm_in *g, long m, long n, long k, int tb, float *c)
{
    enum CBLAS_TRANSPOSE t = tb ? CblasTrans : CblasNoTrans;
    long ldb = tb ? k : n;
    if (g->bf16_unit) {
#ifdef ANCHOR_MKL
        cblas_gemm_bf16bf16f32(CblasRowMajor, CblasNoTrans, t, m, n, k, 1.0f,
                               (const anchor_bf16_t *)g->a, k, (const anchor_bf16_t *)g->b,
                               ldb, 0.0f, c, n);
#elif defined(ANCHOR_SBGEMM)
        cblas_sbgemm(CblasRowMajor, CblasNoTrans, t, m, n, k, 1.0f,
                     (const anchor_bf16_t *)g->a, k, (const anchor_bf16_t *)g->b, ldb, 0.0f, c,
                     n);
#endif
    } else {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, t, m, n, k, 1.0f, g->af, k, g->bf, ldb, 0.0f,
                    c, n);
    }
}

static long dim(int argc, char **argv, const char *name)
{
    size_t len = strlen(name);
    for (int i = 6; i < argc; i++)
        if (strncmp(argv[i], name, len) == 0 && argv[i][len] == '=')
            return atol(argv[i] + len + 1);
    fprintf(stderr, "anchor: missing %s=VALUE\n", name);
    exit(2);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static float sigmoidf(float v) { return 1.0f / (1.0f + expf(-v)); }

int main(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: anchor WORKLOAD bf16|f32 THREADS WARMUP ITERS DIM=V...\n");
        return 2;
    }
    const char *w = argv[1];
    int bf16_unit = strcmp(argv[2], "bf16") == 0;
#if !defined(ANCHOR_MKL) && !defined(ANCHOR_SBGEMM)
    bf16_unit = 0; /* an OpenBLAS built without bf16: sgemm, and the line says f32 */
#endif
    int threads = atoi(argv[3]), warmup = atoi(argv[4]), iters = atoi(argv[5]);
    omp_set_num_threads(threads);
#ifdef ANCHOR_MKL
    mkl_set_num_threads(threads);
#else
    openblas_set_num_threads(threads);
#endif
    /* Shapes: rows m, inner k, columns n of the (first) GEMM. */
    long m, k, n, n2 = 0, groups = 0;
    int tb = 0;
    if (!strcmp(w, "8p"))
        m = dim(argc, argv, "M"), k = dim(argc, argv, "K"), n = dim(argc, argv, "N");
    else if (!strcmp(w, "29k") || !strcmp(w, "41k") || !strcmp(w, "50k"))
        m = dim(argc, argv, "B"), k = dim(argc, argv, "IN"), n = dim(argc, argv, "OUT");
    else if (!strcmp(w, "32k"))
        m = dim(argc, argv, "B"), k = dim(argc, argv, "IN"), n = dim(argc, argv, "HID"),
        n2 = dim(argc, argv, "OUT"), tb = 1;
    else {
        fprintf(stderr, "anchor: no anchor for %s\n", w);
        return 2;
    }
    if (!strcmp(w, "29k"))
        groups = dim(argc, argv, "G");
    bf16 *a = random_bf16(m * k, 1.0f, 1), *b = random_bf16(k * n, 0.05f, 2);
    bf16 *bias = random_bf16(n, 0.5f, 3), *gw = random_bf16(n, 1.0f, 4),
         *gb = random_bf16(n, 0.5f, 5);
    bf16 *w2 = n2 ? random_bf16(n2 * n, 0.05f, 6) : NULL, *b2 = n2 ? random_bf16(n2, 0.5f, 7) : NULL;
    gemm_in g1 = {bf16_unit, a, b, NULL, NULL};
    if (!bf16_unit) {
        g1.af = widened(a, m * k);
        g1.bf = widened(b, k * n);
    }
    float *c = malloc((size_t)m * (size_t)n * sizeof *c);
    float *c2 = n2 ? malloc((size_t)m * (size_t)n2 * sizeof *c2) : NULL;
    bf16 *h = n2 ? malloc((size_t)m * (size_t)n * sizeof *h) : NULL;
    float *hf = n2 && !bf16_unit ? malloc((size_t)m * (size_t)n * sizeof *hf) : NULL;
    float *w2f = n2 && !bf16_unit ? widened(w2, n2 * n) : NULL;
    long out_n = !strcmp(w, "32k") ? m : m * n;
    bf16 *out = malloc((size_t)out_n * sizeof *out);
    double *t = malloc((size_t)(warmup + iters) * sizeof *t);

    for (int it = 0; it < warmup + iters; it++) {
        double t0 = now();
        gemm(&g1, m, n, k, tb, c);
        if (!strcmp(w, "8p")) {
#pragma omp parallel for
            for (long i = 0; i < m * n; i++)
                out[i] = narrow(c[i]);
        } else if (!strcmp(w, "41k")) {
#pragma omp parallel for
            for (long i = 0; i < m; i++)
                for (long j = 0; j < n; j++) {
                    float v = c[i * n + j] + widen(bias[j]);
                    out[i * n + j] = narrow(v > 0 ? v : 0);
                }
        } else if (!strcmp(w, "50k")) {
#pragma omp parallel for
            for (long i = 0; i < m; i++) {
                float *r = c + i * n, mx = -INFINITY, sum = 0;
                for (long j = 0; j < n; j++) {
                    float z = r[j] + widen(bias[j]);
                    r[j] = 0.5f * z * (1 + tanhf(0.7978845608f * (z + 0.044715f * z * z * z)));
                    mx = r[j] > mx ? r[j] : mx;
                }
                for (long j = 0; j < n; j++)
                    sum += r[j] = expf(r[j] - mx);
                for (long j = 0; j < n; j++)
                    out[i * n + j] = narrow(r[j] / sum);
            }
        } else if (!strcmp(w, "29k")) {
            long gs = n / groups;
#pragma omp parallel for
            for (long i = 0; i < m; i++)
                for (long gi = 0; gi < groups; gi++) {
                    float *r = c + i * n + gi * gs;
                    double s = 0, s2 = 0;
                    for (long j = 0; j < gs; j++) {
                        float v = r[j];
                        r[j] = v * sigmoidf(v) + widen(bias[gi * gs + j]);
                        s += r[j];
                        s2 += (double)r[j] * r[j];
                    }
                    double mean = s / gs, var = s2 / gs - mean * mean;
                    float inv = (float)(1.0 / sqrt(var + 1e-5));
                    for (long j = 0; j < gs; j++) {
                        long col = gi * gs + j;
                        out[i * n + col] =
                            narrow((r[j] - (float)mean) * inv * widen(gw[col]) + widen(gb[col]));
                    }
                }
        } else { /* 32k: sigmoid, bf16 h, the second GEMM, logsumexp per row */
#pragma omp parallel for
            for (long i = 0; i < m * n; i++) {
                h[i] = narrow(sigmoidf(c[i] + widen(bias[i % n])));
                if (hf)
                    hf[i] = widen(h[i]);
            }
            gemm_in g2 = {bf16_unit, h, w2, hf, w2f};
            gemm(&g2, m, n2, n, 1, c2);
#pragma omp parallel for
            for (long i = 0; i < m; i++) {
                float *r = c2 + i * n2, mx = -INFINITY, sum = 0;
                for (long j = 0; j < n2; j++) {
                    r[j] += widen(b2[j]);
                    mx = r[j] > mx ? r[j] : mx;
                }
                for (long j = 0; j < n2; j++)
                    sum += expf(r[j] - mx);
                out[i] = narrow(mx + logf(sum));
            }
        }
        t[it] = (now() - t0) * 1e3;
    }
    qsort(t + warmup, (size_t)iters, sizeof *t, cmp);
    double median = iters % 2 ? t[warmup + iters / 2]
                              : 0.5 * (t[warmup + iters / 2 - 1] + t[warmup + iters / 2]);
    double flops = 2.0 * m * n * k + (n2 ? 2.0 * m * n2 * n : 0);
    /* the output's checksum keeps every pass observable */
    double sum = 0;
    for (long i = 0; i < out_n; i++)
        sum += widen(out[i]);
    printf("{\"workload\":\"%s\",\"library\":\"%s\",\"unit\":\"%s\",\"threads\":%d,"
           "\"median_ms\":%.6f,\"gflops\":%.3f,\"checksum\":%.6g}\n",
           w, ANCHOR_LIB, bf16_unit ? "bf16" : "f32", threads, median,
           flops / (median * 1e6), sum);
    return 0;
}
