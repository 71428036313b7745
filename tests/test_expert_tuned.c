/* tuned.json keyed by host (CPU model, ISA level, thread budget): each host
 * reads its own values, one without an entry runs the declared defaults and
 * is told which hosts the file has, and writing keeps the other hosts. */
#include <json-c/json.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "bench/expert.h"
#include "harness.h"
#include "machine/isa.h"
#include "machine/profile.h"

/* The defaults (resolved as with no profile), each plus bump. */
static void values_of(const ckb_workload *w, int64_t bump, int64_t *v)
{
    ckb_expert_defaults(w, NULL, v);
    for (int i = 0; i < w->nparams; i++)
        v[i] += bump;
}

static int same_values(const ckb_workload *w, const ckb_expert_config *c, const int64_t *v)
{
    for (int i = 0; i < w->nparams; i++)
        if (c->values[i] != v[i])
            return 0;
    return c->n == w->nparams;
}

CKBT_TEST(expert_tuned_json_is_keyed_by_host, "quick")
{
    const ckb_workload *w = ckb_workload_find("8p_GEMM");
    CKBT_EXPECT(w && w->nparams > 0, "8p_GEMM has tunable parameters");
    if (!w || w->nparams == 0)
        return;
    char path[512];
    snprintf(path, sizeof path, "%s/tuned.json", ckbt_tmpdir());
    const char *amx = "Intel(R) Xeon(R) Platinum 8481C | amx";
    const char *zen = "AMD EPYC | avx2";
    int64_t va[CKB_MAX_PARAMS], vz[CKB_MAX_PARAMS], def[CKB_MAX_PARAMS];
    values_of(w, 1, va);
    values_of(w, 2, vz);
    values_of(w, 0, def);
    ckb_expert_config c;
    ckb_tune_outcome out = {.best_ms = 10, .untuned_ms = 12, .speedup = 1.5,
                            .untuned_speedup = 1.25, .tried = 4, .correct = 4};

    /* no file: the defaults, untuned */
    ckb_expert_config_read(path, zen, w, CKB_SIZE_DEFAULT, 2, NULL, &c);
    CKBT_EXPECT(!c.tuned && same_values(w, &c, def) && strstr(c.note, "no tuned values") &&
                    strstr(c.note, "blocks from the host model"),
                "no file: defaults, their blocks the host model's, note '%s'", c.note);

    ckb_expert_config_set(w, va, &c);
    CKBT_EXPECT(ckb_expert_config_write(path, amx, w, CKB_SIZE_DEFAULT, 2, &c, &out) == 0,
                "write for the AMX host");
    ckb_expert_config_set(w, vz, &c);
    CKBT_EXPECT(ckb_expert_config_write(path, zen, w, CKB_SIZE_DEFAULT, 2, &c, &out) == 0,
                "write for the AVX2 host");

    ckb_expert_config_read(path, amx, w, CKB_SIZE_DEFAULT, 2, NULL, &c);
    CKBT_EXPECT(c.tuned && same_values(w, &c, va), "the AMX host reads its own values");
    ckb_expert_config_read(path, zen, w, CKB_SIZE_DEFAULT, 2, NULL, &c);
    CKBT_EXPECT(c.tuned && same_values(w, &c, vz) && !c.note[0],
                "the AVX2 host reads its own values (the AMX host's were kept)");

    /* the same CPU at another ISA level, or another budget: untuned */
    ckb_expert_config_read(path, "AMD EPYC | portable", w, CKB_SIZE_DEFAULT, 2, NULL, &c);
    CKBT_EXPECT(!c.tuned && same_values(w, &c, def), "another ISA level runs the defaults");
    CKBT_EXPECT(strstr(c.note, "untuned on this host") && strstr(c.note, amx) &&
                    strstr(c.note, zen),
                "the note names the hosts the file has: '%s'", c.note);
    ckb_expert_config_read(path, zen, w, CKB_SIZE_DEFAULT, 4, NULL, &c);
    CKBT_EXPECT(!c.tuned && strstr(c.note, "default/4t"), "another budget: '%s'", c.note);

    /* an entry from before host keys names no host: no host uses it */
    json_object *root = json_object_from_file(path), *legacy = json_object_new_object(),
                *params = json_object_new_object();
    for (int i = 0; i < w->nparams; i++)
        json_object_object_add(params, w->params[i].name, json_object_new_int64(va[i]));
    json_object_object_add(legacy, "params", params);
    json_object_object_add(root, "small/2t", legacy);
    CKBT_EXPECT(json_object_to_file(path, root) == 0, "write a legacy entry");
    json_object_put(root);
    ckb_expert_config_read(path, zen, w, CKB_SIZE_SMALL, 2, NULL, &c);
    CKBT_EXPECT(!c.tuned && same_values(w, &c, def) && strstr(c.note, "an unrecorded host"),
                "a legacy entry is not this host's: '%s'", c.note);

    /* the entry spells out its key */
    root = json_object_from_file(path);
    json_object *e;
    char key[256];
    snprintf(key, sizeof key, "default/2t @ %s", zen);
    CKBT_EXPECT(root && json_object_object_get_ex(root, key, &e), "key '%s'", key);
    json_object *v;
    CKBT_EXPECT(root && json_object_object_get_ex(e, "cpu", &v) &&
                    strcmp(json_object_get_string(v), "AMD EPYC") == 0 &&
                    json_object_object_get_ex(e, "isa_level", &v) &&
                    strcmp(json_object_get_string(v), "avx2") == 0,
                "cpu and isa_level recorded");
    json_object_put(root);
}

