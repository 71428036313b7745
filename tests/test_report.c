/* `ckbench report` from the fixed suite results in tests/fixtures/report/:
 * the Markdown carries the fixture's numbers, the HTML loads in a real
 * headless browser (Debian's chromium) without a console message, its DOM
 * holds the same table cells and one SVG point per workload and variant,
 * and text from the results cannot inject markup. The expected figures are
 * computed here from the fixture's raw fields (medians, FLOPs, bytes,
 * peaks), independently of src/report/.
 *
 * Artefacts (a screenshot, the report, the dumped DOM) are kept in
 * $CKBENCH_ARTEFACTS/report, default build/test-artefacts/report. */
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fsutil.h"
#include "core/proc.h"
#include "core/strbuf.h"
#include "eval_util.h"
#include "harness.h"
#include "report/escape.h"
#include "report/svg.h"

#define FIX_A "tests/fixtures/report/machine_a"
#define FIX_B "tests/fixtures/report/machine_b"

/* Runs ckbench report with the given paths; returns the exit code and
 * keeps the output (caller frees) when out_text is not NULL. */
static int run_report(const char *out, const char *p1, const char *p2, char **out_text)
{
    char *argv[8];
    int n = 0;
    argv[n++] = (char *)ckbt_bin();
    argv[n++] = "report";
    if (p1)
        argv[n++] = (char *)p1;
    if (p2)
        argv[n++] = (char *)p2;
    if (out) {
        argv[n++] = "--out";
        argv[n++] = (char *)out;
    }
    argv[n] = NULL;
    ckb_proc_result r;
    if (ckb_proc_run(argv, 60, 1 << 16, &r) != 0)
        return -1;
    int code = r.exited ? r.exit_code : 128 + r.signal;
    if (out_text)
        *out_text = strdup(r.output);
    ckb_proc_result_free(&r);
    return code;
}

static char *read_in(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return ckb_read_file(path, NULL);
}

/* The figures one suite-table row must show, computed from the fixture. */
typedef struct {
    const char *id;
    char cell[11][48]; /* in the order of cols[] below */
    double ai, base_g, exp_g;
} expected_row;

enum { NCOLS = 11 };
static const char *const cols[NCOLS] = {"base_ms",  "expert_ms",   "speedup",    "base_gflops",
                                        "expert_gflops", "base_pct", "expert_pct", "ai",
                                        "bound",    "base_status", "expert_status"};

static void fmtnum(char *buf, double v, int d)
{
    if (isfinite(v))
        snprintf(buf, 48, "%.*f", d, v);
    else
        snprintf(buf, 48, "-");
}

static int expected_rows(const char *fixture, expected_row *rows, int max, json_object **keep)
{
    char path[512];
    snprintf(path, sizeof path, "%s/results.json", fixture);
    json_object *root = json_object_from_file(path);
    *keep = root;
    if (!root)
        return 0;
    json_object *m = json_object_object_get(json_object_object_get(root, "metadata"), "machine");
    double bf16 = ckbt_num(m, "bf16_gflops"), bw = ckbt_num(m, "bw_gbs");
    json_object *list = json_object_object_get(root, "workloads");
    int n = 0;
    for (size_t i = 0; i < json_object_array_length(list) && n < max; i++) {
        json_object *e = json_object_array_get_idx(list, i);
        json_object *b = json_object_object_get(e, "baseline");
        json_object *x = json_object_object_get(e, "expert");
        expected_row *r = &rows[n++];
        r->id = ckbt_str(e, "workload");
        double flops = ckbt_num(e, "flops"), bytes = ckbt_num(e, "bytes");
        double bms = json_object_object_get(b, "median_ms") ? ckbt_num(b, "median_ms") : NAN;
        int xok = x && strcmp(ckbt_str(x, "status"), "ok") == 0;
        double ems = xok ? ckbt_num(x, "median_ms") : NAN;
        r->ai = flops / bytes;
        r->base_g = flops / (bms * 1e-3) / 1e9;
        r->exp_g = flops / (ems * 1e-3) / 1e9;
        fmtnum(r->cell[0], bms, 3);
        fmtnum(r->cell[1], ems, 3);
        fmtnum(r->cell[2], bms / ems, 2);
        fmtnum(r->cell[3], r->base_g, 1);
        fmtnum(r->cell[4], r->exp_g, 1);
        fmtnum(r->cell[5], 100 * r->base_g / bf16, 1);
        fmtnum(r->cell[6], 100 * r->exp_g / bf16, 1);
        fmtnum(r->cell[7], r->ai, 2);
        snprintf(r->cell[8], 48, "%s", r->ai >= bf16 / bw ? "compute" : "memory");
        snprintf(r->cell[9], 48, "%s", ckbt_str(b, "status"));
        snprintf(r->cell[10], 48, "%s", x ? ckbt_str(x, "status") : "-");
    }
    return n;
}

/* The cells of the Markdown table row of `id` after the table anchor;
 * returns how many (the workload cell first). */
static int md_row(const char *md, const char *anchor, const char *id, char cells[16][512])
{
    char key[256];
    snprintf(key, sizeof key, "<a id=\"%s\"></a>", anchor);
    const char *t = md ? strstr(md, key) : NULL;
    snprintf(key, sizeof key, "\n| [%s](", id);
    const char *row = t ? strstr(t, key) : NULL;
    if (!row)
        return 0;
    row += 2;
    int n = 0;
    const char *p = row;
    while (*p && *p != '\n' && n < 16) {
        const char *start = p, *q = p;
        /* A cell ends at an unescaped " |". */
        while (*q && *q != '\n' && !(q[0] == ' ' && q[1] == '|' && (q == start || q[-1] != '\\')))
            q++;
        snprintf(cells[n], 512, "%.*s", (int)(q - start), start);
        n++;
        if (q[0] != ' ')
            break;
        p = q + 2;
        if (*p == ' ')
            p++;
        if (*p == '\n' || !*p)
            break;
    }
    return n;
}

/* A copy of s from the first `from` up to the next `to` (or the end);
 * NULL when `from` is absent. Caller frees. */
static char *slice(const char *s, const char *from, const char *to)
{
    const char *a = s ? strstr(s, from) : NULL;
    if (!a)
        return NULL;
    const char *b = strstr(a, to);
    size_t n = b ? (size_t)(b - a) : strlen(a);
    char *r = malloc(n + 1);
    memcpy(r, a, n);
    r[n] = '\0';
    return r;
}

/* The text of the cell (row, col) of an HTML table in the dumped DOM, with
 * a link's markup and the character references undone. */
static int dom_cell(const char *dom, const char *table_id, const char *row, const char *col,
                    char *out, size_t n)
{
    char key[256];
    snprintf(key, sizeof key, "<table id=\"%s\"", table_id);
    char *table = slice(dom, key, "</table>");
    snprintf(key, sizeof key, "<tr data-row=\"%s\"", row);
    char *tr = slice(table, key, "</tr>");
    snprintf(key, sizeof key, "data-col=\"%s\"", col);
    char *td = slice(tr, key, "</td>");
    int ok = td != NULL;
    if (td) {
        const char *p = strchr(td, '>');
        p = p ? p + 1 : td;
        if (strncmp(p, "<a ", 3) == 0 && strchr(p, '>'))
            p = strchr(p, '>') + 1;
        size_t k = 0;
        for (; *p && *p != '<' && k + 1 < n; p++) {
            static const char *const ents[][2] = {{"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"},
                                                  {"&quot;", "\""}, {"&#39;", "'"}};
            int hit = 0;
            for (int e = 0; e < 5 && !hit; e++)
                if (strncmp(p, ents[e][0], strlen(ents[e][0])) == 0) {
                    out[k++] = ents[e][1][0];
                    p += strlen(ents[e][0]) - 1;
                    hit = 1;
                }
            if (!hit)
                out[k++] = *p;
        }
        out[k] = '\0';
    }
    free(table);
    free(tr);
    free(td);
    return ok;
}

