#!/usr/bin/env bash
# What the evaluator's defences cost: evaluates one legitimate kernel N
# times and prints the median seconds of each stage, the time spent inside
# kernel calls, and the share of the evaluation that was harness.
#   scripts/sandbox_overhead.sh [N] [WORKLOAD] [FILE] [SIZE]
set -eu
n=${1:-5}
wl=${2:-8p}
file=${3:-workloads/8p_GEMM/expert.c}
size=${4:-default}
bin=${CKBENCH_BIN:-build/ckbench}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for i in $(seq "$n"); do
    "$bin" eval "$wl" "$file" --size "$size" >"$tmp/$i.json" 2>/dev/null || true
done
python3 - "$tmp" "$n" "$wl" "$file" "$size" <<'PY'
import json, statistics, sys, os
d, n, wl, f, size = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
rs = [json.load(open(os.path.join(d, x))) for x in sorted(os.listdir(d))]
ok = [r for r in rs if r.get("status") == "ok"]
if not ok:
    sys.exit("no evaluation ended ok: " + ", ".join(r.get("status", "?") for r in rs))
def med(key):
    return statistics.median(r["stage_seconds"].get(key, 0.0) for r in ok)
def calls(r):
    c = r["warmup"] + r["iters"]
    # every call of both kernels in the timing loop (runs repeated after a
    # disturbance count once)
    return c * (r["candidate"]["median_ms"] + r["baseline"]["median_ms"]) * 1e-3
kernel = statistics.median(calls(r) for r in ok)
total = med("total")
print(f"{wl} {f} at {size} size, median of {len(ok)} evaluations (of {n}):")
for k in ("compile", "setup", "correctness", "timing", "final_check", "total"):
    print(f"  {k:12s} {med(k):8.3f} s")
print(f"  kernel calls {kernel:8.3f} s inside the timing loop (candidate + baseline)")
print(f"  harness      {total - kernel:8.3f} s = {100 * (total - kernel) / total:.0f}% of the evaluation")
print(f"  timing loop overhead: {100 * (med('timing') - kernel) / med('timing'):.0f}% of the timing stage "
      f"(a fresh input set per call, stopping and resuming the sandboxes, copying and checking every output)")
PY
