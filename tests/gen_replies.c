/* Model replies for 12p_RMSNorm that the generation tests script: a kernel
 * that does not compile, a plain correct port, and a faster one. */
#include "gen_replies.h"

const char ckbt_gen_broken[] =
    "```c\nvoid workload(const ckb_bf16 *x, const ckb_bf16 *scale, ckb_bf16 *out)\n{\n"
    "    this is not C;\n}\n```\n";

const char ckbt_gen_correct[] =
    "A plain port of the reference:\n```c\n#include <math.h>\n"
    "void workload(const ckb_bf16 *x, const ckb_bf16 *scale, ckb_bf16 *out)\n{\n"
    "    for (int64_t r = 0; r < B * S; r++) {\n"
    "        float ss = 0.0f;\n"
    "        for (int64_t j = 0; j < D; j++)\n"
    "            ss += ckb_bf16_to_f32(x[r * D + j]) * ckb_bf16_to_f32(x[r * D + j]);\n"
    "        float inv = 1.0f / sqrtf(ss / (float)D + EPS);\n"
    "        for (int64_t j = 0; j < D; j++) {\n"
    "            ckb_bf16 n = ckb_f32_to_bf16(ckb_bf16_to_f32(x[r * D + j]) * inv);\n"
    "            out[r * D + j] = ckb_f32_to_bf16(ckb_bf16_to_f32(n) * "
    "ckb_bf16_to_f32(scale[j]));\n"
    "        }\n    }\n}\n```\n";

const char ckbt_gen_fast[] =
    "Rows split across threads, vectorised loops:\n```c\n#include <math.h>\n#include <omp.h>\n"
    "void workload(const ckb_bf16 *x, const ckb_bf16 *scale, ckb_bf16 *out)\n{\n"
    "#pragma omp parallel for schedule(static)\n"
    "    for (int64_t r = 0; r < B * S; r++) {\n"
    "        const ckb_bf16 *xr = x + r * D;\n"
    "        float ss = 0.0f;\n"
    "#pragma omp simd reduction(+ : ss)\n"
    "        for (int64_t j = 0; j < D; j++) {\n"
    "            float v = ckb_bf16_to_f32(xr[j]);\n"
    "            ss += v * v;\n"
    "        }\n"
    "        float inv = 1.0f / sqrtf(ss / (float)D + EPS);\n"
    "#pragma omp simd\n"
    "        for (int64_t j = 0; j < D; j++) {\n"
    "            float n = ckb_bf16_to_f32(ckb_f32_to_bf16(ckb_bf16_to_f32(xr[j]) * inv));\n"
    "            out[r * D + j] = ckb_f32_to_bf16(n * ckb_bf16_to_f32(scale[j]));\n"
    "        }\n    }\n}\n```\n";