typedef struct {
    char series[32], key[96];
    double x, y, px, py;
} dom_point;

static double attr_num(const char *tag, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, " %s=\"", name);
    const char *p = strstr(tag, key);
    return p ? strtod(p + strlen(key), NULL) : NAN;
}

static void attr_str(const char *tag, const char *name, char *out, size_t n)
{
    char key[64];
    snprintf(key, sizeof key, " %s=\"", name);
    const char *p = strstr(tag, key);
    out[0] = '\0';
    if (p) {
        p += strlen(key);
        const char *q = strchr(p, '"');
        snprintf(out, n, "%.*s", q ? (int)(q - p) : 0, p);
    }
}

/* The markers (class "pt") of one figure in the dumped DOM. */
static int dom_points(const char *dom, const char *figure_id, dom_point *pts, int max)
{
    char key[128];
    snprintf(key, sizeof key, "<figure id=\"%s\"", figure_id);
    char *fig = slice(dom, key, "</figure>");
    int n = 0;
    for (const char *p = fig; p && (p = strstr(p, "class=\"pt\"")) && n < max; p++) {
        const char *open = p;
        while (open > fig && *open != '<')
            open--;
        const char *close = strchr(p, '>');
        if (!close)
            break;
        char tag[1024];
        snprintf(tag, sizeof tag, "%.*s", (int)(close - open), open);
        dom_point *d = &pts[n++];
        attr_str(tag, "data-series", d->series, sizeof d->series);
        attr_str(tag, "data-key", d->key, sizeof d->key);
        d->x = attr_num(tag, "data-x");
        d->y = attr_num(tag, "data-y");
        /* circle: cx/cy; square: its corner + 4; diamond: its path start. */
        d->px = strncmp(tag, "<circle", 7) == 0 ? attr_num(tag, "cx") : attr_num(tag, "x") + 4;
        d->py = strncmp(tag, "<circle", 7) == 0 ? attr_num(tag, "cy") : attr_num(tag, "y") + 4;
    }
    free(fig);
    return n;
}

static const dom_point *find_point(const dom_point *p, int n, const char *series, const char *key)
{
    for (int i = 0; i < n; i++)
        if (strcmp(p[i].series, series) == 0 && strcmp(p[i].key, key) == 0)
            return &p[i];
    return NULL;
}

static int close_to(double a, double b) { return fabs(a - b) <= 1e-4 * fabs(b) + 1e-9; }

/* Debian's chromium, or $CKBENCH_CHROMIUM. */
static const char *chromium_path(void)
{
    static char found[512];
    const char *env = getenv("CKBENCH_CHROMIUM");
    if (env && *env)
        return access(env, X_OK) == 0 ? env : NULL;
    const char *names[] = {"chromium", "chromium-browser"};
    const char *path = getenv("PATH");
    for (int k = 0; k < 2; k++) {
        char *dirs = strdup(path ? path : "/usr/bin:/bin"), *save = NULL;
        for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
            snprintf(found, sizeof found, "%s/%s", d, names[k]);
            if (access(found, X_OK) == 0) {
                free(dirs);
                return found;
            }
        }
        free(dirs);
    }
    return NULL;
}

/* Loads file:// page in headless chromium; `extra` is "--dump-dom" or a
 * --screenshot option. stdout goes to out_path, the browser log (console
 * messages included) to log_path. Returns the exit code. */
static int chromium_run(const char *bin, const char *profile, const char *extra, const char *page,
                        const char *out_path, const char *log_path)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "'%s' --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir='%s' "
             "--enable-logging=stderr --v=0 --window-size=1400,3200 %s 'file://%s' >'%s' 2>'%s'",
             bin, profile, extra, page, out_path, log_path);
    char *argv[] = {"sh", "-c", cmd, NULL};
    ckb_proc_result r;
    if (ckb_proc_run(argv, 90, 4096, &r) != 0)
        return -1;
    int code = r.exited ? r.exit_code : 128 + r.signal;
    ckb_proc_result_free(&r);
    return code;
}

/* The page's console messages in a chromium log (the report has no script,
 * so any is an error: a blocked load, a parse error, a policy violation). */
static int console_lines(const char *log, ckb_strbuf *out)
{
    int n = 0;
    for (const char *p = log; p && (p = strstr(p, ":CONSOLE")); p++) {
        const char *e = strchr(p, '\n');
        ckb_strbuf_printf(out, "%.*s\n", e ? (int)(e - p) : 300, p);
        n++;
    }
    return n;
}

static void artefact_dir(char *buf, size_t n)
{
    const char *env = getenv("CKBENCH_ARTEFACTS");
    snprintf(buf, n, "%s/report", env && *env ? env : "build/test-artefacts");
    ckb_mkdirs(buf);
}

static void copy_file(const char *from, const char *dir, const char *name)
{
    size_t n;
    char *t = ckb_read_file(from, &n), path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (t)
        ckb_write_file_atomic(path, t, n);
    free(t);
}

CKBT_TEST(report_markdown_has_the_fixture_numbers, "quick")
{
    char out[512];
    snprintf(out, sizeof out, "%s/rep", ckbt_tmpdir());
    CKBT_EXPECT(run_report(out, FIX_A, NULL, NULL) == 0, "report exits 0");
    char *md = read_in(out, "report.md"), *svg = read_in(out, "roofline-A.svg");
    CKBT_EXPECT(md != NULL && svg != NULL, "report.md and the roofline it shows are written");
    CKBT_EXPECT(md && strstr(md, "![") && strstr(md, "](roofline-A.svg)"), "the figure is linked");
    json_object *root;
    expected_row rows[8];
    int n = expected_rows(FIX_A, rows, 8, &root);
    CKBT_EXPECT(n == 4, "the fixture has 4 workloads (%d)", n);
    for (int i = 0; i < n; i++) {
        char cells[16][512];
        int k = md_row(md, "suite-A", rows[i].id, cells);
        CKBT_EXPECT(k == NCOLS + 1, "%s: %d cells in its Markdown row (%d)", rows[i].id,
                    NCOLS + 1, k);
        for (int c = 0; c < NCOLS && k == NCOLS + 1; c++)
            CKBT_EXPECT(strcmp(cells[c + 1], rows[i].cell[c]) == 0, "%s %s: '%s' (want '%s')",
                        rows[i].id, cols[c], cells[c + 1], rows[i].cell[c]);
    }
    /* Worked by hand from the fixture: 12.5 ms / 4.8 ms; 1.2 GFLOP in 12.5 ms
     * = 96 GFLOP/s = 48% of 200; 4.8 MB moved: 250 FLOP/B, past the ridge of 10. */
    char cells[16][512];
    md_row(md, "suite-A", "8p_GEMM", cells);
    CKBT_EXPECT(strcmp(cells[3], "2.60") == 0 && strcmp(cells[4], "96.0") == 0 &&
                    strcmp(cells[6], "48.0") == 0 && strcmp(cells[8], "250.00") == 0,
                "8p row by hand: %s %s %s %s", cells[3], cells[4], cells[6], cells[8]);
    md_row(md, "suite-A", "12p_RMSNorm", cells);
    CKBT_EXPECT(strcmp(cells[9], "memory") == 0, "12p at 0.25 FLOP/B is memory-bound: %s",
                cells[9]);
    /* The failed expert's message cannot open HTML or break the table. */
    /* (Only the fenced source may hold markup characters verbatim.) */
    const char *err_line = md ? strstr(md, "| max error 3.5") : NULL;
    char line[600] = "";
    if (err_line)
        snprintf(line, sizeof line, "%.*s", (int)strcspn(err_line, "\n"), err_line);
    CKBT_EXPECT(!strstr(line, "<") && strstr(line, "&lt;script&gt;document.title=\"pwned\"") &&
                    strstr(line, "\\| pipe |"),
                "markup in an error message is escaped in the Markdown: %s", line);
    CKBT_EXPECT(md && strstr(md, "```c\n/* A stand-in"), "the source is fenced");
    CKBT_EXPECT(md && strstr(md, "c[i] = a[i] & b[i];"), "the expert's source is shown verbatim");
    CKBT_EXPECT(md && strstr(md, "src/missing_expert.c was not found"),
                "a missing source is said, not silently dropped");
    CKBT_EXPECT(md && strstr(md, "host-a&lt;&amp;&gt;") && strstr(md, "json-c 0.16"),
                "machine facts (host, libraries) are shown");
    free(md);
    free(svg);
    json_object_put(root);
}

