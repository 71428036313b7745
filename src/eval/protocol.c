#include "eval/protocol.h"

#include <string.h>

void ckb_proto_layout_of(const ckb_instance *in, ckb_proto_layout *l)
{
    const ckb_workload *w = in->w;
    memset(l, 0, sizeof *l);
    l->out_bytes = CKB_PROTO_HEADER_BYTES;
    for (int i = 0; i < w->ntensors; i++) {
        ckb_proto_place *p = &l->t[i];
        p->bytes = in->tensor_bytes[i];
        uint64_t aligned = (p->bytes + 63) / 64 * 64;
        if (aligned == 0)
            aligned = 64;
        p->chunk = (aligned + 4095) / 4096 * 4096;
        p->slack = aligned - p->bytes;
        uint64_t *end = w->tensors[i].role == CKB_IN ? &l->in_bytes : &l->out_bytes;
        p->chunk_off = *end;
        p->data_off = p->chunk_off + p->chunk - aligned;
        *end += p->chunk;
    }
    if (l->in_bytes == 0)
        l->in_bytes = 4096;
}
