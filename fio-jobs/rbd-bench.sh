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
# shellcheck source=fio-jobs/lib/ceph.sh
. "$HERE/lib/ceph.sh"
ceph_run_setup rbd-bench '*/spdk_nvme_perf'; PERF=$TOOL
log() { echo "$*" | tee -a "$OUT/summary.txt"; }

log "starting the Ceph cluster (e2e/ceph/cluster.sh)"
ceph_start
IMAGE=bench
rbd_admin create "$CEPH_POOL/$IMAGE" --size "${IMAGE_MB}M" || die "rbd create failed"
log "filling $CEPH_POOL/$IMAGE ($IMAGE_MB MiB) so reads hit written objects"
rbd_admin bench --io-type write --io-pattern seq --io-size 4M --io-threads 4 --io-total "${IMAGE_MB}M" \
  "$CEPH_POOL/$IMAGE" >> "$OUT/fill.log" 2>&1 || die "filling the image failed"

# rbd bench has no flag for a duration: each measured run does a fixed number of ops, sized from a short
# probe of the same type (reads and writes run at very different rates) to last about TIME s.
# rbd_ops type ops : prints the ops/sec of rbd bench's summary line
#   "elapsed: 18   ops: 62040   ops/sec: 3356.42   bytes/sec: 13 MiB/s" (Ceph 16.2), nothing when it failed
rbd_ops() {
  rbd_admin bench --io-type "$1" --io-pattern rand --io-size 4096 --io-threads 32 --io-total $(($2 * 4096)) \
    "$CEPH_POOL/$IMAGE" 2>&1 | tee -a "$OUT/rbd-bench.log" \
    | awk '/^elapsed:/ {for (i = 1; i < NF; i++) if ($i == "ops/sec:" && $(i + 1) ~ /^[0-9.]+$/) print $(i + 1)}'
}
# rbdbench type : sets RES to the IOPS of rbd bench (4 KiB, random, 32 threads) over about TIME s
rbdbench() {
  local probe guess
  probe=$(rbd_ops "$1" 4096); guess=${probe%.*}
  [ -n "$guess" ] && [ "$guess" -gt 0 ] 2>/dev/null || guess=300
  log "rbd bench $1 probe: ${probe:-?} IOPS (sizes the measured run to about $TIME s)"
  RES=$(rbd_ops "$1" $((guess * TIME)))
}

# the target: the java engine, one rbd namespace on the same image, NVMe/TCP on a free port
PORT=$(free_port) NQN=nqn.2026-12.io.nvmf4j:rbd-bench STATE=$TMP/state
mkdir -p "$STATE"
cat > "$STATE/config.json" << EOF
{"engine": "java", "cores": 1, "storage": {"cephDirectories": ["$(dirname "$CEPH_CONF")"]},
 "bdevs": [{"name": "ceph0", "type": "rbd", "blockSize": 4096, "pool": "$CEPH_POOL", "image": "$IMAGE",
   "cephConf": "$CEPH_CONF", "clientName": "$CEPH_CLIENT", "keyring": "$CEPH_KEYRING"}],
 "subsystems": [{"nqn": "$NQN", "allowAnyHost": true, "serial": "RBDBENCH00000001",
   "namespaces": [{"nsid": 1, "bdev": "ceph0"}],
   "listeners": [{"transport": "tcp", "address": "127.0.0.1", "port": $PORT}]}],
 "api": {"port": 0}}
EOF
target_start "$STATE" "$OUT/target.log" "$PORT"

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