CKBT_TEST(report_compares_two_suites, "quick")
{
    char out[512];
    snprintf(out, sizeof out, "%s/rep", ckbt_tmpdir());
    CKBT_EXPECT(run_report(out, FIX_A, FIX_B "/results.json", NULL) == 0, "report exits 0");
    char *md = read_in(out, "report.md");
    json_object *ra, *rb;
    expected_row a[8], b[8];
    int na = expected_rows(FIX_A, a, 8, &ra), nb = expected_rows(FIX_B, b, 8, &rb);
    CKBT_EXPECT(na == 4 && nb == 3, "fixtures read");
    /* Columns: workload, then (base, expert, speedup) per suite, then the
     * B/A time ratios (baseline, expert). */
    char cells[16][512], want[48];
    CKBT_EXPECT(md_row(md, "compare-table", "8p_GEMM", cells) == 9, "8p compared");
    CKBT_EXPECT(strcmp(cells[1], a[0].cell[0]) == 0 && strcmp(cells[4], b[0].cell[0]) == 0,
                "both baselines side by side: %s %s", cells[1], cells[4]);
    fmtnum(want, 7.5 / 12.5, 3);
    CKBT_EXPECT(strcmp(cells[7], want) == 0, "baseline time B/A %s (want %s)", cells[7], want);
    fmtnum(want, 4.0 / 4.8, 3);
    CKBT_EXPECT(strcmp(cells[8], want) == 0, "expert time B/A %s (want %s)", cells[8], want);
    CKBT_EXPECT(md_row(md, "compare-table", "50k_Matmul_GELU_Softmax", cells) == 9 &&
                    strcmp(cells[1], "-") == 0 && strcmp(cells[4], "1.100") == 0,
                "a workload only B ran is listed with '-' for A");
    CKBT_EXPECT(md_row(md, "compare-table", "41k_Gemm_Add_ReLU", cells) == 9 &&
                    strcmp(cells[4], "-") == 0,
                "a workload only A ran is listed with '-' for B");
    CKBT_EXPECT(md && strstr(md, "| compute roof GFLOP/s (bf16 work) | 200.0 | 400.0 | 2.00 |"),
                "the machines' peaks side by side with their ratio");
    CKBT_EXPECT(md && strstr(md, "Suite B: the expert source src/8p_expert.c has changed since "
                                 "this run"),
                "a source whose hash differs is not shown as the one that ran");
    free(md);
    json_object_put(ra);
    json_object_put(rb);
}

