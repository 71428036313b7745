#include "eval/compile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fsutil.h"
#include "core/proc.h"
#include "core/strbuf.h"
#include "eval/confine.h"
#include "eval/sandbox.h"
#include "machine/isa.h"

enum { COMPILE_KEEP_LINES = 30, COMPILE_KEEP_CHARS = 4000, COMPILE_MAX_DEFINES = 32 };

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
    const char *drop[] = {workdir, CKB_CONFINED_WORK};
    int lines = 0;
    for (const char *p = out; *p && lines < COMPILE_KEEP_LINES && sb.len < COMPILE_KEEP_CHARS;) {
        int skipped = 0;
        for (int i = 0; i < 2 && !skipped; i++) {
            size_t len = strlen(drop[i]);
            if (len && strncmp(p, drop[i], len) == 0 && p[len] == '/') {
                p += len + 1;
                skipped = 1;
            }
        }
        if (skipped)
            continue;
        if (*p == '\n')
            lines++;
        ckb_strbuf_append(&sb, p, 1);
        p++;
    }
    return ckb_strbuf_take(&sb);
}

static ckb_verdict compile__classify(const char *msg)
{
    if (strstr(msg, "conflicting types for 'workload'") ||
        strstr(msg, "conflicting types for \xe2\x80\x98workload\xe2\x80\x99"))
        return CKB_V_COMPILE_WRONG_SIGNATURE;
    if ((strstr(msg, "implicit declaration of function") && strstr(msg, "_mm")) ||
        strstr(msg, "undefined reference to `_mm"))
        return CKB_V_COMPILE_UNKNOWN_INTRINSIC;
    if (strstr(msg, "undefined reference") || strstr(msg, "ld returned"))
        return CKB_V_COMPILE_LINK;
    if (strstr(msg, "undeclared") || strstr(msg, "implicit declaration"))
        return CKB_V_COMPILE_UNDECLARED;
    if (strstr(msg, "expected") || strstr(msg, "syntax"))
        return CKB_V_COMPILE_SYNTAX;
    return CKB_V_COMPILE_OTHER;
}

/* ---- the limits ------------------------------------------------------ */

/* Does a line of the toolchain's own say `what`? Not a diagnostic about
 * a line of the source, whose location has a line number (`x.c:5:3:`),
 * nor a quoted source line, which starts with blanks; such a line starts
 * with the report (`virtual memory exhausted: ...`) or with the name of a
 * program or file (`cc1: out of memory allocating ...`, `/usr/bin/ld: final
 * link failed: No space left on device`, `cc: internal compiler error: File
 * size limit exceeded signal terminated program as`). */
static int compile__tool_says(const char *out, const char *what)
{
    for (const char *line = out; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        size_t first = strcspn(line, " \t\n");
        int located = 0;
        for (size_t i = 0; i + 1 < first; i++)
            located |= line[i] == ':' && line[i + 1] >= '0' && line[i + 1] <= '9';
        const char *hit = strstr(line, what);
        if (hit && hit < line + len && first > 0 && !located)
            return 1;
        line = end ? end + 1 : NULL;
    }
    return 0;
}

static int compile__says_any(const char *out, const char *const *what)
{
    for (int i = 0; what[i]; i++)
        if (compile__tool_says(out, what[i]))
            return 1;
    return 0;
}

/* "2 GiB", "256 MiB", "1 MiB". */
static void compile__bytes(char *buf, size_t n, unsigned long long v)
{
    if (v >= (1ull << 30) && v % (1ull << 30) == 0)
        snprintf(buf, n, "%llu GiB", v >> 30);
    else if (v >= (1ull << 20) && v % (1ull << 20) == 0)
        snprintf(buf, n, "%llu MiB", v >> 20);
    else
        snprintf(buf, n, "%llu bytes", v);
}

/* Which limit ended a failed compile, told by its mechanism, or NULL.
 * Ours: the output cap and the wall clock (we stopped it). The rlimits:
 * RLIMIT_CPU kills a process that used its seconds, so the compile's
 * processes used at least that many together (nearly: the limit counts
 * the tick-sampled time, wait4 the precise one, which came out 1% lower
 * for an assembler stopped at 30 s; hence 90%); RLIMIT_AS makes an
 * allocation fail, which the tools report in fixed words (libiberty's
 * "out of memory allocating", gcc's "virtual memory exhausted", ld's
 * "memory exhausted", strerror(ENOMEM)); the full tmpfs and RLIMIT_FSIZE
 * fail a write with ENOSPC or EFBIG, or kill with SIGXFSZ, which the
 * driver and collect2 name. Those words are English: under a translated
 * locale such a failure stays "other". */
