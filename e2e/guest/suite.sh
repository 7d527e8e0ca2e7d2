#!/bin/bash
# The e2e scenarios, run inside the guest by init.sh with the host's userland.
#   1. kernel modules, soft-RoCE (rdma_rxe on a dummy netdev)
#   2. control: kernel nvmet exporting a brd RAM disk + a tmpfs file over TCP
#      and RDMA; the nvme-cli checks, fio verify, and the fio latency job that
#      is the benchmark peer
#   3. nvmf4j (the built service) over TCP: the same nvme-cli checks, fio
#      verify, latency job, blkdiscard / ext4 + fstrim + fsck / fio verify on
#      both namespaces (the file image must stay sparse), disconnect/reconnect
#      with read-back, persistent reservations with a second host (nvme resv-*), restart of the
#      service while the host stays connected (the reservation kept through it: PTPL)
#   4. nvmf4j over RDMA (rxe): the rdma-cm self-test, the same checks as over
#      TCP, CM rejects of bad private data (guest/BadConnect.java)
#   4b. the spdk engine (SPDK's target inside the service JVM, in hugepages) over TCP and
#      RDMA: the identity checks, fio verify, a namespace added live, restarts
#   4c. ANA multipath: two nvmf4j instances serve one subsystem and namespace from one image; the host's
#      native multipath sees an optimized and a non-optimized path, fio verify runs while the optimized
#      instance is killed (SIGKILL), the host fails over; it comes back and is optimized again; nvmfctl
#      moves I/O between the paths live
#   4c'. rbd (guest/rbd.sh): a Ceph cluster in the guest, two nvmf4j gateways on one RBD image with the exclusive
#      lock following ANA; reservations through one path seen through the other, a second host fenced; fio verify
#      while the optimized gateway is killed, the other made optimized through its API; the killed one comes back
#   4c''. the RDMA fuzzers (guest/fuzzrdma.sh): SPDK's nvme_fuzz and the live RDMA fuzzer (RdmaHost.java fuzz)
#      against one subsystem over rxe while the Linux host verifies I/O on another (nvme-rdma, fio crc32c);
#      the service's heap, threads, fds, controllers and RDMA connections back to where they were
#   4d. DH-HMAC-CHAP (guest/auth.sh, --suite trixie): kernel nvmet, then nvmf4j with hostKeys
#   4'. volumes (guest/volumes.sh, within the nvmf4j TCP scenarios, --only tcp,volumes): a reflink pool on XFS, ext4
#      on a volume, a snapshot under fio, its clone mounted by a second host NQN, a group snapshot's write
#      order, a live grow
#   4''. QoS (guest/qos.sh, within the nvmf4j TCP scenarios and the spdk engine's TCP scenario, --only tcp,spdk,qos):
#      an IOPS and a read MB/s limit on a namespace held within 5 % under fio randread, an unlimited neighbour on the
#      same host queue not held, the limit removed
#   4e. NVMe/TCP TLS (guest/tls.sh, --suite trixie): kernel nvmet with tlshd, a PSK in the keyring
#   4f. the benchmark rows (guest/bench.sh, only with --only bench): fio latency and iops against nvmet, the
#      java engine and the spdk engine over TCP and RDMA, ratios to nvmet in bench-guest.tsv
#   (the power cut runs in two boots of its own: guest/powercut.sh)
#   5. the nvmf4j/nvmet ratio tables (TCP, RDMA), teardown, kernel log check
# Writes $E2E_RES/results.tsv (check, PASS|FAIL|SKIP, detail), metrics.tsv,
# bench.tsv, nvmf4j-service.log, dmesg.txt, cli/*.txt, fio-*.json.
# Exit status: the number of failed checks (0 = all passed).
set -u
HERE=$(dirname "$(readlink -f "$0")")
. "$HERE/lib.sh"
. "$HERE/volumes.sh"   # volume_checks, run in the nvmf4j TCP scenarios
. "$HERE/qos.sh"       # qos_checks, run in the nvmf4j and the spdk engine's TCP scenarios
REPO=${E2E_REPO:?} E2E_FIO_RUNTIME=${E2E_FIO_RUNTIME:-10}
WORK=/tmp/nvmf4j-e2e                       # guest tmpfs
FILE_IMG=$WORK/file0.img                   # the image of the file bdev (nsid 2) of the service under test
RXE_IF=e2e0 RXE_ADDR=10.199.0.1            # exists only inside the guest
NVMET_PORT=4421 NVMF4J_PORT=4430 NVMF4J_RDMA_PORT=4431 SPDK_PORT=4432 SPDK_RDMA_PORT=4433
CFG=/sys/kernel/config/nvmet
CONNECT_OPTS=(--reconnect-delay=1 --ctrl-loss-tmo=600 --keep-alive-tmo=5)
LAUNCHER=${E2E_LAUNCHER:-$REPO/bin/nvmf4j-target}
SVC_LOG=$RES/nvmf4j-service.log
# a JVM run in the guest (a Java source file compiled at launch, a self-test): a bound for a failure only
GUEST_JVM_TIMEOUT=600
SVC_START_TIMEOUT=480   # a bound for a failure only: a start takes ~35 s under TCG, several times that on a loaded machine
mkdir -p "$WORK"
want() { [[ ",${E2E_ONLY:-nvmet,tcp,rdma,spdk,ana,rbd,fuzzrdma,volumes,qos}," == *",$1,"* ]]; }   # part selected (run.sh --only)
# a part left out with --only leaves no row: only what was meant to run is counted (a skip is for what could not)
unselected() { echo "$1: not selected (--only $E2E_ONLY)"; }
# a tmpfs of its own: nvmet's file backend takes the block size from the filesystem (9p/overlay report 1)
mountpoint -q "$WORK" || mount -t tmpfs -o mode=0755 tmpfs "$WORK"
declare -a NS_BLOCKS NS_BS NS_NGUID NS_UUID NS_EUI64
declare -A DEV

metric guest_uptime_at_suite "$(cut -d' ' -f1 /proc/uptime)" s
hdr "environment"
uname -a; echo "cpus: $(nproc), $(free -m | awk '/^Mem:/{print $2}') MiB"
echo "clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
nvme version | head -n 1; fio --version; java -version 2>&1 | head -n 1

# Both targets export the same shapes: nsid 1 = 128 MiB of RAM in 512 B blocks
# (malloc bdev / brd), nsid 2 = 64 MiB tmpfs file in 4 KiB blocks.
profile() { # nvmet|nvmf4j|spdk tcp|rdma  (spdk: the service with the spdk engine)
  T=$1 TR=$2
  if [ "$TR" = rdma ]; then ADDR=$RXE_ADDR; else ADDR=127.0.0.1; fi
  NS_IDS="1 2"
  NS_BLOCKS[1]=262144 NS_BS[1]=512 NS_BLOCKS[2]=16384 NS_BS[2]=4096
  NS_EUI64=()
  if [ "$T" = nvmet ]; then
    PORT=$NVMET_PORT NQN=nqn.2026-11.io.nvmf4j:nvmet-peer SERIAL=NVMETE2E0001 MODEL=nvmet-e2e-peer
    NS_NGUID[1]=6e766d6574000001a000000000000001 NS_UUID[1]=6e766d65-7400-4001-a000-000000000001
    NS_NGUID[2]=6e766d6574000001a000000000000002 NS_UUID[2]=6e766d65-7400-4001-a000-000000000002
    X_NN="" X_MDTS="" X_IOCCSZ="" X_MAXIOQ=""
  else
    if [ "$T" = spdk ]; then
      PORT=$SPDK_PORT NQN=nqn.2026-11.io.nvmf4j:e2e-spdk SERIAL=NVMF4JSPDK0001 MODEL=nvmf4j-e2e-spdk
      [ "$TR" = rdma ] && PORT=$SPDK_RDMA_PORT
      NS_NGUID[1]=6e766d66346a0002c000000000000001 NS_UUID[1]=6e766d66-346a-4002-c000-000000000001
      NS_NGUID[2]=6e766d66346a0002c000000000000002 NS_UUID[2]=6e766d66-346a-4002-c000-000000000002
      NS_EUI64[1]=6e766d66346a0201 NS_EUI64[2]=6e766d66346a0202
    else
      PORT=$NVMF4J_PORT NQN=nqn.2026-11.io.nvmf4j:e2e SERIAL=NVMF4JE2E0001 MODEL=nvmf4j-e2e
      [ "$TR" = rdma ] && PORT=$NVMF4J_RDMA_PORT
      NS_NGUID[1]=6e766d66346a0001b000000000000001 NS_UUID[1]=6e766d66-346a-4001-b000-000000000001
      NS_NGUID[2]=6e766d66346a0001b000000000000002 NS_UUID[2]=6e766d66-346a-4001-b000-000000000002
    fi
    # derived from the config: maxNamespaces, mdtsBytes (2^5 x 4 KiB pages),
    # inCapsuleDataSize ((64 + 8192) / 16), maxIoQueues
    X_NN=32 X_MDTS=5 X_IOCCSZ=516 X_MAXIOQ=8
    # over RDMA: inCapsuleDataSize 4096 -> (64 + 4096) / 16
    [ "$TR" = rdma ] && X_IOCCSZ=260
  fi
}

########################################################################
hdr "kernel modules"
mods_ok=1
# brd: one 128 MiB RAM disk, the nvmet peer of nvmf4j's malloc0
modprobe brd rd_nr=1 rd_size=131072 max_part=0 || mods_ok=0
for m in configfs nvme-tcp nvme-rdma nvmet nvmet-tcp nvmet-rdma dummy rdma_rxe ib_uverbs rdma_ucm; do
  modprobe $m || { echo "modprobe $m failed"; mods_ok=0; }
done
mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
if [ $mods_ok = 1 ] && [ -d $CFG ] && [ -b /dev/ram0 ]; then
  pass modules "nvme-tcp nvme-rdma nvmet nvmet-tcp nvmet-rdma brd rdma_rxe ib_uverbs rdma_ucm loaded"
else fail modules "see console"; fi
[ -s /etc/nvme/hostnqn ] || { mkdir -p /etc/nvme; nvme gen-hostnqn > /etc/nvme/hostnqn; }
echo "hostnqn: $(cat /etc/nvme/hostnqn)"

