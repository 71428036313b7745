/*
 * ckb_kit_blocks.h — the tunables of the experts that run their GEMM on
 * the kit's two drivers (8p, 41k, 50k), their shared untuned defaults, and
 * the drivers' tile set from them; then ckb_kit_gemm.h.
 *
 * Which driver (CKB_KIT_BLOCKS_PATH): 16, the resident one
 * (ckb_kit_gemm16_*, AVX-512 BF16), for the units the expert sends there
 * (CKB_KIT_BLOCKS_RESIDENT, a condition on MMA); else 8, the packed one
 * (ckb_kit_gemm8_*, on the unit MMA names for CKB_KIT_GEMM_UNIT, f32 FMA
 * by default), where the target has AVX2 + FMA; else 0, the expert's
 * portable C.
 *
 * The tunables (bench and tune pass MR, MC, NC, TN and MMA: the host
 * model's blocks and fastest unit; these defaults serve a plain eval):
 *   MR x NR  the micro-kernel's tile: 6 x 64 on the resident driver (NR 16,
 *            32, 48 or 64); on the packed one MR 6 and NR the kit's default
 *            for its unit and registers (ckb_kit_gemm.h)
 *   MC, NC   the expert's (defined before this file, per driver): rows of
 *            A reused across one packed block of NC columns of B
 *   KC       the packed driver's depth of a block (256, positive); a
 *            longer k accumulates in an f32 tile of GEMM_MB rows (1024
 *            rounded down to whole MR) where the expert bounds it
 *   TN       threads along N, the rest along M; 0: every thread along N
 *   AMX      1: the resident driver on AMX tiles where the compiler
 *            targets them and the dims allow (CKB_KIT_BLOCKS_TILES: M, N,
 *            K multiples of 32); 0: vdpbf16ps
 *
 * The expert defines first CKB_KIT_BLOCKS_RESIDENT, CKB_KIT_BLOCKS_TILES,
 * its MC and NC defaults, and where it has them its resident epilogues'
 * names (CKB_KIT_BLOCKS_EPI, _EPI_AMX: they become CKB_KIT_GEMM16_EPI and
 * _EPI_AMX on that driver only, so that no other path declares them) and
 * the packed driver's unit (CKB_KIT_GEMM_UNIT).
 */
#pragma once

#include "ckb_kit_unit.h"

#if CKB_KIT_BLOCKS_RESIDENT && defined(__AVX512BF16__) && defined(__AVX512BW__) &&           \
    defined(__AVX512VL__)
#define CKB_KIT_BLOCKS_PATH 16
#elif defined(__AVX2__) && defined(__FMA__)
#define CKB_KIT_BLOCKS_PATH 8
#else
#define CKB_KIT_BLOCKS_PATH 0
#endif

#ifndef MR
#define MR 6
#endif
#ifndef TN
#define TN 0
#endif
#ifndef AMX
#define AMX 1
#endif

#if CKB_KIT_BLOCKS_PATH == 16
#ifndef NR
#define NR 64
#endif
#define CKB_KIT_GEMM16_MR MR
#define CKB_KIT_GEMM16_NR NR
#if AMX && CKB_KIT_BLOCKS_TILES && NR % 32 == 0
#define CKB_KIT_GEMM16_UNIT 2 /* runs as 0 where the target lacks AMX */
#endif
#ifdef CKB_KIT_BLOCKS_EPI
#define CKB_KIT_GEMM16_EPI CKB_KIT_BLOCKS_EPI
#define CKB_KIT_GEMM16_EPI_AMX CKB_KIT_BLOCKS_EPI_AMX
#endif
#elif CKB_KIT_BLOCKS_PATH == 8
#ifndef KC
#define KC 256
#endif
#if KC < 1
#error "KC must be positive"
#endif
#ifndef GEMM_MB
#define GEMM_MB (1024 / MR * MR)
#endif
#define CKB_KIT_GEMM8_MR MR
#ifdef NR
#define CKB_KIT_GEMM8_NR NR
#endif
#endif

#include "ckb_kit_gemm.h"

#if CKB_KIT_BLOCKS_PATH == 8 && !defined(NR)
#define NR CKB_KIT_GEMM8_NR
#endif
