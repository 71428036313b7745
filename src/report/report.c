#include "report/report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/fsutil.h"
#include "core/strbuf.h"
#include "report/doc.h"
#include "report/results.h"
#include "report/sections.h"
#include "report/writers.h"
#include "score/runs.h"
#include "score/score.h"

static int report__save(const char *dir, const char *name, const char *text, ckb_err *err)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (ckb_write_file_atomic(path, text, strlen(text)) != 0) {
        return ckb_err_set(err, CKB_E_IO, "cannot write %s: %s", path, strerror(errno));
    }
    return 0;
}

int ckb_report_write(const char *const *paths, int n, const char *out_dir, ckb_err *err)
{
    if (n < 1 || n > CKB_REPORT_MAX_PATHS) {
        return ckb_err_set(err, CKB_E_USAGE, "give 1 to %d result paths (got %d)",
                           CKB_REPORT_MAX_PATHS, n);
    }
    ckb_report_suite suites[CKB_REPORT_MAX_INPUTS];
    const char *runs[CKB_REPORT_MAX_PATHS];
    int loaded = 0, nruns = 0, nsuites = 0, scored = 0, rc = CKB_E_FORMAT;
    ckb_score_set score;
    ckb_doc doc;
    ckb_doc_init(&doc, "ckbench report");
    for (int i = 0; i < n; i++) {
        if (ckb_score_is_run_path(paths[i])) {
            runs[nruns++] = paths[i];
            continue;
        }
        /* (A missing path is left to the loader, which says so.) */
        if (access(paths[i], F_OK) == 0 && !ckb_report_is_suite_path(paths[i])) {
            ckb_err_set(err, CKB_E_FORMAT,
                        "%s: neither a suite result nor a generation run (give a results.json "
                        "written by `ckbench bench` or its folder, or a run folder holding "
                        "records.jsonl)",
                        paths[i]);
            goto done;
        }
        if (nsuites == CKB_REPORT_MAX_INPUTS) {
            ckb_err_set(err, CKB_E_FORMAT,
                        "at most %d suite results can be compared (%s is one more)",
                        CKB_REPORT_MAX_INPUTS, paths[i]);
            goto done;
        }
        char label[2] = {(char)('A' + nsuites++), 0};
        if ((rc = ckb_report_suite_load(paths[i], label, &suites[loaded], err)) != CKB_OK)
            goto done;
        loaded++;
    }
    if (nruns > 0) {
        if ((rc = ckb_score_load(runs, nruns, NULL, 0, NULL, 0, &score, err)) != CKB_OK)
            goto done;
        scored = 1;
    }
    if (ckb_mkdirs(out_dir) != 0) {
        rc = ckb_err_set(err, CKB_E_IO, "cannot create %s: %s", out_dir, strerror(errno));
        goto done;
    }
    ckb_report_headline_section(&doc, suites, loaded, scored ? &score : NULL);
    if (loaded > 0) {
        ckb_doc_para(&doc, NULL,
                     "%d suite result%s. Baseline: oneDNN and plain loops; expert: the "
                     "hand-tuned kernel; speedup: baseline median over expert median, timed "
                     "alternating on the same cores, each kernel in a sandbox of its own, by ckbench's clock.",
                     loaded, loaded == 1 ? "" : "s");
        ckb_report_machine_section(&doc, suites, loaded);
        ckb_report_suite_section(&doc, suites, loaded, scored ? &score : NULL);
        ckb_report_compare_section(&doc, suites, loaded);
    }
    if (scored)
        ckb_report_generation_sections(&doc, &score);
    if (loaded > 0)
        ckb_report_workload_sections(&doc, suites, loaded, scored ? &score : NULL);
    if (scored)
        ckb_report_kernel_sections(&doc, &score);

    ckb_strbuf md = {0}, html = {0};
    ckb_report_write_md(&doc, &md);
    ckb_report_write_html(&doc, &html);
    rc = report__save(out_dir, "report.md", md.data, err);
    if (rc == 0)
        rc = report__save(out_dir, "report.html", html.data, err);
    for (int i = 0; rc == 0 && i < doc.n; i++)
        if (doc.b[i].kind == CKB_DOC_FIGURE && doc.b[i].file)
            rc = report__save(out_dir, doc.b[i].file, doc.b[i].svg, err);
    ckb_strbuf_free(&md);
    ckb_strbuf_free(&html);
done:
    for (int i = 0; i < loaded; i++)
        ckb_report_suite_free(&suites[i]);
    if (scored)
        ckb_score_free(&score);
    ckb_doc_free(&doc);
    return rc;
}