CKBT_TEST(report_html_loads_in_headless_chromium, "quick")
{
    const char *bin = chromium_path();
    CKBT_EXPECT(bin != NULL, "Debian's chromium is needed for this test and was not found in "
                             "PATH: run scripts/deps.sh (as root) or apt-get install chromium");
    if (!bin)
        return;
    const char *tmp = ckbt_tmpdir();
    char out[512], page[600], dom_path[600], log_path[600], profile[600], art[512], shot[700];
    snprintf(out, sizeof out, "%s/rep", tmp);
    snprintf(page, sizeof page, "%s/report.html", out);
    snprintf(dom_path, sizeof dom_path, "%s/dom.html", tmp);
    snprintf(log_path, sizeof log_path, "%s/chromium.log", tmp);
    snprintf(profile, sizeof profile, "%s/profile", tmp);
    CKBT_EXPECT(run_report(out, FIX_A, FIX_B, NULL) == 0, "report exits 0");
    char *html = read_in(out, "report.html");
    int outside = !html;
    static const char *const refs[] = {"<script", "<img", "<link", "<iframe", "<object",
                                       "<embed", "@import", "<base"};
    for (size_t i = 0; html && i < sizeof refs / sizeof *refs; i++)
        outside |= strstr(html, refs[i]) != NULL;
    for (const char *h = html; h && (h = strstr(h, "href=\"")); h++)
        outside |= h[6] != '#';
    for (const char *h = html; h && (h = strstr(h, "url(")); h++)
        outside |= h[4] != '#';
    CKBT_EXPECT(!outside && strstr(html, "Content-Security-Policy"),
                "the page references nothing outside itself and forbids it");

    /* The detector first: a page with a script error and an outside load
     * must show up as console messages, or a clean log proves nothing. */
    char bad[600];
    snprintf(bad, sizeof bad, "%s/bad.html", tmp);
    const char *bad_html = "<!DOCTYPE html><html><body><p>x</p><img src=\"http://192.0.2.1/a.png\">"
                           "<script>no_such_function()</script></body></html>";
    ckb_write_file_atomic(bad, bad_html, strlen(bad_html));
    CKBT_EXPECT(chromium_run(bin, profile, "--dump-dom", bad, dom_path, log_path) == 0,
                "chromium runs");
    char *log = ckb_read_file(log_path, NULL);
    ckb_strbuf msgs = {0};
    CKBT_EXPECT(console_lines(log, &msgs) >= 1, "a broken page's errors are seen in the log");
    ckb_strbuf_free(&msgs);
    free(log);

    CKBT_EXPECT(chromium_run(bin, profile, "--dump-dom", page, dom_path, log_path) == 0,
                "chromium loads the report");
    char *dom = ckb_read_file(dom_path, NULL);
    log = ckb_read_file(log_path, NULL);
    CKBT_EXPECT(dom && strstr(dom, "<table id=\"suite-A\""), "the DOM holds the suite table");
    CKBT_EXPECT(console_lines(log, &msgs) == 0, "no console message while loading:\n%s",
                msgs.data ? msgs.data : "");
    ckb_strbuf_free(&msgs);

    /* Table cells: the fixture's numbers, and the same as the Markdown's. */
    char *md = read_in(out, "report.md");
    json_object *root;
    expected_row rows[8];
    int n = expected_rows(FIX_A, rows, 8, &root);
    for (int i = 0; i < n; i++) {
        char cells[16][512];
        int k = md_row(md, "suite-A", rows[i].id, cells);
        for (int c = 0; c < NCOLS; c++) {
            char got[512];
            int found = dom_cell(dom, "suite-A", rows[i].id, cols[c], got, sizeof got);
            CKBT_EXPECT(found && strcmp(got, rows[i].cell[c]) == 0, "DOM %s %s: '%s' (want '%s')",
                        rows[i].id, cols[c], found ? got : "(no cell)", rows[i].cell[c]);
            CKBT_EXPECT(k == NCOLS + 1 && strcmp(cells[c + 1], got) == 0,
                        "Markdown and HTML agree on %s %s", rows[i].id, cols[c]);
        }
    }
    char got[512];
    CKBT_EXPECT(dom_cell(dom, "compare-table", "8p_GEMM", "B_base_ratio", got, sizeof got) &&
                    strcmp(got, "0.600") == 0,
                "the comparison ratio in the DOM: %s", got);

    /* Roofline points: one per workload with a timed baseline, one per
     * correct expert, at (arithmetic intensity, GFLOP/s). */
    dom_point pts[32];
    int np = dom_points(dom, "roofline-A", pts, 32), nbase = 0, nexp = 0;
    for (int i = 0; i < n; i++) {
        const dom_point *b = find_point(pts, np, "baseline", rows[i].id);
        const dom_point *x = find_point(pts, np, "expert", rows[i].id);
        if (isfinite(rows[i].base_g)) {
            nbase++;
            CKBT_EXPECT(b && close_to(b->x, rows[i].ai) && close_to(b->y, rows[i].base_g),
                        "%s baseline point at (%g, %g), want (%g, %g)", rows[i].id,
                        b ? b->x : NAN, b ? b->y : NAN, rows[i].ai, rows[i].base_g);
        }
        if (isfinite(rows[i].exp_g)) {
            nexp++;
            CKBT_EXPECT(x && close_to(x->x, rows[i].ai) && close_to(x->y, rows[i].exp_g),
                        "%s expert point at (%g, %g)", rows[i].id, x ? x->x : NAN, x ? x->y : NAN);
        } else {
            CKBT_EXPECT(!x, "%s has no expert point (its expert failed or is absent)", rows[i].id);
        }
    }
    CKBT_EXPECT(np == nbase + nexp && nbase == 3 && nexp == 1, "%d points (%d + %d)", np, nbase,
                nexp);
    /* Drawn where the numbers say: log x grows right, log y grows up. */
    const dom_point *g = find_point(pts, np, "baseline", "8p_GEMM");
    const dom_point *r = find_point(pts, np, "baseline", "12p_RMSNorm");
    const dom_point *gx = find_point(pts, np, "expert", "8p_GEMM");
    CKBT_EXPECT(g && r && gx && r->px < g->px && gx->py < g->py && fabs(gx->px - g->px) < 1,
                "point positions follow their values");
    CKBT_EXPECT(dom && strstr(dom, ">8p</text>"), "points are labelled with the workload number");

    /* Text from the results stays text. */
    CKBT_EXPECT(dom && !strstr(dom, "<script") && !strstr(dom, "<img") &&
                    strstr(dom, "<title>ckbench report</title>"),
                "no element was injected by an error message or a source");
    CKBT_EXPECT(dom_cell(dom, "w-1p_Flash_Attention-results", "A", "error", got, sizeof got) &&
                    strstr(got, "<script>document.title=\"pwned\"</script> & <img"),
                "the error message is shown as text: %s", got);
    CKBT_EXPECT(dom && strstr(dom, "<details class=\"code\"><summary>Expert source, as run in "
                                   "suite A: src/8p_expert.c</summary>"),
                "the expert source is collapsible");

    char artd[512];
    artefact_dir(artd, sizeof artd);
    snprintf(art, sizeof art, "%s", artd);
    snprintf(shot, sizeof shot, "--screenshot=%s/report.png", art);
    char png[700];
    snprintf(png, sizeof png, "%s/report.png", art);
    unlink(png);
    CKBT_EXPECT(chromium_run(bin, profile, shot, page, dom_path, log_path) == 0,
                "chromium takes a screenshot");
    struct stat st;
    CKBT_EXPECT(stat(png, &st) == 0 && st.st_size > 10000, "screenshot saved in %s", png);
    copy_file(page, art, "report.html");
    snprintf(page, sizeof page, "%s/report.md", out);
    copy_file(page, art, "report.md");
    snprintf(page, sizeof page, "%s/roofline-A.svg", out);
    copy_file(page, art, "roofline-A.svg");
    free(html);
    free(md);
    free(dom);
    free(log);
    json_object_put(root);
}

