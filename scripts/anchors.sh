#!/usr/bin/env bash
# anchors.sh — the experts against the best library a user could pick
# instead: MKL (from PyPI) and OpenBLAS (from Debian), each timed on the
# expert's shapes with one pass of the workload's epilogue, alternating with
# `ckbench bench` of the same workload in one run (rounds of anchor, anchor,
# bench), so that the ratios come from one stretch of the machine's time.
#
# Installs into build/anchors/ (never a dependency of make or make test):
# a Python venv with mkl-devel, and Debian's libopenblas-dev when missing.
#
#   scripts/anchors.sh [--workloads 8p,29k,32k,41k,50k] [--size host]
#                      [--threads N] [--rounds 3] [--iters 20] [--unit auto|bf16|f32]
#
# --unit auto takes the host's fastest unit from `ckbench machine`: bf16
# (the libraries' bf16 GEMM) where the bf16 dot or AMX beats f32 FMA, else
# f32 (sgemm on operands widened outside the timing, which flatters the
# anchor). Prints a table; writes build/anchors/anchors.json.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=$root/build/anchors
workloads=8p,29k,32k,41k,50k
size=host
threads=$(nproc)
rounds=3
iters=20
warmup=3
unit=auto

while [ $# -gt 0 ]; do
    case $1 in
    --workloads) workloads=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --unit) unit=$2; shift 2 ;;
    -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "anchors.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done

ckbench=$root/build/ckbench
[ -x "$ckbench" ] || make -C "$root" -j"$(nproc)" all >/dev/null
mkdir -p "$dir"

# MKL from PyPI, once.
venv=$dir/venv
if [ ! -f "$venv/.mkl-ok" ]; then
    echo "anchors: installing MKL (PyPI mkl-devel) into $venv" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q mkl-devel
    touch "$venv/.mkl-ok"
fi
mkl_lib=$(dirname "$(find "$venv/lib" -name 'libmkl_rt.so*' | head -1)")
mkl_inc=$(dirname "$(find "$venv/include" -name mkl.h | head -1)")
# libmkl_rt.so.2 only (no unversioned link in the wheel): link it by path.
mkl_rt=$(find "$mkl_lib" -name 'libmkl_rt.so*' | sort | head -1)
gcc -O2 -march=native -fopenmp -DANCHOR_MKL -I"$mkl_inc" "$root/scripts/anchors/anchor.c" \
    "$mkl_rt" -Wl,-rpath,"$mkl_lib" -lm -o "$dir/anchor-mkl"
libs=(mkl)

# OpenBLAS from Debian, when it can be installed.
if ! dpkg -s libopenblas-dev >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "anchors: installing libopenblas-dev" >&2
    apt-get install -y -q libopenblas-dev >/dev/null 2>&1 || true
fi
ob_inc=$(dirname "$(find /usr/include -path '*openblas-pthread*' -name cblas.h 2>/dev/null | head -1)" 2>/dev/null || true)
if [ -n "$ob_inc" ] && [ -d "$ob_inc" ]; then
    sb=
    nm -D "$(gcc -print-file-name=libopenblas.so)" 2>/dev/null | grep -q ' cblas_sbgemm$' &&
        sb=-DANCHOR_SBGEMM
    # shellcheck disable=SC2086
    gcc -O2 -march=native -fopenmp $sb -I"$ob_inc" "$root/scripts/anchors/anchor.c" -lopenblas -lm \
        -o "$dir/anchor-openblas"
    libs+=(openblas)
else
    echo "anchors: no OpenBLAS (libopenblas-dev not installed): MKL only" >&2
fi

# An OpenBLAS older than the CPU falls back to its generic core ("Prescott",
# SSE3: 4x slower here); name the newest core family the CPU's ISA runs.
if [ -x "$dir/anchor-openblas" ] && [ -z "${OPENBLAS_CORETYPE:-}" ]; then
    core=$(OPENBLAS_VERBOSE=2 "$dir/anchor-openblas" 8p f32 1 0 1 M=16 K=16 N=16 2>&1 |
        sed -n 's/^Core: //p')
    if [ "$core" = Prescott ] || [ "$core" = Core2 ] || [ "$core" = Nehalem ]; then
        flags=$(grep -m1 '^flags' /proc/cpuinfo)
        case $flags in
        *avx512_bf16*) export OPENBLAS_CORETYPE=COOPERLAKE ;;
        *avx512f*) export OPENBLAS_CORETYPE=SKYLAKEX ;;
        *avx2*) export OPENBLAS_CORETYPE=HASWELL ;;
        esac
        echo "anchors: OpenBLAS does not know this CPU (core $core): OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}" >&2
    fi
fi

# MKL's threads on GCC's OpenMP, as the epilogue's: one runtime in the process.
export MKL_THREADING_LAYER=GNU OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads

if [ "$unit" = auto ]; then
    unit=$("$ckbench" machine --threads "$threads" 2>/dev/null | python3 -c '
import json, sys
m = json.load(sys.stdin)
f32 = m.get("f32_gflops") or 0
bf = max(m.get("bf16_dot_gflops") or 0, m.get("bf16_amx_gflops") or 0)
print("bf16" if bf > f32 else "f32")')
fi

runs=$dir/runs
rm -rf "$runs"
mkdir -p "$runs"
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')
echo "anchors: $cpu, $threads threads, unit $unit, size $size, $rounds rounds" >&2

IFS=, read -r -a wl <<<"$workloads"
for r in $(seq 1 "$rounds"); do
    for w in "${wl[@]}"; do
        out=$runs/$w-$r
        # The bench first: it gives the dims the anchors then use.
        "$ckbench" bench --workloads "$w" --size "$size" --threads "$threads" --iters "$iters" \
            --warmup "$warmup" --out "$out" >/dev/null 2>"$out.err" ||
            { echo "anchors: bench $w failed: $(tail -3 "$out.err")" >&2; continue; }
        dims=$(python3 -c '
import json, sys
e = json.load(open(sys.argv[1]))["workloads"][0]
print(" ".join("%s=%d" % kv for kv in e["eval"]["dims"].items()))' "$out/results.json")
        for lib in "${libs[@]}"; do
            # shellcheck disable=SC2086
            "$dir/anchor-$lib" "$w" "$unit" "$threads" "$warmup" "$iters" $dims >"$out.$lib.json"
        done
    done
done

python3 - "$runs" "$rounds" "$unit" "$cpu" "${libs[@]}" <<'EOF'
import glob, json, os, statistics, sys
runs, rounds, unit, cpu, libs = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5:]
rows = {}
for res in sorted(glob.glob(os.path.join(runs, "*", "results.json"))):
    name = os.path.basename(os.path.dirname(res))
    w = name.rsplit("-", 1)[0]
    e = json.load(open(res))["workloads"][0]
    row = rows.setdefault(w, {"workload": e["workload"], "dims": e["eval"]["dims"],
                              "baseline": [], "expert": [], "disturbed": 0,
                              **{lib: [] for lib in libs}})
    row["baseline"].append(e["baseline"]["median_ms"])
    if e.get("expert") and e["expert"].get("median_ms"):
        row["expert"].append(e["expert"]["median_ms"])
    row["disturbed"] += bool(e.get("timing_disturbed"))
    for lib in libs:
        p = os.path.join(runs, name + "." + lib + ".json")
        if os.path.exists(p) and os.path.getsize(p):
            row[lib].append(json.load(open(p))["median_ms"])
med = lambda v: statistics.median(v) if v else None
out = {"cpu": cpu, "unit": unit, "rounds": rounds, "workloads": []}
head = "%-34s %10s %10s" % ("workload", "oneDNN ms", "expert ms")
for lib in libs:
    head += " %10s %14s" % (lib + " ms", "expert/" + lib)
print(head)
for w, row in rows.items():
    b, x = med(row["baseline"]), med(row["expert"])
    line = "%-34s %10.3f %10s" % (row["workload"], b, "%.3f" % x if x else "-")
    entry = {"workload": row["workload"], "dims": row["dims"], "baseline_ms": b,
             "expert_ms": x, "bench_runs_disturbed": row["disturbed"]}
    for lib in libs:
        a = med(row[lib])
        ratio = a / x if a and x else None  # > 1: the expert is faster than the library
        line += " %10s %14s" % ("%.3f" % a if a else "-", "%.2fx" % ratio if ratio else "-")
        units = set()
        for f in glob.glob(os.path.join(runs, w + "-*." + lib + ".json")):
            if os.path.getsize(f):
                units.add(json.load(open(f))["unit"])
        entry[lib + "_unit"] = ",".join(sorted(units))
        entry[lib + "_ms"] = a
        entry["expert_vs_" + lib] = ratio
    print(line + ("   (%d of %d bench runs disturbed)" % (row["disturbed"], len(row["baseline"]))
                  if row["disturbed"] else ""))
    out["workloads"].append(entry)
json.dump(out, open(os.path.join(os.path.dirname(runs), "anchors.json"), "w"), indent=1)
print("medians of %d rounds; expert/LIB = LIB's median / the expert's (above 1: the expert "
      "is faster); unit %s" % (rounds, unit))
for lib in libs:
    units = {e.get(lib + "_unit") for e in out["workloads"]} - {None, ""}
    if units and units != {unit}:
        print("note: %s ran on %s (a build without the %s GEMM)" % (lib, ",".join(sorted(units)), unit))
EOF
