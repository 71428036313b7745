/* docs.c — first cut: every *.md of docs/<target>/, in name order. Issue 7
 * replaces it with selection by the workload's tags. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fsutil.h"
#include "docs/docs.h"

const char *ckb_docs_default_target(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512bf16") ? "x86-avx512" : "generic-c";
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_markdown(const struct dirent *d)
{
    size_t n = strlen(d->d_name);
    return n > 3 && strcmp(d->d_name + n - 3, ".md") == 0;
}

int ckb_docs_for_workload(const ckb_workload *w, const char *target, ckb_strbuf *out,
                          ckb_docs_info *info, char *err, size_t errlen)
{
    (void)w;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/docs/%s", ckb_home(), target ? target : ckb_docs_default_target());
    struct dirent **names;
    int n = scandir(dir, &names, is_markdown, by_name);
    if (n < 0) {
        snprintf(err, errlen, "cannot read the documentation folder %s", dir);
        return -1;
    }
    size_t start = out->len;
    int blocks = 0, rc = 0;
    for (int i = 0; i < n; i++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
        size_t len;
        char *text = ckb_read_file(path, &len);
        if (!text) {
            snprintf(err, errlen, "cannot read %s", path);
            rc = -1;
        } else {
            ckb_strbuf_append(out, text, len);
            ckb_strbuf_append(out, "\n", 1);
            blocks++;
        }
        free(text);
        free(names[i]);
    }
    free(names);
    if (info) {
        info->nblocks = blocks;
        info->chars = (long)(out->len - start);
        info->tokens = info->chars / 4;
    }
    return rc;
}
