#!/usr/bin/env bash
# A one-node Slurm cluster on localhost, in a folder of its own, for the
# executor's test and for trying `--executor slurm` by hand:
#
#   scripts/slurm_onenode.sh start DIR   munged (own key and socket), slurmctld, slurmd;
#                                        waits until the node is idle; prints the
#                                        environment to use it (SLURM_CONF=...)
#   scripts/slurm_onenode.sh stop DIR    stops every process it started (and the job
#                                        steps they started), by their ids
#   scripts/slurm_onenode.sh logs DIR    the tail of each daemon's log
#
# With CKB_SLURM_OWNER_PID=PID in the environment of start, the cluster also
# stops by itself once process PID is gone (the test sets its own pid).
#
# Needs root and the Debian packages slurmctld slurmd slurm-client munge
# (scripts/deps.sh installs them). Nothing outside DIR is written; the ports
# are chosen free at start. Plugins: proctrack/linuxproc and task/none (no
# cgroups needed), one partition `ckb` with OverSubscribe=EXCLUSIVE.
set -u
cmd=${1:-}
dir=${2:-}
if [ -z "$cmd" ] || [ -z "$dir" ]; then
    echo "usage: $0 start|stop|logs DIR" >&2
    exit 2
fi
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
marker="CKB_SLURM_ONENODE=$dir"

logs() {
    for f in munged.log slurmctld.log slurmd.log; do
        [ -f "$dir/$f" ] || continue
        echo "---- $dir/$f (last 25 lines)"
        tail -n 25 "$dir/$f"
    done
}

# The processes that carry our marker in their environment: the daemons and
# whatever they started (slurmstepd, job steps). Ours alone, by id.
ours() {
    local p
    for p in /proc/[0-9]*; do
        [ "${p#/proc/}" = "$$" ] && continue
        tr '\0' '\n' 2>/dev/null <"$p/environ" | grep -qxF "$marker" && echo "${p#/proc/}"
    done
}

stop() {
    local pids p i
    pids=$(ours)
    [ -n "$pids" ] && kill -TERM $pids 2>/dev/null
    for i in $(seq 1 50); do
        pids=$(ours)
        [ -z "$pids" ] && break
        sleep 0.1
    done
    pids=$(ours)
    [ -n "$pids" ] && kill -KILL $pids 2>/dev/null
    for p in munged slurmctld slurmd; do
        rm -f "$dir/$p.pid"
    done
    return 0
}

# A free TCP port on the loopback interface.
free_port() {
    local p
    for _ in $(seq 1 50); do
        p=$((20000 + RANDOM % 20000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            echo "$p"
            return 0
        fi
    done
    return 1
}

start() {
    for b in munged mungekey slurmctld slurmd sinfo srun; do
        if ! command -v "$b" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$b" ]; then
            echo "slurm_onenode: $b is not installed (scripts/deps.sh installs slurmctld slurmd slurm-client munge)" >&2
            return 1
        fi
    done
    export PATH="$PATH:/usr/sbin"
    stop
    mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
    chmod 700 "$dir/munge"
    local host cpus mem cport dport
    host=$(hostname -s)
    cpus=$(nproc)
    mem=$(awk '/MemTotal/ {print int($2 / 1024 / 2)}' /proc/meminfo)
    cport=$(free_port) && dport=$(free_port) || {
        echo "slurm_onenode: no free port" >&2
        return 1
    }
    [ -f "$dir/munge/munge.key" ] || mungekey --create --keyfile="$dir/munge/munge.key" || return 1
    chmod 600 "$dir/munge/munge.key"
    cat >"$dir/slurm.conf" <<EOF
ClusterName=ckbtest
SlurmctldHost=localhost
SlurmctldPort=$cport
SlurmdPort=$dport
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobContainerType=job_container/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=10
KillWait=5
MinJobAge=30
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=ckb Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE
EOF
    export "$marker"
    export SLURM_CONF="$dir/slurm.conf"
    setsid munged --foreground --force --key-file="$dir/munge/munge.key" \
        --socket="$dir/munge/munge.socket" --pid-file="$dir/munged.pid" \
        --log-file="$dir/munged.log" --seed-file="$dir/munge/munge.seed" \
        </dev/null >>"$dir/munged.out" 2>&1 &
    for _ in $(seq 1 50); do
        [ -S "$dir/munge/munge.socket" ] && break
        sleep 0.1
    done
    if [ ! -S "$dir/munge/munge.socket" ]; then
        echo "slurm_onenode: munged did not start" >&2
        cat "$dir/munged.out" >&2
        logs >&2
        stop
        return 1
    fi
    # With CKB_SLURM_OWNER_PID (a test runner), a watchdog stops the cluster
    # when that process is gone, even if it crashed before its own stop.
    if [ -n "${CKB_SLURM_OWNER_PID:-}" ]; then
        setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; exec "$2" stop "$3"' \
            watchdog "$CKB_SLURM_OWNER_PID" "$self" "$dir" </dev/null >/dev/null 2>&1 &
    fi
    setsid slurmctld -D -i -f "$dir/slurm.conf" </dev/null >>"$dir/slurmctld.out" 2>&1 &
    setsid slurmd -D -f "$dir/slurm.conf" -N "$host" </dev/null >>"$dir/slurmd.out" 2>&1 &
    local state=""
    for _ in $(seq 1 120); do
        state=$(sinfo -h -n "$host" -o %t 2>/dev/null | head -n 1)
        case "$state" in
        idle) break ;;
        down* | drain* | fail*) scontrol update nodename="$host" state=resume >/dev/null 2>&1 ;;
        esac
        sleep 0.5
    done
    if [ "$state" != "idle" ]; then
        echo "slurm_onenode: node $host is '${state:-unknown}', not idle, after 60 s" >&2
        cat "$dir"/*.out >&2 2>/dev/null
        logs >&2
        stop
        return 1
    fi
    echo "SLURM_CONF=$dir/slurm.conf"
    echo "CKB_SLURM_PARTITION=ckb"
    return 0
}

case "$cmd" in
start) start ;;
stop) stop ;;
logs) logs ;;
*)
    echo "usage: $0 start|stop|logs DIR" >&2
    exit 2
    ;;
esac