hdr "soft-RoCE: rdma_rxe on dummy netdev $RXE_IF ($RXE_ADDR)"
ip link add "$RXE_IF" type dummy && ip addr add "$RXE_ADDR/24" dev "$RXE_IF" && ip link set "$RXE_IF" up &&
  rdma link add rxe0 type rxe netdev "$RXE_IF"
RXE_OK=0
C=rxe/port-active OUTF=$RES/cli/ibv_devinfo.txt BAD=""
timeout 30 ibv_devinfo -d rxe0 > "$OUTF" 2>&1; rc=$?
grep -q PORT_ACTIVE "$OUTF" && RXE_OK=1 || BAD="rxe0 port not active"
verdict $rc "rxe0 on $RXE_IF: $(grep -m1 -o 'PORT_ACTIVE.*' "$OUTF"), libibverbs rxe provider works"

########################################################################
nvmet_setup() { # exports $NQN (profile nvmet) on tcp 127.0.0.1 and rdma $RXE_ADDR
  local s=$CFG/subsystems/$NQN n p tr addr i=0
  w() { echo -n "$2" > "$1" || { echo "cannot write '$2' to $1"; return 1; }; }
  truncate -s $((NS_BLOCKS[2] * NS_BS[2])) "$WORK/nvmet-file0.img" &&
  mkdir "$s" && w "$s/attr_allow_any_host" 1 && w "$s/attr_serial" "$SERIAL" && w "$s/attr_model" "$MODEL" || return 1
  for n in 1 2; do
    mkdir "$s/namespaces/$n" || return 1
    if [ $n = 1 ]; then w "$s/namespaces/1/device_path" /dev/ram0 || return 1
    else w "$s/namespaces/2/device_path" "$WORK/nvmet-file0.img" && w "$s/namespaces/2/buffered_io" 1 || return 1; fi
    w "$s/namespaces/$n/device_nguid" "${NS_NGUID[$n]}" && w "$s/namespaces/$n/device_uuid" "${NS_UUID[$n]}" &&
      w "$s/namespaces/$n/enable" 1 || return 1
  done
  for p in tcp:127.0.0.1 rdma:$RXE_ADDR; do
    tr=${p%%:*} addr=${p#*:} i=$((i + 1))
    [ "$tr" = tcp ] || [ $RXE_OK = 1 ] || continue
    mkdir "$CFG/ports/$i" && w "$CFG/ports/$i/addr_trtype" "$tr" && w "$CFG/ports/$i/addr_adrfam" ipv4 &&
      w "$CFG/ports/$i/addr_traddr" "$addr" && w "$CFG/ports/$i/addr_trsvcid" "$NVMET_PORT" &&
      ln -s "$s" "$CFG/ports/$i/subsystems/$NQN" || return 1
  done
}
nvmet_teardown() {
  local s=$CFG/subsystems/nqn.2026-11.io.nvmf4j:nvmet-peer p n
  for p in "$CFG"/ports/*; do [ -d "$p" ] || continue; rm -f "$p"/subsystems/*; rmdir "$p"; done
  for n in "$s"/namespaces/*; do [ -d "$n" ] || continue; echo 0 > "$n/enable"; rmdir "$n"; done
  [ ! -d "$s" ] || rmdir "$s"
}

hdr "control: kernel nvmet (brd + tmpfs file) on tcp 127.0.0.1:$NVMET_PORT and rdma $RXE_ADDR:$NVMET_PORT"
profile nvmet tcp
if nvmet_setup; then
  pass nvmet/setup "$NQN: ns1 = /dev/ram0 (brd 128 MiB), ns2 = tmpfs file 64 MiB (buffered_io); ports tcp$([ $RXE_OK = 1 ] && echo " + rdma")"
  NVMET_OK=1
else
  fail nvmet/setup "configfs setup failed, see console"; NVMET_OK=0
fi

if ! want nvmet; then
  unselected nvmet
elif [ $NVMET_OK = 1 ]; then
  trace_on
  check_discover
  if connect nvmet/tcp/connect "${CONNECT_OPTS[@]}"; then
    check_identity
    trace_off nvmet-tcp
    fio_verify nvmet/tcp/fio-verify "${DEV[1]}"
    hdr "benchmark peer: nvmet fio latency"
    fio_latency nvmet/tcp/fio-latency "${DEV[1]}" nvmet
    # the control of nvmf4j's discard checks: nvmet's file backend punches holes (brd has no discard)
    discard_checks nvmet/tcp 2 file "$WORK/nvmet-file0.img"
    disconnect nvmet/tcp/disconnect
  else
    trace_off nvmet-tcp
  fi
  if [ $RXE_OK = 1 ]; then
    hdr "control: kernel nvmet over RDMA (rxe)"
    profile nvmet rdma
    check_discover
    if connect nvmet/rdma/connect "${CONNECT_OPTS[@]}"; then
      fio_verify nvmet/rdma/fio-verify "${DEV[1]}"
      hdr "benchmark peer: nvmet fio latency over RDMA"
      fio_latency nvmet/rdma/fio-latency "${DEV[1]}" nvmet-rdma
      disconnect nvmet/rdma/disconnect
    fi
  else
    skip nvmet/rdma "rxe0 not active"
  fi
fi

########################################################################
# nvmf4j: the built service, started from the repository over 9p
write_config() { # file copy-in-results tcp-port rdma-port image [top-level members] : config of the current profile
  local file=$1 copy=$2 tcp_port=$3 rdma_port=$4 img=$5 top=${6:-} rdma_listener="" e1="" e2=""
  [ $RXE_OK = 1 ] && rdma_listener=", {\"transport\": \"rdma\", \"address\": \"$RXE_ADDR\", \"port\": $rdma_port}"
  [ -z "${NS_EUI64[1]:-}" ] || e1=", \"eui64\": \"${NS_EUI64[1]}\""
  [ -z "${NS_EUI64[2]:-}" ] || e2=", \"eui64\": \"${NS_EUI64[2]}\""
  cat > "$file" <<EOF
{$top"cores": ${E2E_CORES:-2}, "idleStrategy": "${E2E_IDLE:-backoff}", "storage": {"fileDirectories": ["$(dirname "$img")"]},
 "tcp": {"inCapsuleDataSize": 8192, "maxQueueDepth": 128, "maxIoQueues": 8, "mdtsBytes": 131072,
         "maxH2cData": 131072, "c2hSuccess": true},
 "rdma": {"inCapsuleDataSize": 4096, "maxQueueDepth": 128, "maxIoQueues": 8, "mdtsBytes": 131072,
          "srqDepth": 256, "dataBuffers": 128, "cqSize": 4096, "maxReadDepth": 16, "hugepages": true},
 "bdevs": [{"name": "malloc0", "type": "malloc", "blockSize": ${NS_BS[1]}, "numBlocks": ${NS_BLOCKS[1]}},
           {"name": "file0", "type": "file", "blockSize": ${NS_BS[2]}, "numBlocks": ${NS_BLOCKS[2]}, "path": "$img"}],
 "subsystems": [{"nqn": "$NQN", "serial": "$SERIAL", "model": "$MODEL", "allowAnyHost": true, "maxNamespaces": 32,
   "namespaces": [{"nsid": 1, "bdev": "malloc0", "nguid": "${NS_NGUID[1]}", "uuid": "${NS_UUID[1]}"$e1},
                  {"nsid": 2, "bdev": "file0", "nguid": "${NS_NGUID[2]}", "uuid": "${NS_UUID[2]}"$e2}],
   "listeners": [{"transport": "tcp", "address": "127.0.0.1", "port": $tcp_port}$rdma_listener]}]}
EOF
  cp "$file" "$RES/$copy"
}
has_opt() { # short long value args... : the args hold "-s value", "--long value" or "--long=value"
  local s=$1 l=$2 v=$3 i; shift 3
  local a=("$@")
  for ((i = 0; i < ${#a[@]}; i++)); do
    case ${a[i]} in
      "$s"|"$l") [ "${a[i+1]:-}" = "$v" ] && return 0 ;;
      "$l=$v") return 0 ;;
    esac
  done
  return 1
}
check_connect_hint() { # the service logs the exact nvme connect command of each listener
  local line a
  line=$(grep -o "nvme connect -t $TR .*" "$SVC_LOG" | head -n 1)
  C=$T/$TR/log-connect-hint OUTF=$SVC_LOG BAD=""
  read -ra a <<< "${line//[\"\'\`]/}"
  has_opt -t --transport "$TR" "${a[@]}" || BAD+="${BAD:+; }no -t $TR"
  has_opt -a --traddr "$ADDR" "${a[@]}" || BAD+="${BAD:+; }no -a $ADDR"
  has_opt -s --trsvcid "$PORT" "${a[@]}" || BAD+="${BAD:+; }no -s $PORT"
  has_opt -n --nqn "$NQN" "${a[@]}" || BAD+="${BAD:+; }no -n $NQN"
  [ -n "$line" ] || BAD="no line containing 'nvme connect' in the service log"
  verdict 0 "$line"
}
pattern_write() { # 8 MiB of random data at 4 MiB into nsid 2 (file bdev $FILE_IMG), O_DIRECT + fsync
  C=$1 OUTF=$RES/cli/pattern.txt BAD=""
  head -c 8M /dev/urandom > "$WORK/pattern.bin"; PSUM=$(sha256sum < "$WORK/pattern.bin" | cut -c1-16)
  timeout 60 dd if="$WORK/pattern.bin" of="${DEV[2]}" bs=1M seek=4 oflag=direct conv=fsync status=none > "$OUTF" 2>&1; local rc=$?
  # the file bdev must have put it into its file
  expect "sha256 of the file bdev's backing file at 4 MiB" \
    "$(dd if="$FILE_IMG" bs=1M skip=4 count=8 status=none 2>&1 | sha256sum | cut -c1-16)" "$PSUM"
  verdict $rc "8 MiB written to ${DEV[2]} at 4 MiB (sha256 $PSUM...), found in $FILE_IMG"
}
pattern_check() { # check-name
  local rc
  C=$1 OUTF=$RES/cli/pattern.txt BAD=""
  rm -f "$WORK/readback.bin"
  timeout 60 dd if="${DEV[2]}" of="$WORK/readback.bin" bs=1M skip=4 count=8 iflag=direct status=none > "$OUTF" 2>&1; rc=$?
  expect sha256 "$(sha256sum < "$WORK/readback.bin" | cut -c1-16)" "$PSUM"
  verdict $rc "8 MiB read back from ${DEV[2]}, sha256 $PSUM... matches"
}
ctrl_live() { [ "$(ctrl_state)" = live ]; }
identity_sysfs() { # check-name : identity as the host sees it in sysfs is still the configured one
  local n b
  C=$1 OUTF=$RES/cli/identity-sysfs.txt BAD=""
  grep -H . /sys/class/nvme/"$CTRL"/{serial,model,subsysnqn,state} > "$OUTF" 2>&1
  expect serial "$(trim "$(cat "/sys/class/nvme/$CTRL/serial")")" "$SERIAL"
  expect model "$(trim "$(cat "/sys/class/nvme/$CTRL/model")")" "$MODEL"
  for n in $NS_IDS; do
    b=${DEV[$n]:-/dev/none}; b=/sys/block/${b#/dev/}
    grep -H . "$b"/{nsid,nguid,uuid,size} >> "$OUTF" 2>&1
    expect "ns$n nguid" "$(tr -d '-' < "$b/nguid")" "${NS_NGUID[$n]}"
    expect "ns$n uuid" "$(cat "$b/uuid")" "${NS_UUID[$n]}"
    # sysfs prints the EUI-64 as "6e 76 6d ..."
    [ -z "${NS_EUI64[$n]:-}" ] || expect "ns$n eui" "$(tr -d ' ' < "$b/eui" 2>&1)" "${NS_EUI64[$n]}"
    expect "ns$n bytes" "$(($(cat "$b/size") * 512))" "$((NS_BLOCKS[n] * NS_BS[n]))"
  done
  verdict 0 "serial, model, nguid, uuid$([ ${#NS_EUI64[@]} = 0 ] || echo ", eui64") and size of $(for n in $NS_IDS; do printf '%s ' "${DEV[$n]}"; done)unchanged"
}

nvme_in_flight() { # requests in flight on any NVMe block device (the multipath head or its paths, whichever counts)
  [ "$(cat /sys/block/nvme*/inflight 2> /dev/null | awk '{n += $1 + $2} END {print n + 0}')" -gt 0 ]
}
midio_disconnect() { # check-name : the host drops its controller while I/O is in flight; the target carries on
  local pid dev=${DEV[1]}
  C=$1 OUTF=$RES/cli/${1//\//_}.txt BAD=""
  fio --name=midio --filename="$dev" --ioengine=libaio --direct=1 --rw=randrw --bs=16k --iodepth=32 \
    --time_based --runtime=120 > "$OUTF" 2>&1 &
  pid=$!
  # fio starts slowly under TCG (and slower on a loaded machine): the disconnect waits for I/O in flight
  wait_for 120 eval "gone $pid || nvme_in_flight" || BAD="no I/O in flight 120 s after fio started"
  gone "$pid" && BAD="fio ended before the disconnect"
  nvme disconnect -n "$NQN" >> "$OUTF" 2>&1 || BAD="${BAD:+$BAD; }nvme disconnect failed"
  if ! wait_for 60 gone "$pid"; then
    kill -KILL "$pid" 2> /dev/null
    BAD="${BAD:+$BAD; }fio still running 60 s after the disconnect"
  fi
  wait "$pid" 2> /dev/null
  grep -q 'IOPS=' "$OUTF" || BAD="${BAD:+$BAD; }fio reports no I/O before the disconnect"
  verdict 0 "host disconnected while fio (QD32 16k randrw) was running; fio ended; the service goes on"
}
poll_alloc_bytes() { # heap bytes allocated so far by the service's poll-group threads (its /metrics)
  curl -s -m 20 -H "Authorization: Bearer $(cat "$WORK/state/api-token" 2> /dev/null)" \
    http://127.0.0.1:8420/metrics 2> /dev/null | awk '/^nvmf_pollgroup_allocated_bytes_total /{printf "%.0f", $2}'
}
alloc_per_io() { # check-name bytes-before bytes-after fio-json : the data path allocates nothing per I/O
  local ios per
  ios=$(jq '[.jobs[].read.total_ios] | add' "$4" 2> /dev/null)
  C=$1 OUTF=$4 BAD=""
  if [ -z "$2" ] || [ -z "$3" ] || [ -z "$ios" ] || [ "$ios" -le 0 ]; then
    BAD="no measurement (before='$2' after='$3' I/Os='$ios')"
  else
    per=$(awk -v a="$2" -v b="$3" -v n="$ios" 'BEGIN {printf "%.2f", (b - a) / n}')
    metric "${1//\//_}_bytes" "$per" B
    # the guard under the Linux host's traffic (on the host: AllocationTest over TCP). Measured here:
    # TCP 0.06, RDMA 0.01 B/I/O; before, an RDMA capability lookup cost 70 B/I/O and Netty's recycler
    # with its default chunk size 10 B/I/O over TCP at QD 32. Anything per I/O is >= 16 bytes.
    awk -v p="$per" 'BEGIN {exit !(p < 8)}' || BAD="$per bytes allocated per I/O by the poll groups (bound 8)"
  fi
  verdict 0 "poll-group threads allocated $(( ${3:-0} - ${2:-0} )) bytes over $ios fio I/Os (${per:-?} B/I/O)"
}
ns_appeared() { # nsid : the host has a block device for that nsid of $NQN
  local saved=$NS_IDS rc
  NS_IDS=$1; map_namespaces; rc=$?; NS_IDS=$saved
  return $rc
}
live_namespace_add() { # check-name [nsid bdev] : nvmfctl adds a namespace (3, live0); the connected host sees it
  # without reconnecting, with the NGUID and UUID the service gave it; sets NS_NGUID/NS_UUID/NS_BLOCKS/NS_BS[nsid].
  # The bdev is made and the namespaces listed with curl: each JVM start of nvmfctl costs 20-40 s under TCG, and the
  # CLI's other calls are Maven's tests (NvmfctlTest); the namespace's add is the one made with nvmfctl here
  local ctl=(env NVMF4J_JAVA_OPTS="$E2E_JVM_OPTS" "$REPO/bin/nvmfctl" --state-dir "${SVC_STATE:-$WORK/state}") t
  local n=${2:-3} bdev=${3:-live0} b
  C=$1 OUTF=$RES/cli/${1//\//_}.txt BAD=""
  t=$(now_us)
  { vol_api POST /bdevs "{\"name\": \"$bdev\", \"type\": \"malloc\", \"blockSize\": 512, \"numBlocks\": 32768}" &&
    "${ctl[@]}" ns add --nqn "$NQN" --bdev "$bdev" --nsid "$n" &&
    vol_api GET "/subsystems/$(NQN_PATH)/namespaces"; } > "$OUTF" 2>&1 || BAD="the bdev's create, nvmfctl ns add or the list failed"
  # ns add prints the namespace: "nguid  <hex>", "uuid  <uuid>"
  NS_NGUID[$n]=$(awk '$1 == "nguid" {print $2; exit}' "$OUTF") NS_UUID[$n]=$(awk '$1 == "uuid" {print $2; exit}' "$OUTF")
  NS_BLOCKS[$n]=32768 NS_BS[$n]=512
  if [ -z "$BAD" ] && ! wait_for 60 ns_appeared "$n"; then
    BAD="no block device for nsid $n of $NQN on $CTRL within 60 s (the host was not told, or did not rescan)"
  fi
  expect "$CTRL state" "$(ctrl_state)" live
  if [ -z "$BAD" ]; then
    ns_appeared "$n"
    b=/sys/block/${DEV[$n]#/dev/}
    expect "nsid $n bytes" "$(($(cat "$b/size") * 512))" $((16 << 20))
    expect "nsid $n nguid" "$(tr -d '-' < "$b/nguid")" "${NS_NGUID[$n]}"
    expect "nsid $n uuid" "$(cat "$b/uuid")" "${NS_UUID[$n]}"
    nvme list -o json >> "$OUTF" 2>&1
    grep -q "${DEV[$n]}" "$OUTF" || BAD="$BAD; nvme list does not show ${DEV[$n]}"
  fi
  map_namespaces
  verdict 0 "bdev made through the API, nvmfctl ns add: ${DEV[$n]:-?} (16 MiB, nguid ${NS_NGUID[$n]}) appeared on $CTRL $(secs_since "$t")s later, no reconnect"
}

hugepages_check() { # check-name : every RDMA poll group of the current service start is in hugepages
  local hp np
  C=$1 OUTF=$SVC_LOG BAD=""
  hp=$(svc_log_now | grep -c 'rdma poll group.* in hugepages')
  np=$(svc_log_now | grep -c 'rdma poll group.* in normal pages')
  [ "$hp" -gt 0 ] && [ "$np" = 0 ] || BAD="poll groups in hugepages: $hp, in normal pages: $np ($(grep HugePages_Total /proc/meminfo))"
  verdict 0 "$hp poll-group regions in 2 MiB hugepages ($(awk '/^HugePages_(Total|Free)/{printf "%s %s ", $1, $2}' /proc/meminfo))"
}

# the rdma-cm binding's classes and its loader's (the native module) for the Java helpers on RDMA
RDMA_CLASSES="$REPO/native/target/classes:$REPO/rdma-cm/target/classes"

# guest/RdmaHost.java: a Java NVMe/RDMA host sending what the Linux host never does, Last Segment SGLs
# of up to 16 keyed descriptors in the capsule (and bad ones); one "case PASS|FAIL detail" line per case
# (nvmf-target's test classes: the fuzzer's byte mutator, io.nvmf4j.fuzz.Mutator)
RDMA_HOST=("${GUEST_JAVA[@]}" -cp "$RDMA_CLASSES:$REPO/nvmf-target/target/test-classes" "$HERE/RdmaHost.java")
# compiled by run.sh before the boot when it could: no javac under TCG at each run
[ ! -f "${E2E_GUEST_CLASSES:-/nonexistent}/RdmaHost.class" ] ||
  RDMA_HOST=("${GUEST_JAVA[@]}" -cp "$RDMA_CLASSES:$REPO/nvmf-target/target/test-classes:$E2E_GUEST_CLASSES" RdmaHost)
rdma_host() { # mode [java-args...] : the Java host in the foreground, output into $OUTF
  local mode=$1; shift
  timeout $((GUEST_JVM_TIMEOUT + 180)) "${RDMA_HOST[@]}" "$mode" "$RXE_ADDR" "$NVMF4J_RDMA_PORT" "$NQN" "$@" > "$OUTF" 2>&1
}
rdma_connections() { # the service's open RDMA connections (queue pairs not yet destroyed), from its /metrics
  curl -s -m 20 -H "Authorization: Bearer $(cat "$WORK/state/api-token" 2> /dev/null)" \
    http://127.0.0.1:8420/metrics 2> /dev/null | awk '/^nvmf_transport_connections\{/ && /transport="rdma"/ {printf "%.0f", $2}'
}
wait_rdma_connections() { # want seconds : polls the gauge for that many seconds of wall-clock time; prints what it saw last
  local end=$(( $(now_us) + $2 * 1000000 )) c
  while c=$(rdma_connections); [ "$c" != "$1" ] && [ "$(now_us)" -lt "$end" ]; do sleep 1; done
  echo "${c:-?}"
  [ "$c" = "$1" ]
}
rdma_host_verdict() { # rc : PASS when rc is 0 and no case failed
  local n
  n=$(grep -c ' PASS ' "$OUTF")
  grep -q ' FAIL ' "$OUTF" && BAD="$(grep ' FAIL ' "$OUTF" | head -n 4 | tr '\n' ' ')"
  [ "$n" -gt 1 ] || BAD+="${BAD:+; }no case ran"
  verdict "$1" "$n cases passed: $(grep ' PASS ' "$OUTF" | cut -d' ' -f1 | tr '\n' ' ')"
}
svc_threads() { # diagnosis: the service's Java thread dump (SIGQUIT: into its log) and its threads' kernel wait channels
  kill -QUIT "$JPID" 2> /dev/null
  local t
  for t in /proc/"$JPID"/task/*; do
    echo "$(cat "$t/comm" 2> /dev/null) wchan=$(cat "$t/wchan" 2> /dev/null) $(cut -d' ' -f3 "$t/stat" 2> /dev/null)"
  done > "$RES/cli/service-threads.txt"
  sleep 1
}
running_or_gone() { grep -q '^running' "$1" || gone "$2"; }
java_host_checks() { # rdma
  local rc hpid alive=1 t=""
  hdr "nvmf4j over RDMA: Java host with multi-descriptor SGLs (guest/RdmaHost.java)"
  C=nvmf4j/rdma/multi-sgl OUTF=$RES/cli/rdma-multi-sgl.txt BAD=""
  rdma_host all; rc=$?
  cat "$OUTF"
  rdma_host_verdict $rc

  hdr "nvmf4j over RDMA: Java host at QD 32 killed with SIGKILL mid-I/O"
  C=nvmf4j/rdma/host-killed-mid-io OUTF=$RES/cli/rdma-host-killed.txt BAD=""
  local c0 c1
  # no RDMA host is connected now: the previous Java host's queue pairs are gone
  c0=$(wait_rdma_connections 0 30) || BAD="$c0 RDMA connections open 30 s after the previous Java host left (want 0)"
  "${RDMA_HOST[@]}" stress "$RXE_ADDR" "$NVMF4J_RDMA_PORT" "$NQN" > "$OUTF" 2>&1 &
  hpid=$!
  wait_for 240 running_or_gone "$OUTF" "$hpid"
  if ! grep -q '^running' "$OUTF"; then
    BAD="no 'running' from the Java host"
  elif gone "$hpid"; then
    BAD="the Java host exited before it was killed"
  else
    sleep 5
    grep -q '^progress' "$OUTF" || sleep 3
    c1=$(rdma_connections)
    kill -KILL "$hpid"
    t=$(now_us)
  fi
  gone "$hpid" || kill -KILL "$hpid" 2> /dev/null
  wait "$hpid"; rc=$?
  cat "$OUTF"
  [ -n "$BAD" ] || [ $rc = 137 ] || BAD="exit status $rc, not 137 (SIGKILL)"
  local killed
  killed="$(grep -m1 '^running' "$OUTF"); last: $(grep '^progress' "$OUTF" | tail -n 1)"
  gone "$JPID" && { BAD+="${BAD:+; }the service died"; alive=0; }
  if [ $alive = 1 ] && [ -n "$t" ]; then
    # the target must tear down both queue pairs of the dead host (CM DISCONNECTED, or failed work
    # requests; keep-alive 15 s at the latest): its connection count goes back to 0
    local c2
    if c2=$(wait_rdma_connections 0 45); then
      killed+="; its $c1 RDMA connections released $(secs_since "$t")s after the kill"
    else
      BAD+="${BAD:+; }$c2 of the killed host's $c1 RDMA connections still open 45 s after the kill"
    fi
  fi
  if [ $alive = 1 ]; then
    # a fresh host on a fresh connection: the same correctness cases
    local outf=$OUTF
    OUTF=$RES/cli/rdma-after-host-killed.txt
    rdma_host multi-sgl; rc=$?
    cat "$OUTF"
    grep -q ' FAIL ' "$OUTF" && BAD+="${BAD:+; }next Java host: $(grep ' FAIL ' "$OUTF" | head -n 3 | tr '\n' ' ')"
    [ $rc = 0 ] || BAD+="${BAD:+; }next Java host exited with $rc: $(tail -n 2 "$OUTF" | tr '\n' ' ')"
    killed+="; service alive; a new Java host then passed $(grep -c ' PASS ' "$OUTF") cases"
    OUTF=$outf
    [ -z "$BAD" ] || svc_threads
  fi
  verdict 0 "killed pid $hpid with SIGKILL at QD 32 ($killed)"
  [ $alive = 1 ] || { svc_alive nvmf4j/rdma/service-alive-after-host-killed; return 1; }
}

# Persistent reservations (nvmf4j over TCP, java engine): this host (A: the default host NQN and ID) and a
# second host (B: its own host NQN and host identifier) drive nsid 1 in turns, through its generic device.
RESV_B_ID=6e766d66-346a-4e2e-b000-00000000000b
RESV_B_NQN=nqn.2014-08.org.nvmexpress:uuid:$RESV_B_ID
RESV_KEPT=0                                 # A stays registered with PTPL on, for restart_checks
head_ng() { # nsid : the generic char device of that namespace of $NQN (/dev/ngXnY beside its block device)
  local d=${DEV[$1]:-}
  [ -n "$d" ] && [ -c "/dev/ng${d#/dev/nvme}" ] && echo "/dev/ng${d#/dev/nvme}" || { echo "/dev/null-no-ng-for-$1"; return 1; }
}
resv_cmd() { # check-name ok|conflict command... : nvme-cli completes, or fails with Reservation Conflict
  local name=$1 want=$2 rc; shift 2
  cli "$name" "$@"; rc=$?
  if [ "$want" = conflict ]; then
    [ $rc != 0 ] || BAD="succeeded; a reservation conflict was expected"
    grep -qiE 'reservation.?conflict' "$OUTF" || BAD+="${BAD:+; }no Reservation Conflict in: $(tr '\n' ' ' < "$OUTF")"
    verdict 0 "Reservation Conflict, as the reservation says: $(grep -m1 -iE 'reservation.?conflict' "$OUTF")"
  else
    verdict $rc "$(head -n 1 "$OUTF")"
  fi
}
resv_report() { # check-name dev rtype regctl holder-hostid(32 hex, or -) : Reservation Report (extended) as expected
  local rc holder
  cli "$1" nvme resv-report "$2" --namespace-id=1 --eds -o json; rc=$?
  expect rtype "$(jqf .rtype)" "$3"
  expect regctl "$(jqf .regctl)" "$4"
  holder=$(jqf '[.regctlext[]? | select(.rcsts == 1) | (.hostid // ."Host ID")] | first // "-"')
  [ "$5" = - ] || expect "holder hostid" "$holder" "$5"
  verdict $rc "rtype $3, $4 registrant(s), holder $holder"
}
reservation_checks() { # nvmf4j over tcp, host A connected: register, acquire, report, fence, preempt, release
  # One host at a time: with native multipath the namespace's char device (/dev/ngXnY of the ns head) sends a
  # command down any path, so host A and host B (their own host NQN and host ID) take turns on the one
  # connection; registrations and reservations belong to the host ID and stay while a host is away.
  local p="$T/$TR/resv" a b ida idb blk=$WORK/resv-block
  local hostb=(--hostnqn="$RESV_B_NQN" --hostid="$RESV_B_ID")
  hdr "$T over $TR: persistent reservations (nvme resv-*), a second host fenced"
  head -c 512 /dev/urandom > "$blk"
  ida=$(tr -d '-' < "/sys/class/nvme/$CTRL/hostid") idb=${RESV_B_ID//-/}
  a=$(head_ng 1)
  resv_cmd "$p/register-a" ok nvme resv-register "$a" --namespace-id=1 --nrkey=0xa1 --rrega=0
  resv_cmd "$p/register-a-again" ok nvme resv-register "$a" --namespace-id=1 --nrkey=0xa1 --rrega=0
  resv_cmd "$p/acquire-a-write-exclusive" ok nvme resv-acquire "$a" --namespace-id=1 --crkey=0xa1 --rtype=1 --racqa=0
  resv_report "$p/report-held" "$a" 1 1 "$ida"
  resv_cmd "$p/a-write-holder" ok nvme write "$a" --namespace-id=1 --start-block=8 --block-count=0 \
    --data-size=512 --data="$blk"

  disconnect "$p/disconnect-host-a"
  connect "$p/connect-host-b" "${hostb[@]}" "${CONNECT_OPTS[@]}" || return 1
  expect "host NQN of $CTRL" "$(cat "/sys/class/nvme/$CTRL/hostnqn")" "$RESV_B_NQN"
  b=$(head_ng 1)
  resv_cmd "$p/register-b" ok nvme resv-register "$b" --namespace-id=1 --nrkey=0xb2 --rrega=0
  resv_cmd "$p/register-b-other-key" conflict nvme resv-register "$b" --namespace-id=1 --nrkey=0xb3 --rrega=0
  resv_report "$p/report-registered" "$b" 1 2 "$ida"
  resv_cmd "$p/acquire-b-while-held" conflict nvme resv-acquire "$b" --namespace-id=1 --crkey=0xb2 --rtype=1 --racqa=0
  resv_cmd "$p/b-write-fenced" conflict nvme write "$b" --namespace-id=1 --start-block=8 --block-count=0 \
    --data-size=512 --data="$blk"
  resv_cmd "$p/b-read-allowed" ok nvme read "$b" --namespace-id=1 --start-block=8 --block-count=0 \
    --data-size=512 --data=/dev/null
  # B preempts A and takes Exclusive Access: A is unregistered and can neither write nor read
  resv_cmd "$p/preempt-b" ok nvme resv-acquire "$b" --namespace-id=1 --crkey=0xb2 --prkey=0xa1 --rtype=2 --racqa=1
  resv_report "$p/report-preempted" "$b" 2 1 "$idb"

  disconnect "$p/disconnect-host-b"
  connect "$p/connect-host-a" "${CONNECT_OPTS[@]}" || return 1
  a=$(head_ng 1)
  resv_cmd "$p/a-read-fenced" conflict nvme read "$a" --namespace-id=1 --start-block=8 --block-count=0 \
    --data-size=512 --data=/dev/null
  resv_cmd "$p/a-write-fenced" conflict nvme write "$a" --namespace-id=1 --start-block=8 --block-count=0 \
    --data-size=512 --data="$blk"
  resv_cmd "$p/register-a-while-b-holds" ok nvme resv-register "$a" --namespace-id=1 --nrkey=0xa1 --rrega=0

  disconnect "$p/disconnect-host-a-2"
  connect "$p/connect-host-b-2" "${hostb[@]}" "${CONNECT_OPTS[@]}" || return 1
  b=$(head_ng 1)
  resv_cmd "$p/release-b" ok nvme resv-release "$b" --namespace-id=1 --crkey=0xb2 --rtype=2 --rrela=0
  resv_report "$p/report-released" "$b" 0 2 -
  resv_cmd "$p/clear-b" ok nvme resv-release "$b" --namespace-id=1 --crkey=0xb2 --rrela=1
  resv_report "$p/report-cleared" "$b" 0 0 -

  disconnect "$p/disconnect-host-b-2"
  connect "$p/connect-host-a-2" "${CONNECT_OPTS[@]}" || return 1
  a=$(head_ng 1)
  resv_cmd "$p/a-write-free" ok nvme write "$a" --namespace-id=1 --start-block=8 --block-count=0 \
    --data-size=512 --data="$blk"
  # A registers again with Persist Through Power Loss on (CPTPL 11b): restart_checks finds it after the restart
  resv_cmd "$p/register-a-ptpl" ok nvme resv-register "$a" --namespace-id=1 --nrkey=0xa1 --rrega=0 --cptpl=3
  C=$p/state-file OUTF=$RES/cli/${p//\//_}_state-file.txt BAD=""
  cat "$WORK/state/reservation-${NS_NGUID[1]}.json" > "$OUTF" 2>&1; rc=$?
  expect "registrants in the state file" "$(jqf '.registrants | length')" 1
  verdict $rc "reservation-${NS_NGUID[1]}.json in the state directory: $(jqf -c .registrants)"
  RESV_KEPT=1
}
resv_after_restart() { # the registration kept through the restart (PTPL), then A unregisters
  local p="$T/$TR/resv" a
  a=$(head_ng 1) || { fail "$p/after-restart" "no generic device for nsid 1 (${DEV[1]:-none})"; return 1; }
  cli "$p/report-after-restart" nvme resv-report "$a" --namespace-id=1 --eds -o json; rc=$?
  expect regctl "$(jqf .regctl)" 1
  expect ptpls "$(jqf .ptpls)" 1
  expect "A's key" "$(jqf '.regctlext[0].rkey')" 161
  verdict $rc "kept through the restart: $(jqf -c '.regctlext')"
  resv_cmd "$p/unregister-a" ok nvme resv-register "$a" --namespace-id=1 --crkey=0xa1 --rrega=1 --cptpl=2
}

first_checks() { # the connect hint, discover, connect, identity and fio verify (over FIO_VERIFY_BYTES, empty: all of nsid 1)
  check_connect_hint
  trace_on
  check_discover
  connect "$T/$TR/connect" "${CONNECT_OPTS[@]}" || { trace_off "$T-$TR"; return 1; }
  # the poll groups' regions are made when the first connection arrives on the device
  [ "$T/$TR" = nvmf4j/rdma ] && hugepages_check "$T/$TR/hugepages"
  check_identity
  trace_off "$T-$TR"
  svc_alive "$T/$TR/service-alive" || return 1
  hdr "$T over $TR: fio verify"
  fio_verify "$T/$TR/fio-verify" "${DEV[1]}" "${FIO_VERIFY_BYTES:-}"
  svc_alive "$T/$TR/service-alive"
}
restart_checks() { # SIGTERM to the service with the host connected, started again: the host reconnects by
  # itself, identity unchanged, the pattern of pattern_write read back, fio verify
  local t st
  hdr "$T over $TR: restart the service while the host stays connected"
  t=$(now_us)
  svc_stop "$T/$TR/restart-stop" || return 1
  st=$(ctrl_state)
  svc_start "$T/$TR/restart-start" || return 1
  C=$T/$TR/restart-host-reconnect OUTF=$RES/cli/$T-$TR-restart.txt BAD=""
  wait_for 300 ctrl_live; dmesg | grep -E "$CTRL" | tail -n 8 > "$OUTF"
  expect "$CTRL state" "$(ctrl_state)" live
  metric "${T}_${TR}_restart_to_live_s" "$(secs_since "$t")" s
  verdict 0 "$CTRL: '$st' while the service was down, live again $(secs_since "$t")s after SIGTERM"
  wait_for 60 map_namespaces || fail "$T/$TR/restart-namespaces" "namespace block devices gone after the restart"
  identity_sysfs "$T/$TR/restart-identity"
  [ "$RESV_KEPT" = 1 ] && { resv_after_restart; RESV_KEPT=0; }
  pattern_check "$T/$TR/restart-readback"
  svc_alive "$T/$TR/service-alive" || return 1
  hdr "$T over $TR: fio verify after the restart"
  fio_verify "$T/$TR/restart-fio-verify" "${DEV[1]}" "${FIO_VERIFY_BYTES:-}"
  svc_alive "$T/$TR/service-alive"
}

nvmf4j_scenarios() { # tcp : everything against the running service
  first_checks || return 1
  hdr "nvmf4j over $TR: fio latency"
  local alloc0 label="nvmf4j$([ "$TR" = rdma ] && echo -rdma)"
  alloc0=$(poll_alloc_bytes)
  fio_latency "$T/$TR/fio-latency" "${DEV[1]}" "$label"
  alloc_per_io "$T/$TR/alloc-per-io" "$alloc0" "$(poll_alloc_bytes)" "$RES/fio-lat-$label.json"
  svc_alive "$T/$TR/service-alive" || return 1

  # blkdiscard, ext4 + fstrim + fsck, fio verify, on the RAM and the file namespace (its image on the
  # tmpfs $WORK, which punches holes: it must stay sparse)
  discard_checks "$T/$TR" 1 malloc
  svc_alive "$T/$TR/service-alive" || return 1
  discard_checks "$T/$TR" 2 file "$WORK/file0.img"
  svc_alive "$T/$TR/service-alive" || return 1

  hdr "nvmf4j over $TR: add a namespace through nvmfctl while the host is connected"
  [ "$TR" = tcp ] && live_namespace_add "$T/$TR/nvmfctl-live-namespace"
  svc_alive "$T/$TR/service-alive" || return 1

  if [ "$TR" = tcp ] && want volumes; then
    volume_checks
    svc_alive "$T/$TR/service-alive" || return 1
  fi

  # nsid 1 held (reads only), nsid 3 (the live-added malloc) or 2 the unlimited neighbour
  if [ "$TR" = tcp ] && want qos; then
    qos_checks 1 3 2
    svc_alive "$T/$TR/service-alive" || return 1
  fi

  hdr "nvmf4j over $TR: the host disconnects mid-I/O"
  midio_disconnect "$T/$TR/disconnect-mid-io"
  svc_alive "$T/$TR/service-alive" || return 1
  connect "$T/$TR/connect-after-mid-io" "${CONNECT_OPTS[@]}" || return 1

  hdr "nvmf4j over $TR: disconnect, connect again, read back"
  pattern_write "$T/$TR/file-pattern-write"
  disconnect "$T/$TR/disconnect"
  connect "$T/$TR/reconnect" "${CONNECT_OPTS[@]}" || return 1
  pattern_check "$T/$TR/reconnect-readback"
  svc_alive "$T/$TR/service-alive" || return 1

  if [ "$TR" = tcp ]; then
    reservation_checks
    svc_alive "$T/$TR/service-alive" || return 1
  fi

  restart_checks || return 1
  disconnect "$T/$TR/disconnect-final"
}

hdr "nvmf4j service: $LAUNCHER"
profile nvmf4j tcp
write_config "$WORK/config.json" nvmf4j-config.json $NVMF4J_PORT $NVMF4J_RDMA_PORT "$WORK/file0.img"
: > "$SVC_LOG"
if ! want tcp; then
  unselected nvmf4j/tcp
elif svc_start nvmf4j/tcp/start; then
  nvmf4j_scenarios || skip "nvmf4j/tcp/remaining" "not run: an earlier nvmf4j check failed (see above)"
  [ -z "$SVC_PID" ] || svc_stop nvmf4j/tcp/stop
  timeout 60 nvme disconnect -n "$NQN" > /dev/null 2>&1
else
  skip "nvmf4j/tcp/all" "not run: the service did not start"
fi

########################################################################
if ! want rdma; then
  unselected nvmf4j/rdma
elif [ $RXE_OK = 1 ]; then
  hdr "rdma-cm binding self-test on rxe0"
  C=nvmf4j/rdma/binding-selftest OUTF=$RES/cli/rdma-selftest.txt BAD=""
  timeout "$GUEST_JVM_TIMEOUT" "${GUEST_JAVA[@]}" -cp "$RDMA_CLASSES" io.nvmf4j.rdma.SelfTest "$RXE_ADDR" > "$OUTF" 2>&1; rc=$?
  cat "$OUTF"
  verdict $rc "$(tail -n 1 "$OUTF")"

  hdr "nvmf4j over RDMA (rxe $RXE_ADDR:$NVMF4J_RDMA_PORT)"
  profile nvmf4j rdma
  # 2 MiB hugepages for the poll groups' registered regions (config "hugepages": true): 2 poll groups
  # x (1 MiB of capsules + 128 data buffers x 128 KiB) = 34 MiB, 17 pages; 48 reserved
  echo 48 > /proc/sys/vm/nr_hugepages
  if svc_start nvmf4j/rdma/start; then
    C=nvmf4j/rdma/listener OUTF=$SVC_LOG BAD=""
    grep -q "nvme connect -t rdma -a $RXE_ADDR -s $NVMF4J_RDMA_PORT" "$SVC_LOG" || BAD="no rdma listener announced: $(grep -m1 -i 'rdma' "$SVC_LOG")"
    verdict 0 "service announced rdma $RXE_ADDR:$NVMF4J_RDMA_PORT"
    hdr "nvmf4j over RDMA: connects with bad CM private data"
    C=nvmf4j/rdma/cm-reject OUTF=$RES/cli/rdma-bad-connect.txt BAD=""
    timeout "$GUEST_JVM_TIMEOUT" "${GUEST_JAVA[@]}" -cp "$RDMA_CLASSES${E2E_GUEST_CLASSES:+:$E2E_GUEST_CLASSES}" \
      "$([ -f "${E2E_GUEST_CLASSES:-/nonexistent}/BadConnect.class" ] && echo BadConnect || echo "$HERE/BadConnect.java")" "$RXE_ADDR" "$NVMF4J_RDMA_PORT" > "$OUTF" 2>&1; rc=$?
    cat "$OUTF"
    verdict $rc "$(tr '\n' ' ' < "$OUTF")"
    svc_alive nvmf4j/rdma/service-alive-after-rejects
    java_host_checks
    # a host writing into the target's registered memory, a host that stalls its queues (guest/RdmaHost.java)
    C=nvmf4j/rdma/remote-access OUTF=$RES/cli/rdma-remote-access.txt BAD=""
    rdma_host remote-access "$JPID"; rc=$?; cat "$OUTF"; rdma_host_verdict $rc
    C=nvmf4j/rdma/stalled-host OUTF=$RES/cli/rdma-stalled-host.txt BAD=""
    rdma_host stalled-host 20; rc=$?; cat "$OUTF"; rdma_host_verdict $rc
    svc_alive nvmf4j/rdma/service-alive-after-abusive-hosts
    nvmf4j_scenarios || skip "nvmf4j/rdma/remaining" "not run: an earlier nvmf4j rdma check failed (see above)"
    [ -z "$SVC_PID" ] || svc_stop nvmf4j/rdma/stop
    timeout 60 nvme disconnect -n "$NQN" > /dev/null 2>&1
  else
    skip "nvmf4j/rdma/all" "not run: the service did not start"
  fi
else
  skip nvmf4j/rdma "rxe0 not active"
fi

########################################################################
# The spdk engine: SPDK's NVMe-oF target inside the service JVM (spdk-jni), its memory in 2 MiB hugepages
# (SPDK's normal mode; over RDMA SPDK registers that memory with rxe0). Its reactor busy-polls core 0 of
# the guest's 2 vCPUs: the fio verify jobs cover 32 MiB only.
SPDK_MEM_MB=1024
spdk_hugepages() { # check-name : reserves SPDK's memory in 2 MiB pages and mounts hugetlbfs; false when short
  local want=$((SPDK_MEM_MB / 2 + 64)) free
  C=$1 OUTF=$RES/cli/spdk-hugepages.txt BAD=""
  { mountpoint -q /dev/hugepages || { mkdir -p /dev/hugepages && mount -t hugetlbfs nodev /dev/hugepages; }
    echo "$want" > /proc/sys/vm/nr_hugepages; grep -i '^huge' /proc/meminfo; } > "$OUTF" 2>&1
  free=$(awk '/^HugePages_Free:/ {print $2}' /proc/meminfo)
  mountpoint -q /dev/hugepages || BAD="no hugetlbfs on /dev/hugepages: $(head -n 1 "$OUTF")"
  [ "${free:-0}" -ge "$want" ] || BAD+="${BAD:+; }${free:-0} of $want 2 MiB pages free after reserving (the service runs with \"hugepages\": false)"
  verdict 0 "$free 2 MiB pages free for SPDK's $SPDK_MEM_MB MiB, hugetlbfs on /dev/hugepages"
  [ -z "$BAD" ]
}
spdk_engine_check() { # check-name hugepages(true|false) : the service runs the spdk engine in the memory asked for
  local line want="$SPDK_MEM_MB MiB hugepages"
  [ "$2" = true ] || want="$SPDK_MEM_MB MiB ordinary memory"
  line=$(svc_log_now | grep -m1 'spdk engine up')
  C=$1 OUTF=$SVC_LOG BAD=""
  expect_true engine "no 'spdk engine up ($want ...' in the service log: $(svc_log_now | grep -m2 -i -E 'spdk|engine' | tr '\n' ' ')" \
    contains "$line" "$want"
  verdict 0 "${line#*SpdkEngine - }; $(awk '/^HugePages_(Total|Free)/ {printf "%s %s ", $1, $2}' /proc/meminfo)"
}
SPDK_LIVE_IDS=""  # namespaces added with nvmfctl: they stay in the service's document across its restarts
spdk_scenarios() { # nsid : the Linux host against the spdk engine; nvmfctl adds namespace nsid
  local n=$1
  first_checks || return 1
  hdr "spdk engine over $TR: add namespace $n through nvmfctl while the host is connected"
  live_namespace_add "$T/$TR/nvmfctl-live-namespace" "$n" "live$n"
  # from now on part of the identity compared across the restarts
  [ -z "${DEV[$n]:-}" ] || { NS_IDS+=" $n"; SPDK_LIVE_IDS+=" $n"; }
  svc_alive "$T/$TR/service-alive" || return 1
  if [ "$TR" = tcp ] && want qos; then
    qos_checks 1 "$n" 2
    svc_alive "$T/$TR/service-alive" || return 1
  fi
  pattern_write "$T/$TR/file-pattern-write"
  restart_checks || return 1
  disconnect "$T/$TR/disconnect-final"
}

if ! want spdk; then
  unselected spdk
else
  hdr "the spdk engine: SPDK's NVMe-oF target inside the service JVM"
  profile spdk tcp
  SPDK_HUGE=true
  spdk_hugepages spdk/hugepages-reserve || SPDK_HUGE=false
  SVC_LOG=$RES/spdk-service.log SVC_STATE=$WORK/spdk-state SVC_CONFIG=$WORK/spdk-config.json SVC_PORT=$SPDK_PORT
  SVC_EXIT_OK=0 FILE_IMG=$WORK/spdk-file0.img FIO_VERIFY_BYTES=$((32 << 20))
  truncate -s $((NS_BLOCKS[2] * NS_BS[2])) "$FILE_IMG"
  write_config "$SVC_CONFIG" spdk-config.json $SPDK_PORT $SPDK_RDMA_PORT "$FILE_IMG" \
    "\"engine\": \"spdk\", \"spdk\": {\"coreMask\": \"0x1\", \"memSizeMb\": $SPDK_MEM_MB, \"hugepages\": $SPDK_HUGE}, "
  : > "$SVC_LOG"
  if svc_start spdk/start; then
    spdk_engine_check spdk/engine $SPDK_HUGE
    spdk_scenarios 3 || skip spdk/tcp/remaining "not run: an earlier spdk tcp check failed (see above)"
    timeout 60 nvme disconnect -n "$NQN" > /dev/null 2>&1
    if [ $RXE_OK != 1 ]; then
      skip spdk/rdma "rxe0 not active"
    elif svc_alive spdk/rdma/service-alive; then
      hdr "the spdk engine over RDMA (rxe $RXE_ADDR:$SPDK_RDMA_PORT)"
      profile spdk rdma
      NS_IDS+=$SPDK_LIVE_IDS
      spdk_scenarios 4 || skip spdk/rdma/remaining "not run: an earlier spdk rdma check failed (see above)"
      timeout 60 nvme disconnect -n "$NQN" > /dev/null 2>&1
    fi
    [ -z "$SVC_PID" ] || svc_stop spdk/stop
    if [ $SPDK_HUGE = true ]; then
      # SPDK unlinks its hugepage files (no multi-process): a stopped service holds none
      C=spdk/hugepages-released OUTF=$RES/cli/spdk-hugepages.txt BAD=""
      grep -i '^huge' /proc/meminfo >> "$OUTF"
      expect HugePages_Free "$(awk '/^HugePages_Free:/ {print $2}' /proc/meminfo)" "$(awk '/^HugePages_Total:/ {print $2}' /proc/meminfo)"
      verdict 0 "all $(awk '/^HugePages_Total:/ {print $2}' /proc/meminfo) pages free again after the service stopped"
    fi
  else
    skip spdk/all "not run: the service did not start"
  fi
fi

########################################################################
# ANA: two nvmf4j instances (A and B: own state directories, NVMe/TCP and API ports, cntlid ranges) export the
# same subsystem and namespace identity (NGUID, UUID) from one image file on the guest tmpfs (both open it;
# the page cache keeps them coherent), as two gateways in front of one volume do. A's listener reports ANA
# group 1 optimized, B's non-optimized; the Linux host's native multipath joins the two controllers into one
# namespace head.
ANA_NQN=nqn.2026-11.io.nvmf4j:e2e-ana ANA_A_PORT=4440 ANA_B_PORT=4441 ANA_A_API=8440 ANA_B_API=8441
ANA_IMG=$WORK/ana/shared.img ANA_BLOCKS=65536   # 256 MiB in 4 KiB blocks
ANA_CONNECT=(--reconnect-delay=1 --ctrl-loss-tmo=600 --keep-alive-tmo=5)
ana_config() { # instance(A|B) nvme-port api-port min-cntlid state-of-group-1 [top-level members] : writes
  # $WORK/$GWT-<instance>.json
  cat > "$WORK/$GWT-$1.json" <<JSON
{${6:-}"cores": 1, "idleStrategy": "${E2E_IDLE:-backoff}", "api": {"port": $3}, "storage": {"fileDirectories": ["$WORK/ana"]},
 "bdevs": [{"name": "shared0", "type": "file", "blockSize": 4096, "numBlocks": $ANA_BLOCKS, "path": "$ANA_IMG"}],
 "subsystems": [{"nqn": "$ANA_NQN", "serial": "NVMF4JANA0001", "model": "nvmf4j-e2e-ana", "allowAnyHost": true,
   "maxNamespaces": 8, "minCntlid": $4, "maxCntlid": $(($4 + 99)),
   "namespaces": [{"nsid": 1, "bdev": "shared0", "anaGroup": 1, "nguid": "6e766d66346a0003d000000000000001",
                   "uuid": "6e766d66-346a-4003-d000-000000000001"}],
   "listeners": [{"transport": "tcp", "address": "127.0.0.1", "port": $2, "anaStates": {"1": "$5"}}]}]}
JSON
  cp "$WORK/$GWT-$1.json" "$RES/$GWT-config-$1.json"
}
# The gateway helpers below drive the part named by GW: ana here, rbd in guest/rbd.sh. Its variables are
# ${GW^^}_* (ANA_NQN, ANA_A_PORT, ANA_B_API, ANA_DEV, ...); its files are $GWT-* in WORK and RES and its checks
# $GWT/..., GWT being GW but for the ana part's run on the spdk engine (ana-spdk).
GW=ana GWT=ana
gw() { local n=${GW^^}_$1; echo "${!n:-}"; }   # gw A_PORT: ANA_A_PORT (GW=ana) or RBD_A_PORT (GW=rbd)
ana_use() { # instance : the service globals of svc_start/svc_stop/svc_alive for that instance
  SVC_LOG=$RES/$GWT-service-$1.log SVC_STATE=$WORK/$GWT-state-$1 SVC_CONFIG=$WORK/$GWT-$1.json
  SVC_PORT=$(gw "${1}_PORT") SVC_PID=$(gw "${1}_PID") JPID=$(gw "${1}_JPID")
}
ana_keep() { # instance : keeps SVC_PID/JPID of that instance
  printf -v "${GW^^}_${1}_PID" %s "$SVC_PID"; printf -v "${GW^^}_${1}_JPID" %s "$JPID"
}
ana_ctl() { # instance nvmfctl-args... : nvmfctl against that instance's API
  local i=$1; shift
  env NVMF4J_JAVA_OPTS="$E2E_JVM_OPTS" "$REPO/bin/nvmfctl" --url "http://127.0.0.1:$(gw "${i}_API")" \
    --state-dir "$WORK/$GWT-state-$i" "$@"
}
ana_set() { # instance state : ANA group 1 of that instance's listener, through nvmfctl
  ana_ctl "$1" listener ana-state -n "$(gw NQN)" -a 127.0.0.1 -s "$(gw "${1}_PORT")" --group 1 --state "$2"
}
ana_put() { # instance state : the same through the REST API with curl, as a gateway's HA agent calls it (a JVM
  # start of nvmfctl takes half a minute under TCG); an rbd gateway answers once it holds the image's lock, which
  # from a dead gateway it gets after Ceph's watch timeout (30 s)
  local nqn; nqn=$(gw NQN)
  curl -sS -m 300 -X PUT -H "Authorization: Bearer $(cat "$WORK/$GWT-state-$1/api-token")" \
    -H 'Content-Type: application/json' -d "{\"state\": \"$2\"}" -w ' HTTP %{http_code}\n' \
    "http://127.0.0.1:$(gw "${1}_API")/api/v1/subsystems/${nqn//:/%3A}/listeners/tcp/127.0.0.1/$(gw "${1}_PORT")/ana/1" |
    tee /dev/stderr | grep -q ' HTTP 200$'
}
ctrl_state_of() { cat "/sys/class/nvme/$1/state" 2>/dev/null || echo gone; }
ana_path_state() { # ctrl : the ANA state the host holds for nsid 1 through that controller (sysfs)
  cat /sys/class/nvme/"$1"/nvme*c*n1/ana_state 2> /dev/null | head -n 1
}
ana_path_is() { [ "$(ana_path_state "$1")" = "$2" ]; }
ana_written() { # instance : bytes written through that instance (nvmf_io_bytes_total, op=write, of its /metrics)
  curl -s -m 20 -H "Authorization: Bearer $(cat "$WORK/$GWT-state-$1/api-token" 2> /dev/null)" \
    "http://127.0.0.1:$(gw "${1}_API")/metrics" 2> /dev/null |
    awk '/^nvmf_io_bytes_total\{/ && /op="write"/ {s += $NF} END {printf "%.0f", s}'
}
ana_write_moves() { # check-name to-instance other-instance : 16 MiB written to the head go through to-instance only
  local before_to before_other rc d_to d_other dev; dev=$(gw DEV)
  C=$1 OUTF=$RES/cli/${1//\//_}.txt BAD=""
  before_to=$(ana_written "$2") before_other=$(ana_written "$3")
  timeout 60 dd if=/dev/urandom of="$dev" bs=1M count=16 seek=64 oflag=direct status=none > "$OUTF" 2>&1; rc=$?
  d_to=$(( $(ana_written "$2") - ${before_to:-0} )) d_other=$(( $(ana_written "$3") - ${before_other:-0} ))
  expect_true "bytes through $2" "$d_to, not the 16 MiB written" [ "$d_to" -ge $((16 << 20)) ]
  expect "bytes through $3" "$d_other" 0
  verdict $rc "16 MiB written to $dev: $d_to bytes through instance $2, $d_other through $3"
}

ana_scenarios() { # both instances running: paths, failover under fio verify, the way back, a live move
  local t fio_pid rc
  T=nvmf4j TR=tcp ADDR=127.0.0.1 NQN=$ANA_NQN NS_IDS=1
  C=$GWT/native-multipath OUTF=$RES/cli/$GWT-multipath.txt BAD=""
  cat /sys/module/nvme_core/parameters/multipath > "$OUTF" 2>&1
  expect "nvme_core multipath" "$(cat "$OUTF")" Y
  verdict 0 "the host kernel runs native NVMe multipath"
  [ -z "$BAD" ] || return 1

  PORT=$ANA_A_PORT; connect $GWT/connect-A "${ANA_CONNECT[@]}" || return 1; ANA_CTRL_A=$CTRL
  PORT=$ANA_B_PORT; connect $GWT/connect-B "${ANA_CONNECT[@]}" || return 1; ANA_CTRL_B=$CTRL
  ANA_DEV=${DEV[1]}
  C=$GWT/two-paths OUTF=$RES/cli/$GWT-list-subsys.txt BAD=""
  wait_for 10 ana_path_is "$ANA_CTRL_B" non-optimized
  nvme list-subsys "$ANA_DEV" > "$OUTF" 2>&1; rc=$?
  cat "$OUTF"
  expect "namespace heads" "$(nvme_ns_devs "$ANA_NQN" | wc -l)" 1
  expect "path A ($ANA_CTRL_A)" "$(ana_path_state "$ANA_CTRL_A")" optimized
  expect "path B ($ANA_CTRL_B)" "$(ana_path_state "$ANA_CTRL_B")" non-optimized
  grep -q "trsvcid=$ANA_A_PORT.* optimized" "$OUTF" || BAD+="${BAD:+; }list-subsys shows no optimized path A"
  grep -q "trsvcid=$ANA_B_PORT.* non-optimized" "$OUTF" || BAD+="${BAD:+; }list-subsys shows no non-optimized path B"
  verdict $rc "$ANA_DEV: one head over $ANA_CTRL_A (optimized) and $ANA_CTRL_B (non-optimized)"
  cli $GWT/ana-log nvme ana-log "/dev/$ANA_CTRL_B"; rc=$?
  grep -qi 'non-optimized' "$OUTF" || BAD="nvme ana-log of $ANA_CTRL_B shows no non-optimized group"
  verdict $rc "nvme ana-log through B: group 1 non-optimized"
  ana_write_moves $GWT/io-on-optimized A B

  hdr "ANA: fio verify while the optimized instance A is killed (SIGKILL)"
  t=$(now_us)
  local base; base=$(ana_written A)
  ( fio_verify "$GWT/failover-fio-verify" "$ANA_DEV" "${ANA_FIO_BYTES:-}" ) & fio_pid=$!
  until [ "$(ana_written A)" -gt $((${base:-0} + (8 << 20))) ] || ! kill -0 $fio_pid 2> /dev/null; do sleep 0.2; done
  C=$GWT/kill-A OUTF=$RES/cli/$GWT-kill.txt BAD=""
  kill -0 $fio_pid 2> /dev/null || BAD="fio ended before the kill"
  ana_use A; kill -KILL "$JPID"; wait_for 10 gone "$JPID"; wait "$SVC_PID" 2> /dev/null; SVC_PID="" JPID=""; ana_keep A
  metric "${GWT//-/_}_kill_after_fio_start_s" "$(secs_since "$t")" s
  verdict 0 "instance A killed (SIGKILL) $(secs_since "$t")s into fio verify; path B: $(ana_path_state "$ANA_CTRL_B")"
  wait $fio_pid; rc=$?
  grep "$GWT/failover-fio-verify" "$RES/results.tsv" | tail -n 1 | grep -q PASS || rc=1
  C=$GWT/failover OUTF=$RES/cli/$GWT-failover.txt BAD=""
  { ctrl_state_of "$ANA_CTRL_A"; dmesg | tail -n 20; } > "$OUTF" 2>&1
  expect "fio verify rc" "$rc" 0
  expect_true "$ANA_CTRL_A state" "$(ctrl_state_of "$ANA_CTRL_A"), not reconnecting" \
    grep -qE '^(connecting|resetting)$' <<< "$(ctrl_state_of "$ANA_CTRL_A")"
  verdict 0 "fio verify finished with 0 errors through the non-optimized path B after A died ($(secs_since "$t")s)"

  hdr "ANA: B steps up (optimized), A comes back, B steps down"
  C=$GWT/B-optimized OUTF=$RES/cli/$GWT-b-optimized.txt BAD=""
  ana_put B optimized > "$OUTF" 2>&1; rc=$?
  wait_for 20 ana_path_is "$ANA_CTRL_B" optimized || BAD="the host still sees B as $(ana_path_state "$ANA_CTRL_B") (no ANA change event?)"
  verdict $rc "PUT .../ana/1 optimized on B; the host saw the ANA change on $ANA_CTRL_B"
  ana_use A; svc_start $GWT/restart-A || return 1; ana_keep A
  t=$(now_us)
  C=$GWT/A-back OUTF=$RES/cli/$GWT-a-back.txt BAD=""
  wait_for 300 eval '[ "$(ctrl_state_of "$ANA_CTRL_A")" = live ]' || BAD="$ANA_CTRL_A is $(ctrl_state_of "$ANA_CTRL_A")"
  wait_for 20 ana_path_is "$ANA_CTRL_A" optimized || BAD+="${BAD:+; }path A is $(ana_path_state "$ANA_CTRL_A")"
  ana_put B non-optimized > "$OUTF" 2>&1; rc=$?
  wait_for 20 ana_path_is "$ANA_CTRL_B" non-optimized || BAD+="${BAD:+; }path B is $(ana_path_state "$ANA_CTRL_B")"
  verdict $rc "$ANA_CTRL_A live and optimized again $(secs_since "$t")s after A restarted; B non-optimized"
  ana_write_moves $GWT/io-back-on-A A B

  hdr "ANA: nvmfctl moves I/O live (A inaccessible, B optimized)"
  C=$GWT/live-change OUTF=$RES/cli/$GWT-live-change.txt BAD=""
  { ana_put B optimized && ana_set A inaccessible; } > "$OUTF" 2>&1; rc=$?
  wait_for 20 ana_path_is "$ANA_CTRL_A" inaccessible || BAD="path A is $(ana_path_state "$ANA_CTRL_A")"
  wait_for 20 ana_path_is "$ANA_CTRL_B" optimized || BAD+="${BAD:+; }path B is $(ana_path_state "$ANA_CTRL_B")"
  verdict $rc "nvmfctl listener ana-state: A inaccessible (B optimized); the host sees both changes"
  ana_write_moves $GWT/io-moved-to-B B A
  { ana_put A optimized && ana_put B non-optimized; } >> "$RES/cli/$GWT-live-change.txt" 2>&1
  cli $GWT/disconnect nvme disconnect -n "$ANA_NQN"; rc=$?
  wait_for 10 eval '[ -z "$(nvme_ns_devs "$ANA_NQN")" ]' || BAD="namespace head still present"
  verdict $rc "$(head -n 1 "$OUTF")"
}

ana_part() { # engine(java|spdk) : both instances on that engine (checks ana/... on java, ana-spdk/... on spdk)
  local extra="" exit_ok=${SVC_EXIT_OK:-}
  if [ "$1" = spdk ]; then
    # both SPDK reactors on core 0 (no core locks: they share it), so the JVMs, fio and the host keep core 1; each
    # instance's SPDK has its own hugepage files (shm_id -1: DPDK's file prefix is per process)
    local huge=true
    GWT=ana-spdk ANA_FIO_BYTES=$((64 << 20)) SVC_EXIT_OK=0
    SPDK_MEM_MB=$((2 * ANA_SPDK_MEM_MB)) spdk_hugepages "$GWT/hugepages-reserve" || huge=false
    extra="\"engine\": \"spdk\", \"spdk\": {\"coreMask\": \"0x1\", \"coreLocks\": false, "
    extra+="\"memSizeMb\": $ANA_SPDK_MEM_MB, \"hugepages\": $huge}, "
  fi
  hdr "ANA on the $1 engine: two instances, one namespace, native multipath"
  mkdir -p "$WORK/ana"; rm -f "$ANA_IMG"; truncate -s $((ANA_BLOCKS * 4096)) "$ANA_IMG"
  ana_config A $ANA_A_PORT $ANA_A_API 1 optimized "$extra"
  ana_config B $ANA_B_PORT $ANA_B_API 101 non-optimized "$extra"
  ana_use A; : > "$SVC_LOG"
  if svc_start "$GWT/start-A"; then
    ana_keep A; ana_use B; : > "$SVC_LOG"
    if svc_start "$GWT/start-B"; then
      ana_keep B
      ana_scenarios || skip "$GWT/remaining" "not run: an earlier $GWT check failed (see above)"
      timeout 60 nvme disconnect -n "$ANA_NQN" > /dev/null 2>&1
      ana_use B; [ -z "$SVC_PID" ] || svc_stop "$GWT/stop-B"
    fi
    ana_use A; [ -z "$SVC_PID" ] || svc_stop "$GWT/stop-A"
  fi
  GWT=ana ANA_FIO_BYTES="" SVC_EXIT_OK=$exit_ok
}
ANA_SPDK_MEM_MB=512   # per instance, the least the spdk engine takes
if ! want ana; then
  unselected ana
else
  SVC_SAVED=("$SVC_LOG" "${SVC_STATE:-}" "${SVC_CONFIG:-}" "${SVC_PORT:-}" "$SVC_START_TIMEOUT")
  SVC_START_TIMEOUT=$((SVC_START_TIMEOUT * 2))   # two JVMs starting on the guest's 2 vCPUs under TCG (a loaded host: 6 min seen)
  ana_part java
  ana_part spdk
  SVC_LOG=${SVC_SAVED[0]} SVC_START_TIMEOUT=${SVC_SAVED[4]}
  if [ -n "${SVC_SAVED[1]}" ]; then SVC_STATE=${SVC_SAVED[1]}; else unset SVC_STATE; fi
  if [ -n "${SVC_SAVED[2]}" ]; then SVC_CONFIG=${SVC_SAVED[2]}; else unset SVC_CONFIG; fi
  if [ -n "${SVC_SAVED[3]}" ]; then SVC_PORT=${SVC_SAVED[3]}; else unset SVC_PORT; fi
fi
# two gateways on one Ceph RBD image, the cluster in the guest (guest/rbd.sh)
. "$HERE/rbd.sh"
if want rbd; then rbd_part; else unselected rbd; fi
# the RDMA fuzzers (guest/fuzzrdma.sh): SPDK's nvme_fuzz and the live RDMA fuzzer against one subsystem of the
# service while the Linux host verifies I/O on another; resources back to where they were after each
. "$HERE/fuzzrdma.sh"
if want fuzzrdma; then fuzzrdma_part; else unselected fuzzrdma; fi
# DH-HMAC-CHAP (guest/auth.sh): kernel nvmet as the control, then nvmf4j; needs the 6.12 guest (--suite trixie)
. "$HERE/auth.sh"
if want auth; then auth_part; else unselected auth; fi
# NVMe/TCP TLS with a PSK (guest/tls.sh), the kernel's nvmet and tlshd: the control for nvmf4j's TLS
. "$HERE/tls.sh"
if want tls; then tls_part; else unselected tls; fi

# the benchmark kit's rows (guest/bench.sh; run.sh --only bench): fio latency and iops against nvmet, the java
# engine and the spdk engine over TCP and RDMA, the ratios to nvmet in bench-guest.tsv
. "$HERE/bench.sh"
if want bench; then bench_part; else unselected bench; fi

########################################################################
hdr "fio latency: nvmf4j / nvmet"
# bench.tsv (TCP) and bench-rdma.tsv (RDMA): metric, nvmf4j, nvmet, ratio nvmf4j/nvmet
ratio_table() { # nvmf4j-label nvmet-label out-file check-prefix
  local a=$RES/lat-$1.tsv b=$RES/lat-$2.tsv out=$RES/$3 qd r
  if [ -s "$a" ] && [ -s "$b" ]; then
    fio_ratio "$a" "$b" randread-4k- nvmf4j nvmet > "$out" # fio-jobs/lib/fio.sh
    cat "$out"
  fi
  for qd in 1 32; do
    r=$(awk -F'\t' -v q="randread-4k-qd$qd-" 'index($1, q) == 1 && $4 != "" {sub(q, "", $1); printf "%s %s, ", $1, $4}' "$out" 2> /dev/null)
    if [ -n "$r" ]; then pass "$4/randread-4k-qd$qd" "ratio nvmf4j/nvmet: ${r%, } (numbers in $3)"
    else skip "$4/randread-4k-qd$qd" "no nvmf4j and nvmet pair of fio results"; fi
  done
}
if want nvmet && want tcp; then ratio_table nvmf4j nvmet bench.tsv bench; fi
if want nvmet && want rdma; then ratio_table nvmf4j-rdma nvmet-rdma bench-rdma.tsv bench/rdma; fi

########################################################################
hdr "teardown"
timeout 60 nvme disconnect-all
nvmet_teardown
C=teardown OUTF=$RES/cli/teardown.txt BAD=""
{ ls "$CFG/subsystems" "$CFG/ports"; [ $RXE_OK = 0 ] || rdma link delete rxe0; } > "$OUTF" 2>&1; rc=$?
[ -z "$(ls -A "$CFG/subsystems")$(ls -A "$CFG/ports")" ] || BAD="nvmet configfs entries left"
[ -z "$(ls /sys/class/nvme 2> /dev/null)" ] || BAD+="${BAD:+; }controllers left: $(ls /sys/class/nvme)"
verdict $rc "all controllers disconnected, nvmet configfs emptied, rxe0 deleted"
dmesg > "$RES/dmesg.txt"
if grep -E 'BUG:|WARNING:|Oops|Call Trace|hung_task|soft lockup' "$RES/dmesg.txt"; then
  fail kernel-log "BUG/WARNING/Oops in the guest kernel log, see dmesg.txt"
else pass kernel-log "no BUG/WARNING/Oops/Call Trace in dmesg"; fi
metric guest_uptime_at_end "$(cut -d' ' -f1 /proc/uptime)" s
echo; echo "===== $FAILS failed check(s)"
[ $FAILS -lt 250 ] || FAILS=250
exit $FAILS
