#!/bin/bash
# RBD benchmark: 4 KiB QD32 random write and random read IOPS on one RBD image of a one-node Ceph cluster
# (e2e/ceph/cluster.sh, started here and removed at the end), measured in the same run two ways:
#   - rbd bench (librbd in its own process, --io-threads 32): the peer, what the cluster gives a client;
#   - nvmf4j's java engine serving the image as an rbd namespace over NVMe/TCP on 127.0.0.1, driven by
#     SPDK's spdk_nvme_perf (-q 32 -o 4096).
# It prints both and the ratio nvmf4j/rbd bench per row. Numbers never make it fail. Run it on an idle
# machine (never while a QEMU guest runs: the script refuses when pgrep finds qemu-system).
#
# usage: fio-jobs/rbd-bench.sh [options]        (build first: mvn -q -DskipTests package)
#   --time S         seconds per measurement (default 20)
#   --image-mb MB    image size, written in full first so reads hit objects (default 256)
#   --spdk-dir DIR   the SPDK build with spdk_nvme_perf (default: $SPDK_DIR, else ~/.cache/nvmf4j/spdk-*)
#   --out DIR        logs and results (default fio-jobs/out/rbd, wiped first)
# Exit status: 0 when every measurement gave a number, 1 when one did not, 2 for a usage error or a
# missing build. Stops every process it started (by PID) and removes the cluster at exit.
set -uo pipefail
HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)

usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit "${1:-0}"; }
die() { echo "rbd-bench.sh: $*" >&2; exit 2; }

TIME=20 IMAGE_MB=256 SPDK=${SPDK_DIR:-} OUT=$ROOT/fio-jobs/out/rbd
while [ $# -gt 0 ]; do
  case "$1" in
    --time) TIME=${2:?}; shift ;;
    --image-mb) IMAGE_MB=${2:?}; shift ;;
    --spdk-dir) SPDK=${2:?}; shift ;;
    --out) OUT=${2:?}; shift ;;
    -h|--help) usage 0 ;;
    *) echo "rbd-bench.sh: unknown option $1" >&2; usage 2 ;;
  esac
  shift
done
if pgrep -a qemu-system >/dev/null; then die "a QEMU guest runs on this machine: benchmarks wait for it to end"; fi
[ -x "$ROOT/bin/nvmf4j-target" ] && [ -d "$ROOT/mgmt-api/target/lib" ] || die "no build: mvn -q -DskipTests package"
if [ -z "$SPDK" ]; then
  SPDK=$(ls -d "${NVMF4J_CACHE:-$HOME/.cache/nvmf4j}"/spdk-*/ 2>/dev/null | head -n 1)
fi
PERF=$(find "${SPDK:-/nonexistent}" -name spdk_nvme_perf -type f -perm -u+x 2>/dev/null | head -n 1)
[ -n "$PERF" ] || die "no spdk_nvme_perf under ${SPDK:-(no SPDK: set --spdk-dir)}"

rm -rf "$OUT"; mkdir -p "$OUT"
TMP=$(mktemp -d /tmp/nvmf4j-rbd-bench.XXXXXX)
CLUSTER=$TMP/ceph
PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]}"; do
    kill "$p" 2>/dev/null && { for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done; }
    kill -9 "$p" 2>/dev/null
  done
  "$ROOT/e2e/ceph/cluster.sh" stop "$CLUSTER" >/dev/null 2>&1
  rm -rf "$TMP"
}
trap cleanup EXIT
log() { echo "$*" | tee -a "$OUT/summary.txt"; }

log "starting the Ceph cluster (e2e/ceph/cluster.sh)"
"$ROOT/e2e/ceph/cluster.sh" start "$CLUSTER" > "$TMP/ceph.env" 2>> "$OUT/ceph-start.log" \
  || { tail -5 "$OUT/ceph-start.log"; die "the cluster did not start"; }
# shellcheck disable=SC1090 # KEY=VALUE lines of cluster.sh
. "$TMP/ceph.env"
rbd_admin() { timeout 600 rbd -c "$CEPH_CONF" -n client.admin -k "$CEPH_ADMIN_KEYRING" "$@"; }
IMAGE=bench
rbd_admin create "$CEPH_POOL/$IMAGE" --size "${IMAGE_MB}M" || die "rbd create failed"
log "filling $CEPH_POOL/$IMAGE ($IMAGE_MB MiB) so reads hit written objects"
rbd_admin bench --io-type write --io-pattern seq --io-size 4M --io-threads 4 --io-total "${IMAGE_MB}M" \
  "$CEPH_POOL/$IMAGE" >> "$OUT/fill.log" 2>&1 || die "filling the image failed"

