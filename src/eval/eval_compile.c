/*
 * eval_compile.c — the compile stage of one evaluation (DESIGN §4, stages
 * 1 and 2): a kernel compiled (compile.c), its object's imports checked
 * (symcheck.c), and a root made holding only that object. The candidate
 * and the expert of --vs-expert both go through eval__compile_kernel.
 */
#include "eval/eval_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fsutil.h"
#include "eval/compile.h"
#include "eval/symcheck.h"
#include "eval/verdict.h"

/* workdir/root, world-readable, holding only the candidate object: the
 * whole file system a candidate's sandbox sees. */
static int eval__make_root(const char *dir, const char *so_path, int *root_fd)
{
    char root[320], so[340];
    snprintf(root, sizeof root, "%s/root", dir);
    snprintf(so, sizeof so, "%s/candidate.so", root);
    if (mkdir(root, 0755) != 0 || chmod(root, 0755) != 0)
        return -1;
    if (link(so_path, so) != 0) {
        size_t n = 0;
        char *data = ckb_read_file(so_path, &n);
        int bad = !data || ckb_write_file_atomic(so, data, n) != 0;
        free(data);
        if (bad)
            return -1;
    }
    if (chmod(so, 0644) != 0)
        return -1;
    *root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    return *root_fd >= 0 ? 0 : -1;
}

/* The candidate is compiled in workdir, its verdicts its own (a compile
 * error, a missing workload, a forbidden import), and the result names the
 * stage it reached. The expert of --vs-expert is compiled with its kit and
 * parameters into workdir/expert and given a root of its own. It is the
 * benchmark's code: whatever goes wrong with it is a harness_error, never
 * the candidate's; its imports are not checked (only a candidate's are)
 * and the stage the result names stays the candidate's. */
int eval__compile_kernel(eval__ctx *c, const char *src, int expert)
{
    const ckb_eval_opts *o = c->o;
    eval__proc *p = expert ? &c->expert : &c->cand;
    int *root_fd = expert ? &c->expert_root_fd : &c->root_fd;
    char expert_dir[300];
    const char *dir = expert ? expert_dir : c->workdir;
    ckb_compile_result cr = {0};
    if (expert) {
        snprintf(expert_dir, sizeof expert_dir, "%s/expert", c->workdir);
        if (mkdir(dir, 0700) != 0) {
            eval__fail(c, CKB_V_HARNESS_WORKDIR, "cannot make %s: %s", dir, strerror(errno));
            return -1;
        }
    } else {
        c->r->stage = CKB_STAGE_COMPILE;
        if (access(src, R_OK) != 0) {
            eval__fail(c, CKB_V_HARNESS_INPUT, "cannot read %s: %s", src, strerror(errno));
            return -1;
        }
    }
    ckb_compile_request q = {
        .in = c->inst,
        .src = src,
        .workdir = dir,
        .defines = expert ? o->expert_defines : o->defines,
        .ndefines = expert ? o->nexpert_defines : o->ndefines,
        .expert_kit = expert ? 1 : o->expert_kit,
    };
    int ran = ckb_compile_candidate(&q, &cr);
    c->r->compile_s += cr.seconds; /* 0 when the compiler did not run */
    int rc = -1;
    if (expert && (ran != 0 || !cr.ok)) {
        eval__fail(c, CKB_V_HARNESS_EXPERT, "the expert %s does not compile: %.600s", src,
                   ran == 0 ? cr.message : cr.error);
        goto out;
    }
    if (ran != 0) {
        eval__fail(c, CKB_V_HARNESS_COMPILER, "cannot run the compiler %s: %s", ckb_compiler(),
                   cr.error);
        goto out;
    }
    if (!cr.ok) {
        eval__fail(c, cr.kind, "%s", cr.message);
        goto out;
    }
    if (!expert) {
        c->r->stage = CKB_STAGE_SYMCHECK;
        ckb_symcheck sc;
        if (ckb_symcheck_file(cr.so_path, &sc) != 0) {
            eval__fail(c, CKB_V_HARNESS_SYMCHECK, "%s", sc.error);
            goto out;
        }
        if (!sc.has_workload) {
            eval__fail(c, CKB_V_COMPILE_NO_WORKLOAD, "the file defines no function named workload");
            goto out;
        }
        if (sc.nforbidden) {
            eval__fail(c, CKB_V_FORBIDDEN_IMPORT, "calls functions a kernel may not use: %s",
                       sc.forbidden);
            goto out;
        }
    }
    if (eval__make_root(dir, cr.so_path, root_fd) != 0) {
        eval__fail(c, CKB_V_HARNESS_WORKDIR, expert ? "cannot make the expert's sandbox folder: %s"
                                                    : "cannot make the sandbox's folder: %s",
                   strerror(errno));
        goto out;
    }
    rc = 0;
out:
    p->root_fd = *root_fd;
    if (expert)
        c->r->has_expert = rc == 0;
    ckb_compile_result_free(&cr);
    return rc;
}
