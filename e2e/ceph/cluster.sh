#!/usr/bin/env bash
# A one-node Ceph cluster for tests and benchmarks: Debian 12's ceph 16.2 packages, one monitor and one OSD
# (BlueStore on a sparse file) on 127.0.0.1, cephx on, a pool "rbd" and a client "client.nvmf4j" allowed
# to use it. Everything lives in DIR; nothing else on the machine is touched, and no systemd unit is used.
#
#   cluster.sh start DIR    make DIR (must not exist or be empty) and start the cluster in it (~15-30 s).
#                           Prints KEY=VALUE lines: CEPH_CONF, CEPH_KEYRING (client.nvmf4j),
#                           CEPH_CLIENT, CEPH_POOL, CEPH_ADMIN_KEYRING, CEPH_MON (the monitor's address).
#                           The monitor's two ports (msgr2, msgr1) are picked free, never 3300/6789.
#   cluster.sh stop DIR     stop the daemons this script started in DIR (by their pid files) and remove DIR
#   cluster.sh env DIR      print the KEY=VALUE lines of a running cluster again
#
# Needs: apt-get install -y ceph (ceph-mon, ceph-osd, ceph-common). Memory stays modest: the OSD's cache is
# fixed at 64 MiB and its memory target at the smallest Ceph allows; the OSD's file is sparse (10 GiB).
# env: CEPH_OBJECTSTORE=memstore keeps the OSD's objects in its memory instead (CEPH_MEMSTORE_BYTES, default
#      1 GiB, is all it can hold): for a filesystem without O_DIRECT (BlueStore opens its file with it), such as
#      the e2e guest's tmpfs under a 6.1 kernel. Default bluestore.
#      CEPH_TIMEOUT: seconds one admin command may take (default 60; more under emulation).
set -euo pipefail

die() { echo "cluster.sh: $*" >&2; exit 1; }

[ $# -eq 2 ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
cmd=$1
dir=$2

need_binaries() {
  local b missing=()
  for b in ceph ceph-mon ceph-osd ceph-authtool monmaptool rados rbd uuidgen; do
    command -v "$b" >/dev/null 2>&1 || missing+=("$b")
  done
  [ ${#missing[@]} -eq 0 ] || die "missing ${missing[*]}: install Debian's ceph packages (apt-get install -y ceph)"
}

# a TCP port on 127.0.0.1 nobody listens on (nor on the port in $1), away from Ceph's defaults and below the
# kernel's ephemeral range, where no outgoing connection can be given it as its source port before the monitor
# binds it
free_port() {
  local used p low
  low=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
  [ "${low:-0}" -gt 11000 ] 2>/dev/null || low=32768
  used=$(ss -Htln 2>/dev/null | awk '{print $4}' | sed 's/.*://' | sort -u)
  for _ in $(seq 1 200); do
    p=$((10000 + RANDOM % (low - 10000)))
    [ "$p" = "${1:-}" ] && continue
    grep -qx "$p" <<<"$used" || { echo "$p"; return; }
  done
  die "no free TCP port found"
}

# the [osd] lines of the object store (CEPH_OBJECTSTORE)
osd_store_conf() {
  case ${CEPH_OBJECTSTORE:-bluestore} in
    bluestore) echo "osd objectstore = bluestore" ;;
    memstore) printf 'osd objectstore = memstore\nmemstore device bytes = %s\n' "${CEPH_MEMSTORE_BYTES:-1073741824}" ;;
    *) die "CEPH_OBJECTSTORE takes bluestore or memstore, not '$CEPH_OBJECTSTORE'" ;;
  esac
}

print_env() {
  local d
  d=$(cd "$dir" && pwd)
  echo "CEPH_CONF=$d/ceph.conf"
  echo "CEPH_KEYRING=$d/client.nvmf4j.keyring"
  echo "CEPH_CLIENT=client.nvmf4j"
  echo "CEPH_POOL=rbd"
  echo "CEPH_ADMIN_KEYRING=$d/admin.keyring"
  echo "CEPH_MON=$(cat "$d/mon.addr")"
}

# ceph as the admin, with a timeout so a broken cluster fails instead of hanging
admin() {
  timeout "${CEPH_TIMEOUT:-60}" "$@" -c "$dir/ceph.conf" -n client.admin -k "$dir/admin.keyring"
}

