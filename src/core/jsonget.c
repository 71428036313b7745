#include "core/jsonget.h"

#include <json-c/json.h>
#include <math.h>
#include <stdio.h>

/* The field if it has type t, else NULL. */
static json_object *jsonget__typed(json_object *o, const char *key, json_type t)
{
    json_object *v;
    if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, t))
        return NULL;
    return v;
}

const char *ckb_json_str(json_object *o, const char *key)
{
    json_object *v = jsonget__typed(o, key, json_type_string);
    return v ? json_object_get_string(v) : NULL;
}

double ckb_json_num(json_object *o, const char *key)
{
    json_object *v = jsonget__typed(o, key, json_type_double);
    if (!v)
        v = jsonget__typed(o, key, json_type_int);
    return v ? json_object_get_double(v) : NAN;
}

long ckb_json_long(json_object *o, const char *key)
{
    json_object *v = jsonget__typed(o, key, json_type_int);
    return v ? (long)json_object_get_int64(v) : -1;
}

json_object *ckb_json_obj(json_object *o, const char *key)
{
    return jsonget__typed(o, key, json_type_object);
}

void ckb_json_copy_str(json_object *o, const char *key, char *dst, size_t dstlen)
{
    const char *s = ckb_json_str(o, key);
    if (s && *s)
        snprintf(dst, dstlen, "%s", s);
}

int ckb_json_timing_disturbed(json_object *o)
{
    json_object *v = jsonget__typed(o, "timing_disturbed", json_type_boolean);
    if (v)
        return json_object_get_boolean(v);
    v = jsonget__typed(ckb_json_obj(o, "eval"), "timing_disturbed", json_type_boolean);
    return v && json_object_get_boolean(v);
}