/* This host's key follows the ISA level in force. */
CKBT_TEST(expert_tuned_host_follows_ckbench_isa, "quick")
{
    char *keep = ckbt_env_save("CKBENCH_ISA"), host[200];
    setenv("CKBENCH_ISA", "portable", 1);
    ckb_expert_host(host, sizeof host);
    CKBT_EXPECT(strlen(host) > 11 && strcmp(host + strlen(host) - 11, " | portable") == 0,
                "host '%s'", host);
    ckbt_env_restore("CKBENCH_ISA", keep);
    ckb_expert_host(host, sizeof host);
    CKBT_EXPECT(strstr(host, ckb_isa_name(ckb_isa_level())) != NULL, "host '%s'", host);
}

/* `tune --all` walks every workload that has an expert (here with
 * --dry-run: the grids, nothing timed); one WORKLOAD or --all, not both
 * and not neither. */
CKBT_TEST(expert_tune_all_covers_every_expert, "quick")
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' tune --all --dry-run --size small 2>/dev/null", ckbt_bin());
    FILE *f = popen(cmd, "r");
    char line[512];
    int seen = 0, want = 0, order_ok = 1;
    char path[1024];
    for (int i = 0; i < ckb_workload_count(); i++)
        want += ckb_expert_path(ckb_workload_at(i), path, sizeof path);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "== ", 3) == 0) {
            char id[128];
            sscanf(line + 3, "%127s", id);
            const ckb_workload *w = ckb_workload_find(id);
            order_ok &= w && ckb_expert_path(w, path, sizeof path);
            seen++;
        }
    int rc = f ? pclose(f) : -1;
    CKBT_EXPECT(rc == 0 && seen == want && want >= 13 && order_ok,
                "tune --all: exit %d, %d workloads listed of %d with an expert", rc, seen, want);
    snprintf(cmd, sizeof cmd, "'%s' tune --dry-run >/dev/null 2>&1", ckbt_bin());
    int neither = system(cmd);
    snprintf(cmd, sizeof cmd, "'%s' tune 8p --all --dry-run >/dev/null 2>&1", ckbt_bin());
    int both = system(cmd);
    CKBT_EXPECT(WIFEXITED(neither) && WEXITSTATUS(neither) == 2 && WIFEXITED(both) &&
                    WEXITSTATUS(both) == 2,
                "tune with no WORKLOAD and no --all, or with both, must exit 2");
}

/* The tune grid of a unit parameter holds only the units the profile found:
 * 7p declares MMA 0, 1 and 2; an AVX-512 host without BF16 or AMX would run
 * all three on f32 FMA, and `tune --dry-run` lists that grid. */
