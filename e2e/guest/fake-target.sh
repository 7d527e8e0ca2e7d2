#!/bin/bash
# Harness self-test (run.sh --fake-target): stands in for bin/nvmf4j-target in
# the guest. Takes the same arguments, reads the nvmf4j config with jq and
# exports it through the kernel's nvmet (malloc bdev = loop device over a
# tmpfs file, file bdev = the file), logs the nvme connect command, and
# removes it all again on SIGTERM, like a service that stops. nvmet cannot
# take every nvmf4j setting (nn, mdts), so those checks fail with it.
# usage: fake-target.sh --state-dir DIR --config FILE
set -u
while [ $# -gt 0 ]; do case $1 in --config) CONF=$2; shift ;; --state-dir) STATE=$2; shift ;; esac; shift; done
mkdir -p "$STATE"
CFG=/sys/kernel/config/nvmet
NQN=$(jq -r '.subsystems[0].nqn' "$CONF")
S=$CFG/subsystems/$NQN
PORTID=$((RANDOM % 1000 + 100))
w() { echo -n "$2" > "$1" || { echo "cannot write '$2' to $1"; exit 1; }; }

stop() {
  echo "fake-target: SIGTERM, removing $NQN"
  rm -f "$CFG/ports/$PORTID/subsystems/$NQN"; rmdir "$CFG/ports/$PORTID"
  for n in "$S"/namespaces/*; do echo 0 > "$n/enable"; rmdir "$n"; done
  rmdir "$S"
  for l in "$STATE"/loop*; do [ -e "$l" ] && losetup -d "/dev/$(basename "$l")" && rm -f "$l"; done
  exit 0
}
trap stop TERM INT

mkdir "$S" || exit 1
w "$S/attr_allow_any_host" 1
w "$S/attr_serial" "$(jq -r '.subsystems[0].serial' "$CONF")"
w "$S/attr_model" "$(jq -r '.subsystems[0].model' "$CONF")"
[ -e "$S/attr_qid_max" ] && w "$S/attr_qid_max" "$(jq -r '.tcp.maxIoQueues' "$CONF")"
jq -r '.subsystems[0].namespaces[] as $n | .bdevs[] | select(.name == $n.bdev) |
       [$n.nsid, $n.nguid, $n.uuid, .type, .blockSize, .numBlocks, (.path // "")] | @tsv' "$CONF" |
while IFS=$'\t' read -r nsid nguid uuid type bs blocks path; do
  file=${path:-$STATE/malloc-$nsid.img}
  [ -s "$file" ] || truncate -s $((bs * blocks)) "$file"
  dev=$file
  if [ "$type" = malloc ]; then   # a loop device gives the 512-byte blocks nvmet's file backend cannot
    modprobe loop; dev=$(losetup --find --show --sector-size "$bs" "$file") && touch "$STATE/$(basename "$dev")"
  fi
  mkdir "$S/namespaces/$nsid" && w "$S/namespaces/$nsid/device_path" "$dev"
  [ "$dev" = "$file" ] && w "$S/namespaces/$nsid/buffered_io" 1
  w "$S/namespaces/$nsid/device_nguid" "$nguid"; w "$S/namespaces/$nsid/device_uuid" "$uuid"
  w "$S/namespaces/$nsid/enable" 1
done
read -r addr port < <(jq -r '.subsystems[0].listeners[0] | "\(.address) \(.port)"' "$CONF")
P=$CFG/ports/$PORTID
mkdir "$P"; w "$P/addr_trtype" tcp; w "$P/addr_adrfam" ipv4; w "$P/addr_traddr" "$addr"; w "$P/addr_trsvcid" "$port"
w "$P/param_inline_data_size" "$(jq -r '.tcp.inCapsuleDataSize' "$CONF")"
ln -s "$S" "$P/subsystems/$NQN"
echo "fake-target: listening on tcp $addr:$port: nvme connect -t tcp -a $addr -s $port -n $NQN"
while :; do sleep 1; done
