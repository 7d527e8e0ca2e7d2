#!/bin/bash
# PID 1 in the guest after switch_root into overlay(host root over 9p + tmpfs).
# Sets up a minimal system, runs suite.sh (or $E2E_SCRIPT), leaves its exit status in the results
# share (/mnt/guest.rc) and powers the VM off (QEMU's own exit code says nothing).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=dumb
echo "E2E: guest init (PID $$), uptime $(cut -d' ' -f1 /proc/uptime)s"

# /tmp stays the overlay's (RAM-backed upper layer): a fresh tmpfs there would hide a checkout that
# lives under the host's /tmp, and this script and the repository are read from the host's tree
mount -t tmpfs -o mode=0755 tmpfs /run
mkdir -p /dev/pts /dev/shm /run/lock
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
hostname e2e-guest
ip link set lo up

rc=99
if [ -f /mnt/.e2e-results ] && [ -f /mnt/params.env ]; then
  set -a; . /mnt/params.env; set +a       # every E2E_* parameter, exported to the script
  export E2E_RES=/mnt
  # run.sh --suite: that suite's nvme-cli and tlshd (wrappers with their own C library) before the host's
  [ -z "${E2E_USERLAND:-}" ] || export PATH=$E2E_USERLAND/bin:$PATH
  # the guest kernel's modules live in the extracted package on the host
  KV=$(uname -r)
  mkdir -p "/lib/modules/$KV" && mount --bind "$E2E_KROOT/lib/modules/$KV" "/lib/modules/$KV"
  # suite.sh, or powercut.sh for the boots of the power-cut scenario
  "$(dirname "$(readlink -f "$0")")/${E2E_SCRIPT:-suite.sh}" 2>&1 | tee /mnt/guest.log
  rc=${PIPESTATUS[0]}
  echo "$rc" > /mnt/guest.rc
else
  echo "E2E: results share or params.env missing in /mnt"
fi
echo "E2E: suite finished rc=$rc, uptime $(cut -d' ' -f1 /proc/uptime)s; powering off"
sync
busybox poweroff -f 2>/dev/null
echo o > /proc/sysrq-trigger
sleep 10
