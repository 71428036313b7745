/*
 * jsonget.h — typed reads of one field of a JSON object, for every file
 * ckbench reads back (results, run records, profiles, API replies): a field
 * that is absent, null or of another type reads as "not there", never as 0.
 */
#ifndef CKB_JSONGET_H
#define CKB_JSONGET_H

#include <stddef.h>

struct json_object;

/* The string, or NULL. */
const char *ckb_json_str(struct json_object *o, const char *key);
/* The number (int or double), or NAN. */
double ckb_json_num(struct json_object *o, const char *key);
/* The integer, or -1. */
long ckb_json_long(struct json_object *o, const char *key);
/* The object, or NULL. */
struct json_object *ckb_json_obj(struct json_object *o, const char *key);
/* Copies a non-empty string into dst; leaves dst as it is otherwise. */
void ckb_json_copy_str(struct json_object *o, const char *key, char *dst, size_t dstlen);

/* Whether an evaluation result, or a run record holding one under "eval",
 * says its timing was disturbed by other work on the machine: its figures
 * are not measurements (DESIGN §5). The record's own "timing_disturbed"
 * wins over its eval's (a re-timed record carries its new verdict). */
int ckb_json_timing_disturbed(struct json_object *o);

#endif /* CKB_JSONGET_H */