/* -1 for none. */
static int compile__limit_kind(const ckb_confined_result *r)
{
    static const char *const memory[] = {"out of memory", "memory exhausted",
                                         "Cannot allocate memory", NULL};
    static const char *const disk[] = {"No space left on device", "File too large",
                                       "File size limit exceeded", NULL};
    if (r->output_limit)
        return CKB_V_COMPILE_OUTPUT_LIMIT;
    if (r->proc.timed_out)
        return CKB_V_COMPILE_TIMEOUT;
    if (compile__says_any(r->proc.output, memory))
        return CKB_V_COMPILE_MEMORY_LIMIT;
    if (compile__says_any(r->proc.output, disk))
        return CKB_V_COMPILE_DISK_LIMIT;
    if (r->cpu_s >= 0.9 * CKB_CONFINED_CPU_S)
        return CKB_V_COMPILE_CPU_LIMIT;
    return -1;
}

/* The line that opens the message of a compile a limit ended: the limit,
 * and what to change. */
static void compile__limit_line(ckb_verdict kind, char *buf, size_t n)
{
    char v[32];
    if (kind == CKB_V_COMPILE_MEMORY_LIMIT) {
        compile__bytes(v, sizeof v, CKB_CONFINED_MEM_BYTES);
        snprintf(buf, n,
                 "the compile went past its memory limit (%s of address space per compiler "
                 "process) and failed: the source makes the compiler build something huge "
                 "(a large initialiser, a deep macro expansion); compute such tables at run "
                 "time instead",
                 v);
    } else if (kind == CKB_V_COMPILE_DISK_LIMIT) {
        compile__bytes(v, sizeof v, CKB_CONFINED_DISK_BYTES);
        snprintf(buf, n,
                 "the compile went past its disk limit (%s for the source's copy, the "
                 "object, the assembler's output and every temporary file together) and "
                 "failed: the source makes a huge object (large initialisers or data "
                 "directives), or is huge itself; compute such data at run time instead",
                 v);
    } else if (kind == CKB_V_COMPILE_CPU_LIMIT) {
        snprintf(buf, n,
                 "the compile went past its CPU-time limit (%d s per compiler process) and was "
                 "stopped: the source makes the compiler or the assembler spin (deep macro "
                 "expansions, huge unrolled code, assembler loops); make it simpler",
                 CKB_CONFINED_CPU_S);
    } else if (kind == CKB_V_COMPILE_OUTPUT_LIMIT) {
        compile__bytes(v, sizeof v, CKB_CONFINED_OUTPUT_BYTES);
        snprintf(buf, n,
                 "the compiler's messages went past their limit (%s) and the compile was "
                 "stopped; the first of them follow: fix those",
                 v);
    } else {
        snprintf(buf, n,
                 "the compile went past its time limit (%d s, wall clock) and was stopped: "
                 "the source makes the compiler spin; make it simpler",
                 CKB_CONFINED_TIMEOUT_S);
    }
}

/* The message fed back: the limit's line, then the compiler's first lines. */
static char *compile__limit_message(ckb_verdict kind, const char *trimmed)
{
    char line[512];
    compile__limit_line(kind, line, sizeof line);
    ckb_strbuf sb = {0};
    ckb_strbuf_printf(&sb, "%s%s%s", line, trimmed[0] ? "\n" : "", trimmed);
    return ckb_strbuf_take(&sb);
}

/* ---- the compile folder ---------------------------------------------- */

static int compile__write(const char *path, const char *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            close(fd);
            return -1;
        }
        off += (size_t)w;
    }
    /* Readable by the compile's user, whatever our umask. */
    if (fchmod(fd, 0644) != 0) {
        close(fd);
        return -1;
    }
    return close(fd);
}

/* Copies folder `from` (its regular files, and its folders down to
 * `levels` deep; links followed) into `to`, which does not exist yet. */
static int compile__copy_tree(const char *from, const char *to, int levels)
{
    if (mkdir(to, 0755) != 0 || chmod(to, 0755) != 0)
        return -1;
    DIR *d = opendir(from);
    if (!d)
        return -1;
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        char src[PATH_MAX], dst[PATH_MAX];
        struct stat st;
        if (e->d_name[0] == '.' ||
            snprintf(src, sizeof src, "%s/%s", from, e->d_name) >= (int)sizeof src ||
            snprintf(dst, sizeof dst, "%s/%s", to, e->d_name) >= (int)sizeof dst ||
            stat(src, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            if (levels > 0)
                rc = compile__copy_tree(src, dst, levels - 1);
            continue;
        }
        if (!S_ISREG(st.st_mode))
            continue;
        size_t len = 0;
        char *data = ckb_read_file(src, &len);
        rc = data ? compile__write(dst, data, len) : -1;
        free(data);
    }
    closedir(d);
    return rc;
}

