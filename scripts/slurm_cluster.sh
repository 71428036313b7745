#!/usr/bin/env bash
# A Slurm cluster on this one machine, in a folder of its own, for the slurm
# executor's tests and for trying `--executor slurm` by hand:
#
#   scripts/slurm_cluster.sh start DIR [--nodes N]
#       munged (own key and socket), slurmctld and N slurmds; waits until every
#       node is idle; prints the environment to use it (SLURM_CONF=...).
#       N = 1 (the default): one node named after this host, on 127.0.0.1.
#       N >= 2: nodes ckbnode1..ckbnodeN, each in a network namespace of its
#       own with its own address (below). Exit 3: this host cannot make the
#       namespaces (not root, no veth); the message says why.
#   scripts/slurm_cluster.sh stop DIR
#       removes every process it started, the job steps under them, and every
#       namespace and link it made; nothing is left behind.
#   scripts/slurm_cluster.sh logs DIR
#       the tail of each daemon's log.
#   scripts/slurm_cluster.sh kill-node DIR NAME
#       the node NAME fails as a host does: its slurmd, its job steps and its
#       network namespace (its address) are gone at once. Slurm notices after
#       SlurmdTimeout (10 s; 30 s on the one-node cluster, which has no node to
#       kill), marks it down and fails its jobs.
#
# Each start is a fresh cluster: the state and spool of an earlier one in DIR
# are removed first (a job recovered from them would name addresses that are
# gone).
#
# With CKB_SLURM_OWNER_PID=PID in the environment of start, the cluster also
# stops by itself once process PID is gone (the tests set their own pid).
# Needs root and the Debian packages slurmctld slurmd slurm-client munge
# (scripts/deps.sh). Nothing outside DIR is written but the namespaces and
# links of N >= 2, which live only as long as the cluster's processes. The
# ports are chosen free at start. Plugins: proctrack/linuxproc and task/none
# (no cgroups needed), one partition `ckb` with OverSubscribe=EXCLUSIVE.
#
# Why network namespaces (one slurmd per host address): Slurm can run two
# slurmds on one address, each on a port of its own (NodeName ... Port=; the
# packaged slurmd does), but such nodes are one host: one address, one
# network stack, and a killed slurmd leaves its address answering with a
# refused connection. In a network namespace of its own each slurmd is a host
# to Slurm: its own address (NodeAddr), its job steps run in its namespace,
# and kill-node takes the address away with the processes, so slurmctld and
# srun lose the node as they lose a real host that dies.
# The addresses: a free 10.213.K.0/24. Node i has 10.213.K.(4i-2)/30, its
# veth's host end 10.213.K.(4i-3)/30. slurmctld stays in the host's
# namespace and listens at 10.213.K.254/24, on the host end of an "anchor"
# namespace's veth: that address survives any node's death, and its /24 route
# keeps traffic for a dead node's address on that veth (dropped in the empty
# anchor) instead of the default route out of the machine. Every namespace is
# held by a `sleep` process of ours (unshare --net), not by `ip netns add`:
# when our processes are gone the kernel frees the namespaces and, with them,
# both ends of every veth and their routes, so a crash leaves nothing behind.
#
# Why nsenter: `nsenter --net=/proc/HOLDER/ns/net slurmd` moves slurmd into the
# node's network namespace only; it keeps the host's mounts. `ip netns exec`
# also makes a mount namespace and remounts /sys for the network namespace,
# which drops the cgroup mounts under /sys/fs/cgroup; slurmd then stops at
# start: "error: No filesystem mounted on /sys/fs/cgroup", "error: Unable to
# initialize cgroup plugin", "error: slurmd initialization failed".
set -u

usage() {
    echo "usage: $0 start DIR [--nodes N] | stop DIR | logs DIR | kill-node DIR NAME" >&2
    exit 2
}