start() {
  need_binaries
  osd_store_conf >/dev/null
  if [ -e "$dir" ] && [ -n "$(ls -A "$dir")" ]; then
    die "$dir exists and is not empty"
  fi
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  mkdir -p "$dir/run" "$dir/log" "$dir/mon.a" "$dir/osd.0"
  local fsid v2 v1
  fsid=$(uuidgen)
  v2=$(free_port)
  v1=$(free_port "$v2")
  echo "v2:127.0.0.1:$v2" >"$dir/mon.addr"
  cat >"$dir/ceph.conf" <<EOF
[global]
fsid = $fsid
mon host = [v2:127.0.0.1:$v2,v1:127.0.0.1:$v1]
public addr = 127.0.0.1
ms bind ipv6 = false
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
run dir = $dir/run
admin socket = $dir/run/\$name.asok
pid file = $dir/run/\$name.pid
log file = $dir/log/\$name.log
crash dir = $dir/crash
osd pool default size = 1
osd pool default min size = 1
osd pool default pg autoscale mode = off
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
osd crush chooseleaf type = 0
client mount timeout = 15
rados osd op timeout = 30
rados mon op timeout = 30

[mon]
mon data = $dir/mon.\$id
mon initial members = a
mon cluster log file = $dir/log/cluster.log

[osd]
osd data = $dir/osd.\$id
$(osd_store_conf)
bluestore block create = true
bluestore block size = 10737418240
bluestore fsck on mkfs = false
bluestore cache autotune = false
bluestore cache size = 67108864
osd memory target = 939524096
osd max object name len = 460
osd max object namespace len = 64
osd op num shards = 1
osd op num threads per shard = 2
EOF
  local conf=$dir/ceph.conf
  ceph-authtool --create-keyring "$dir/mon.keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
  ceph-authtool --create-keyring "$dir/admin.keyring" --gen-key -n client.admin \
    --cap mon 'allow *' --cap osd 'allow *' --cap mgr 'allow *' >/dev/null
  ceph-authtool "$dir/mon.keyring" --import-keyring "$dir/admin.keyring" >/dev/null
  monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$v2,v1:127.0.0.1:$v1]" "$dir/monmap" >/dev/null
  ceph-mon -c "$conf" --mkfs -i a --monmap "$dir/monmap" --keyring "$dir/mon.keyring" \
    >"$dir/log/mon-mkfs.out" 2>&1 || { cat "$dir/log/mon-mkfs.out" >&2; die "ceph-mon --mkfs failed"; }
  ceph-mon -c "$conf" -i a || die "ceph-mon did not start (see $dir/log/mon.a.log)"

  local uuid id
  uuid=$(uuidgen)
  ceph-authtool --create-keyring "$dir/osd.0/keyring" --gen-key -n osd.0 >/dev/null
  id=$(admin ceph osd new "$uuid" -i <(printf '{"cephx_secret": "%s"}' \
    "$(ceph-authtool -p -n osd.0 "$dir/osd.0/keyring")")) || die "ceph osd new failed (monitor: $dir/log/mon.a.log)"
  [ "$id" = 0 ] || die "the OSD got id $id, expected 0"
  ceph-osd -c "$conf" -i 0 --mkfs --osd-uuid "$uuid" --keyring "$dir/osd.0/keyring" \
    >"$dir/log/osd-mkfs.out" 2>&1 || { cat "$dir/log/osd-mkfs.out" >&2; die "ceph-osd --mkfs failed"; }
  ceph-osd -c "$conf" -i 0 --keyring "$dir/osd.0/keyring" || die "ceph-osd did not start (see $dir/log/osd.0.log)"

  local up=0
  for _ in $(seq 1 60); do
    up=$(admin ceph osd stat -f json 2>/dev/null | sed -n 's/.*"num_up_osds":\([0-9]*\).*/\1/p')
    [ "${up:-0}" = 1 ] && break
    sleep 0.5
  done
  [ "${up:-0}" = 1 ] || die "the OSD did not come up (see $dir/log/osd.0.log)"
  admin ceph osd pool create rbd 8 8 >/dev/null 2>&1 || die "ceph osd pool create failed"
  admin ceph osd pool application enable rbd rbd >/dev/null 2>&1 || die "pool application enable failed"
  admin ceph auth get-or-create client.nvmf4j mon 'profile rbd' osd 'profile rbd pool=rbd' \
    -o "$dir/client.nvmf4j.keyring" >/dev/null 2>&1 || die "ceph auth get-or-create client.nvmf4j failed"
  # the pool serves I/O once its placement groups are active: a first object write waits for that
  admin rados -p rbd put nvmf4j-probe "$dir/monmap" || die "the pool does not take writes (see $dir/log)"
  admin rados -p rbd rm nvmf4j-probe
  print_env
}

stop() {
  [ -d "$dir" ] || return 0
  [ -f "$dir/ceph.conf" ] || die "$dir holds no cluster of this script (no ceph.conf); not removing it"
  local f pid pids=()
  for f in "$dir"/run/*.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    # only a Ceph daemon this cluster's config started
    if [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "$dir/ceph.conf"; then
      kill "$pid" 2>/dev/null && pids+=("$pid")
    fi
  done
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
  done
  rm -rf "$dir"
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  env) print_env ;;
  *) die "unknown command $cmd (start, stop, env)" ;;
esac
