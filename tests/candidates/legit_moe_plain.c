/* Legitimate 10p_Sparse_MoE: the plain reference as a candidate (router,
 * top-2 softmax rounded to bf16, SwiGLU experts). Honest on every set, so
 * it must pass however many sets it meets: the routing gap the generator
 * keeps must hold on every one of them. */
#include <math.h>
#include <stdlib.h>

static void top_k(const float *l, long n, long k, long *idx)
{
    unsigned char taken[64] = {0};
    for (long r = 0; r < k; r++) {
        long best = -1;
        for (long j = 0; j < n; j++)
            if (!taken[j] && (best < 0 || l[j] > l[best]))
                best = j;
        taken[best] = 1;
        idx[r] = best;
    }
}

static float rb(float v)
{
    return ckb_bf16_to_f32(ckb_f32_to_bf16(v));
}

void workload(const ckb_bf16 *x, const ckb_bf16 *router, const ckb_bf16 *gate,
              const ckb_bf16 *up, const ckb_bf16 *down, float *out)
{
#pragma omp parallel for
    for (long i = 0; i < B * S; i++) {
        const ckb_bf16 *xr = x + i * E;
        float l[64], w[64] = {0}, ex[64], sum = 0.0f;
        long idx[64];
        for (long j = 0; j < N; j++) {
            float acc = 0.0f;
            for (long c = 0; c < E; c++)
                acc += ckb_bf16_to_f32(xr[c]) * ckb_bf16_to_f32(router[c * N + j]);
            l[j] = rb(acc);
        }
        top_k(l, N, K, idx);
        for (long r = 0; r < K; r++) {
            ex[r] = expf(l[idx[r]] - l[idx[0]]);
            sum += ex[r];
        }
        for (long r = 0; r < K; r++)
            w[idx[r]] = rb(ex[r] / sum);
        float *h = malloc((size_t)M * sizeof *h);
        if (!h)
            continue;
        for (long c = 0; c < E; c++)
            out[i * E + c] = 0.0f;
        for (long j = 0; j < N; j++) {
            if (w[j] == 0.0f)
                continue;
            for (long f = 0; f < M; f++) {
                float ag = 0.0f, au = 0.0f;
                for (long c = 0; c < E; c++) {
                    float xv = ckb_bf16_to_f32(xr[c]);
                    ag += xv * ckb_bf16_to_f32(gate[(j * E + c) * M + f]);
                    au += xv * ckb_bf16_to_f32(up[(j * E + c) * M + f]);
                }
                float gv = rb(ag), sg = rb(gv / (1.0f + expf(-gv))), uv = rb(au);
                h[f] = rb(sg * uv);
            }
            for (long c = 0; c < E; c++) {
                float acc = 0.0f;
                for (long f = 0; f < M; f++)
                    acc += h[f] * ckb_bf16_to_f32(down[(j * M + f) * E + c]);
                out[i * E + c] += rb(acc) * w[j];
            }
        }
        free(h);
    }
}
