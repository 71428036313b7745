#include "eval_util.h"

#include <dirent.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/proc.h"
#include "harness.h"

json_object *ckbt_eval(const char *workload, const char *file, int *exit_code, ...)
{
    char *extra[32];
    int n = 0;
    va_list ap;
    va_start(ap, exit_code);
    for (char *a; n < 31 && (a = va_arg(ap, char *));)
        extra[n++] = a;
    va_end(ap);
    extra[n] = NULL;
    return ckbt_eval_argv(workload, file, exit_code, extra);
}

json_object *ckbt_eval_argv(const char *workload, const char *file, int *exit_code,
                            char *const *extra)
{
    char path[512];
    if (file[0] == '/')
        snprintf(path, sizeof path, "%s", file);
    else
        snprintf(path, sizeof path, "tests/candidates/%s", file);
    char *argv[40];
    int n = 0;
    argv[n++] = (char *)ckbt_bin();
    argv[n++] = "eval";
    argv[n++] = (char *)workload;
    argv[n++] = path;
    argv[n++] = "--size";
    argv[n++] = "small";
    for (int i = 0; extra && extra[i] && n < 38; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    ckb_proc_result r;
    if (ckb_proc_run(argv, 300, 1 << 20, &r) != 0) {
        ckbt_fail(__FILE__, __LINE__, "cannot run %s", argv[0]);
        return NULL;
    }
    *exit_code = r.exited ? r.exit_code : 128 + r.signal;
    /* The JSON object is the stdout part; stderr lines (if any) come first. */
    char *brace = strstr(r.output, "\n{");
    const char *text = r.output[0] == '{' ? r.output : brace ? brace + 1 : r.output;
    json_object *j = json_tokener_parse(text);
    if (!j) /* not always a failure: bad command lines print no JSON */
        fprintf(stdout, "    (eval of %s printed no JSON: %.300s)\n", file, r.output);
    ckb_proc_result_free(&r);
    return j;
}

const char *ckbt_str(json_object *j, const char *key)
{
    json_object *x;
    return j && json_object_object_get_ex(j, key, &x) ? json_object_get_string(x) : "";
}

double ckbt_num(json_object *j, const char *key)
{
    json_object *x;
    return j && json_object_object_get_ex(j, key, &x) ? json_object_get_double(x) : 0.0;
}

/* Reads /proc/PID/FILE into buf; NUL bytes (cmdline's separators) become
 * spaces. 0 on success. */
static int eval_util__read_proc(const char *pid, const char *file, char *buf, size_t size)
{
    char path[300];
    snprintf(path, sizeof path, "/proc/%s/%s", pid, file);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, size - 1, f);
    fclose(f);
    for (size_t i = 0; i < n; i++)
        if (buf[i] == '\0')
            buf[i] = ' ';
    buf[n] = '\0';
    return 0;
}

int ckbt_sandboxes_of(int parent)
{
    return ckbt_sandbox_pids(parent, NULL, 0);
}

int ckbt_sandbox_pids(int parent, int *pids, int max)
{
    DIR *d = opendir("/proc");
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char cmd[512], stat[512];
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        if (eval_util__read_proc(e->d_name, "cmdline", cmd, sizeof cmd) != 0 ||
            !strstr(cmd, "__sandbox") ||
            eval_util__read_proc(e->d_name, "stat", stat, sizeof stat) != 0)
            continue;
        const char *q = strrchr(stat, ')');
        int ppid = 0;
        if (q && sscanf(q + 2, "%*c %d", &ppid) == 1 && ppid == parent) {
            if (n < max)
                pids[n] = atoi(e->d_name);
            n++;
        }
    }
    if (d)
        closedir(d);
    return n;
}

json_object *ckbt_suite_entry(json_object *root, const char *id)
{
    json_object *list = json_object_object_get(root, "workloads");
    for (size_t i = 0; list && i < json_object_array_length(list); i++) {
        json_object *e = json_object_array_get_idx(list, i);
        if (strcmp(ckbt_str(e, "workload"), id) == 0)
            return e;
    }
    return NULL;
}

int ckbt_count_workdirs(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strncmp(e->d_name, "ckbench-", 8) == 0;
    if (d)
        closedir(d);
    return n;
}
