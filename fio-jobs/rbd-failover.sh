#!/bin/bash
# Two-gateway failover on one RBD image, on this machine (no guest): a one-node Ceph cluster
# (e2e/ceph/cluster.sh, started here and removed at the end), two nvmf4j java-engine targets (gateways A and B,
# each a bin/nvmf4j-target process) serving the same image as one namespace (same NQN, NGUID and UUID,
# disjoint cntlid ranges) with "exclusiveLock": A's listener optimized, B's non-optimized; and SPDK's bdevperf
# as the host, attached to both paths as one multipath bdev (bdev_nvme multipath, ANA-aware), running
# -w verify (write, read back, compare) the whole time while:
#   1. A is killed with SIGKILL; the HA step makes B optimized through its REST API (B takes the dead A's lock:
#      librbd breaks it once A's watch has timed out, and Ceph blocklists A's client), and the host goes on
#      through B;
#   2. B steps down (non-optimized: it gives the lock up), A is started again (optimized: it takes the lock)
#      and takes its place.
# Passes when bdevperf ends with status 0, no failed I/O and no miscompare, and the gateways held the lock as
# the ANA states say (their logs). The same with the Linux host: e2e/run.sh --only rbd (the cluster in the guest).
#
# usage: fio-jobs/rbd-failover.sh [options]      (build first: mvn -q -DskipTests package)
#   --time S         seconds of verify in all (default 150: A is killed after 10 s; B takes over once Ceph lets
#                    it have the dead A's lock, up to osd_client_watch_timeout, 30 s; 10 s later B steps down and
#                    A is started again, which takes a JVM start; the run must outlast all of that)
#   --spdk-dir DIR   the SPDK build with bdevperf (default: $SPDK_DIR, else ~/.cache/nvmf4j/spdk-*)
#   --out DIR        logs (default fio-jobs/out/rbd-failover, wiped first)
# Exit status: 0 passed, 1 failed, 2 usage error or missing build. Stops every process it started (by PID)
# and removes the cluster at exit.
set -uo pipefail
HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)

usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit "${1:-0}"; }
die() { echo "rbd-failover.sh: $*" >&2; exit 2; }

TIME=150 SPDK=${SPDK_DIR:-} OUT=$ROOT/fio-jobs/out/rbd-failover
while [ $# -gt 0 ]; do
  case "$1" in
    --time) TIME=${2:?}; shift ;;
    --spdk-dir) SPDK=${2:?}; shift ;;
    --out) OUT=${2:?}; shift ;;
    -h|--help) usage 0 ;;
    *) echo "rbd-failover.sh: unknown option $1" >&2; usage 2 ;;
  esac
  shift
done
# shellcheck source=fio-jobs/lib/ceph.sh
. "$HERE/lib/ceph.sh"
ceph_run_setup rbd-failover '*build/examples/bdevperf'; BDEVPERF=$TOOL
log() { echo "$(date -u +%T) $*" | tee -a "$OUT/summary.txt"; }
FAILED=0
check() { # what command... : runs it; a failure is logged and fails the run
  local what=$1; shift
  if "$@"; then log "ok: $what"; else log "FAILED: $what"; FAILED=1; fi
}

log "starting the Ceph cluster (e2e/ceph/cluster.sh)"
ceph_start
IMAGE=failover NQN=nqn.2026-12.io.nvmf4j:rbd-failover
rbd_admin create "$CEPH_POOL/$IMAGE" --size 256M || die "rbd create failed"

# gateway NAME NVME-PORT API-PORT MIN-CNTLID STATE : writes $TMP/NAME/config.json
gateway() {
  mkdir -p "$TMP/$1"
  cat > "$TMP/$1/config.json" << JSON
{"engine": "java", "cores": 1, "api": {"port": $3}, "storage": {"cephDirectories": ["$(dirname "$CEPH_CONF")"]},
 "bdevs": [{"name": "ceph0", "type": "rbd", "blockSize": 4096, "pool": "$CEPH_POOL", "image": "$IMAGE",
   "cephConf": "$CEPH_CONF", "clientName": "$CEPH_CLIENT", "keyring": "$CEPH_KEYRING", "exclusiveLock": true}],
 "subsystems": [{"nqn": "$NQN", "allowAnyHost": true, "serial": "RBDFAILOVER00001", "model": "nvmf4j-rbd-failover",
   "minCntlid": $4, "maxCntlid": $(($4 + 99)),
   "namespaces": [{"nsid": 1, "bdev": "ceph0", "anaGroup": 1, "nguid": "6e766d66346a0016d000000000000001",
                   "uuid": "6e766d66-346a-4016-d000-000000000001"}],
   "listeners": [{"transport": "tcp", "address": "127.0.0.1", "port": $2, "anaStates": {"1": "$5"}}]}]}
JSON
}
A_PORT=$(free_port) A_API=$(free_port "$A_PORT") B_PORT=$(free_port "$A_PORT" "$A_API")
B_API=$(free_port "$A_PORT" "$A_API" "$B_PORT")
gateway A "$A_PORT" "$A_API" 1 optimized
gateway B "$B_PORT" "$B_API" 101 non-optimized
target_start "$TMP/A" "$OUT/gateway-A.log" "$A_PORT"; A_PID=$TPID
target_start "$TMP/B" "$OUT/gateway-B.log" "$B_PORT"; B_PID=$TPID
log "gateways up: A (optimized) pid $A_PID port $A_PORT, B (non-optimized) pid $B_PID port $B_PORT"
check "A holds the exclusive lock" grep -q "holds the exclusive lock" "$OUT/gateway-A.log"

