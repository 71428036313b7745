/*
 * report.h — `ckbench report`: result files in, report.md and one
 * self-contained report.html out (DESIGN §9).
 *
 * Inputs are read into their own models (results.h for suites), the report
 * is assembled as one document of sections (sections.h), and the document
 * is written by the Markdown and HTML writers (writers.h) from the same
 * blocks, so both show the same numbers.
 */
#ifndef CKB_REPORT_H
#define CKB_REPORT_H

#include <stddef.h>

#include "core/error.h"

/* At most this many suites (labelled A, B, ...): the comparison table holds
 * five columns per suite. */
enum { CKB_REPORT_MAX_INPUTS = 6 };
/* At most this many paths in all (suites and generation runs). */
enum { CKB_REPORT_MAX_PATHS = 32 };

/* Reads every path: a suite result (a results.json of `ckbench bench`, or
 * a folder holding one; at most CKB_REPORT_MAX_INPUTS) or a generation run
 * (a folder holding records.jsonl); 1 to CKB_REPORT_MAX_PATHS in all.
 * Writes out_dir/report.md, out_dir/report.html and the figures report.md
 * shows (roofline-<label>.svg per suite; fastp.svg, solved.svg and
 * taxonomy.svg when runs are given), creating out_dir. CKB_OK, or a code
 * with the reason in err (which file, what is wrong) when an input cannot
 * be used or an output cannot be written. */
int ckb_report_write(const char *const *paths, int n, const char *out_dir, ckb_err *err);

#endif /* CKB_REPORT_H */
