#include "workloads/ops.h"

#include "ckbench.h"

float ckb_op_dropout(float x, uint64_t key, uint64_t index, float p)
{
    return ckb_uniform(key, index) >= p ? x / (1.0f - p) : 0.0f;
}

float ckb_op_sum(const float *x, int64_t n)
{
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (int64_t i = 0; i < n; i++)
        s += x[i];
    return s;
}

float ckb_op_mean(const float *x, int64_t n) { return ckb_op_sum(x, n) / (float)n; }

float ckb_op_max(const float *x, int64_t n)
{
    float m = x[0];
#pragma omp simd reduction(max : m)
    for (int64_t i = 1; i < n; i++)
        m = x[i] > m ? x[i] : m;
    return m;
}

float ckb_op_min(const float *x, int64_t n)
{
    float m = x[0];
    for (int64_t i = 1; i < n; i++)
        m = x[i] < m ? x[i] : m;
    return m;
}

float ckb_op_logsumexp(const float *x, int64_t n)
{
    float m = ckb_op_max(x, n);
    if (isinf(m))
        return m;
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (int64_t i = 0; i < n; i++)
        s += expf(x[i] - m);
    return m + logf(s);
}

void ckb_op_softmax(float *x, int64_t n)
{
    float m = ckb_op_max(x, n), s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (int64_t i = 0; i < n; i++) {
        x[i] = expf(x[i] - m);
        s += x[i];
    }
    float inv = 1.0f / s;
    for (int64_t i = 0; i < n; i++)
        x[i] *= inv;
}

/* Normalises `count` values at x with stride `stride`; mean and variance
 * in two passes (exact, and stable where one-pass E[x^2]-E[x]^2 is not). */
static void ops__normalise(float *x, int64_t count, int64_t stride, float eps, float gamma,
                           float beta)
{
    double mean = 0.0, var = 0.0;
    for (int64_t i = 0; i < count; i++)
        mean += x[i * stride];
    mean /= (double)count;
    for (int64_t i = 0; i < count; i++) {
        double d = x[i * stride] - mean;
        var += d * d;
    }
    var /= (double)count;
    float inv = (float)(1.0 / sqrt(var + eps));
    for (int64_t i = 0; i < count; i++)
        x[i * stride] = ((float)(x[i * stride] - mean)) * inv * gamma + beta;
}

void ckb_op_layernorm(float *x, int64_t rows, int64_t n, const float *gamma, const float *beta,
                      float eps)
{
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        float *row = x + r * n;
        ops__normalise(row, n, 1, eps, 1.0f, 0.0f);
        for (int64_t i = 0; i < n; i++)
            row[i] = row[i] * (gamma ? gamma[i] : 1.0f) + (beta ? beta[i] : 0.0f);
    }
}

void ckb_op_groupnorm(float *x, int64_t n, int64_t c, int64_t l, int64_t groups,
                      const float *gamma, const float *beta, float eps)
{
    const int64_t cg = c / groups;
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t s = 0; s < n; s++)
        for (int64_t g = 0; g < groups; g++) {
            /* a group is cg channels of l values: contiguous in [N, C, L] */
            float *p = x + (s * c + g * cg) * l;
            ops__normalise(p, cg * l, 1, eps, 1.0f, 0.0f);
            for (int64_t ch = 0; ch < cg; ch++)
                for (int64_t i = 0; i < l; i++)
                    p[ch * l + i] = p[ch * l + i] * (gamma ? gamma[g * cg + ch] : 1.0f) +
                                    (beta ? beta[g * cg + ch] : 0.0f);
        }
}

void ckb_op_instancenorm(float *x, int64_t n, int64_t c, int64_t l, const float *gamma,
                         const float *beta, float eps)
{
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t s = 0; s < n; s++)
        for (int64_t ch = 0; ch < c; ch++)
            ops__normalise(x + (s * c + ch) * l, l, 1, eps, gamma ? gamma[ch] : 1.0f,
                           beta ? beta[ch] : 0.0f);
}

void ckb_op_batchnorm(float *x, int64_t n, int64_t c, int64_t l, const float *mean,
                      const float *var, const float *gamma, const float *beta, float eps)
{
#pragma omp parallel for schedule(static)
    for (int64_t ch = 0; ch < c; ch++) {
        double m, v;
        if (mean && var) {
            m = mean[ch];
            v = var[ch];
        } else {
            double s = 0.0, ss = 0.0;
            for (int64_t b = 0; b < n; b++)
                for (int64_t i = 0; i < l; i++)
                    s += x[(b * c + ch) * l + i];
            m = s / (double)(n * l);
            for (int64_t b = 0; b < n; b++)
                for (int64_t i = 0; i < l; i++) {
                    double d = x[(b * c + ch) * l + i] - m;
                    ss += d * d;
                }
            v = ss / (double)(n * l);
        }
        float inv = (float)(1.0 / sqrt(v + eps));
        float g = gamma ? gamma[ch] : 1.0f, bt = beta ? beta[ch] : 0.0f;
        for (int64_t b = 0; b < n; b++)
            for (int64_t i = 0; i < l; i++) {
                float *p = &x[(b * c + ch) * l + i];
                *p = ((float)(*p - m)) * inv * g + bt;
            }
    }
}

void ckb_op_batchnorm_fold(const ckb_bf16 *gamma, const ckb_bf16 *beta, const ckb_bf16 *mean,
                           const ckb_bf16 *var, int64_t n, double eps, float *a, float *c)
{
    for (int64_t j = 0; j < n; j++) {
        const double aj = ckb_bf16_to_f32(gamma[j]) / sqrt((double)ckb_bf16_to_f32(var[j]) + eps);
        a[j] = (float)aj;
        c[j] = (float)(ckb_bf16_to_f32(beta[j]) - ckb_bf16_to_f32(mean[j]) * aj);
    }
}

void ckb_op_avgpool1d(const float *x, float *y, int64_t rows, int64_t n, int64_t k)
{
    const int64_t m = n / k;
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < m; j++)
            y[r * m + j] = ckb_op_mean(x + r * n + j * k, k);
}

void ckb_op_avgpool(const float *x, float *y, int64_t nc, const int64_t dims[3], int64_t k)
{
    const int64_t D = dims[0], H = dims[1], W = dims[2];
    const int64_t od = D == 1 ? 1 : D / k, kd = D == 1 ? 1 : k, oh = H / k, ow = W / k;
    const float inv = 1.0f / (float)(kd * k * k);
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < nc; p++)
        for (int64_t a = 0; a < od; a++)
            for (int64_t b = 0; b < oh; b++)
                for (int64_t c = 0; c < ow; c++) {
                    float s = 0.0f;
                    for (int64_t i = 0; i < kd; i++)
                        for (int64_t j = 0; j < k; j++)
                            for (int64_t q = 0; q < k; q++)
                                s += x[((p * D + a * kd + i) * H + b * k + j) * W + c * k + q];
                    y[((p * od + a) * oh + b) * ow + c] = s * inv;
                }
}

void ckb_op_global_avgpool(const float *x, float *y, int64_t nc, int64_t l)
{
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < nc; p++)
        y[p] = ckb_op_mean(x + p * l, l);
}
