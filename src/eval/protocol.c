#include "eval/protocol.h"

uint64_t ckb_proto_layout(const ckb_workload *w, const int64_t *dims, uint64_t *offset)
{
    uint64_t off = 0;
    for (int i = 0; i < w->ntensors; i++) {
        offset[i] = off;
        off += (ckb_tensor_bytes(&w->tensors[i], dims) + 4095) / 4096 * 4096;
    }
    return off ? off : 4096;
}
