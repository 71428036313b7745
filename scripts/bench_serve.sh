#!/usr/bin/env bash
# What `ckbench serve` costs and sustains on this host, as figures (a benchmark,
# not a test): run it on a quiet machine, after `make`.
#
#   scripts/bench_serve.sh [N] [SIZE]     N evaluations per throughput run (default 20),
#                                         at SIZE (default small; host: run `ckbench size`
#                                         first, or the server searches every size at start)
#
# 1. The API under load while an evaluation runs: requests per second and the
#    p50/p99 latency of GET /v1/evaluations/{id} and POST /v1/evaluations, with wrk
#    (Debian `wrk`; installed here when missing and root), 2 threads x 8
#    connections, 10 s each.
# 2. Throughput: N evaluations of one correct kernel (12p, tests/candidates/
#    legit_rmsnorm_avx512.c on AVX-512 hosts, else the plain one for 12p) through the
#    server (one batch, waited for) against a loop of N `ckbench eval`; evaluations
#    per hour for both, and the overhead of each per evaluation: its wall time less
#    the evaluations' own total seconds (stage_seconds.total), divided by N.
set -u
cd "$(dirname "$0")/.."
bin=${CKBENCH_BIN:-$PWD/build/ckbench}
n=${1:-20}
size=${2:-small}
if [ ! -x "$bin" ]; then
    echo "bench_serve: build first (make); no $bin" >&2
    exit 2
fi
if ! command -v wrk >/dev/null; then
    if [ "$(id -u)" -eq 0 ]; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null 2>&1
    fi
    command -v wrk >/dev/null || { echo "bench_serve: needs wrk (apt-get install wrk)" >&2; exit 2; }
fi
# size host: the server takes this host's stored sizes (`ckbench size` first)
hostsize=
[ "$size" = host ] && hostsize=--host-size
dir=$(mktemp -d /tmp/ckbench-bench-serve.XXXXXX)
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT

start_server() {
    rm -f "$dir/port"
    "$bin" serve --db "$dir/$1.db" --listen 127.0.0.1:0 --port-file "$dir/port" \
        --no-host-speed --max-queue 10000000 $hostsize 2>>"$dir/serve.log" &
    pid=$!
    for _ in $(seq 100); do [ -s "$dir/port" ] && break; sleep 0.1; done
    url=http://127.0.0.1:$(cat "$dir/port")
}
stop_server() { kill "$pid"; wait "$pid" 2>/dev/null; pid=; }

# A JSON request for FILE on WORKLOAD at size S, with more members.
request() {
    python3 - "$1" "$2" "$3" "$4" <<'EOF'
import json, sys
w, f, s, more = sys.argv[1:5]
r = {"workload": w, "source": open(f).read(), "size": s}
r.update(json.loads(more or "{}"))
print(json.dumps(r))
EOF
}

kernel=tests/candidates/legit_rmsnorm_avx512.c
grep -q avx512f /proc/cpuinfo || kernel=tests/candidates/legit_rmsnorm_qsort_sincos.c
lscpu | sed -n 's/^Model name: *//p' | head -1 | sed 's/^/host: /'
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(nproc) cores"

# ---- 1. the API while an evaluation runs -----------------------------------------
start_server api
long=$(request 8p tests/candidates/legit_gemm_omp_collapse.c default '{"iters": 400}' |
       curl -s -X POST --data-binary @- "$url/v1/evaluations" |
       python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
sleep 2
state() { curl -s "$url/v1/evaluations/$long" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])'; }
echo "while evaluation $long runs ($(state)):"
cat >"$dir/submit.lua" <<'EOF'
-- a new evaluation each time: distinct source and client_key
local n = 0
request = function()
    n = n + 1
    local key = string.format("%d-%d", math.random(1, 1000000000), n)
    local body = string.format('{"workload":"12p","size":"small","client_key":"k%s",' ..
                               '"source":"int v%s;"}', key, key:gsub("-", "_"))
    return wrk.format("POST", "/v1/evaluations", {["Content-Type"] = "application/json"}, body)
