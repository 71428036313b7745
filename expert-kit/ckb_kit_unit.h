/*
 * ckb_kit_unit.h — MMA, the matmul unit of the experts that have a choice,
 * in one encoding: 0 vdpbf16ps (AVX-512 BF16), 1 f32 FMA (bf16 widened
 * exactly), 2 AMX tiles. A path the target lacks runs as the expert's
 * fallback (each expert says which).
 *
 * `ckbench bench` and `tune` always pass MMA: the unit the machine profile
 * measured fastest for bf16 work (CKB_PARAM_HOST_UNIT), since the ISA does
 * not tell (an AMD Zen 4 runs the dot at twice the FMA rate, an Intel Xeon
 * without AMX at half). The default below serves a compile without it (a
 * plain `ckbench eval` of the expert): the widest unit the target has, AMX,
 * then the dot, then f32 FMA. An expert whose dot path lost to f32 FMA where
 * it was measured, or that has none, defines CKB_KIT_UNIT_NO_DOT before the
 * include: its default is then AMX where targeted, else f32 FMA.
 */
#pragma once

/* 1 where the compiler targets AMX (its tiles and their bf16 product), for
 * a condition that also tests MMA or the dims. */
#if defined(__AMX_BF16__) && defined(__AMX_TILE__)
#define CKB_KIT_AMX 1
#else
#define CKB_KIT_AMX 0
#endif

#ifndef MMA
#if CKB_KIT_AMX
#define MMA 2
#elif defined(__AVX512BF16__) && !defined(CKB_KIT_UNIT_NO_DOT)
#define MMA 0
#else
#define MMA 1
#endif
#endif

#if MMA < 0 || MMA > 2
#error "MMA must be 0 (vdpbf16ps), 1 (f32 FMA) or 2 (AMX)"
#endif