CKBT_TEST(tune_grid_skips_units_the_host_lacks, "quick")
{
    const ckb_param unit = {.name = "MMA", .fallback = CKB_PARAM_HOST_UNIT, .nvalues = 3,
                            .values = {0, 1, 2}};
    const ckb_param plain = {.name = "BQ", .fallback = 64, .nvalues = 3, .values = {0, 1, 2}};
    ckb_machine fma_only = {.f32_gflops = 378};
    ckb_machine zen4 = {.f32_gflops = 233, .bf16_dot_gflops = 467};
    ckb_machine amx = {.f32_gflops = 460, .bf16_dot_gflops = 120, .bf16_amx_gflops = 5900};
    int kept[3][3];
    const ckb_machine *hosts[3] = {&fma_only, &zen4, &amx};
    for (int h = 0; h < 3; h++)
        for (int v = 0; v < 3; v++) {
            kept[h][v] = ckb_expert_value_runs(&unit, v, hosts[h]);
            CKBT_EXPECT(ckb_expert_value_runs(&plain, v, hosts[h]), "BQ=%d is no unit", v);
        }
    CKBT_EXPECT(!kept[0][0] && kept[0][1] && !kept[0][2], "FMA only: MMA=1 alone");
    CKBT_EXPECT(kept[1][0] && kept[1][1] && !kept[1][2], "Zen 4: MMA 0 and 1");
    CKBT_EXPECT(kept[2][0] && kept[2][1] && kept[2][2], "AMX host: all three");
    CKBT_EXPECT(ckb_expert_value_runs(&unit, 0, NULL), "no profile: nothing dropped");

    /* the same rule on the real grid, for this host's own profile */
    ckb_machine here;
    CKBT_EXPECT(ckb_machine_get(omp_get_num_procs(), NULL, &here) == 0, "profile");
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "'%s' tune 7p --dry-run 2>/dev/null", ckbt_bin());
    FILE *f = popen(cmd, "r");
    char line[512];
    int rows = 0, mma[3] = {0};
    while (f && fgets(line, sizeof line, f)) {
        const char *m = strstr(line, "MMA=");
        if (line[0] == '[' && m && m[4] >= '0' && m[4] <= '2') {
            rows++;
            mma[m[4] - '0']++;
        }
    }
    if (f)
        pclose(f);
    CKBT_EXPECT(rows > 0 && mma[1] > 0, "7p's grid listed (%d rows)", rows);
    CKBT_EXPECT((mma[0] > 0) == (here.bf16_dot_gflops > 0) &&
                    (mma[2] > 0) == (here.bf16_amx_gflops > 0),
                "MMA=0 %d rows (dot %.0f), MMA=2 %d rows (AMX %.0f)", mma[0],
                here.bf16_dot_gflops, mma[2], here.bf16_amx_gflops);
}

/* A parameter whose default is the host's fastest bf16 unit takes it from
 * the profile: the same AVX-512 BF16 ISA gives the dot on a Zen 4 and f32
 * FMA on a Xeon whose dot runs at half the FMA rate. */
CKBT_TEST(expert_host_unit_default_follows_the_profile, "quick")
{
    ckb_machine zen4 = {.f32_gflops = 233, .bf16_dot_gflops = 467};
    ckb_machine xeon = {.f32_gflops = 330, .bf16_dot_gflops = 165};
    ckb_machine amx = {.f32_gflops = 460, .bf16_dot_gflops = 120, .bf16_amx_gflops = 5900};
    ckb_machine avx2 = {.f32_gflops = 192};
    CKBT_EXPECT(ckb_expert_host_unit(&zen4) == 0, "Zen 4: the bf16 dot");
    CKBT_EXPECT(ckb_expert_host_unit(&xeon) == 1, "Xeon without AMX: f32 FMA");
    CKBT_EXPECT(ckb_expert_host_unit(&amx) == 2, "AMX host: AMX");
    CKBT_EXPECT(ckb_expert_host_unit(&avx2) == 1, "AVX2 host: f32 FMA");
    CKBT_EXPECT(ckb_expert_host_unit(NULL) == 1, "no profile: f32 FMA");

    int found = 0, experts = 0;
    for (int n = 0; n < ckb_workload_count(); n++) {
        const ckb_workload *w = ckb_workload_at(n);
        char expert[512];
        int units = 0;
        for (int i = 0; i < w->nparams; i++)
            units += w->params[i].fallback == CKB_PARAM_HOST_UNIT;
        if (ckb_expert_path(w, expert, sizeof expert)) {
            experts++;
            /* every expert is a matmul expert: the unit is the host's choice */
            CKBT_EXPECT(units == 1, "%s: %d host-unit parameters, wanted 1", w->id, units);
        }
        for (int i = 0; i < w->nparams; i++) {
            if (w->params[i].fallback != CKB_PARAM_HOST_UNIT)
                continue;
            found++;
            char path[512];
            snprintf(path, sizeof path, "%s/none.json", ckbt_tmpdir());
            ckb_expert_config c;
            ckb_expert_config_read(path, "AMD EPYC | avx512bf16", w, CKB_SIZE_DEFAULT, 2, &zen4,
                                   &c);
            CKBT_EXPECT(!c.tuned && c.values[i] == 0, "%s %s on Zen 4: %lld", w->id,
                        w->params[i].name, (long long)c.values[i]);
            ckb_expert_config_read(path, "Xeon | avx512bf16", w, CKB_SIZE_DEFAULT, 2, &xeon, &c);
            CKBT_EXPECT(c.values[i] == 1, "%s %s on the Xeon: %lld", w->id, w->params[i].name,
                        (long long)c.values[i]);
            char text[80];
            snprintf(text, sizeof text, "%s=0", w->params[i].name);
            ckb_expert_config_read(path, "AMD EPYC | avx512bf16", w, CKB_SIZE_DEFAULT, 2, &zen4,
                                   &c);
            CKBT_EXPECT(strcmp(c.text[i], text) == 0, "the define says it: %s", c.text[i]);
        }
    }
    CKBT_EXPECT(experts >= 13 && found == experts,
                "every expert declares its unit per host (%d of %d)", found, experts);
}
