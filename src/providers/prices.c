/*
 * prices.c — the price table (docs/FORMATS.md): {"<model>":
 * {"input_per_mtok": 3.0, "output_per_mtok": 15.0}, ...}, dollars per
 * million tokens. Read once at open, then only looked up (thread-safe).
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "providers/backend.h"

typedef struct {
    char *model;
    double in_per_mtok, out_per_mtok;
} prices__row;

struct ckb_price_table {
    prices__row *rows;
    int n;
};

static int prices__number(json_object *o, const char *field, double *out)
{
    json_object *v;
    if (!json_object_object_get_ex(o, field, &v) ||
        !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
        return -1;
    *out = json_object_get_double(v);
    return *out >= 0 ? 0 : -1;
}

int ckb_price_table_load(const char *path, ckb_price_table **out, ckb_err *err)
{
    *out = NULL;
    if (!path || !*path)
        return 0;
    int rc = CKB_E_FORMAT;
    ckb_price_table *t = ckb_xcalloc(1, sizeof *t);
    json_object *root = json_object_from_file(path);
    if (!root) {
        ckb_err_set(err, CKB_E_FORMAT, "price table %s: not readable JSON (%s)", path,
                    json_util_get_last_err() ? json_util_get_last_err() : "unknown error");
        goto cleanup;
    }
    if (!json_object_is_type(root, json_type_object)) {
        ckb_err_set(err, CKB_E_FORMAT,
                    "price table %s: want an object {model: {input_per_mtok, "
                    "output_per_mtok}}",
                    path);
        goto cleanup;
    }
    t->rows = ckb_xcalloc((size_t)json_object_object_length(root) + 1, sizeof *t->rows);
    json_object_object_foreach(root, model, row)
    {
        prices__row r = {0};
        if (!json_object_is_type(row, json_type_object) ||
            prices__number(row, "input_per_mtok", &r.in_per_mtok) != 0 ||
            prices__number(row, "output_per_mtok", &r.out_per_mtok) != 0) {
            ckb_err_set(err, CKB_E_FORMAT,
                        "price table %s: model '%s' needs non-negative numbers "
                        "input_per_mtok and output_per_mtok",
                        path, model);
            goto cleanup;
        }
        r.model = ckb_xstrdup(model);
        t->rows[t->n++] = r;
    }
    *out = t;
    t = NULL;
    rc = CKB_OK;
cleanup:
    json_object_put(root);
    ckb_price_table_free(t);
    return rc;
}

double ckb_price_table_cost(const ckb_price_table *t, const char *model, long tokens_in,
                            long tokens_out)
{
    if (!t || !model || tokens_in < 0 || tokens_out < 0)
        return -1;
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->rows[i].model, model) == 0)
            return ((double)tokens_in * t->rows[i].in_per_mtok +
                    (double)tokens_out * t->rows[i].out_per_mtok) /
                   1e6;
    return -1;
}

void ckb_price_table_free(ckb_price_table *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->n; i++)
        free(t->rows[i].model);
    free(t->rows);
    free(t);
}
