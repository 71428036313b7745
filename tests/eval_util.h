/* eval_util.h — runs `ckbench eval` as a user would and reads its JSON. */
#ifndef CKB_TEST_EVAL_UTIL_H
#define CKB_TEST_EVAL_UTIL_H

struct json_object;

/* Runs `ckbench eval WORKLOAD tests/candidates/FILE --size small` plus the
 * extra arguments (NULL-terminated), returns the parsed JSON (caller puts)
 * or NULL after reporting a test failure. *exit_code gets the exit status. */
struct json_object *ckbt_eval(const char *workload, const char *file, int *exit_code, ...);
/* The same with the extra arguments as a NULL-terminated array. */
struct json_object *ckbt_eval_argv(const char *workload, const char *file, int *exit_code,
                                   char *const *extra);
/* The string field of a JSON object, or "" when absent. */
const char *ckbt_str(struct json_object *j, const char *key);
double ckbt_num(struct json_object *j, const char *key);
/* Sandboxed processes (`ckbench __sandbox`) whose parent is `parent`: 1 for
 * those orphaned, which no evaluation should ever leave. */
int ckbt_sandboxes_of(int parent);
/* The same, with up to max of their pids stored in pids. */
int ckbt_sandbox_pids(int parent, int *pids, int max);

/* The entry of a suite's results.json (its "workloads" list) for a
 * workload id, or NULL. */
struct json_object *ckbt_suite_entry(struct json_object *root, const char *id);
/* Entries named ckbench-* (ckbench's work folders) in dir. */
int ckbt_count_workdirs(const char *dir);

#endif