CKBT_TEST(report_rejects_bad_input_with_a_message, "quick")
{
    const char *tmp = ckbt_tmpdir();
    char out[512], p[600], *text = NULL;
    snprintf(out, sizeof out, "%s/rep", tmp);
    CKBT_EXPECT(run_report(out, NULL, NULL, &text) == 2 && strstr(text, "at least one"),
                "no path: exit 2 and what to give: %s", text);
    free(text);
    snprintf(p, sizeof p, "%s/nope.json", tmp);
    CKBT_EXPECT(run_report(out, p, NULL, &text) == 1 && strstr(text, "nope.json"),
                "a missing file is named: %s", text);
    free(text);
    static const struct {
        const char *body, *says;
    } bad[] = {
        {"{\"metadata\": {}, \"workloads\": [", "not valid JSON"},
        {"[1, 2, 3]", "not a suite result"},
        {"{\"metadata\": {}, \"workloads\": [{\"baseline\": {}}]}", "workloads[0]"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(p, sizeof p, "%s/bad%zu.json", tmp, i);
        ckb_write_file_atomic(p, bad[i].body, strlen(bad[i].body));
        int code = run_report(out, p, NULL, &text);
        CKBT_EXPECT(code == 1 && strstr(text, bad[i].says) && strstr(text, p),
                    "bad input %zu: exit %d, says '%s': %s", i, code, bad[i].says, text);
        free(text);
    }
    /* A result with nothing timed still makes a report, with "-" cells. */
    snprintf(p, sizeof p, "%s/empty.json", tmp);
    const char *empty = "{\"metadata\": {}, \"workloads\": [{\"workload\": \"8p_GEMM\"}]}";
    ckb_write_file_atomic(p, empty, strlen(empty));
    CKBT_EXPECT(run_report(out, p, NULL, &text) == 0, "a sparse result is reported: %s", text);
    free(text);
    char *md = read_in(out, "report.md"), cells[16][512];
    CKBT_EXPECT(md_row(md, "suite-A", "8p_GEMM", cells) == NCOLS + 1 &&
                    strcmp(cells[1], "-") == 0 && strcmp(cells[9], "-") == 0,
                "unknown figures are '-'");
    free(md);
}

CKBT_TEST(report_svg_plots_log_axes_and_stacked_bars, "quick")
{
    /* The plotting helpers on their own, as the generation-run sections
     * will use them: a line plot of two series and stacked bars. */
    double x[3] = {1, 10, 100}, y1[3] = {0.5, 5, 50}, y2[3] = {2, -1, 200};
    const char *keys[3] = {"a", "b<c", "c"};
    ckb_svg_series s[2] = {
        {.name = "one", .style = CKB_SVG_LINE | CKB_SVG_MARKERS, .n = 3, .x = x, .y = y1,
         .keys = keys},
        {.name = "two & more", .style = CKB_SVG_MARKERS, .n = 3, .x = x, .y = y2, .marker = 2},
    };
    ckb_svg_frame f = {.id = "t", .title = "log <axes>"};
    ckb_svg_axis_init(&f.x, 1, "x");
    ckb_svg_axis_init(&f.y, 1, "y");
    for (int i = 0; i < 3; i++) {
        ckb_svg_axis_include(&f.x, x[i]);
        ckb_svg_axis_include(&f.y, y1[i]);
        ckb_svg_axis_include(&f.y, y2[i]);
    }
    ckb_svg_axis_finish(&f.x);
    ckb_svg_axis_finish(&f.y);
    CKBT_EXPECT(close_to(f.x.lo, 1) && close_to(f.x.hi, 100) && close_to(f.y.lo, 0.1) &&
                    close_to(f.y.hi, 1000),
                "log axes round out to decades: x %g..%g y %g..%g", f.x.lo, f.x.hi, f.y.lo,
                f.y.hi);
    ckb_strbuf sb = {0};
    ckb_svg_plot(&sb, &f, s, 2);
    const char *svg = sb.data;
    int npts = 0;
    for (const char *p = svg; (p = strstr(p, "class=\"pt\"")); p++)
        npts++;
    CKBT_EXPECT(npts == 5, "5 markers: the point at y = -1 cannot sit on a log axis (%d)", npts);
    CKBT_EXPECT(strstr(svg, "data-key=\"b&lt;c\"") && strstr(svg, "log &lt;axes&gt;") &&
                    strstr(svg, "two &amp; more") && !strstr(svg, "b<c"),
                "every string is escaped");
    CKBT_EXPECT(strstr(svg, "<polyline"), "the first series is drawn as a line");
    /* Labels of points that sit on each other do not overlap. */
    {
        double cx[3] = {10, 10, 10}, cy[3] = {10, 10, 10};
        const char *lab[3] = {"1p", "2p", "4p"};
        ckb_svg_series same = {.name = "same", .x = cx, .y = cy, .n = 3, .labels = lab,
                               .style = CKB_SVG_MARKERS};
        ckb_strbuf lb = {0};
        ckb_svg_plot(&lb, &f, &same, 1);
        double ys[3], xs[3];
        int nl = 0;
        for (const char *p = lb.data; nl < 3 && (p = strstr(p, "class=\"pt-label\" x=\"")); p++)
            if (sscanf(p, "class=\"pt-label\" x=\"%lf\" y=\"%lf\"", &xs[nl], &ys[nl]) == 2)
                nl++;
        CKBT_EXPECT(nl == 3, "three labels drawn (%d)", nl);
        for (int a = 0; a < nl; a++)
            for (int b = a + 1; b < nl; b++)
                CKBT_EXPECT(fabs(ys[a] - ys[b]) >= 10 || fabs(xs[a] - xs[b]) >= 12,
                            "labels %d and %d overlap: (%.1f,%.1f) and (%.1f,%.1f)", a, b, xs[a],
                            ys[a], xs[b], ys[b]);
        ckb_strbuf_free(&lb);
    }
    /* Equal steps in log space: 1, 10, 100 are evenly spaced. */
    double cx[3];
    const char *p = svg;
    for (int i = 0; i < 3; i++) {
        p = strstr(p, "<circle cx=\"");
        cx[i] = p ? strtod(p + 12, NULL) : NAN;
        p = p ? p + 1 : svg;
    }
    CKBT_EXPECT(fabs((cx[1] - cx[0]) - (cx[2] - cx[1])) < 0.2 && cx[1] > cx[0],
                "log spacing: %g %g %g", cx[0], cx[1], cx[2]);
    ckb_strbuf_free(&sb);

    const char *cats[2] = {"best-of-n", "refine"}, *segs[3] = {"compile", "wrong", "ok"};
    double v[6] = {3, 2, 5, 1, 0, 9};
    ckb_svg_bars b = {.id = "bars", .title = "taxonomy", .ylabel = "samples", .ncat = 2,
                      .nseg = 3, .cats = cats, .segs = segs, .values = v};
    ckb_svg_stacked_bars(&sb, &b);
    int nbars = 0;
    for (const char *q = sb.data; (q = strstr(q, "class=\"bar\"")); q++)
        nbars++;
    CKBT_EXPECT(nbars == 6, "one segment per category and kind (%d)", nbars);
    CKBT_EXPECT(strstr(sb.data, "data-cat=\"refine\" data-seg=\"ok\" data-value=\"9\""),
                "segments carry their values");
    /* Stacked: the refine bar's segments end at the top of its total 10. */
    const char *okbar = strstr(sb.data, "data-cat=\"refine\" data-seg=\"ok\"");
    const char *cmp = strstr(sb.data, "data-cat=\"refine\" data-seg=\"compile\"");
    double y_ok = NAN, h_ok = NAN, y_cmp = NAN, h_cmp = NAN;
    for (int k = 0; k < 2; k++) {
        const char *at = k ? cmp : okbar, *open = at;
        while (open && open > sb.data && *open != '<')
            open--;
        char tag[512];
        snprintf(tag, sizeof tag, "%.*s", at ? (int)(at - open) : 0, open ? open : "");
        *(k ? &y_cmp : &y_ok) = attr_num(tag, "y");
        *(k ? &h_cmp : &h_ok) = attr_num(tag, "height");
    }
    CKBT_EXPECT(fabs(y_ok + h_ok - y_cmp) < 0.2 && fabs(h_ok / h_cmp - 9) < 0.1,
                "the ok segment (9) sits on the compile segment (1): y %g+%g vs %g, heights %g %g",
                y_ok, h_ok, y_cmp, h_ok, h_cmp);
    ckb_strbuf_free(&sb);
}

CKBT_TEST(report_goes_beside_the_results_by_default, "quick")
{
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/run", ckbt_tmpdir());
    ckb_mkdirs(dir);
    copy_file(FIX_B "/results.json", dir, "results.json");
    char *text = NULL;
    CKBT_EXPECT(run_report(NULL, dir, NULL, &text) == 0, "report exits 0: %s", text);
    free(text);
    snprintf(path, sizeof path, "%s/report.html", dir);
    struct stat st;
    CKBT_EXPECT(stat(path, &st) == 0 && st.st_size > 1000, "%s written", path);
    snprintf(path, sizeof path, "%s/results.json", dir);
    CKBT_EXPECT(run_report(NULL, path, NULL, &text) == 0, "a file path works too");
    free(text);
}

CKBT_TEST(report_from_a_real_bench_run, "full")
{
    /* End to end: what `ckbench bench` records is what the report needs
     * (library versions, host, the expert source and its hash). */
    char out[512], path[600];
    snprintf(out, sizeof out, "%s/run", ckbt_tmpdir());
    char *argv[] = {(char *)ckbt_bin(), "bench", "--size", "small", "--workloads", "8p",
                    "--iters", "5", "--warmup", "1", "--out", out, NULL};
    ckb_proc_result r;
    CKBT_EXPECT(ckb_proc_run(argv, 600, 1 << 16, &r) == 0 && r.exited && r.exit_code == 0,
                "bench runs: %.1000s", r.output ? r.output : "");
    ckb_proc_result_free(&r);
    snprintf(path, sizeof path, "%s/results.json", out);
    json_object *root = json_object_from_file(path);
    json_object *meta = json_object_object_get(root, "metadata");
    json_object *libs = json_object_object_get(meta, "libraries");
    CKBT_EXPECT(*ckbt_str(libs, "json-c") && *ckbt_str(libs, "libseccomp") &&
                    *ckbt_str(libs, "glibc") && *ckbt_str(meta, "hostname") &&
                    *ckbt_str(meta, "kernel"),
                "library versions and host recorded");
    json_object *x = json_object_object_get(
        json_object_array_get_idx(json_object_object_get(root, "workloads"), 0), "expert");
    CKBT_EXPECT(strcmp(ckbt_str(x, "source"), "workloads/8p_GEMM/expert.c") == 0 &&
                    strlen(ckbt_str(x, "source_hash")) == 16,
                "the expert's source and hash recorded: %s %s", ckbt_str(x, "source"),
                ckbt_str(x, "source_hash"));
    char *text = NULL;
    CKBT_EXPECT(run_report(NULL, out, NULL, &text) == 0, "report: %s", text);
    free(text);
    char *md = read_in(out, "report.md"), cells[16][512];
    CKBT_EXPECT(md && strstr(md, "as run in suite A: workloads/8p_GEMM/expert.c") &&
                    !strstr(md, "has changed since") && !strstr(md, "was not found"),
                "the verified expert source is shown");
    CKBT_EXPECT(md_row(md, "suite-A", "8p_GEMM", cells) == NCOLS + 1 &&
                    strcmp(cells[NCOLS - 1], "ok") == 0 && strtod(cells[1], NULL) > 0,
                "the suite row has a timed baseline");
    free(md);
    json_object_put(root);
}

/* Generation runs in the report: the hand-made runs of tests/fixtures/runs/
 * (their scores are worked out by hand in tests/test_score.c) with suite A. */
#define RUN_BON "tests/fixtures/runs/bon"
#define RUN_BON2 "tests/fixtures/runs/bon2"
#define RUN_REFINE "tests/fixtures/runs/refine"

static int run_report_gen(const char *out, char **out_text)
{
    char *argv[] = {(char *)ckbt_bin(), "report", FIX_A, RUN_BON, RUN_BON2, RUN_REFINE,
                    "--out", (char *)out, NULL};
    ckb_proc_result r;
    if (ckb_proc_run(argv, 60, 1 << 16, &r) != 0)
        return -1;
    int code = r.exited ? r.exit_code : 128 + r.signal;
    if (out_text)
        *out_text = strdup(r.output);
    ckb_proc_result_free(&r);
    return code;
}

/* The comparison row of each group, by hand (see tests/test_score.c):
 * solved, per-sample correctness, floored geomean, beating the baseline,
 * % of expert, compile rate, samples, budget. */
static const struct {
    const char *group;
    const char *cells[8];
} gen_rows[] = {
    {"best-of-n / model-x", {"3/4", "41.2%", "1.60", "50.0%", "69.1%", "70.6%", "17", "6"}},
    {"refine / model-x", {"3/4", "37.5%", "1.47", "75.0%", "59.4%", "75.0%", "16", "4"}},
};
static const char *const gen_cols[8] = {"solved",     "per_sample", "geomean", "beating",
                                        "pct_expert", "compile",    "samples", "budget"};

CKBT_TEST(report_generation_runs_in_markdown, "quick")
{
    char out[512], *text = NULL;
    snprintf(out, sizeof out, "%s/rep", ckbt_tmpdir());
    CKBT_EXPECT(run_report_gen(out, &text) == 0, "report of a suite and three runs: %s", text);
    free(text);
    /* The methods' best kernels on the suite's roofline (runs and suite are
     * both at small size): 8p's best is bon2's 4.545 ms sample. */
    char *roof = read_in(out, "roofline-A.svg");
    CKBT_EXPECT(roof && strstr(roof, "8p_GEMM best-of-n / model-x: 4.545 ms") &&
                    strstr(roof, "refine / model-x"),
                "the roofline has the methods' best kernels");
    free(roof);
    char *md = read_in(out, "report.md");
    for (size_t i = 0; i < sizeof gen_rows / sizeof *gen_rows; i++) {
        char cells[16][512];
        int k = md_row(md, "gen-compare", gen_rows[i].group, cells);
        CKBT_EXPECT(k == 9, "%s: 9 cells in its comparison row (%d)", gen_rows[i].group, k);
        for (int c = 0; c < 8 && k == 9; c++)
            CKBT_EXPECT(strcmp(cells[c + 1], gen_rows[i].cells[c]) == 0, "%s %s: '%s' (want '%s')",
                        gen_rows[i].group, gen_cols[c], cells[c + 1], gen_rows[i].cells[c]);
    }
    /* The headline leads: the same figures as the comparison, fast_1 as the
     * share beating the baseline, before the machine table. */
    static const struct {
        const char *group, *cells[4];
    } head[] = {{"best-of-n / model-x", {"3/4", "1.60x", "69.1%", "50.0%"}},
                {"refine / model-x", {"3/4", "1.47x", "59.4%", "75.0%"}}};
    for (size_t i = 0; i < sizeof head / sizeof *head; i++) {
        char cells[16][512];
        int k = md_row(md, "headline-methods", head[i].group, cells);
        CKBT_EXPECT(k == 5, "%s: 5 cells in its headline row (%d)", head[i].group, k);
        for (int c = 0; c < 4 && k == 5; c++)
            CKBT_EXPECT(strcmp(cells[c + 1], head[i].cells[c]) == 0, "headline %s col %d: '%s' "
                        "(want '%s')", head[i].group, c + 1, cells[c + 1], head[i].cells[c]);
    }
    /* Each workload's section lists its generated kernels, linked. */
    {
        char cells[16][512];
        int k = md_row(md, "w-8p_GEMM-generated", "best-of-n / model-x", cells);
        CKBT_EXPECT(k == 4 && strcmp(cells[3], "2.20") == 0 &&
                        strstr(cells[0], "(#k-best-of-n-model-x-8p_GEMM)"),
                    "8p's section lists best-of-n's best kernel: %d cells, best '%s', '%s'", k,
                    k == 4 ? cells[3] : "", k ? cells[0] : "");
    }
    /* JAXBench's summary, worked by hand from the fixture (score.h): refine's
     * 41k has compiled samples (resource_limit, wrong_result) but no correct
     * one, so it counts compiled, unsolved and 1x in the means. */
    static const struct {
        const char *group, *cells[8];
    } jb[] = {{"best-of-n / model-x",
               {"4", "4 (100.0%)", "3 (75.0%)", "2 (50.0%)", "1 (25.0%)", "3.00", "1.80", "1.60"}},
              {"refine / model-x",
               {"4", "4 (100.0%)", "3 (75.0%)", "3 (75.0%)", "0 (0.0%)", "3.00", "1.62", "1.47"}}};
    for (size_t i = 0; i < sizeof jb / sizeof *jb; i++) {
        char cells[16][512];
        int k = md_row(md, "gen-jaxbench-table", jb[i].group, cells);
        CKBT_EXPECT(k == 9, "%s: 9 cells in its JAXBench row (%d)", jb[i].group, k);
        for (int c = 0; c < 8 && k == 9; c++)
            CKBT_EXPECT(strcmp(cells[c + 1], jb[i].cells[c]) == 0, "JAXBench %s col %d: '%s' "
                        "(want '%s')", jb[i].group, c + 1, cells[c + 1], jb[i].cells[c]);
    }
    {
        char *bars = read_in(out, "speedup_bars.svg"), *dist = read_in(out, "speedup_distribution.svg");
        /* best-of-n's order: 12p 0.9x, 8p 2.2x, 41k 3.0x, then unsolved 1p */
        const char *a = bars ? strstr(bars, "data-key=\"12p_RMSNorm\"") : NULL;
        const char *b = a ? strstr(a, "data-key=\"8p_GEMM\"") : NULL;
        const char *c = b ? strstr(b, "data-key=\"41k_Gemm_Add_ReLU\"") : NULL;
        CKBT_EXPECT(c != NULL, "speedup_bars.svg holds the tasks slowest to fastest");
        CKBT_EXPECT(dist && strncmp(dist, "<svg", 4) == 0 && strstr(dist, "1/2-1x") &&
                        strstr(dist, "2-4x"),
                    "speedup_distribution.svg written with its bins");
        free(bars);
        free(dist);
    }
    const char *hl = md ? strstr(md, "## Headline") : NULL;
    const char *mach = md ? strstr(md, "## Machine and settings") : NULL;
    CKBT_EXPECT(hl && mach && hl < mach, "the headline comes before the machine table");
    /* The taxonomy counts, the fast_p table and the per-workload rows. */
    static const char *const lines[] = {
        "| best-of-n / model-x | 7 | 3 | 1 | 1 | 1 | 0 | 2 | 0 | 0 | 1 | 1 | syntax 2, "
        "unknown_intrinsic 1 | 17 |",
        "| refine / model-x | 6 | 4 | 0 | 0 | 0 | 1 | 3 | 1 | 1 | 0 | 0 | wrong_signature 1, "
        "unspecified 1, syntax 2 | 16 |",
        "| best-of-n / model-x | 2 | 0.0% | 25.0% | 50.0% |",
        "| refine / model-x | 1.5 | 0.0% | 25.0% | - |",
        "| [8p_GEMM](#k-best-of-n-model-x-8p_GEMM) | 6/6 | 3 | 2 | 2.20 | 2.20 | 2.50 | 88.0% | "
        "tests/fixtures/runs/bon2 #0 |",
        "| [41k_Gemm_Add_ReLU](#k-refine-model-x-41k_Gemm_Add_ReLU) | 4/4 | 0 | - | - | 1.00 | "
        "4.00 | 25.0% | - |",
        "](fastp.svg)", "](solved.svg)", "](taxonomy.svg)", "](roofline-A.svg)",
        "<a id=\"k-best-of-n-model-x-8p_GEMM\"></a>",
        "/* bon2 8p_GEMM #0: the 2.2x kernel */",
        "/* refine 1p_Flash_Attention #3: the 1.4x kernel */",
        "half-written last line dropped",
    };
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++)
        CKBT_EXPECT(md && strstr(md, lines[i]), "report.md holds: %s", lines[i]);
    CKBT_EXPECT(md && !strstr(md, "the 1.8x kernel"),
                "pooled: bon's own best (1.8x) is not shown, bon2's 2.2x is");
    CKBT_EXPECT(md && strstr(md, "No correct sample among 4 (budget 4)"),
                "an unsolved workload says so");
    CKBT_EXPECT(md && strstr(md, "<a id=\"suite-A\"></a>"), "the suite's parts are still there");
    static const char *const figs[] = {"fastp.svg", "solved.svg", "taxonomy.svg"};
    for (int i = 0; i < 3; i++) {
        char *svg = read_in(out, figs[i]);
        CKBT_EXPECT(svg && strncmp(svg, "<svg", 4) == 0, "%s written beside report.md", figs[i]);
        free(svg);
    }
    free(md);

    /* Runs alone make a report too (no suite parts). */
    char *argv[] = {(char *)ckbt_bin(), "report", RUN_REFINE, "--out", out, NULL};
    ckb_proc_result r;
    CKBT_EXPECT(ckb_proc_run(argv, 60, 1 << 16, &r) == 0 && r.exited && r.exit_code == 0,
                "report of one run: %s", r.output ? r.output : "");
    ckb_proc_result_free(&r);
    md = read_in(out, "report.md");
    char cells[16][512];
    CKBT_EXPECT(md_row(md, "gen-compare", "refine / model-x", cells) == 9 &&
                    strcmp(cells[3], "1.47") == 0 && !strstr(md, "suite-A"),
                "a runs-only report");
    free(md);

    /* A workload id from the records is never a path out of best/. */
    char run[600], path[700];
    snprintf(run, sizeof run, "%s/evil", ckbt_tmpdir());
    snprintf(path, sizeof path, "%s/best", run);
    ckb_mkdirs(path);
    const char *rec = "{\"workload\":\"../../secret\",\"index\":0,\"method\":\"best-of-n\","
                      "\"model\":\"m\",\"status\":\"ok\",\"correct\":true,\"speedup\":2.0}\n";
    snprintf(path, sizeof path, "%s/records.jsonl", run);
    ckb_write_file_atomic(path, rec, strlen(rec));
    snprintf(path, sizeof path, "%s/secret.c", ckbt_tmpdir());
    ckb_write_file_atomic(path, "int leaked_secret;\n", 19);
    char *argv2[] = {(char *)ckbt_bin(), "report", run, "--out", out, NULL};
    CKBT_EXPECT(ckb_proc_run(argv2, 60, 1 << 16, &r) == 0 && r.exited && r.exit_code == 0,
                "report of a run with a strange id: %s", r.output ? r.output : "");
    ckb_proc_result_free(&r);
    md = read_in(out, "report.md");
    CKBT_EXPECT(md && strstr(md, "is not a plain name") && !strstr(md, "leaked_secret"),
                "the file outside the run is not read");
    free(md);
}

