#!/bin/bash
# QoS check: SPDK's spdk_nvme_perf over NVMe/TCP on 127.0.0.1 against nvmf4j (target on core 0, one poll group
# or reactor; spdk_nvme_perf on core 1) with each kind of QoS limit set in turn through the REST API, for --time
# seconds each (after --warmup). Prints, per engine and case, the limit, the measured rate and their ratio, and
# fails when a ratio lies outside 1 +- --tolerance (a rate below the limit fails too: the target must be able to
# exceed it, and the limit must let it reach it). Then the neighbour check: namespace 2 (unlimited) alone, then
# beside namespace 1 held at a limit on the same poll group, in one spdk_nvme_perf; fails when namespace 2 keeps
# less than --neighbour-min of its IOPS alone, or namespace 1 is not held within the tolerance.
#
# Cases (the target exports null bdevs n1, n2 as namespaces 1 and 2 of one subsystem, 4 KiB blocks):
#   ns-iops    namespace 1 {"iops": 20000}        4 KiB randread QD32 on namespace 1, IOPS
#   ns-read    namespace 1 {"readMBps": 200}      128 KiB randread QD8 on namespace 1, MiB/s
#   ns-write   namespace 1 {"writeMBps": 200}     128 KiB randwrite QD8 on namespace 1, MiB/s
#   ns-rw      namespace 1 {"rwMBps": 200}        128 KiB randrw (50 % reads) QD8 on namespace 1, MiB/s
#   host-ns    host H on namespace 1 {"iops": 15000}    perf as host H, 4 KiB randread QD32 on namespace 1 (java)
#   host-sub   host H on the subsystem {"iops": 15000}  perf as host H on namespaces 1 and 2 together (java)
#   group      group of namespaces 1, 2 {"iops": 25000} 4 KiB randread QD32 on both together (java)
# (MB = 2^20 bytes, as spdk_nvme_perf's MiB/s.) The spdk engine runs the ns-* cases only: SPDK's bdev QoS has no
# per-host or shared budget, so nvmf4j refuses those on it (docs/configuration.md, "QoS").
#
# usage: fio-jobs/qos.sh [options]          (build first: mvn -q -DskipTests package)
#   --engines LIST      java,spdk (default both)
#   --cases LIST        comma-separated cases (default all of the engine's)
#   --time S            seconds per measurement (default 10)
#   --warmup S          spdk_nvme_perf warm-up before each measurement, seconds (default 2)
#   --tolerance F       a limit holds when measured/limit is within 1 +- F (default 0.05)
#   --neighbour-min F   the unlimited neighbour keeps at least F of its IOPS alone (default 0.90)
#   --no-huge           SPDK processes in ordinary memory (default: 2 MiB hugepages when enough are free)
#   --spdk-dir DIR      the SPDK build with spdk_nvme_perf (default: spdk-jni/spdk-build.sh's)
#   --out DIR           results (default fio-jobs/out/qos): qos.tsv and the logs
#   --check             checks this script alone (usage errors, the parsing of spdk_nvme_perf's output and the
#                       verdicts on canned figures) without a target or SPDK; exit 0 when they pass
#   -h, --help          this text
# Exit: 0 every limit held, 1 a limit or the neighbour check failed, 2 bad usage or a missing part.
set -uo pipefail
HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit "${1:-0}"; }
die() { echo "qos.sh: $*" >&2; exit 2; }
log() { printf '[qos %(%H:%M:%S)T] %s\n' -1 "$*"; }

ENGINES=java,spdk CASES="" TIME=10 WARMUP=2 TOL=0.05 NEIGHBOUR_MIN=0.90 NO_HUGE=0 SPDK=${SPDK_DIR:-} OUT=$HERE/out/qos
CHECK=0 MEM_MB=1024 PERF_MEM_MB=512
ALL_CASES=(ns-iops ns-read ns-write ns-rw host-ns host-sub group)
NQN=nqn.2026-11.io.nvmf4j:qos-check
HOST=nqn.2014-08.org.nvmexpress:uuid:6e766d66-346a-4a75-8000-0000000000f1