# rbd bench for TIME seconds' worth of ops is not a flag: run a fixed total sized from a short probe
# rbdbench type : sets RES to the IOPS of rbd bench (4 KiB, random, 32 threads)
rbdbench() {
  local total_ops=$((IOPS_GUESS * TIME))
  RES=$(rbd_admin bench --io-type "$1" --io-pattern rand --io-size 4096 --io-threads 32 \
    --io-total $((total_ops * 4096)) "$CEPH_POOL/$IMAGE" 2>&1 | tee -a "$OUT/rbd-bench.log" \
    | awk '/^elapsed:/ {for (i = 1; i <= NF; i++) if ($i == "ops/sec:") print $(i + 1)}')
}
IOPS_GUESS=300
rbdbench write; probe=${RES%.*}
[ -n "$probe" ] && [ "$probe" -gt 0 ] && IOPS_GUESS=$probe
log "rbd bench probe: ${RES:-?} IOPS (sizes the measured runs to about $TIME s)"

# the target: the java engine, one rbd namespace on the same image, NVMe/TCP on a free port
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
PORT=$(free_port) NQN=nqn.2026-12.io.nvmf4j:rbd-bench STATE=$TMP/state
mkdir -p "$STATE"
cat > "$STATE/config.json" << EOF
{"engine": "java", "cores": 1,
 "bdevs": [{"name": "ceph0", "type": "rbd", "blockSize": 4096, "pool": "$CEPH_POOL", "image": "$IMAGE",
   "cephConf": "$CEPH_CONF", "clientName": "$CEPH_CLIENT", "keyring": "$CEPH_KEYRING"}],
 "subsystems": [{"nqn": "$NQN", "allowAnyHost": true, "serial": "RBDBENCH00000001",
   "namespaces": [{"nsid": 1, "bdev": "ceph0"}],
   "listeners": [{"transport": "tcp", "address": "127.0.0.1", "port": $PORT}]}],
 "api": {"port": 0}}
EOF
"$ROOT/bin/nvmf4j-target" --state-dir "$STATE" --config "$STATE/config.json" >> "$OUT/target.log" 2>&1 &
TPID=$!; PIDS+=("$TPID")
for _ in $(seq 1 600); do
  grep -q "listening on tcp 127.0.0.1:$PORT " "$OUT/target.log" && break
  kill -0 "$TPID" 2>/dev/null || break
  sleep 0.1
done
grep -q "listening on tcp 127.0.0.1:$PORT " "$OUT/target.log" || { tail -8 "$OUT/target.log"; die "the target did not start"; }

# perf rw : spdk_nvme_perf 4 KiB QD32 for TIME s; sets RES to its IOPS
perf() {
  "$PERF" -c 0x1 --no-huge -s 512 -w "$1" -o 4096 -q 32 -t "$TIME" -a 2 \
    -r "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$PORT subnqn:$NQN" > "$TMP/perf.out" 2>&1 &
  local p=$!; PIDS+=("$p")
  wait "$p"
  cat "$TMP/perf.out" >> "$OUT/perf.log"
  RES=$(awk '$1 == "Total" && $2 == ":" && $3 > 0 {printf "%.0f\n", $3; exit}' "$TMP/perf.out")
}

FAILED=0
printf '%-24s %14s %14s %8s\n' "4 KiB QD32" "nvmf4j IOPS" "rbd bench IOPS" "ratio" > "$OUT/table.txt"
for rw in randwrite randread; do
  perf "$rw"; ours=$RES
  rbdbench "${rw#rand}"; peer=${RES%.*}
  if [ -z "$ours" ] || [ -z "$peer" ]; then FAILED=1; fi
  ratio=$(awk -v a="${ours:-0}" -v b="${peer:-0}" 'BEGIN {if (a > 0 && b > 0) printf "%.2f", a / b; else print "-"}')
  printf '%-24s %14s %14s %8s\n' "$rw" "${ours:--}" "${peer:--}" "$ratio" >> "$OUT/table.txt"
done
log ""
log "Ceph $(ceph --version | awk '{print $3}'), one monitor + one BlueStore OSD on a sparse file, pool size 1; image $IMAGE_MB MiB; ${TIME} s per row"
log "nvmf4j: java engine, cores 1, rbd bdev (librbd cache on), NVMe/TCP on 127.0.0.1, spdk_nvme_perf -q 32 -o 4096"
log "peer: rbd bench --io-size 4096 --io-threads 32 --io-pattern rand (same cluster, same image, same run)"
tee -a "$OUT/summary.txt" < "$OUT/table.txt"
exit "$FAILED"