/* The polylines of each series of a figure in the DOM: per series name,
 * how many, and the first one's points. */
typedef struct {
    char series[64];
    int lines, npts;
    double first_y, last_y;
} dom_series;

static int dom_polylines(const char *dom, const char *figure_id, dom_series *out, int max)
{
    char key[128];
    snprintf(key, sizeof key, "<figure id=\"%s\"", figure_id);
    char *fig = slice(dom, key, "</figure>");
    int n = 0;
    for (const char *g = fig; g && (g = strstr(g, "<g class=\"series\"")) && n < max; g++) {
        const char *end = strstr(g, "</g>");
        dom_series *s = &out[n++];
        memset(s, 0, sizeof *s);
        char tag[512];
        snprintf(tag, sizeof tag, "%.*s", (int)strcspn(g, ">"), g);
        attr_str(tag, "data-series", s->series, sizeof s->series);
        for (const char *p = g; (p = strstr(p, "<polyline")) && (!end || p < end); p++) {
            if (s->lines++ > 0)
                continue;
            const char *q = strstr(p, "points=\"");
            for (q = q ? q + 8 : NULL; q && *q && *q != '"';) {
                char *e;
                strtod(q, &e);
                if (e == q || *e != ',')
                    break;
                double y = strtod(e + 1, &e);
                if (s->npts++ == 0)
                    s->first_y = y;
                s->last_y = y;
                q = e + strspn(e, " ");
            }
        }
    }
    free(fig);
    return n;
}