# case -> "scope body unit workload": scope ns1 | nshost | subhost | group; unit iops | mibs;
# workload "rw size qd nsids [-M mix]"
declare -A CASE_SCOPE=([ns-iops]=ns1 [ns-read]=ns1 [ns-write]=ns1 [ns-rw]=ns1 [host-ns]=nshost [host-sub]=subhost [group]=group)
declare -A CASE_BODY=([ns-iops]='{"iops": 20000}' [ns-read]='{"readMBps": 200}' [ns-write]='{"writeMBps": 200}'
  [ns-rw]='{"rwMBps": 200}' [host-ns]='{"iops": 15000}' [host-sub]='{"iops": 15000}' [group]='{"iops": 25000}')
declare -A CASE_LIMIT=([ns-iops]=20000 [ns-read]=200 [ns-write]=200 [ns-rw]=200 [host-ns]=15000 [host-sub]=15000 [group]=25000)
declare -A CASE_UNIT=([ns-iops]=iops [ns-read]=mibs [ns-write]=mibs [ns-rw]=mibs [host-ns]=iops [host-sub]=iops [group]=iops)
declare -A CASE_LOAD=([ns-iops]="randread 4096 32 1" [ns-read]="randread 131072 8 1" [ns-write]="randwrite 131072 8 1"
  [ns-rw]="randrw 131072 8 1" [host-ns]="randread 4096 32 1" [host-sub]="randread 4096 32 all" [group]="randread 4096 32 all")
NEIGHBOUR_LIMIT=5000     # namespace 1's IOPS in the neighbour check (a multiple of 1000: SPDK's step)

is_fraction() { [[ $1 =~ ^0?\.[0-9]+$|^1(\.0*)?$ ]]; }
is_seconds() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }
engine_cases() { # engine : the cases it runs
  if [ "$1" = spdk ]; then echo ns-iops ns-read ns-write ns-rw; else echo "${ALL_CASES[@]}"; fi
}

# verdict MEASURED LIMIT TOL : "ratio PASS|FAIL" (ratio = measured / limit, 3 decimals)
verdict() {
  awk -v m="$1" -v l="$2" -v t="$3" 'BEGIN { r = m / l; printf "%.3f %s\n", r, (r >= 1 - t && r <= 1 + t) ? "PASS" : "FAIL" }'
}

# neighbour_verdict ALONE BESIDE MIN : "kept PASS|FAIL" (kept = beside / alone)
neighbour_verdict() {
  awk -v a="$1" -v b="$2" -v m="$3" 'BEGIN { k = a > 0 ? b / a : 0; printf "%.3f %s\n", k, (k >= m ? "PASS" : "FAIL") }'
}

# parse_perf FILE : "nsid iops mibs" per namespace line of spdk_nvme_perf's table, then "total iops mibs"
parse_perf() {
  sed -n 's/.*NSID \([0-9][0-9]*\) from core *[0-9][0-9]*: *\([0-9.][0-9.]*\) *\([0-9.][0-9.]*\).*/\1 \2 \3/p' "$1"
  awk '$1 == "Total" && $2 == ":" {print "total", $3, $4}' "$1"
}

