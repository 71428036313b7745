/* The workload table: registry.def expanded into declarations and rows. */
#include <string.h>

#include "workloads/workload.h"

#define CKB_WORKLOAD(id) extern const ckb_workload ckb_wl_##id;
#include "workloads/registry.def"
#undef CKB_WORKLOAD

static const ckb_workload *const registry__table[] = {
#define CKB_WORKLOAD(id) &ckb_wl_##id,
#include "workloads/registry.def"
#undef CKB_WORKLOAD
};

enum { REGISTRY_COUNT = sizeof registry__table / sizeof registry__table[0] };
/* The suite of DESIGN §1: 17 production and 33 fused workloads. */
_Static_assert(REGISTRY_COUNT == 50, "registry.def lost or gained a row");

int ckb_workload_count(void) { return REGISTRY_COUNT; }

const ckb_workload *ckb_workload_at(int i)
{
    return i >= 0 && i < REGISTRY_COUNT ? registry__table[i] : NULL;
}

/* Workloads a test binary adds (ckb_workload_add_for_tests); set by its
 * constructors, before any thread starts. */
static const ckb_workload *registry__extra[4];
static int registry__nextra;

int ckb_workload_add_for_tests(const ckb_workload *w)
{
    if (registry__nextra == (int)(sizeof registry__extra / sizeof registry__extra[0]))
        return -1;
    registry__extra[registry__nextra++] = w;
    return 0;
}

const ckb_workload *ckb_workload_find(const char *name)
{
    if (!name || !*name)
        return NULL;
    for (int i = 0; i < registry__nextra; i++)
        if (strcmp(registry__extra[i]->id, name) == 0)
            return registry__extra[i];
    size_t n = strlen(name);
    for (int i = 0; i < REGISTRY_COUNT; i++) {
        const char *id = registry__table[i]->id;
        if (strcmp(id, name) == 0)
            return registry__table[i];
        /* "8p" matches "8p_GEMM"; case-insensitive for the number prefix form */
        if (strncasecmp(id, name, n) == 0 && id[n] == '_' && strchr(name, '_') == NULL)
            return registry__table[i];
    }
    return NULL;
}
