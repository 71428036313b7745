#!/usr/bin/env bash
# The one-node Slurm cluster on localhost of the executor's test (and for
# trying `--executor slurm` by hand): scripts/slurm_cluster.sh with one node,
# named after this host, on 127.0.0.1. See that script for what start, stop
# and logs do.
#
#   scripts/slurm_onenode.sh start DIR   munged, slurmctld, slurmd; waits until the
#                                        node is idle; prints the environment to use
#   scripts/slurm_onenode.sh stop DIR    stops every process it started
#   scripts/slurm_onenode.sh logs DIR    the tail of each daemon's log
set -u
if [ $# -ne 2 ]; then
    echo "usage: $0 start|stop|logs DIR" >&2
    exit 2
fi
cluster=$(dirname "$0")/slurm_cluster.sh
case "$1" in
start) exec "$cluster" start "$2" --nodes 1 ;;
stop | logs) exec "$cluster" "$1" "$2" ;;
*)
    echo "usage: $0 start|stop|logs DIR" >&2
    exit 2
    ;;
esac