self_check() {
  local fails=0 n=0 got
  t() { n=$((n + 1)); if [ "$2" = "$3" ]; then echo "PASS  $1"; else fails=$((fails + 1)); echo "FAIL  $1: got '$2', want '$3'"; fi; }
  local out rc
  out=$("$0" --engines nosuch 2>&1); rc=$?; t "unknown engine -> usage error" "$rc $(grep -c 'unknown engine' <<< "$out")" "2 1"
  out=$("$0" --cases nosuch 2>&1); rc=$?; t "unknown case -> usage error" "$rc $(grep -c 'unknown case' <<< "$out")" "2 1"
  out=$("$0" --time 0 2>&1); rc=$?; t "--time 0 -> usage error" "$rc $(grep -c 'whole seconds' <<< "$out")" "2 1"
  out=$("$0" --tolerance 5 2>&1); rc=$?; t "--tolerance 5 -> usage error" "$rc $(grep -c 'fraction' <<< "$out")" "2 1"
  out=$("$0" --engines spdk --cases group 2>&1); rc=$?
  t "group on the spdk engine -> usage error" "$rc $(grep -c 'no per-host or shared budget' <<< "$out")" "2 1"
  out=$("$0" --rounds 2>&1); rc=$?; t "unknown option -> usage error" "$rc" "2"
  t "on the limit" "$(verdict 20000 20000 0.05)" "1.000 PASS"
  t "4.9 % under" "$(verdict 19020 20000 0.05)" "0.951 PASS"
  t "5.1 % under" "$(verdict 18980 20000 0.05)" "0.949 FAIL"
  t "5.1 % over" "$(verdict 210.2 200 0.05)" "1.051 FAIL"
  t "neighbour kept" "$(neighbour_verdict 100000 95000 0.90)" "0.950 PASS"
  t "neighbour starved" "$(neighbour_verdict 100000 60000 0.90)" "0.600 FAIL"
  t "neighbour without a figure alone" "$(neighbour_verdict 0 60000 0.90)" "0.000 FAIL"
  local f
  f=$(mktemp)
  cat > "$f" << 'EOF'
Initializing NVMe Controllers
Attached to NVMe over Fabrics controller at 127.0.0.1:4420: nqn.2026-11.io.nvmf4j:qos-check
Associating TCP (addr:127.0.0.1 subnqn:nqn.2026-11.io.nvmf4j:qos-check) NSID 1 with lcore 1
Associating TCP (addr:127.0.0.1 subnqn:nqn.2026-11.io.nvmf4j:qos-check) NSID 2 with lcore 1
Initialization complete. Launching workers.
========================================================
                                                                                                               Latency(us)
Device Information                                                                     :       IOPS      MiB/s    Average        min        max
TCP  (addr:127.0.0.1 subnqn:nqn.2026-11.io.nvmf4j:qos-check) NSID 1 from core  1:    5001.20      19.54    6398.12      41.20   12001.00
TCP  (addr:127.0.0.1 subnqn:nqn.2026-11.io.nvmf4j:qos-check) NSID 2 from core  1:   91234.50     356.38     350.61      30.11    2100.45
========================================================
Total                                                                                  :   96235.70     375.92     665.10      30.11   12001.00
EOF
  got=$(parse_perf "$f" | tr '\n' ';')
  t "spdk_nvme_perf's table parsed" "$got" "1 5001.20 19.54;2 91234.50 356.38;total 96235.70 375.92;"
  rm -f "$f"
  echo "qos.sh --check: $((n - fails)) of $n passed"
  [ "$fails" = 0 ]
}

while [ $# -gt 0 ]; do
  opt=$1 val=""; shift
  case $opt in
    --no-huge|--check|-h|--help) ;;
    --engines|--cases|--time|--warmup|--tolerance|--neighbour-min|--spdk-dir|--out)
      [ $# -gt 0 ] || die "$opt needs a value (see --help)"; val=$1; shift ;;
    *) die "unknown option $opt (see --help)" ;;
  esac
  case $opt in
    --engines) ENGINES=$val ;;
    --cases) CASES=$val ;;
    --time) TIME=$val ;;
    --warmup) WARMUP=$val ;;
    --tolerance) TOL=$val ;;
    --neighbour-min) NEIGHBOUR_MIN=$val ;;
    --no-huge) NO_HUGE=1 ;;
    --spdk-dir) SPDK=$val ;;
    --out) OUT=$val ;;
    --check) CHECK=1 ;;
    -h|--help) usage 0 ;;
  esac
done
[ "$CHECK" = 0 ] || { self_check; exit $?; }

is_seconds "$TIME" || die "--time takes whole seconds of at least 1, not '$TIME'"
[[ $WARMUP =~ ^[0-9]+$ ]] || die "--warmup takes whole seconds, not '$WARMUP'"
is_fraction "$TOL" || die "--tolerance takes a fraction (0.05 for 5 %), not '$TOL'"
is_fraction "$NEIGHBOUR_MIN" || die "--neighbour-min takes a fraction (0.90), not '$NEIGHBOUR_MIN'"
IFS=, read -ra ENGINE_LIST <<< "$ENGINES"
for e in "${ENGINE_LIST[@]}"; do
  case $e in java|spdk) ;; *) die "unknown engine '$e' (engines: java, spdk)" ;; esac
done
if [ -n "$CASES" ]; then
  IFS=, read -ra CASE_LIST <<< "$CASES"
  for c in "${CASE_LIST[@]}"; do
    [ -n "${CASE_SCOPE[$c]:-}" ] || die "unknown case '$c' (cases: ${ALL_CASES[*]})"
    for e in "${ENGINE_LIST[@]}"; do
      [[ " $(engine_cases "$e") " == *" $c "* ]] ||
        die "case $c needs a per-host or shared budget; the $e engine's QoS (SPDK's bdev QoS) has no per-host or shared budget"
    done
  done
