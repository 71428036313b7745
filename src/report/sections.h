/*
 * sections.h — the parts of a report, each appending its blocks to a
 * document (doc.h). Suites are given in the order of the command line and
 * labelled A, B, ...; the first is the reference of every comparison.
 *
 * Generation runs get their own section functions here later (comparison
 * table, fast_p curves, correctness vs samples, failure taxonomy), built
 * from the run metrics of src/score/ with the same table and svg helpers.
 */
#ifndef CKB_REPORT_SECTIONS_H
#define CKB_REPORT_SECTIONS_H

#include "report/doc.h"
#include "report/results.h"

/* The machine, toolchain and run settings of each suite, side by side,
 * with ratios to the first for the measured peaks. */
void ckb_report_machine_section(ckb_doc *d, const ckb_report_suite *s, int n);
/* Per suite: the table of workloads and the roofline. */
void ckb_report_suite_section(ckb_doc *d, const ckb_report_suite *s, int n);
/* Two or more suites: times and speedups side by side, ratios to the first. */
void ckb_report_compare_section(ckb_doc *d, const ckb_report_suite *s, int n);
/* One part per workload (anchor "w-<id>"): its facts, its result in each
 * suite, and the expert's source, collapsed. */
void ckb_report_workload_sections(ckb_doc *d, const ckb_report_suite *s, int n);

/* The roofline of one suite as an <svg> element (malloc'd): the bf16 and
 * f32 compute roofs and the bandwidth roof from the suite's machine profile,
 * and a marker per workload for the baseline and the expert at (arithmetic
 * intensity, GFLOP/s), labelled with the workload's number. */
char *ckb_report_roofline(const ckb_report_suite *s, const char *id);

/* The anchor of a workload's part: "w-" and the id made safe. */
void ckb_report_workload_anchor(char *buf, size_t n, const char *id);

#endif /* CKB_REPORT_SECTIONS_H */
