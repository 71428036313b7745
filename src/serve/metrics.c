/* /metrics (see metrics.h). */
#include "serve/metrics.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/strbuf.h"

#define METRICS__NB 12

typedef struct {
    const double *le;           /* METRICS__NB upper bounds */
    int64_t count[METRICS__NB]; /* per bucket, not cumulative */
    int64_t n;
    double sum;
} metrics__hist;

/* An evaluation takes seconds to minutes; a compile well under one. */
static const double metrics__eval_le[METRICS__NB] = {0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300,
                                                      600, 1800};
static const double metrics__compile_le[METRICS__NB] = {0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 2,
                                                         5, 10, 30, 60};
static const double metrics__http_le[METRICS__NB] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                      0.05, 0.1, 0.25, 1, 10, 60};

struct ckb_metrics {
    pthread_mutex_t mu;
    metrics__hist eval, compile, http;
    int64_t http_by_class[6]; /* 1xx .. 5xx */
    double fma_ratio, l3_ratio;
};

ckb_metrics *ckb_metrics_new(void)
{
    ckb_metrics *m = ckb_xcalloc(1, sizeof *m);
    pthread_mutex_init(&m->mu, NULL);
    m->eval.le = metrics__eval_le;
    m->compile.le = metrics__compile_le;
    m->http.le = metrics__http_le;
    m->fma_ratio = m->l3_ratio = -1;
    return m;
}

void ckb_metrics_free(ckb_metrics *m)
{
    if (!m)
        return;
    pthread_mutex_destroy(&m->mu);
    free(m);
}

static void metrics__add(metrics__hist *h, double v)
{
    int i = 0;
    while (i < METRICS__NB && v > h->le[i])
        i++;
    if (i < METRICS__NB)
        h->count[i]++;
    h->n++;
    h->sum += v;
}

void ckb_metrics_observe_eval(ckb_metrics *m, double run_s, double compile_s)
{
    pthread_mutex_lock(&m->mu);
    metrics__add(&m->eval, run_s);
    if (compile_s >= 0)
        metrics__add(&m->compile, compile_s);
    pthread_mutex_unlock(&m->mu);
}

void ckb_metrics_observe_http(ckb_metrics *m, int status, double seconds)
{
    pthread_mutex_lock(&m->mu);
    metrics__add(&m->http, seconds);
    int k = status / 100;
    if (k >= 1 && k <= 5)
        m->http_by_class[k]++;
    pthread_mutex_unlock(&m->mu);
}

void ckb_metrics_set_host_speed(ckb_metrics *m, double fma_ratio, double l3_ratio)
{
    pthread_mutex_lock(&m->mu);
    m->fma_ratio = fma_ratio;
    m->l3_ratio = l3_ratio;
    pthread_mutex_unlock(&m->mu);
}

static void metrics__hist_text(ckb_strbuf *sb, const char *name, const char *help,
                               const metrics__hist *h)
{
    ckb_strbuf_printf(sb, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
    int64_t cum = 0;
    for (int i = 0; i < METRICS__NB; i++) {
        cum += h->count[i];
        ckb_strbuf_printf(sb, "%s_bucket{le=\"%g\"} %lld\n", name, h->le[i], (long long)cum);
    }
    ckb_strbuf_printf(sb, "%s_bucket{le=\"+Inf\"} %lld\n%s_sum %.6f\n%s_count %lld\n", name,
                      (long long)h->n, name, h->sum, name, (long long)h->n);
}

char *ckb_metrics_render(ckb_metrics *m, const ckb_store_counts *c, int running)
{
    ckb_strbuf sb = {0};
    ckb_strbuf_printf(&sb, "# HELP ckbench_queue_depth Evaluations waiting to run.\n"
                           "# TYPE ckbench_queue_depth gauge\nckbench_queue_depth %lld\n",
                      (long long)c->by_state[CKB_EV_QUEUED]);
    ckb_strbuf_printf(&sb, "# HELP ckbench_running Evaluations running now.\n"
                           "# TYPE ckbench_running gauge\nckbench_running %d\n",
                      running);
    ckb_strbuf_printf(&sb, "# HELP ckbench_evaluations Evaluations stored, by state.\n"
                           "# TYPE ckbench_evaluations gauge\n");
    for (int s = 0; s < CKB_EV_COUNT; s++)
        ckb_strbuf_printf(&sb, "ckbench_evaluations{state=\"%s\"} %lld\n",
                          ckb_store_state_name((ckb_store_state)s), (long long)c->by_state[s]);
    ckb_strbuf_printf(&sb, "# HELP ckbench_evaluations_done_total Finished evaluations, by verdict.\n"
                           "# TYPE ckbench_evaluations_done_total counter\n");
    int64_t done = 0, disturbed = 0;
    for (int i = 0; i < c->nverdicts; i++) {
        ckb_strbuf_printf(&sb, "ckbench_evaluations_done_total{verdict=\"%s\"} %lld\n",
                          c->verdict[i].verdict, (long long)c->verdict[i].n);
        done += c->verdict[i].n;
        disturbed += c->verdict[i].disturbed;
    }
    ckb_strbuf_printf(&sb,
                      "# HELP ckbench_disturbed_ratio Share of finished evaluations whose timing "
                      "was still disturbed after every retry.\n"
                      "# TYPE ckbench_disturbed_ratio gauge\nckbench_disturbed_ratio %.6f\n",
                      done ? (double)disturbed / (double)done : 0.0);
    pthread_mutex_lock(&m->mu);
    metrics__hist_text(&sb, "ckbench_evaluation_seconds",
                       "Wall seconds of an evaluation, from its start to its result.", &m->eval);
    metrics__hist_text(&sb, "ckbench_compile_seconds", "Seconds of a candidate's compile.",
                       &m->compile);
    metrics__hist_text(&sb, "ckbench_http_request_seconds", "Seconds to answer a request.",
                       &m->http);
    ckb_strbuf_printf(&sb, "# HELP ckbench_http_responses_total HTTP responses, by status class.\n"
                           "# TYPE ckbench_http_responses_total counter\n");
    for (int k = 1; k <= 5; k++)
        ckb_strbuf_printf(&sb, "ckbench_http_responses_total{class=\"%dxx\"} %lld\n", k,
                          (long long)m->http_by_class[k]);
    if (m->fma_ratio >= 0 || m->l3_ratio >= 0) {
        ckb_strbuf_printf(&sb, "# HELP ckbench_host_speed_ratio The host's speed at the "
                               "server's start over its machine profile's.\n"
                               "# TYPE ckbench_host_speed_ratio gauge\n");
        if (m->fma_ratio >= 0)
            ckb_strbuf_printf(&sb, "ckbench_host_speed_ratio{probe=\"f32_fma\"} %.4f\n",
                              m->fma_ratio);
        if (m->l3_ratio >= 0)
            ckb_strbuf_printf(&sb, "ckbench_host_speed_ratio{probe=\"l3_read\"} %.4f\n",
                              m->l3_ratio);
    }
    pthread_mutex_unlock(&m->mu);
    return ckb_strbuf_take(&sb);
}
