/*
 * sections.h — the parts of a report, each appending its blocks to a
 * document (doc.h). Suites are given in the order of the command line and
 * labelled A, B, ...; the first is the reference of every comparison.
 *
 * Generation runs have their own sections (comparison table, fast_p
 * curves, correctness vs samples, failure taxonomy, best kernels), built
 * from the metrics of src/score/ with the same table and svg helpers.
 */
#ifndef CKB_REPORT_SECTIONS_H
#define CKB_REPORT_SECTIONS_H

#include "report/doc.h"
#include "report/results.h"
#include "score/score.h"

/* The headline, first in every report: per method and model solved, floored
 * geomean, % of expert, fast_1; per suite the expert geomean and the noise
 * ratio. runs may be NULL, n may be 0. */
void ckb_report_headline_section(ckb_doc *d, const ckb_report_suite *s, int n,
                                 const ckb_score_set *runs);
/* The machine, toolchain and run settings of each suite, side by side,
 * with ratios to the first for the measured peaks. */
void ckb_report_machine_section(ckb_doc *d, const ckb_report_suite *s, int n);
/* Per suite: the table of workloads and the roofline. */
/* runs: generation runs whose best kernels join the roofline (NULL: none). */
void ckb_report_suite_section(ckb_doc *d, const ckb_report_suite *s, int n,
                              const ckb_score_set *runs);
/* Two or more suites: times and speedups side by side, ratios to the first. */
void ckb_report_compare_section(ckb_doc *d, const ckb_report_suite *s, int n);
/* One part per workload (anchor "w-<id>"): its facts, its result in each
 * suite, and the expert's source, collapsed. */
void ckb_report_workload_sections(ckb_doc *d, const ckb_report_suite *s, int n,
                                  const ckb_score_set *runs);

/* The roofline of one suite as an <svg> element (malloc'd): the bf16 and
 * f32 compute roofs and the bandwidth roof from the suite's machine profile,
 * and a marker per workload for the baseline and the expert at (arithmetic
 * intensity, GFLOP/s), labelled with the workload's number. */
char *ckb_report_roofline(const ckb_report_suite *s, const ckb_score_set *runs, const char *id);

/* The anchor of a workload's part: "w-" and the id made safe. */
void ckb_report_workload_anchor(char *buf, size_t n, const char *id);

/* Generation runs (scored and pooled by src/score/): the runs read, the
 * method x model comparison table (rows link to each group's part), the
 * fast_p curves and table, correctness against samples spent, the failure
 * taxonomy as stacked bars and counts, and per group a table of its
 * workloads (each linking to its best kernel). Figures are written beside
 * report.md as fastp.svg, solved.svg and taxonomy.svg. */
void ckb_report_generation_sections(ckb_doc *d, const ckb_score_set *s);
/* JAXBench's summary of the same groups (score.h): its table, the
 * distribution of the tasks' speedups (speedup_distribution.svg: stacked
 * bars in bins of a factor of two) and every task's speedup in order
 * (speedup_bars.svg: markers on a log axis, unsolved tasks as squares at 1x). */
void ckb_report_jaxbench_section(ckb_doc *d, const ckb_score_set *s);
char *ckb_report_speedup_distribution(const ckb_score_set *s, const char *id);
char *ckb_report_speedup_bars(const ckb_score_set *s, const char *id);
/* Per group and workload (anchor from ckb_report_kernel_anchor): the best
 * correct sample's result and its source from the run's best/<id>.c. */
void ckb_report_kernel_sections(ckb_doc *d, const ckb_score_set *s);

/* The figures on their own (malloc'd <svg> elements). fast_p: one step
 * polyline per group, the share of workloads whose best correct speedup is
 * above p, p from 0 to the largest speedup. solved: one polyline per group,
 * the share of workloads solved within the first k samples, k = 1..budget.
 * taxonomy: one stacked bar per group, a segment per status. */
char *ckb_report_fastp_plot(const ckb_score_set *s, const char *id);
char *ckb_report_solved_plot(const ckb_score_set *s, const char *id);
char *ckb_report_taxonomy_bars(const ckb_score_set *s, const char *id);

/* Anchors of a group's part ("g-<method>-<model>") and of one of its best
 * kernels ("k-<method>-<model>-<workload>"), made safe. */
void ckb_report_group_anchor(char *buf, size_t n, const ckb_score_group *g);
void ckb_report_kernel_anchor(char *buf, size_t n, const ckb_score_group *g, const char *workload);

#endif /* CKB_REPORT_SECTIONS_H */