end
EOF
report() {
    awk -v what="$1" '/Requests\/sec/ {rps=$2} /^ +50%/ {p50=$2} /^ +99%/ {p99=$2}
         /Non-2xx/ {bad=$NF} END {printf "  %-36s %9.0f req/s   p50 %-8s p99 %-8s%s\n",
         what, rps, p50, p99, bad ? "  non-2xx: " bad : ""}'
}
wrk -t2 -c8 -d10s --latency "$url/v1/evaluations/$long" | report "GET /v1/evaluations/{id}"
wrk -t2 -c8 -d10s --latency -s "$dir/submit.lua" "$url/v1/evaluations" | report "POST /v1/evaluations (each new)"
echo "  (the evaluation was $(state) at the end)"
stop_server

# ---- 2. throughput: the server against a loop of ckbench eval --------------------
python3 - "$kernel" "$n" "$size" >"$dir/batch.json" <<'EOF'
import json, sys
f, n, s = sys.argv[1], int(sys.argv[2]), sys.argv[3]
src = open(f).read()
# distinct sources: a comment makes each a new candidate (no result reused)
print(json.dumps({"evaluations": [{"workload": "12p", "size": s,
                                    "source": src + "\n/* %d */\n" % i} for i in range(n)]}))
EOF
start_server tput
t0=$(date +%s.%N)
curl -s -X POST --data-binary @"$dir/batch.json" "$url/v1/evaluations/batch" >"$dir/ids.json"
python3 - "$url" "$dir/ids.json" >"$dir/server.txt" <<'EOF'
import json, sys, urllib.request
url, ids = sys.argv[1], [e["id"] for e in json.load(open(sys.argv[2]))["evaluations"]]
total = 0.0
ok = 0
disturbed = 0
for i in ids:
    while True:
        ev = json.load(urllib.request.urlopen("%s/v1/evaluations/%s?wait=60" % (url, i)))
        if ev["state"] not in ("queued", "running"):
            break
    r = ev.get("result", {})
    total += r.get("stage_seconds", {}).get("total", 0)
    ok += r.get("status") == "ok"
    disturbed += bool(r.get("timing_disturbed"))
print(total, ok, disturbed)
EOF
t1=$(date +%s.%N)
stop_server
read -r s_total s_ok s_dist <"$dir/server.txt"
t2=$(date +%s.%N)
for i in $(seq "$n"); do
    "$bin" eval 12p "$kernel" --size "$size" 2>/dev/null >"$dir/one-$i.json"
done
t3=$(date +%s.%N)
# parsed after the loop: the loop times ckbench alone
read -r c_total c_ok c_dist < <(python3 - "$dir" "$n" <<'EOF'
import json, sys
d, n = sys.argv[1], int(sys.argv[2])
runs = [json.load(open("%s/one-%d.json" % (d, i))) for i in range(1, n + 1)]
print(sum(r["stage_seconds"]["total"] for r in runs), sum(r["status"] == "ok" for r in runs),
      sum(bool(r.get("timing_disturbed")) for r in runs))
EOF
)
python3 - "$n" "$size" "$t0" "$t1" "$s_total" "$s_ok" "$s_dist" "$t2" "$t3" "$c_total" \
    "$c_ok" "$c_dist" <<'EOF'
import sys
n, size = int(sys.argv[1]), sys.argv[2]
t0, t1, st, sok, sdist, t2, t3, ct, cok, cdist = map(float, sys.argv[3:])
for name, wall, own, ok, dist in (("ckbench serve (one batch)", t1 - t0, st, sok, sdist),
                                  ("loop of ckbench eval", t3 - t2, ct, cok, cdist)):
    print("  %-28s %d evaluations at %s (%d ok, %d timing_disturbed) in %6.1f s: %6.0f an "
          "hour; overhead %5.0f ms an evaluation (wall %.0f ms, the evaluation's own %.0f ms)"
          % (name, n, size, ok, dist, wall, n / wall * 3600, (wall - own) / n * 1000,
             wall / n * 1000, own / n * 1000))
EOF