/* workdir/compile: work/ (the source, dims.h, and candidate.so, which the
 * compile's first process copies there from the compiler's tmpfs), and
 * copies of include/ and, for an expert, expert-kit/. While the compiler
 * runs, work/ belongs to the compile's user (`nobody` when ckbench is
 * root), then to us again. */
static int compile__make_dir(const char *workdir, int expert_kit, char *dir, size_t n)
{
    char work[PATH_MAX], sub[PATH_MAX], from[PATH_MAX];
    struct stat st;
    if (snprintf(dir, n, "%s/compile", workdir) >= (int)n ||
        snprintf(work, sizeof work, "%s/work", dir) >= (int)sizeof work) {
        errno = ENAMETOOLONG;
        return -1;
    }
    const char *paths[] = {dir, work};
    for (int i = 0; i < 2; i++) {
        if (mkdir(paths[i], 0755) != 0 && errno != EEXIST)
            return -1;
        if (lstat(paths[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
            errno = ENOTDIR;
            return -1;
        }
        if (chmod(paths[i], 0755) != 0)
            return -1;
    }
    /* EINVAL: we are root of a user namespace without `nobody`, where the
     * compile's own namespace cannot map it either: ckb_ns_spawn says so. */
    if (geteuid() == 0 && chown(work, 65534, 65534) != 0 && errno != EINVAL)
        return -1;
    /* include/ flat: it holds ckbench.h alone, and ckb_home() could be a
     * prefix such as /usr/local whose include/ is much more. */
    const char *copies[] = {"include", expert_kit ? "expert-kit" : NULL};
    const int levels[] = {0, 8};
    for (int i = 0; i < 2 && copies[i]; i++) {
        if (snprintf(from, sizeof from, "%s/%s", ckb_home(), copies[i]) >= (int)sizeof from ||
            snprintf(sub, sizeof sub, "%s/%s", dir, copies[i]) >= (int)sizeof sub ||
            (ckb_remove_tree(sub) != 0 && errno != ENOENT) ||
            compile__copy_tree(from, sub, levels[i]) != 0)
            return -1;
    }
    return 0;
}

static void compile__own_again(const char *work, const char *so_path)
{
    if (geteuid() != 0)
        return;
    /* Best effort: the work folder above is private to us anyway. */
    int rc = lchown(so_path, 0, 0);
    rc |= chown(work, 0, 0);
    (void)rc;
}

/* The source as the compiler sees it, relative to the compile folder:
 * the file itself when it lies there already, else a copy under its own
 * name (a plain *.c name, so messages name the file the author wrote) or
 * candidate.c. */
static int compile__place_source(const char *src, const char *dir, char *rel, size_t n)
{
    char real_src[PATH_MAX], real_dir[PATH_MAX], dst[PATH_MAX + 64];
    if (!realpath(src, real_src) || !realpath(dir, real_dir))
        return -1;
    size_t dlen = strlen(real_dir);
    if (strncmp(real_src, real_dir, dlen) == 0 && real_src[dlen] == '/') {
        /* never read as an option */
        snprintf(rel, n, "%s%s", real_src[dlen + 1] == '-' ? "./" : "", real_src + dlen + 1);
        return 0;
    }
    const char *base = strrchr(real_src, '/') + 1;
    size_t blen = strlen(base);
    int plain = blen > 2 && blen < 100 && strcmp(base + blen - 2, ".c") == 0 && base[0] != '.' &&
                base[0] != '-';
    for (const char *p = base; plain && *p; p++)
        plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                *p == '_' || *p == '-' || *p == '.';
    snprintf(rel, n, "%s", plain ? base : "candidate.c");
    if (snprintf(dst, sizeof dst, "%s/%s", dir, rel) >= (int)sizeof dst) {
        errno = ENAMETOOLONG;
        return -1;
    }
    size_t len = 0;
    char *data = ckb_read_file(real_src, &len);
    if (!data)
        return -1;
    int rc = compile__write(dst, data, len);
    free(data);
    return rc;
}

int ckb_compile_candidate(const ckb_compile_request *q, ckb_compile_result *out)
{
    const char *src = q->src, *workdir = q->workdir;
    const char *const *defines = q->defines;
    int ndefines = q->ndefines, expert_kit = q->expert_kit;
    memset(out, 0, sizeof *out);
    if (ndefines > COMPILE_MAX_DEFINES) {
        snprintf(out->error, sizeof out->error, "more than %d defines", COMPILE_MAX_DEFINES);
        return -1;
    }
    /* A source past the disk limit cannot fit in the compile's tmpfs:
     * refused before we copy it (nor read it, whatever its size). */
    struct stat st;
    if (stat(src, &st) == 0 && S_ISREG(st.st_mode) &&
        (unsigned long long)st.st_size > CKB_CONFINED_DISK_BYTES) {
        char said[128];
        snprintf(said, sizeof said, "ckbench: the source is %lld bytes\n", (long long)st.st_size);
        out->kind = CKB_V_COMPILE_DISK_LIMIT;
        out->message = compile__limit_message(out->kind, said);
        return 0;
    }
    char dir[PATH_MAX], work[PATH_MAX + 8], dims_path[PATH_MAX + 16], rel[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/include/ckbench.h", ckb_home());
    if (access(dir, R_OK) != 0) {
        snprintf(out->error, sizeof out->error,
                 "no ckbench.h at %.400s: set CKBENCH_HOME to ckbench's folder", dir);
        return -1;
    }
    if (compile__make_dir(workdir, expert_kit, dir, sizeof dir) != 0) {
        snprintf(out->error, sizeof out->error, "cannot make the compile folder in %.400s: %s",
                 workdir, strerror(errno));
        return -1;
    }
    snprintf(work, sizeof work, "%s/work", dir);
    snprintf(dims_path, sizeof dims_path, "%s/dims.h", work);
    if (snprintf(out->so_path, sizeof out->so_path, "%s/candidate.so", work) >=
        (int)sizeof out->so_path) {
        snprintf(out->error, sizeof out->error, "the work folder's path is too long");
        return -1;
    }
    char *header = ckb_instance_header(q->in);
    int rc = compile__write(dims_path, header, strlen(header));
    free(header);
    if (rc != 0 || compile__place_source(src, work, rel, sizeof rel) != 0) {
        snprintf(out->error, sizeof out->error, "cannot write the compile folder %.400s: %s", work,
                 strerror(errno));
        return -1;
    }

    char def_buf[COMPILE_MAX_DEFINES][128];
    char *argv[64];
    int n = 0;
    argv[n++] = (char *)ckb_compiler(); /* ckb_confined_cc runs its real file */
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
    argv[n++] = "-I" CKB_CONFINED_INCLUDE;
    if (expert_kit)
        argv[n++] = "-I" CKB_CONFINED_KIT;
    /* Paths relative to the compile folder, the compiler's working
     * directory: messages name the files as the author knows them. */
    argv[n++] = "-include";
    argv[n++] = "dims.h";
    for (int i = 0; i < ndefines; i++) {
        snprintf(def_buf[i], sizeof def_buf[i], "-D%s", defines[i]);
        argv[n++] = def_buf[i];
    }
    argv[n++] = rel;
    argv[n++] = "-o";
    argv[n++] = "candidate.so";
    argv[n++] = "-lm";
    argv[n++] = "-latomic";
    argv[n] = NULL;

    /* The object of an earlier compile in a kept folder is not this one's. */
    if (unlink(out->so_path) != 0 && errno != ENOENT) {
        snprintf(out->error, sizeof out->error, "cannot remove %.400s: %s", out->so_path,
                 strerror(errno));
        return -1;
    }
    const char *inputs[] = {"dims.h", rel, NULL};
    ckb_confined_result r;
    rc = ckb_confined_cc(argv, dir, expert_kit, inputs, "candidate.so", &r, out->error,
                         sizeof out->error);
    compile__own_again(work, out->so_path);
    if (rc != 0) {
        unlink(out->so_path); /* a copy that failed half-way */
        return -1;
    }
    /* The confinement's own exits (sandbox.c, compile__child) with nothing
     * said: the compiler never started. */
    if (r.proc.exited && r.proc.exit_code >= 120 && r.proc.exit_code <= 127 &&
        r.proc.output_len == 0) {
        snprintf(out->error, sizeof out->error,
                 "the compiler's sandbox ended before the compiler started (exit %d)",
                 r.proc.exit_code);
        ckb_proc_result_free(&r.proc);
        return -1;
    }
    out->seconds = r.proc.wall_s;
    out->message = compile__trim(r.proc.output, workdir);
    int limit = -1;
    if (r.output_limit || r.proc.timed_out || !r.proc.exited || r.proc.exit_code != 0)
        limit = compile__limit_kind(&r);
    if (limit >= 0) {
        char *msg = compile__limit_message((ckb_verdict)limit, out->message);
        free(out->message);
        out->message = msg;
        out->kind = (ckb_verdict)limit;
    } else if (!r.proc.exited || r.proc.exit_code != 0) {
        out->kind = compile__classify(r.proc.output);
    } else {
        out->ok = 1;
    }
    ckb_proc_result_free(&r.proc);
    return 0;
}

void ckb_compile_result_free(ckb_compile_result *r)
{
    free(r->message);
    r->message = NULL;
}
