/* What a model is shown of a workload (see refsrc.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "gen/refsrc.h"

/* build/gen/shown_data.c, written by scripts/embed_shown.sh: NULL-ended,
 * ids and texts in the same order. */
extern const char *const ckb_shown_ids[];
extern const char *const ckb_shown_texts[];

const char *ckb_gen_shown(const ckb_workload *w)
{
    for (int i = 0; ckb_shown_ids[i]; i++)
        if (strcmp(ckb_shown_ids[i], w->id) == 0)
            return ckb_shown_texts[i];
    return NULL;
}

char *ckb_gen_reference_source(const ckb_workload *w, ckb_err *err)
{
    const char *s = ckb_gen_shown(w);
    if (!s) {
        ckb_err_set(err, CKB_E_NOT_FOUND,
                    "%s: this build embeds no workloads/%s/shown.md (add the file and rebuild)",
                    w->id, w->id);
        return NULL;
    }
    return ckb_xstrdup(s);
}
