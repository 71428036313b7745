/* Where the machine's CPU time went: /proc/stat and /proc/PID/stat. */
#include "core/cputime.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static double cputime__pid(pid_t pid, double tick)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *p = fopen(path, "r");
    if (!p)
        return 0;
    size_t len = fread(buf, 1, sizeof buf - 1, p);
    buf[len] = '\0';
    fclose(p);
    /* Fields after the command name, which may hold spaces: utime and
     * stime are the 12th and 13th after ')'. */
    char *q = strrchr(buf, ')');
    unsigned long long ut = 0, st = 0;
    if (q && sscanf(q + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) == 2)
        return (double)(ut + st) / tick;
    return 0;
}

void ckb_cpu_times_read(const pid_t *pids, int npids, ckb_cpu_times *out)
{
    memset(out, 0, sizeof *out);
    out->ncpu = 1;
    const double tick = (double)sysconf(_SC_CLK_TCK);
    FILE *f = fopen("/proc/stat", "r");
    if (f) {
        char line[512];
        int n = 0;
        while (fgets(line, sizeof line, f) && strncmp(line, "cpu", 3) == 0) {
            unsigned long long v[8] = {0};
            if (line[3] != ' ') {
                n++;
                continue;
            }
            /* user nice system idle iowait irq softirq steal */
            if (sscanf(line + 4, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                       &v[3], &v[4], &v[5], &v[6], &v[7]) == 8) {
                out->busy = (double)(v[0] + v[1] + v[2] + v[5] + v[6]) / tick;
                out->steal = (double)v[7] / tick;
            }
        }
        fclose(f);
        out->ncpu = n ? n : 1;
    }
    for (int i = 0; i < npids; i++)
        if (pids[i] > 0)
            out->ours += cputime__pid(pids[i], tick);
}

void ckb_cpu_times_disturbance(const ckb_cpu_times *a, const ckb_cpu_times *b, double elapsed_s,
                               double *steal_pct, double *other_pct)
{
    double capacity = elapsed_s * a->ncpu;
    double others = (b->busy - a->busy) - (b->ours - a->ours);
    *steal_pct = capacity > 0 ? 100.0 * (b->steal - a->steal) / capacity : 0;
    *other_pct = capacity > 0 && others > 0 ? 100.0 * others / capacity : 0;
}

void ckb_sched_times_read(const pid_t *pids, int npids, ckb_sched_times *out)
{
    memset(out, 0, sizeof *out);
    out->ok = access("/proc/self/schedstat", R_OK) == 0;
    for (int i = 0; out->ok && i < npids; i++) {
        if (pids[i] <= 0)
            continue;
        char dir[64];
        snprintf(dir, sizeof dir, "/proc/%d/task", (int)pids[i]);
        DIR *d = opendir(dir);
        if (!d) /* gone: it contributes nothing more */
            continue;
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] < '0' || e->d_name[0] > '9')
                continue;
            char path[128];
            snprintf(path, sizeof path, "%s/%.20s/schedstat", dir, e->d_name);
            FILE *f = fopen(path, "r");
            unsigned long long run = 0, wait = 0;
            int got = f ? fscanf(f, "%llu %llu", &run, &wait) : 0;
            if (f)
                fclose(f);
            if (got != 2) /* a thread that ended meanwhile */
                continue;
            out->run_ns += (double)run;
            out->wait_ns += (double)wait;
        }
        closedir(d);
    }
}

double ckb_sched_wait_pct(const ckb_sched_times *a, const ckb_sched_times *b)
{
    if (!a->ok || !b->ok)
        return -1;
    double run = b->run_ns - a->run_ns, wait = b->wait_ns - a->wait_ns;
    if (run < 0 || wait < 0) /* a thread left between the samples */
        return -1;
    return run + wait > 0 ? 100.0 * wait / (run + wait) : 0;
}
