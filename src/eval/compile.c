#include "eval/compile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fsutil.h"
#include "core/proc.h"
#include "core/strbuf.h"
#include "machine/isa.h"

enum { COMPILE_TIMEOUT_S = 120, COMPILE_MAX_OUTPUT = 1 << 20, COMPILE_KEEP_LINES = 30,
       COMPILE_KEEP_CHARS = 4000, COMPILE_MAX_DEFINES = 32 };

const char *ckb_compiler(void)
{
    const char *cc = getenv("CKBENCH_CC");
    return cc && *cc ? cc : "cc";
}

const char *ckb_compiler_version(void)
{
    static char version[128];
    if (version[0])
        return version;
    char *argv[] = {(char *)ckb_compiler(), "--version", NULL};
    ckb_proc_result r;
    snprintf(version, sizeof version, "unknown");
    if (ckb_proc_run(argv, 10, 4096, &r) == 0) {
        if (r.exited && r.exit_code == 0) {
            char *nl = strchr(r.output, '\n');
            if (nl)
                *nl = '\0';
            snprintf(version, sizeof version, "%s", r.output);
        }
        ckb_proc_result_free(&r);
    }
    return version;
}

/* Keeps the first lines of the output and drops the work directory from
 * paths, so feedback to a model is short and has no harness details. */
static char *compile__trim(const char *out, const char *workdir)
{
    ckb_strbuf sb = {0};
    size_t wlen = strlen(workdir);
    int lines = 0;
    for (const char *p = out; *p && lines < COMPILE_KEEP_LINES && sb.len < COMPILE_KEEP_CHARS;) {
        if (strncmp(p, workdir, wlen) == 0 && p[wlen] == '/') {
            p += wlen + 1;
            continue;
        }
        if (*p == '\n')
            lines++;
        ckb_strbuf_append(&sb, p, 1);
        p++;
    }
    return ckb_strbuf_take(&sb);
}

static const char *compile__classify(const char *msg)
{
    if (strstr(msg, "conflicting types for 'workload'") ||
        strstr(msg, "conflicting types for \xe2\x80\x98workload\xe2\x80\x99"))
        return "wrong_signature";
    if ((strstr(msg, "implicit declaration of function") && strstr(msg, "_mm")) ||
        strstr(msg, "undefined reference to `_mm"))
        return "unknown_intrinsic";
    if (strstr(msg, "undefined reference") || strstr(msg, "ld returned"))
        return "link";
    if (strstr(msg, "undeclared") || strstr(msg, "implicit declaration"))
        return "undeclared";
    if (strstr(msg, "expected") || strstr(msg, "syntax"))
        return "syntax";
    return "other";
}

int ckb_compile_candidate(const ckb_workload *w, ckb_size s, const char *src, const char *workdir,
                          const char *const *defines, int ndefines, int expert_kit,
                          ckb_compile_result *out)
{
    memset(out, 0, sizeof *out);
    if (ndefines > COMPILE_MAX_DEFINES)
        return -1;
    char dims_path[PATH_MAX], inc[PATH_MAX + 8], kit[PATH_MAX + 16];
    snprintf(dims_path, sizeof dims_path, "%s/dims.h", workdir);
    snprintf(out->so_path, sizeof out->so_path, "%s/candidate.so", workdir);
    snprintf(inc, sizeof inc, "-I%s/include", ckb_home());
    snprintf(kit, sizeof kit, "-I%s/expert-kit", ckb_home());
    char *header = ckb_workload_candidate_header(w, s);
    int rc = ckb_write_file_atomic(dims_path, header, strlen(header));
    free(header);
    if (rc != 0)
        return -1;

    char def_buf[COMPILE_MAX_DEFINES][128];
    char *argv[64];
    int n = 0;
    argv[n++] = (char *)ckb_compiler();
    argv[n++] = "-O3";
    /* -march=native, or the level CKBENCH_ISA lowers it to (machine/isa.h) */
    const char *march[CKB_ISA_MAX_FLAGS];
    int nmarch = ckb_isa_march(ckb_isa_level(), march);
    for (int i = 0; i < nmarch; i++)
        argv[n++] = (char *)march[i];
    argv[n++] = "-fopenmp";
    argv[n++] = "-shared";
    argv[n++] = "-fPIC";
    argv[n++] = "-std=gnu11";
    /* A call to an intrinsic the compiler does not know must not become an
     * implicit int function that fails at run time: make it an error. */
    argv[n++] = "-Werror=implicit-function-declaration";
    argv[n++] = "-Wl,--no-undefined";
    argv[n++] = "-Wl,-z,now";
    argv[n++] = inc;
    if (expert_kit)
        argv[n++] = kit;
    argv[n++] = "-include";
    argv[n++] = dims_path;
    for (int i = 0; i < ndefines; i++) {
        snprintf(def_buf[i], sizeof def_buf[i], "-D%s", defines[i]);
        argv[n++] = def_buf[i];
    }
    argv[n++] = (char *)src;
    argv[n++] = "-o";
    argv[n++] = out->so_path;
    argv[n++] = "-lm";
    argv[n++] = "-latomic";
    argv[n] = NULL;

    ckb_proc_result r;
    if (ckb_proc_run(argv, COMPILE_TIMEOUT_S, COMPILE_MAX_OUTPUT, &r) != 0)
        return -1;
    out->seconds = r.wall_s;
    out->message = compile__trim(r.output, workdir);
    if (r.timed_out) {
        out->kind = "timeout";
    } else if (r.exited && r.exit_code == 127 && r.output_len == 0) {
        ckb_proc_result_free(&r);
        return -1; /* the compiler itself is missing */
    } else if (!r.exited || r.exit_code != 0) {
        out->kind = compile__classify(r.output);
    } else {
        out->ok = 1;
    }
    ckb_proc_result_free(&r);
    return 0;
}

void ckb_compile_result_free(ckb_compile_result *r)
{
    free(r->message);
    r->message = NULL;
}