cmd=${1:-}
dir=${2:-}
{ [ -n "$cmd" ] && [ -n "$dir" ]; } || usage
shift 2
nodes=1
victim=""
case "$cmd" in
start)
    while [ $# -gt 0 ]; do
        case "$1" in
        --nodes)
            [ $# -ge 2 ] || usage
            nodes=$2
            shift 2
            ;;
        --nodes=*)
            nodes=${1#--nodes=}
            shift
            ;;
        *) usage ;;
        esac
    done
    case "$nodes" in
    '' | *[!0-9]*) usage ;;
    esac
    if [ "$nodes" -lt 1 ] || [ "$nodes" -gt 60 ]; then
        echo "slurm_cluster: --nodes $nodes: between 1 and 60" >&2
        exit 2
    fi
    ;;
kill-node)
    [ $# -eq 1 ] || usage
    victim=$1
    shift
    ;;
stop | logs) ;;
*) usage ;;
esac
[ $# -eq 0 ] || usage

export PATH="$PATH:/usr/sbin:/sbin"
dir=$(realpath -m -- "$dir")
self=$(realpath -- "$0")
# In the environment of every process the cluster starts: how stop finds them.
marker="CKB_SLURM_CLUSTER=$dir"
# In the watchdog's alone (the stop it runs drops it, so that neither that
# stop nor its subshells are found).
wmarker="CKB_SLURM_WATCHDOG=$dir"

say() { echo "slurm_cluster: $*" >&2; }
# What start runs in the background is disowned: stop kills it, and bash
# would report each as a killed job.

logs() {
    local f
    for f in "$dir"/munged.log "$dir"/slurmctld.log "$dir"/slurmd*.log; do
        [ -f "$f" ] || continue
        echo "---- $f (last 25 lines)"
        tail -n 25 "$f"
    done
}

# Pids of the processes whose environment holds the exact entry $1.
with_env() {
    grep -lzxF -- "$1" /proc/[0-9]*/environ 2>/dev/null |
        sed -n 's|^/proc/\([0-9]*\)/environ$|\1|p'
}

# Pids of the processes in the network namespaces whose inodes are given.
in_netns() {
    [ $# -gt 0 ] || return 0
    stat -L -c '%i %n' /proc/[0-9]*/ns/net 2>/dev/null |
        awk -v set=" $* " 'index(set, " " $1 " ") { split($2, p, "/"); print p[3] }'
}

# The network namespace inode of process $1 (empty when it is gone).
netns_of() { stat -L -c %i "/proc/$1/ns/net" 2>/dev/null; }

# Whether process $1 is still there: not gone, nor a zombie its parent has
# yet to reap.
alive() {
    [ -r "/proc/$1/stat" ] &&
        [ "$(awk '{ sub(/.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null)" != Z ]
}

# The given pids and all their descendants (never this script).
with_descendants() {
    ps -e -o pid= -o ppid= | awk -v seeds="$*" -v me="$$" '
        { par[$1] = $2 }
        END {
            n = split(seeds, s, " ")
            for (i = 1; i <= n; i++) if (s[i] in par) got[s[i]] = 1
            do {
                grew = 0
                for (p in par)
                    if (!(p in got) && (par[p] in got)) { got[p] = 1; grew = 1 }
            } while (grew)
            for (p in got) if (p != me) print p
        }'
}

# Namespaces of ours: those of live processes that carry the marker (the
# holders, the slurmds) other than this script's own.
our_netns() {
    local p ns here
    here=$(netns_of $$)
    for p in $(with_env "$marker"); do
        ns=$(netns_of "$p")
        [ -n "$ns" ] && [ "$ns" != "$here" ] && echo "$ns"
    done | sort -u
}

cluster_seeds() {
    with_env "$marker"
    with_env "$wmarker"
    # shellcheck disable=SC2046 # one argument per namespace
    in_netns $(our_netns)
}

# Stops (SIGSTOP) the set that function $1 names, with descendants, until it
# grows no more (nothing forks away), then kills it all (SIGKILL) and waits
# until every one is gone. 0, or 1 when some process stayed.
slay() {
    local all=" " now p new i
    # shellcheck disable=SC2046,SC2086 # pid lists: one argument per pid
    for i in $(seq 1 20); do
        now=$(with_descendants $($1))
        new=""
        for p in $now; do
            case "$all" in
            *" $p "*) ;;
            *) new="$new $p" ;;
            esac
        done
        [ -z "$new" ] && break
        kill -STOP $new 2>/dev/null
        all="$all$new "
    done
    [ -n "${all// /}" ] || return 0
    # shellcheck disable=SC2086
    kill -KILL $all 2>/dev/null
    for i in $(seq 1 100); do
        now=""
        for p in $all; do
            alive "$p" && now="$now $p"
        done
        [ -z "$now" ] && return 0
        sleep 0.1
    done
    say "processes still there after SIGKILL:$now"
    return 1
}

