#!/usr/bin/env bash
# Installs the Debian packages ckbench needs when they are missing (as root),
# or says which are missing and how to get them.
set -eu
# chromium: the report test loads report.html in a real headless browser.
# slurmctld slurmd slurm-client munge: the slurm executor's test starts a
# one-node Slurm on localhost (scripts/slurm_onenode.sh); installing them
# starts no daemon.
# libmicrohttpd-dev libsqlite3-dev: `ckbench serve` (HTTP and its durable
# queue). python3 python3-venv: the server's tests drive it with the Python
# client and check it against docs/openapi.yaml with schemathesis, which
# they install from PyPI into a venv of their own.
need=(gcc make libc6-dev libdnnl-dev libjson-c-dev libseccomp-dev libcurl4-openssl-dev libssl-dev chromium
      slurmctld slurmd slurm-client munge libmicrohttpd-dev libsqlite3-dev python3 python3-venv)
missing=()
for p in "${need[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
    echo "ckbench: missing Debian packages: ${missing[*]}" >&2
    echo "ckbench: run as root, or: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
fi
echo "ckbench: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
