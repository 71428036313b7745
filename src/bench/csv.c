/*
 * csv.c — the two CSV forms of a suite result (docs/FORMATS.md), made from
 * results.json's object so that a resumed run's old rows come out the same
 * as new ones. A value that was not measured is an empty field.
 */
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench/suite.h"
#include "core/jsonget.h"

const char ckb_suite_csv_header[] =
    "name,variant,status,timing_method,median_ms,mean_ms,std_ms,min_ms,flops,gflops,pct_of_peak,"
    "output_shape,speedup,bound,timing_disturbed,error";
const char ckb_suite_jaxbench_header[] =
    "workload,variant,status,timing_method,median_ms,mean_ms,std_ms,min_ms,xla_flops,tflops,"
    "utilization_pct,output_shape,error";

/* ",<v with fmt>" or "," when v is not a number. */
static void csv__num(ckb_strbuf *sb, const char *fmt, double v)
{
    ckb_strbuf_printf(sb, ",");
    if (isfinite(v))
        ckb_strbuf_printf(sb, fmt, v);
}

/* ",v" as Python writes round(v, digits): shortest form, at least one decimal. */
static void csv__round(ckb_strbuf *sb, double v, int digits)
{
    ckb_strbuf_printf(sb, ",");
    if (!isfinite(v))
        return;
    char buf[64];
    snprintf(buf, sizeof buf, "%.*f", digits, v);
    size_t n = strlen(buf);
    while (n > 1 && buf[n - 1] == '0' && buf[n - 2] != '.')
        buf[--n] = '\0';
    ckb_strbuf_printf(sb, "%s", buf);
}

/* ",text" quoted only when it must be (Python's csv.QUOTE_MINIMAL), cut at
 * 300 bytes, newlines flattened. */
static void csv__text(ckb_strbuf *sb, const char *text, int always_quote)
{
    text = text ? text : "";
    size_t n = strnlen(text, 300);
    int quote = always_quote || strcspn(text, ",\"\n\r") < n;
    ckb_strbuf_printf(sb, ",%s", quote ? "\"" : "");
    for (size_t i = 0; i < n; i++)
        ckb_strbuf_printf(sb, "%s", text[i] == '"'                       ? "\"\""
                                    : text[i] == '\n' || text[i] == '\r' ? " "
                                                                         : (char[]){text[i], 0});
    ckb_strbuf_printf(sb, "%s", quote ? "\"" : "");
}

/* Whether the entry's timing was disturbed: 1, 0, or -1 when not timed. */
static int csv__disturbed(json_object *e)
{
    json_object *d;
    if (!json_object_object_get_ex(e, "timing_disturbed", &d) || !d)
        return -1;
    return json_object_get_boolean(d) ? 1 : 0;
}

void ckb_suite_csv(json_object *root, int jaxbench, ckb_strbuf *out)
{
    ckb_strbuf_printf(out, "%s\n", jaxbench ? ckb_suite_jaxbench_header : ckb_suite_csv_header);
    json_object *list = NULL;
    json_object_object_get_ex(root, "workloads", &list);
    for (size_t i = 0; list && i < json_object_array_length(list); i++) {
        json_object *e = json_object_array_get_idx(list, i);
        const char *variants[2] = {"baseline", "expert"};
        double flops = ckb_json_num(e, "flops");
        int disturbed = csv__disturbed(e);
        for (int k = 0; k < 2; k++) {
            json_object *v = ckb_json_obj(e, variants[k]);
            if (!v)
                continue;
            const char *status = ckb_json_str(v, "status");
            const char *err = k ? ckb_json_str(v, "error") : ckb_json_str(e, "error");
            double median = ckb_json_num(v, "median_ms");
            if (!jaxbench) {
                ckb_strbuf_printf(out, "%s,%s,%s,trusted_clock_kernel_stamps",
                                  ckb_json_str(e, "workload"), variants[k], status ? status : "");
                csv__num(out, "%.4f", median);
                csv__num(out, "%.4f", ckb_json_num(v, "mean_ms"));
                csv__num(out, "%.4f", ckb_json_num(v, "std_ms"));
                csv__num(out, "%.4f", ckb_json_num(v, "min_ms"));
                csv__num(out, "%.6g", flops);
                csv__num(out, "%.2f", ckb_json_num(v, "gflops"));
                csv__num(out, "%.2f", ckb_json_num(v, "pct_of_peak"));
                ckb_strbuf_printf(out, ",%s", ckb_json_str(e, "output_shape"));
                csv__num(out, "%.3f", k ? ckb_json_num(e, "speedup") : NAN);
                const char *bound = ckb_json_str(ckb_json_obj(e, "eval"), "bound");
                ckb_strbuf_printf(out, ",%s,%s", bound ? bound : "",
                                  !isfinite(median) || disturbed < 0 ? ""
                                  : disturbed                        ? "true"
                                                                     : "false");
                csv__text(out, err, 1);
                ckb_strbuf_printf(out, "\n");
                continue;
            }
            /* JAXBench's run_all: success or error; a disturbed timing is
             * not a figure, so it is neither (its figures are left out). */
            int ok = status && strcmp(status, "ok") == 0 && isfinite(median);
            int shown = ok && disturbed != 1;
            char why[400];
            if (ok && !shown)
                snprintf(why, sizeof why, "timing disturbed by other work on the machine: not "
                                          "a figure (see results.json)");
            else if (!ok)
                snprintf(why, sizeof why, "%s%s%s", status ? status : "error",
                         err && *err ? ": " : "", err ? err : "");
            ckb_strbuf_printf(out, "%s,%s,%s,trusted_clock_kernel_stamps", ckb_json_str(e, "workload"),
                              k ? "optimized" : "baseline",
                              shown ? "success" : ok ? "disturbed" : "error");
            double m = shown ? 1 : NAN;
            csv__round(out, m * median, 4);
            csv__round(out, m * ckb_json_num(v, "mean_ms"), 4);
            csv__round(out, m * ckb_json_num(v, "std_ms"), 4);
            csv__round(out, m * ckb_json_num(v, "min_ms"), 4);
            csv__num(out, "%.0f", flops);
            csv__round(out, m * ckb_json_num(v, "gflops") / 1e3, 2);
            csv__round(out, m * ckb_json_num(v, "pct_of_peak"), 1);
            /* "[4 64 128]" -> "[4, 64, 128]", as Python prints a list */
            char shape[256];
            const char *s = ckb_json_str(e, "output_shape");
            size_t n = 0;
            for (; s && *s && n + 3 < sizeof shape; s++) {
                if (*s == ' ')
                    shape[n++] = ',';
                shape[n++] = *s;
            }
            shape[n] = '\0';
            csv__text(out, shape, 0);
            if (shown)
                ckb_strbuf_printf(out, ",");
            else
                csv__text(out, why, 0);
            ckb_strbuf_printf(out, "\n");
        }
    }
}