fi
[ "$(nproc)" -ge 2 ] || die "needs 2 cores (the target on core 0, spdk_nvme_perf on core 1); this machine has $(nproc)"
for c in curl jq taskset python3; do command -v $c > /dev/null || die "needs $c"; done
if [ -z "$SPDK" ]; then
  SPDK=$("$ROOT/spdk-jni/spdk-build.sh") || die "no SPDK build (spdk-jni/spdk-build.sh failed; set SPDK_DIR or --spdk-dir)"
fi
PERF=$SPDK/build/bin/spdk_nvme_perf
[ -x "$PERF" ] || die "$PERF is missing (an SPDK build with its apps?)"
[ -d "$ROOT/mgmt-api/target/lib" ] && [ -x "$ROOT/bin/nvmf4j-target" ] ||
  die "no nvmf4j build under $ROOT/mgmt-api/target: build first (mvn -q -DskipTests package)"

TMP=$(mktemp -d)
PIDS=()
cleanup() {
  local p n
  trap - EXIT INT TERM
  for p in "${PIDS[@]}"; do
    kill -TERM "$p" 2> /dev/null
    n=0; while kill -0 "$p" 2> /dev/null && [ $n -lt 200 ]; do sleep 0.1; n=$((n + 1)); done
    kill -KILL "$p" 2> /dev/null; wait "$p" 2> /dev/null
  done
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'log "interrupted: stopping what it started"; exit 130' INT TERM
mkdir -p "$OUT/logs" || die "cannot create $OUT"
rm -f "$OUT/qos.tsv" "$OUT"/logs/*

# hugepages: used when enough 2 MiB pages are free (this script reserves none), else ordinary memory
HUGE=0
free_pages=$(awk '$1 == "HugePages_Free:" {print $2}' /proc/meminfo)
[ "$NO_HUGE" = 0 ] && [ "${free_pages:-0}" -ge $(((MEM_MB + PERF_MEM_MB) / 2 + 64)) ] && HUGE=1
MEM_ARGS=(); [ $HUGE = 1 ] || MEM_ARGS=(--no-huge)
log "memory of the SPDK processes: $([ $HUGE = 1 ] && echo '2 MiB hugepages' || echo 'ordinary memory (--no-huge)')"

free_port() { python3 "$HERE/lib/free_port.py" "$@"; }
TOKEN=$(python3 -c 'import secrets; print(secrets.token_hex(24))')
api() { # method path [body] : the API's answer; 1 when it is no 2xx
  local code
  code=$(curl -s -o "$TMP/api.out" -w '%{http_code}' -X "$1" -H "Authorization: Bearer $TOKEN" \
    -H 'Content-Type: application/json' ${3:+--data "$3"} "http://127.0.0.1:$API_PORT$2")
  echo "$1 $2 ${3:-} -> $code $(cat "$TMP/api.out")" >> "$LOG"
  [[ $code == 2* ]]
}
enc() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }

start_target() { # engine : starts nvmf4j with namespaces 1 and 2 on null bdevs; sets TPID, PORT, API_PORT, LOG
  local engine=$1 state=$TMP/state-$1 extra n
  PORT=$(free_port) API_PORT=$(free_port "$PORT") LOG=$OUT/logs/$1.log
  : > "$LOG"
  rm -rf "$state"; mkdir -p "$state"
  if [ "$engine" = spdk ]; then
    extra="\"spdk\": {\"coreMask\": \"0x1\", \"memSizeMb\": $MEM_MB, \"hugepages\": $([ $HUGE = 1 ] && echo true || echo false)},"
  else
    extra='"cores": 1, "idleStrategy": "busy",'
  fi
  cat > "$state/config.json" << EOF
{"engine": "$engine", $extra
 "bdevs": [{"name": "n1", "type": "null", "blockSize": 4096, "numBlocks": 262144},
           {"name": "n2", "type": "null", "blockSize": 4096, "numBlocks": 262144}],
 "subsystems": [{"nqn": "$NQN", "allowAnyHost": true, "serial": "QOSCHECK00000001",
   "namespaces": [{"nsid": 1, "bdev": "n1"}, {"nsid": 2, "bdev": "n2"}],
   "listeners": [{"transport": "tcp", "address": "127.0.0.1", "port": $PORT}]}],
 "api": {"port": $API_PORT, "token": "$TOKEN"}}
EOF
  log "$engine: starting on 127.0.0.1:$PORT (API $API_PORT)"
  if [ "$engine" = java ]; then # the whole JVM on core 0, like a reactor
    taskset -c 0 "$ROOT/bin/nvmf4j-target" --state-dir "$state" --config "$state/config.json" >> "$LOG" 2>&1 &
  else
    "$ROOT/bin/nvmf4j-target" --state-dir "$state" --config "$state/config.json" >> "$LOG" 2>&1 &
  fi
  TPID=$!; PIDS+=("$TPID")
  n=600
  until grep -q "listening on tcp 127.0.0.1:$PORT " "$LOG" && api GET /api/v1/health/ready; do
    kill -0 "$TPID" 2> /dev/null && [ $n -gt 0 ] || { log "$engine did not start; the end of $LOG:"; tail -n 8 "$LOG"; return 1; }
    n=$((n - 1)); sleep 0.1
  done
}

stop_target() {
  local keep=() p n=0
  kill -TERM "$TPID" 2> /dev/null
  while kill -0 "$TPID" 2> /dev/null && [ $n -lt 200 ]; do sleep 0.1; n=$((n + 1)); done
  kill -KILL "$TPID" 2> /dev/null; wait "$TPID" 2> /dev/null
  for p in "${PIDS[@]}"; do [ "$p" = "$TPID" ] || keep+=("$p"); done
  PIDS=("${keep[@]}")
}

# perf rw size qd nsids(1|2|all) [hostnqn] : spdk_nvme_perf on core 1; its output in $TMP/perf.out; 1 when it failed
perf() {
  local ns="" host="" mix=() p rc
  [ "$4" = all ] || ns=" ns:$4"
  [ -z "${5:-}" ] || host=" hostnqn:$5"
  [ "$1" = randrw ] && mix=(-M 50)
  "$PERF" -c 0x2 "${MEM_ARGS[@]}" -s "$PERF_MEM_MB" -w "$1" "${mix[@]}" -o "$2" -q "$3" -t "$TIME" -a "$WARMUP" \
    -r "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$PORT subnqn:$NQN$ns$host" > "$TMP/perf.out" 2>&1 &
  p=$!; PIDS+=("$p")
  wait "$p"; rc=$?
  local keep=() q; for q in "${PIDS[@]}"; do [ "$q" = "$p" ] || keep+=("$q"); done; PIDS=("${keep[@]}")
  cat "$TMP/perf.out" >> "$LOG"
  return $rc
}

# rate unit nsid|total : the figure of parse_perf's line (IOPS or MiB/s)
rate() {
  parse_perf "$TMP/perf.out" | awk -v k="$2" -v u="$1" '$1 == k {print (u == "iops" ? $2 : $3); exit}'
}

FAILED=0
row() { # engine case limit unit measured verdict...
  printf '%-6s %-10s %10s %-6s %12s %7s %s\n' "$@" | tee -a "$OUT/table.txt"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >> "$OUT/qos.tsv"
}

set_limit() { # case : sets its limit; 1 when the API refused
  local ns=/api/v1/subsystems/$(enc "$NQN")
  case ${CASE_SCOPE[$1]} in
    ns1) api PUT "$ns/namespaces/1/qos" "${CASE_BODY[$1]}" ;;
    nshost) api PUT "$ns/namespaces/1/qos/hosts/$(enc "$HOST")" "${CASE_BODY[$1]}" ;;
    subhost) api PUT "$ns/qos/hosts/$(enc "$HOST")" "${CASE_BODY[$1]}" ;;
    group) api POST /api/v1/qos-groups "{\"name\": \"qos-check\", \"namespaces\": [{\"nqn\": \"$NQN\", \"nsid\": 1},
      {\"nqn\": \"$NQN\", \"nsid\": 2}], \"limits\": ${CASE_BODY[$1]}}" ;;
  esac
}

clear_limit() { # case
  local ns=/api/v1/subsystems/$(enc "$NQN")
  case ${CASE_SCOPE[$1]} in
    ns1) api DELETE "$ns/namespaces/1/qos" ;;
    nshost) api DELETE "$ns/namespaces/1/qos/hosts/$(enc "$HOST")" ;;
    subhost) api DELETE "$ns/qos/hosts/$(enc "$HOST")" ;;
    group) api DELETE /api/v1/qos-groups/qos-check ;;
  esac
}

run_case() { # engine case
  local e=$1 c=$2 load host="" measured v
  read -ra load <<< "${CASE_LOAD[$c]}"
  [[ ${CASE_SCOPE[$c]} == *host ]] && host=$HOST
  if ! set_limit "$c"; then
    row "$e" "$c" "${CASE_LIMIT[$c]}" "${CASE_UNIT[$c]}" - "-" "FAIL (the API refused the limit: see $LOG)"; FAILED=1; return
  fi
  log "$e $c: ${CASE_BODY[$c]}, ${load[*]} for ${TIME} s"
  measured=""
  if perf "${load[@]}" "$host"; then
    measured=$(rate "${CASE_UNIT[$c]}" "$([ "${load[3]}" = all ] && echo total || echo "${load[3]}")")
  fi
  clear_limit "$c" || log "$e $c: the limit could not be removed (see $LOG)"
  if [ -z "$measured" ]; then
    row "$e" "$c" "${CASE_LIMIT[$c]}" "${CASE_UNIT[$c]}" - "-" "FAIL (spdk_nvme_perf failed: see $LOG)"; FAILED=1; return
  fi
  read -r ratio v <<< "$(verdict "$measured" "${CASE_LIMIT[$c]}" "$TOL")"
  row "$e" "$c" "${CASE_LIMIT[$c]}" "${CASE_UNIT[$c]}" "$measured" "$ratio" "$v"
  [ "$v" = PASS ] || FAILED=1
}

run_neighbour() { # engine : namespace 2 alone, then beside namespace 1 held at NEIGHBOUR_LIMIT IOPS
  local e=$1 alone beside held ratio v kept kv ns=/api/v1/subsystems/$(enc "$NQN")
  log "$e neighbour: namespace 2 alone, 4 KiB randread QD32"
  perf randread 4096 32 2 && alone=$(rate iops 2)
  api PUT "$ns/namespaces/1/qos" "{\"iops\": $NEIGHBOUR_LIMIT}" || { row "$e" neighbour - - - - "FAIL (the API refused)"; FAILED=1; return; }
  log "$e neighbour: namespaces 1 (held at $NEIGHBOUR_LIMIT IOPS) and 2 together"
  perf randread 4096 32 all && { held=$(rate iops 1); beside=$(rate iops 2); }
  api DELETE "$ns/namespaces/1/qos" || true
  if [ -z "${alone:-}" ] || [ -z "${held:-}" ] || [ -z "${beside:-}" ]; then
    row "$e" neighbour - - - - "FAIL (spdk_nvme_perf failed: see $LOG)"; FAILED=1; return
  fi
  read -r ratio v <<< "$(verdict "$held" "$NEIGHBOUR_LIMIT" "$TOL")"
  row "$e" "held-ns1" "$NEIGHBOUR_LIMIT" iops "$held" "$ratio" "$v"
  read -r kept kv <<< "$(neighbour_verdict "$alone" "$beside" "$NEIGHBOUR_MIN")"
  row "$e" "free-ns2" "$alone" iops "$beside" "$kept" "$kv (IOPS alone in the limit column; kept >= $NEIGHBOUR_MIN)"
  [ "$v" = PASS ] && [ "$kv" = PASS ] || FAILED=1
}

: > "$OUT/table.txt"
row engine case limit unit measured ratio verdict
for e in "${ENGINE_LIST[@]}"; do
  start_target "$e" || { row "$e" - - - - - "FAIL (the target did not start)"; FAILED=1; continue; }
  if [ -n "$CASES" ]; then list=("${CASE_LIST[@]}"); else read -ra list <<< "$(engine_cases "$e")"; fi
  for c in "${list[@]}"; do run_case "$e" "$c"; done
  run_neighbour "$e"
  stop_target
done
log "table: $OUT/table.txt (tab-separated: $OUT/qos.tsv)"
[ "$FAILED" = 0 ] && log "every limit held" || log "a check failed"
exit $FAILED