# The links this cluster made that still exist (the kernel removes them with
# their namespace; this waits for that, then removes what is left).
links() {
    [ -f "$dir/links" ] || return 0
    local l
    while read -r l; do
        ip link show "$l" >/dev/null 2>&1 && echo "$l"
    done <"$dir/links"
}

stop() {
    local rc=0 left i l
    slay cluster_seeds || rc=1
    for i in $(seq 1 50); do
        left=$(links)
        [ -z "$left" ] && break
        sleep 0.1
    done
    for l in $left; do
        ip link del "$l" 2>/dev/null
    done
    left=$(links)
    if [ -n "$left" ]; then
        say "links still there: $left"
        rc=1
    fi
    rm -f "$dir"/*.pid "$dir/links" "$dir/nodes"
    return $rc
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

# A /24 of 10.213 that no interface of this machine uses, and no link of
# another cluster of this script (names ckb<K>h<i>).
free_subnet() {
    local k
    for _ in $(seq 1 50); do
        k=$((1 + RANDOM % 254))
        [ -z "$(ip -4 -o addr show to "10.213.$k.0/24" 2>/dev/null)" ] || continue
        ip -o link show 2>/dev/null | grep -q ": ckb${k}h[0-9]*[@:]" && continue
        echo "$k"
        return 0
    done
    return 1
}

# A process holding a new network namespace; its pid in $holder.
holder=""
new_netns() {
    local err="$dir/netns.err" i
    env "$marker" setsid unshare --net -- sleep infinity </dev/null >/dev/null 2>"$err" &
    holder=$!
    disown
    for i in $(seq 1 300); do
        if ! kill -0 "$holder" 2>/dev/null; then
            say "cannot make a network namespace (unshare --net): $(cat "$err")"
            return 3
        fi
        [ "$(cat "/proc/$holder/comm" 2>/dev/null)" = sleep ] &&
            [ "$(netns_of "$holder")" != "$(netns_of $$)" ] && return 0
        sleep 0.1
    done
    say "the network namespace holder $holder did not start within 30 s"
    return 1
}

# Runs a command inside holder $1's network namespace.
in_ns() {
    local h=$1
    shift
    nsenter --net="/proc/$h/ns/net" "$@"
}

# A veth pair: host end $1 (address $2, none when empty) in this namespace,
# eth0 in holder $3's. IPv6 is off on both ends (no autoconfiguration chatter).
veth() {
    local out
    echo "$1" >>"$dir/links"
    if ! out=$(ip link add "$1" type veth peer name eth0 netns "$3" 2>&1); then
        say "cannot make the veth pair $1 (ip link add ... type veth): $out"
        # Taken meanwhile (another cluster): a failure, not a host without veth.
        case "$out" in
        *"File exists"*) return 1 ;;
        esac
        return 3
    fi
    echo 1 >"/proc/sys/net/ipv6/conf/$1/disable_ipv6" 2>/dev/null
    in_ns "$3" sh -c 'echo 1 >/proc/sys/net/ipv6/conf/eth0/disable_ipv6' 2>/dev/null
    if [ -n "$2" ]; then
        out=$(ip addr add "$2" dev "$1" 2>&1) || {
            say "ip addr add $2 dev $1: $out"
            return 1
        }
    fi
    out=$({ ip link set "$1" up && in_ns "$3" ip link set eth0 up; } 2>&1) || {
        say "cannot bring $1 up: $out"
        return 1
    }
}

# The namespaces, links and addresses of nodes 1..N on 10.213.$1.0/24; one
# line "NAME HOLDER ADDR" per node into $dir/nodes.
make_nodes() {
    local k=$1 i name hostaddr addr rc out
    : >"$dir/links"
    : >"$dir/nodes"
    # The anchor: an empty namespace behind the controller's address.
    new_netns || return
    veth "ckb${k}h0" "10.213.$k.254/24" "$holder" || return
    for i in $(seq 1 "$nodes"); do
        name=ckbnode$i
        hostaddr=10.213.$k.$((4 * i - 3))
        addr=10.213.$k.$((4 * i - 2))
        new_netns || return
        veth "ckb${k}h$i" "$hostaddr/30" "$holder" || return
        out=$(in_ns "$holder" sh -c "ip link set lo up && ip addr add $addr/30 dev eth0 &&
                ip route add 10.213.$k.0/24 via $hostaddr" 2>&1)
        rc=$?
        if [ $rc -ne 0 ]; then
            say "cannot set up $name's namespace: $out"
            return 1
        fi
        echo "$name $holder $addr" >>"$dir/nodes"
    done
    return 0
}

# The pids of one node: every process in its namespace (the holder, slurmd,
# slurmstepd, the job steps) and what they started.
victim_ns=""
node_seeds() { in_netns "$victim_ns"; }

kill_node() {
    local line h
    line=$(awk -v n="$victim" '$1 == n' "$dir/nodes" 2>/dev/null)
    if [ -z "$line" ]; then
        say "no node $victim in $dir; its nodes:" \
            "$(awk '{ print $1 }' "$dir/nodes" 2>/dev/null | xargs)"
        return 1
    fi
    h=$(echo "$line" | awk '{ print $2 }')
    if [ "$h" = - ]; then
        say "node $victim is this host itself (a one-node cluster): kill-node needs --nodes 2"
        return 1
    fi
    if ! with_env "$marker" | grep -qx "$h"; then
        say "node $victim is not running (its namespace holder $h is gone)"
        return 1
    fi
    victim_ns=$(netns_of "$h")
    [ -n "$victim_ns" ] || return 1
    slay node_seeds || return 1
    echo "slurm_cluster: node $victim killed" >&2
    return 0
}

start() {
    local b
    for b in munged mungekey slurmctld slurmd sinfo srun scontrol; do
        if ! command -v "$b" >/dev/null 2>&1; then
            say "$b is not installed (scripts/deps.sh installs slurmctld slurmd slurm-client munge)"
            return 1
        fi
    done
    if [ "$nodes" -ge 2 ]; then
        for b in unshare nsenter ip; do
            command -v "$b" >/dev/null 2>&1 || {
                say "--nodes $nodes needs $b (util-linux, iproute2)"
                return 3
            }
        done
        if [ "$(id -u)" != 0 ]; then
            say "--nodes $nodes needs root (network namespaces and veth links)"
            return 3
        fi
    fi
    stop || return 1
    # A fresh cluster: no job of an earlier one in DIR, whose sruns' and
    # nodes' addresses are gone, is recovered (slurmctld -c as well).
    rm -rf "$dir/state" "$dir/spool"
    rm -f "$dir"/*.log "$dir"/*.out
    mkdir -p "$dir/state" "$dir/spool" "$dir/munge" || return 1
    chmod 700 "$dir/munge"
    local cpus mem cport dport k="" ctl i name rc
    cpus=$(nproc)
    mem=$(awk '/MemTotal/ {print int($2 / 1024 / 2)}' /proc/meminfo)
    if ! cport=$(free_port) || ! dport=$(free_port); then
        say "no free port"
        return 1
    fi
    [ -f "$dir/munge/munge.key" ] || mungekey --create --keyfile="$dir/munge/munge.key" || return 1
    chmod 600 "$dir/munge/munge.key"

    # With CKB_SLURM_OWNER_PID (a test runner), a watchdog stops the cluster
    # when that process is gone, even if it crashed before its own stop.
    if [ -n "${CKB_SLURM_OWNER_PID:-}" ]; then
        # shellcheck disable=SC2016 # expanded by the watchdog's bash
        env "$wmarker" setsid bash -c \
            'while kill -0 "$1" 2>/dev/null; do sleep 1; done
             exec env -u CKB_SLURM_WATCHDOG "$2" stop "$3"' \
            watchdog "$CKB_SLURM_OWNER_PID" "$self" "$dir" </dev/null >/dev/null 2>&1 &
             disown
    fi

    # A dead node is noticed after SlurmdTimeout: short where nodes are killed
    # on purpose (the failure test), Slurm's usual margin for one node.
    local nodelines partnodes slurmd_timeout=10
    if [ "$nodes" -eq 1 ]; then
        slurmd_timeout=30
        name=$(hostname -s)
        ctl=localhost
        nodelines="NodeName=$name NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN"
        partnodes=$name
        echo "$name - 127.0.0.1" >"$dir/nodes"
    else
        k=$(free_subnet) || {
            say "no free 10.213.K.0/24 for the nodes' addresses"
            stop
            return 1
        }
        make_nodes "$k"
        rc=$?
        if [ $rc -ne 0 ]; then
            stop
            return $rc
        fi
        ctl="localhost(10.213.$k.254)"
        nodelines=$(awk -v c="$cpus" -v m="$mem" '{
            printf "NodeName=%s NodeHostname=%s NodeAddr=%s CPUs=%s RealMemory=%s", $1, $1, $3, c, m
            print " State=UNKNOWN" }' "$dir/nodes")
        partnodes="ckbnode[1-$nodes]"
    fi
    cat >"$dir/slurm.conf" <<EOF
ClusterName=ckbtest
SlurmctldHost=$ctl
SlurmctldPort=$cport
SlurmdPort=$dport
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd-%n.log
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
SlurmdTimeout=$slurmd_timeout
InactiveLimit=10
KillWait=5
MinJobAge=30
$nodelines
PartitionName=ckb Nodes=$partnodes Default=YES MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE
EOF
    export SLURM_CONF="$dir/slurm.conf"
    env "$marker" setsid munged --foreground --force --key-file="$dir/munge/munge.key" \
        --socket="$dir/munge/munge.socket" --pid-file="$dir/munged.pid" \
        --log-file="$dir/munged.log" --seed-file="$dir/munge/munge.seed" \
        </dev/null >>"$dir/munged.out" 2>&1 &
    disown
    for _ in $(seq 1 50); do
        [ -S "$dir/munge/munge.socket" ] && break
        sleep 0.1
    done
    if [ ! -S "$dir/munge/munge.socket" ]; then
        say "munged did not start"
        cat "$dir/munged.out" >&2
        logs >&2
        stop
        return 1
    fi
    env "$marker" setsid slurmctld -D -c -i -f "$dir/slurm.conf" \
        </dev/null >>"$dir/slurmctld.out" 2>&1 &
    disown
    local h
    while read -r name h _; do
        mkdir -p "$dir/spool/$name"
        if [ "$h" = - ]; then
            env "$marker" setsid slurmd -D -f "$dir/slurm.conf" -N "$name" \
                </dev/null >>"$dir/slurmd-$name.out" 2>&1 &
            disown
        else
            env "$marker" setsid nsenter --net="/proc/$h/ns/net" \
                slurmd -D -f "$dir/slurm.conf" -N "$name" \
                </dev/null >>"$dir/slurmd-$name.out" 2>&1 &
            disown
        fi
    done <"$dir/nodes"
    local states="" bad
    for _ in $(seq 1 120); do
        states=$(sinfo -h -N -p ckb -o '%N %t' 2>/dev/null | sort -u)
        bad=$(echo "$states" | awk '$2 != "idle"')
        if [ -n "$states" ] && [ -z "$bad" ] &&
            [ "$(echo "$states" | wc -l)" -eq "$nodes" ]; then
            break
        fi
        echo "$bad" | awk '$2 ~ /^(down|drain|fail)/ { print $1 }' | while read -r name; do
            scontrol update nodename="$name" state=resume >/dev/null 2>&1
        done
        sleep 0.5
    done
    if [ -z "$states" ] || [ -n "$bad" ]; then
        say "the nodes are not all idle after 60 s: ${states:-no answer from sinfo}"
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
kill-node) kill_node ;;
esac