# ana_put NAME PORT API STATE : the HA agent's call, ANA group 1 of that gateway's listener
ana_put() {
  curl -sS -m 60 -X PUT -H "Authorization: Bearer $(cat "$TMP/$1/api-token")" -H 'Content-Type: application/json' \
    -d "{\"state\": \"$4\"}" -o "$OUT/ana-put-$1.json" -w '%{http_code}' \
    "http://127.0.0.1:$3/api/v1/subsystems/${NQN//:/%3A}/listeners/tcp/127.0.0.1/$2/ana/1" | grep -qx 200
}

# the host: bdevperf with one bdev over both paths (multipath mode follows the ANA states; failed I/O is retried
# on the other path without limit); it sends nothing the gateways do not serve
cat > "$TMP/bdevperf.json" << JSON
{"subsystems": [{"subsystem": "bdev", "config": [
  {"method": "bdev_nvme_set_options", "params": {"bdev_retry_count": -1, "transport_retry_count": 4}},
  {"method": "bdev_nvme_attach_controller", "params": {"name": "Nvme0", "trtype": "tcp", "adrfam": "IPv4",
    "traddr": "127.0.0.1", "trsvcid": "$A_PORT", "subnqn": "$NQN", "multipath": "multipath",
    "ctrlr_loss_timeout_sec": -1, "reconnect_delay_sec": 1}},
  {"method": "bdev_nvme_attach_controller", "params": {"name": "Nvme0", "trtype": "tcp", "adrfam": "IPv4",
    "traddr": "127.0.0.1", "trsvcid": "$B_PORT", "subnqn": "$NQN", "multipath": "multipath",
    "ctrlr_loss_timeout_sec": -1, "reconnect_delay_sec": 1}}]}]}
JSON
"$BDEVPERF" --no-huge -s 512 -m 0x1 --no-rpc-server --disable-cpumask-locks -c "$TMP/bdevperf.json" \
  -q 16 -o 4096 -w verify -t "$TIME" > "$OUT/bdevperf.log" 2>&1 &
PERF_PID=$!; PIDS+=("$PERF_PID")
log "bdevperf verify for $TIME s (pid $PERF_PID)"

sleep 10
kill -9 "$A_PID"; wait "$A_PID" 2>/dev/null
log "gateway A killed with SIGKILL"
check "B made optimized through its API (HA step)" ana_put B "$B_PORT" "$B_API" optimized
check "B took the dead A's lock" grep -q "holds the exclusive lock" "$OUT/gateway-B.log"

sleep 10
check "B steps down (non-optimized)" ana_put B "$B_PORT" "$B_API" non-optimized
check "B gave the lock up" grep -q "released the exclusive lock" "$OUT/gateway-B.log"
echo "--- restart" >> "$OUT/gateway-A.log"
target_start "$TMP/A" "$OUT/gateway-A.log" "$A_PORT"; A_PID=$TPID
log "gateway A back (optimized) pid $A_PID"
check "A took the lock back without breaking B's" \
  bash -c "sed -n '/^--- restart/,\$p' '$OUT/gateway-A.log' | grep -q 'holds the exclusive lock of' && \
    ! sed -n '/^--- restart/,\$p' '$OUT/gateway-A.log' | grep -q 'breaking its lock'"

sleep 10
check "the host goes on through A (it connected to A again)" \
  bash -c "sed -n '/^--- restart/,\$p' '$OUT/gateway-A.log' | grep -q 'connected: host'"
check "bdevperf still runs after A is back" kill -0 "$PERF_PID"
wait "$PERF_PID"; PRC=$?
log "bdevperf ended with status $PRC"
check "bdevperf ended with status 0" test "$PRC" -eq 0
# bdevperf's table: "Total : IOPS MiB/s Fail/s TO/s Average min max"
FAILS=$(tr '\r' '\n' < "$OUT/bdevperf.log" | awk '$1 == "Total" && $2 == ":" {print $5; exit}')
check "no failed I/O (Total Fail/s ${FAILS:-?})" awk -v f="${FAILS:-x}" 'BEGIN {exit !(f ~ /^[0-9.]+$/ && f + 0 == 0)}'
check "no miscompare" bash -c "! grep -qi 'miscompare' '$OUT/bdevperf.log'"
tr '\r' '\n' < "$OUT/bdevperf.log" | grep -E "^ *(Total|Nvme0n1|Device Information) +:|^Job:" | tee -a "$OUT/summary.txt"
log "$([ "$FAILED" -eq 0 ] && echo PASSED || echo FAILED)"
exit "$FAILED"
