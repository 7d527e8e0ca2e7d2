# Shared by fio-jobs/rbd-bench.sh and fio-jobs/rbd-failover.sh (sourced after they set HERE, ROOT, OUT, SPDK and die):
# a one-node Ceph cluster for the run, nvmf4j targets started from bin/nvmf4j-target, and cleanup by PID.

# ceph_run_setup NAME SPDK-TOOL : checks the build, finds SPDK-TOOL (a path pattern under the SPDK tree) as TOOL,
# wipes OUT, makes TMP, and stops everything at exit
ceph_run_setup() {
  [ -x "$ROOT/bin/nvmf4j-target" ] && [ -d "$ROOT/mgmt-api/target/lib" ] || die "no build: mvn -q -DskipTests package"
  if [ -z "$SPDK" ]; then
    SPDK=$(ls -d "${NVMF4J_CACHE:-$HOME/.cache/nvmf4j}"/spdk-*/ 2>/dev/null | head -n 1)
  fi
  TOOL=$(find "${SPDK:-/nonexistent}" -path "$2" -type f -perm -u+x 2>/dev/null | head -n 1)
  [ -n "$TOOL" ] || die "no ${2##*/} under ${SPDK:-(no SPDK: set --spdk-dir)}"
  rm -rf "$OUT"; mkdir -p "$OUT"
  TMP=$(mktemp -d "/tmp/nvmf4j-$1.XXXXXX")
  PIDS=()
  trap ceph_cleanup EXIT
}

# ceph_start : starts the cluster in $TMP/ceph (e2e/ceph/cluster.sh) and sources its CEPH_* lines
ceph_start() {
  CLUSTER=$TMP/ceph
  "$ROOT/e2e/ceph/cluster.sh" start "$CLUSTER" > "$TMP/ceph.env" 2>> "$OUT/ceph-start.log" \
    || { tail -5 "$OUT/ceph-start.log"; die "the cluster did not start"; }
  # shellcheck disable=SC1091 # KEY=VALUE lines of cluster.sh
  . "$TMP/ceph.env"
}

# rbd_admin ARGS... : rbd as the cluster's admin
rbd_admin() { timeout 600 rbd -c "$CEPH_CONF" -n client.admin -k "$CEPH_ADMIN_KEYRING" "$@"; }

# free_port [EXCLUDED...] : a TCP port free now, below the kernel's ephemeral range (lib/free_port.py)
free_port() { python3 "$HERE/lib/free_port.py" "$@"; }

# target_start STATE-DIR LOG PORT : runs bin/nvmf4j-target on STATE-DIR/config.json until it listens on PORT (a
# line it writes to LOG from now on: LOG may hold an earlier run's); sets TPID (also kept in PIDS for the cleanup)
target_start() {
  local from
  from=1
  [ -f "$2" ] && from=$(($(wc -l < "$2") + 1))
  "$ROOT/bin/nvmf4j-target" --state-dir "$1" --config "$1/config.json" >> "$2" 2>&1 &
  TPID=$!; PIDS+=("$TPID")
  for _ in $(seq 1 600); do
    tail -n +"$from" "$2" | grep -q "listening on tcp 127.0.0.1:$3 " && return 0
    kill -0 "$TPID" 2>/dev/null || break
    sleep 0.1
  done
  tail -8 "$2"; die "the target of $1 did not start"
}

# ceph_cleanup : stops every process in PIDS (TERM, then KILL after 10 s), stops the cluster, removes TMP
ceph_cleanup() {
  local p
  for p in "${PIDS[@]}"; do
    kill "$p" 2>/dev/null && { for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done; }
    kill -9 "$p" 2>/dev/null
  done
  [ -n "${CLUSTER:-}" ] && "$ROOT/e2e/ceph/cluster.sh" stop "$CLUSTER" >/dev/null 2>&1
  rm -rf "$TMP"
}
