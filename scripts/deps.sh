#!/usr/bin/env bash
# Installs the Debian packages ckbench needs when they are missing (as root),
# or says which are missing and how to get them.
set -eu
# chromium: the report test loads report.html in a real headless browser.
# slurmctld slurmd slurm-client munge: the slurm executor's test starts a
# one-node Slurm on localhost (scripts/slurm_onenode.sh); installing them
# starts no daemon.
need=(gcc make libc6-dev libdnnl-dev libjson-c-dev libseccomp-dev libcurl4-openssl-dev libssl-dev chromium
      slurmctld slurmd slurm-client munge)
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