CKBT_TEST(report_generation_runs_in_headless_chromium, "quick")
{
    const char *bin = chromium_path();
    CKBT_EXPECT(bin != NULL, "Debian's chromium is needed for this test and was not found in "
                             "PATH: run scripts/deps.sh (as root) or apt-get install chromium");
    if (!bin)
        return;
    const char *tmp = ckbt_tmpdir();
    char out[512], page[600], dom_path[600], log_path[600], profile[600], *text = NULL;
    snprintf(out, sizeof out, "%s/rep", tmp);
    snprintf(page, sizeof page, "%s/report.html", out);
    snprintf(dom_path, sizeof dom_path, "%s/dom.html", tmp);
    snprintf(log_path, sizeof log_path, "%s/chromium.log", tmp);
    snprintf(profile, sizeof profile, "%s/profile", tmp);
    CKBT_EXPECT(run_report_gen(out, &text) == 0, "report exits 0: %s", text);
    free(text);
    char *html = read_in(out, "report.html");
    int outside = !html;
    static const char *const refs[] = {"<script", "<img", "<link", "<iframe", "<object",
                                       "<embed", "@import", "<base"};
    for (size_t i = 0; html && i < sizeof refs / sizeof *refs; i++)
        outside |= strstr(html, refs[i]) != NULL;
    for (const char *h = html; h && (h = strstr(h, "href=\"")); h++)
        outside |= h[6] != '#';
    for (const char *h = html; h && (h = strstr(h, "url(")); h++)
        outside |= h[4] != '#';
    CKBT_EXPECT(!outside, "the page references nothing outside itself");

    CKBT_EXPECT(chromium_run(bin, profile, "--dump-dom", page, dom_path, log_path) == 0,
                "chromium loads the report");
    char *dom = ckb_read_file(dom_path, NULL), *log = ckb_read_file(log_path, NULL);
    ckb_strbuf msgs = {0};
    CKBT_EXPECT(console_lines(log, &msgs) == 0, "no console message while loading:\n%s",
                msgs.data ? msgs.data : "");
    ckb_strbuf_free(&msgs);

    /* The comparison rows: the hand-computed numbers, as in the Markdown. */
    char *md = read_in(out, "report.md");
    for (size_t i = 0; i < sizeof gen_rows / sizeof *gen_rows; i++) {
        char cells[16][512];
        int k = md_row(md, "gen-compare", gen_rows[i].group, cells);
        for (int c = 0; c < 8; c++) {
            char got[512];
            int found = dom_cell(dom, "gen-compare", gen_rows[i].group, gen_cols[c], got,
                                 sizeof got);
            CKBT_EXPECT(found && strcmp(got, gen_rows[i].cells[c]) == 0,
                        "DOM %s %s: '%s' (want '%s')", gen_rows[i].group, gen_cols[c],
                        found ? got : "(no cell)", gen_rows[i].cells[c]);
            CKBT_EXPECT(k == 9 && strcmp(cells[c + 1], got) == 0, "Markdown and HTML agree");
        }
    }
    CKBT_EXPECT(dom && strstr(dom, "<a href=\"#g-best-of-n-model-x\">best-of-n / model-x</a>") &&
                    strstr(dom, "<h3 id=\"g-best-of-n-model-x\">"),
                "a comparison row links to its group");

    /* fast_p: one step polyline per method. Both groups start at 3 of 4
     * workloads timed-correct (y of 0.75) and fall to 0 past the largest
     * speedup; each has three distinct best speedups, so 1 + 2 x 3 + 1 points. */
    dom_series ser[8];
    int ns = dom_polylines(dom, "gen-fastp", ser, 8);
    CKBT_EXPECT(ns == 2 && strcmp(ser[0].series, "best-of-n / model-x") == 0 &&
                    strcmp(ser[1].series, "refine / model-x") == 0,
                "two fast_p series (%d)", ns);
    for (int i = 0; i < ns; i++)
        CKBT_EXPECT(ser[i].lines == 1 && ser[i].npts == 8 && ser[i].last_y > ser[i].first_y,
                    "%s: one polyline of 8 points falling (%d, %d, y %g -> %g)", ser[i].series,
                    ser[i].lines, ser[i].npts, ser[i].first_y, ser[i].last_y);
    CKBT_EXPECT(ns == 2 && fabs(ser[0].first_y - ser[1].first_y) < 0.05 &&
                    fabs(ser[0].last_y - ser[1].last_y) < 0.05,
                "both start at the same share and end at 0");

    /* Correctness vs samples: a marker per k with the share solved. */
    char *fig = slice(dom, "<figure id=\"gen-solved\"", "</figure>");
    static const struct {
        const char *series;
        double x, y;
    } solved[] = {{"best-of-n / model-x", 1, 0.25}, {"best-of-n / model-x", 2, 0.75},
                  {"best-of-n / model-x", 6, 0.75}, {"refine / model-x", 1, 0},
                  {"refine / model-x", 2, 0.75},    {"refine / model-x", 4, 0.75}};
    int npts = 0;
    for (const char *p = fig; p && (p = strstr(p, "class=\"pt\"")); p++)
        npts++;
    CKBT_EXPECT(npts == 6 + 4, "a marker per sample count: 6 + 4 (%d)", npts);
    for (size_t i = 0; i < sizeof solved / sizeof *solved; i++) {
        char key[200];
        snprintf(key, sizeof key, "data-series=\"%s\" data-x=\"%g\" data-y=\"%g\"",
                 solved[i].series, solved[i].x, solved[i].y);
        CKBT_EXPECT(fig && strstr(fig, key), "solved curve point %s", key);
    }
    free(fig);

    /* The taxonomy: a bar per group, a segment per status with its count. */
    fig = slice(dom, "<figure id=\"gen-taxonomy\"", "</figure>");
    int nbars = 0;
    for (const char *p = fig; p && (p = strstr(p, "class=\"bar\"")); p++)
        nbars++;
    CKBT_EXPECT(nbars == 2 * 11, "2 bars x 11 statuses (%d segments)", nbars);
    static const char *const segs[] = {
        "data-cat=\"best-of-n / model-x\" data-seg=\"ok\" data-value=\"7\"",
        "data-cat=\"best-of-n / model-x\" data-seg=\"compile_error\" data-value=\"3\"",
        "data-cat=\"refine / model-x\" data-seg=\"wrong_result\" data-value=\"3\"",
        "data-cat=\"refine / model-x\" data-seg=\"crash\" data-value=\"0\"",
    };
    for (size_t i = 0; i < sizeof segs / sizeof *segs; i++)
        CKBT_EXPECT(fig && strstr(fig, segs[i]), "segment %s", segs[i]);
    CKBT_EXPECT(fig && strstr(fig, "class=\"legend-item\"") && strstr(fig, ">provider_error<"),
                "the bars have a legend");
    free(fig);

    /* The kernels: linked, collapsible, their text escaped. */
    CKBT_EXPECT(dom && strstr(dom, "<a href=\"#k-best-of-n-model-x-41k_Gemm_Add_ReLU\">") &&
                    strstr(dom, "<h4 id=\"k-best-of-n-model-x-41k_Gemm_Add_ReLU\">"),
                "a workload row links to its best kernel");
    CKBT_EXPECT(dom && strstr(dom, "<summary>Source: tests/fixtures/runs/bon2/best/8p_GEMM.c"
                                   "</summary>") &&
                    strstr(dom, "/* bon2 8p_GEMM #0: the 2.2x kernel */"),
                "the best kernel of the pooled runs is shown");
    CKBT_EXPECT(dom && strstr(dom, "return a &lt; b &amp;&amp; b &gt; 0;") &&
                    strstr(dom, "&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;") &&
                    !strstr(dom, "<script"),
                "kernel sources are text, not markup");

    char art[512], shot[800], png[700];
    artefact_dir(art, sizeof art);
    snprintf(png, sizeof png, "%s/report-generation.png", art);
    snprintf(shot, sizeof shot, "--screenshot=%s", png);
    unlink(png);
    CKBT_EXPECT(chromium_run(bin, profile, shot, page, dom_path, log_path) == 0,
                "chromium takes a screenshot");
    struct stat st;
    CKBT_EXPECT(stat(png, &st) == 0 && st.st_size > 10000, "screenshot saved in %s", png);
    copy_file(page, art, "report-generation.html");
    static const char *const figs[] = {"fastp.svg", "solved.svg", "taxonomy.svg"};
    for (int i = 0; i < 3; i++) {
        char from[700];
        snprintf(from, sizeof from, "%s/%s", out, figs[i]);
        copy_file(from, art, figs[i]);
    }
    free(html);
    free(md);
    free(dom);
    free(log);
}
