#!/bin/bash
# Engine benchmark: SPDK's spdk_nvme_perf against three NVMe/TCP targets on 127.0.0.1, one target core
# each, in one run: SPDK's standalone nvmf_tgt (-m 0x1, set up through its rpc.py), nvmf4j's spdk engine
# (coreMask 0x1) and nvmf4j's java engine (cores 1, the whole JVM pinned to core 0 with taskset).
# spdk_nvme_perf runs on core 1. Every target exports the same malloc bdev (size, block size) with the
# same transport limits. Rounds interleave the targets (each round starts each target in turn, runs
# every row against it and stops it; the order rotates from round to round), and the table shows the
# median of the rounds per cell (and a second table of the best round), then the ratios spdk/nvmf_tgt and java/nvmf_tgt, and whether the spdk
# engine is within 5 % of nvmf_tgt on each row. Numbers never make it fail.
#
# usage: fio-jobs/engines.sh [options]          (build first: mvn -q -DskipTests package)
#   --rounds N          rounds (default 3)
#   --time S            seconds per measurement (default 10)
#   --warmup S          spdk_nvme_perf warm-up before each measurement, seconds (default 2)
#   --rows LIST         comma-separated rows (default all): qd1 (4 KiB randread QD1),
#                       qd32 (4 KiB randread QD32), w128k (128 KiB randwrite QD8)
#   --targets LIST      comma-separated targets (default all): nvmf_tgt, spdk, java
#   --malloc-mb MB      malloc bdev size (default 256)
#   --block-size B      malloc bdev block size (default 4096)
#   --mem-mb MB         SPDK memory of nvmf_tgt and of the spdk engine (default 1024)
#   --perf-mem-mb MB    SPDK memory of spdk_nvme_perf (default 512)
#   --no-huge           ordinary memory for every SPDK process (the default is 2 MiB hugepages: as root
#                       the script reserves what is missing and mounts hugetlbfs on /dev/hugepages when
#                       none is mounted, and undoes both at exit; when it cannot, it says so and
#                       falls back to --no-huge for all)
#   --java-idle S       the java engine's idleStrategy (default busy: SPDK's reactors poll too)
#   --spdk-dir DIR      the SPDK build (default: $SPDK_DIR, else what spdk-jni/spdk-build.sh prints)
#   --lock FILE         hold flock FILE while measuring (e.g. the lock QEMU guests of this machine take)
#   --out DIR           results (default fio-jobs/out/engines, wiped first): raw.tsv (round target row
#                       iops mib_s mean_us), table.txt (the printed table), logs/ (target and perf output)
#   --smoke             1 round, 2 s per measurement, no warm-up, row qd1, every target (CI; < 1 minute)
# Exit status: 0 when every measurement gave a number; 1 when a target did not start or a run failed
# (the table shows "-" there); 2 for a usage error or a missing build. Needs root for hugepages;
# python3 for rpc.py; stops every process it started (by PID) and removes its temporary files at exit.
set -uo pipefail
HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)

usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit "${1:-0}"; }
die() { echo "engines.sh: $*" >&2; exit 2; }
log() { printf '[engines %(%H:%M:%S)T] %s\n' -1 "$*"; }

ROUNDS=3 TIME=10 WARMUP=2 ROWS=qd1,qd32,w128k TARGETS=nvmf_tgt,spdk,java MALLOC_MB=256 BS=4096
MEM_MB=1024 PERF_MEM_MB=512 NO_HUGE=0 JAVA_IDLE=busy SPDK=${SPDK_DIR:-} LOCK="" OUT=$HERE/out/engines
while [ $# -gt 0 ]; do
  opt=$1 val=""; shift
  case $opt in
    --smoke|--no-huge|-h|--help) ;;
    --rounds|--time|--warmup|--rows|--targets|--malloc-mb|--block-size|--mem-mb|--perf-mem-mb|--java-idle|--spdk-dir|--lock|--out)
      [ $# -gt 0 ] || die "$opt needs a value (see --help)"; val=$1; shift ;;
    *) die "unknown option $opt (see --help)" ;;
  esac
  case $opt in
    --rounds) ROUNDS=$val ;;
    --time) TIME=$val ;;
    --warmup) WARMUP=$val ;;
    --rows) ROWS=$val ;;
    --targets) TARGETS=$val ;;
    --malloc-mb) MALLOC_MB=$val ;;
    --block-size) BS=$val ;;
    --mem-mb) MEM_MB=$val ;;
    --perf-mem-mb) PERF_MEM_MB=$val ;;
    --no-huge) NO_HUGE=1 ;;
    --java-idle) JAVA_IDLE=$val ;;
    --spdk-dir) SPDK=$val ;;
    --lock) LOCK=$val ;;
    --out) OUT=$val ;;
    --smoke) ROUNDS=1 TIME=2 WARMUP=0 ROWS=qd1 ;;
    -h|--help) usage 0 ;;
  esac
done

# the rows: name -> spdk_nvme_perf's -w -o -q, and the label of the table
declare -A ROW_ARGS=([qd1]="randread 4096 1" [qd32]="randread 4096 32" [w128k]="randwrite 131072 8")
declare -A ROW_LABEL=([qd1]="4k randread QD1" [qd32]="4k randread QD32" [w128k]="128k randwrite QD8")
declare -A TARGET_LABEL=([nvmf_tgt]="nvmf_tgt" [spdk]="spdk engine" [java]="java engine")
for n in rounds:ROUNDS time:TIME malloc-mb:MALLOC_MB block-size:BS mem-mb:MEM_MB perf-mem-mb:PERF_MEM_MB; do
  v=${n#*:}
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "--${n%%:*} takes a positive whole number, not '${!v}'"
done
[[ $WARMUP =~ ^[0-9]+$ ]] || die "--warmup takes whole seconds, not '$WARMUP'"
[ $((BS & (BS - 1))) = 0 ] && [ "$BS" -ge 512 ] || die "--block-size must be a power of two of at least 512"
IFS=, read -ra ROW_LIST <<< "$ROWS"; IFS=, read -ra TARGET_LIST <<< "$TARGETS"
for r in "${ROW_LIST[@]}"; do [ -n "${ROW_ARGS[$r]:-}" ] || die "unknown row '$r' (rows: qd1, qd32, w128k)"; done
for t in "${TARGET_LIST[@]}"; do [ -n "${TARGET_LABEL[$t]:-}" ] || die "unknown target '$t' (targets: nvmf_tgt, spdk, java)"; done
[ "${#ROW_LIST[@]}" -gt 0 ] && [ "${#TARGET_LIST[@]}" -gt 0 ] || die "no rows or no targets"
case $JAVA_IDLE in busy|backoff|interrupt) ;; *) die "--java-idle is busy, backoff or interrupt" ;; esac
[ "$(nproc)" -ge 2 ] || die "needs 2 cores (targets on core 0, spdk_nvme_perf on core 1); this machine has $(nproc)"
if [ -z "$SPDK" ]; then
  SPDK=$("$ROOT/spdk-jni/spdk-build.sh") || die "no SPDK build (spdk-jni/spdk-build.sh failed; set SPDK_DIR or --spdk-dir)"
fi
PERF=$SPDK/build/bin/spdk_nvme_perf NVMF_TGT=$SPDK/build/bin/nvmf_tgt RPC_PY=$SPDK/scripts/rpc.py
for f in "$PERF" "$NVMF_TGT" "$RPC_PY"; do [ -x "$f" ] || die "$f is missing (an SPDK build with its apps?)"; done
[ -d "$ROOT/mgmt-api/target/classes" ] && [ -d "$ROOT/mgmt-api/target/lib" ] ||
  die "no nvmf4j build under $ROOT/mgmt-api/target: build first (mvn -q -DskipTests package)"
command -v python3 > /dev/null && command -v taskset > /dev/null || die "needs python3 (rpc.py) and taskset"

TMP=$(mktemp -d)
PIDS=()              # every process this script started and has not yet seen exit
HUGE_RESTORE=""      # nr_hugepages to write back at exit
HUGE_MOUNTED=""      # the hugetlbfs mount point this script made
HUGE_MKDIR=0         # it also created that directory
HUGE_DIR=""          # the hugetlbfs SPDK uses
NQN=nqn.2016-06.io.spdk:engines-bench
NR_HUGE=/proc/sys/vm/nr_hugepages

forget_pid() { # pid : no longer one to stop at exit
  local keep=() q
  for q in "${PIDS[@]}"; do [ "$q" = "$1" ] || keep+=("$q"); done
  PIDS=("${keep[@]}")
}

stop_pid() { # pid : SIGTERM, up to 20 s, then SIGKILL; forgets it; removes its hugepage files
  local p=$1 n=0
  if kill -0 "$p" 2> /dev/null; then
    kill -TERM "$p" 2> /dev/null
    while kill -0 "$p" 2> /dev/null && [ $n -lt 200 ]; do sleep 0.1; n=$((n + 1)); done
    kill -0 "$p" 2> /dev/null && { log "PID $p did not stop within 20 s: SIGKILL"; kill -KILL "$p" 2> /dev/null; }
  fi
  wait "$p" 2> /dev/null
  [ -n "$HUGE_DIR" ] && rm -f "$HUGE_DIR/spdk_pid${p}map_"* 2> /dev/null
  forget_pid "$p"
}
cleanup() {
  local p
  trap - EXIT INT TERM
  for p in "${PIDS[@]}"; do stop_pid "$p"; done
  if [ -n "$HUGE_MOUNTED" ]; then
    umount "$HUGE_MOUNTED" 2> /dev/null || log "could not unmount $HUGE_MOUNTED"
    [ "$HUGE_MKDIR" = 1 ] && rmdir "$HUGE_MOUNTED" 2> /dev/null
  fi
  if [ -n "$HUGE_RESTORE" ]; then
    echo "$HUGE_RESTORE" > "$NR_HUGE" 2> /dev/null && log "nr_hugepages back to $HUGE_RESTORE" ||
      log "could not restore nr_hugepages to $HUGE_RESTORE"
  fi
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'log "interrupted: stopping what it started"; exit 130' INT TERM

mkdir -p "$OUT/logs" || die "cannot create $OUT"
rm -f "$OUT"/raw.tsv "$OUT"/table.txt "$OUT"/logs/*

# the lock first: hugepages are reserved only while this run may measure
if [ -n "$LOCK" ]; then
  exec {LOCK_FD}>> "$LOCK" || die "cannot open $LOCK"
  if ! flock -n "$LOCK_FD"; then
    log "waiting for $LOCK"; t0=$SECONDS
    flock "$LOCK_FD" & p=$!; PIDS+=("$p")      # in the background, so that a signal ends the wait
    wait "$p"; forget_pid "$p"
    log "got $LOCK after $((SECONDS - t0)) s"
  fi
fi

# ---------------------------------------------------------------------------------------------- memory
meminfo() { awk -v k="$1:" '$1 == k {print $2}' /proc/meminfo; }
huge_setup() { # reserves 2 MiB pages and finds (or mounts) hugetlbfs; returns 1 with a reason in WHY
  local need have total mnt
  WHY=""
  [ "$(meminfo Hugepagesize)" = 2048 ] || { WHY="the default hugepage size is not 2 MiB"; return 1; }
  need=$(( (MEM_MB + PERF_MEM_MB) / 2 + 64 ))     # one target and perf at a time, plus slack
  have=$(meminfo HugePages_Free)
  if [ "${have:-0}" -lt "$need" ]; then
    [ -w "$NR_HUGE" ] || { WHY="$((need - ${have:-0})) more 2 MiB pages needed and $NR_HUGE is not writable (not root?)"; return 1; }
    total=$(cat "$NR_HUGE")
    HUGE_RESTORE=$total
    echo $((total + need - have)) > "$NR_HUGE" 2> /dev/null
    have=$(meminfo HugePages_Free)
    [ "${have:-0}" -ge "$need" ] || { WHY="asked for $need free 2 MiB pages, the kernel gave $have"; return 1; }
    log "reserved 2 MiB pages: nr_hugepages $total -> $(cat "$NR_HUGE") (restored at exit)"
  fi
  mnt=$(awk '$3 == "hugetlbfs" {print $2; exit}' /proc/mounts)
  if [ -z "$mnt" ]; then
    mnt=/dev/hugepages
    [ -d $mnt ] || { mkdir -p $mnt 2> /dev/null && HUGE_MKDIR=1; }
    mount -t hugetlbfs -o pagesize=2M nodev $mnt 2> "$TMP/mount.err" ||
      { WHY="no hugetlbfs mounted and mounting one on $mnt failed: $(cat "$TMP/mount.err")"; return 1; }
    HUGE_MOUNTED=$mnt
    log "mounted hugetlbfs on $mnt (unmounted at exit)"
  fi
  HUGE_DIR=$mnt
}
HUGE=0
if [ "$NO_HUGE" = 0 ]; then
  if huge_setup; then HUGE=1
  else
    log "NOTE: no hugepages ($WHY): every SPDK process runs with --no-huge (ordinary memory)"
    [ -n "$HUGE_RESTORE" ] && { echo "$HUGE_RESTORE" > "$NR_HUGE"; HUGE_RESTORE=""; }
  fi
fi
if [ $HUGE = 1 ]; then MEM_ARGS=() MEMORY="2 MiB hugepages"
else MEM_ARGS=(--no-huge) MEMORY="ordinary memory (--no-huge)"; fi

# ---------------------------------------------------------------------------------------------- targets
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
rpc() { PYTHONPATH=$SPDK/python PATH=/usr/bin:$PATH "$RPC_PY" -s "$TMP/spdk.sock" -t 30 "$@" >> "$LOG" 2>&1; }
wait_for() { # pid seconds command... : until the command succeeds; 1 when the pid died or time ran out
  local p=$1 n=$(($2 * 10)); shift 2
  until "$@"; do
    kill -0 "$p" 2> /dev/null || return 1
    n=$((n - 1)); [ $n -gt 0 ] || return 1
    sleep 0.1
  done
}

start_nvmf_tgt() { # sets TPID; 1 when it did not come up
  rm -f "$TMP/spdk.sock"
  # no core lock: another SPDK process of this machine may hold core 0's (the spdk engine's test JVMs)
  "$NVMF_TGT" -m 0x1 --disable-cpumask-locks -u "${MEM_ARGS[@]}" -s "$MEM_MB" -r "$TMP/spdk.sock" >> "$LOG" 2>&1 &
  TPID=$!; PIDS+=("$TPID")
  wait_for "$TPID" 30 test -S "$TMP/spdk.sock" || return 1
  rpc framework_wait_init &&
  rpc nvmf_create_transport -t TCP -q 128 -m 8 -c 8192 -i 131072 &&
  rpc bdev_malloc_create -b malloc0 "$MALLOC_MB" "$BS" &&
  rpc nvmf_create_subsystem "$NQN" -a -s ENGINESBENCH0001 -d nvmf_tgt &&
  rpc nvmf_subsystem_add_ns "$NQN" malloc0 &&
  rpc nvmf_subsystem_add_listener "$NQN" -t tcp -f ipv4 -a 127.0.0.1 -s "$PORT"
}

start_nvmf4j() { # engine : sets TPID; 1 when it did not come up
  local engine=$1 state=$TMP/state-$1 extra
  rm -rf "$state"; mkdir -p "$state"
  if [ "$engine" = spdk ]; then
    extra="\"spdk\": {\"coreMask\": \"0x1\", \"memSizeMb\": $MEM_MB, \"hugepages\": $([ $HUGE = 1 ] && echo true || echo false)},"
  else
    extra="\"cores\": 1, \"idleStrategy\": \"$JAVA_IDLE\","
  fi
  # the transport limits of nvmf_tgt's nvmf_create_transport above (-q 128 -m 8 -c 8192 -i 131072)
  cat > "$state/config.json" << EOF
{"engine": "$engine", $extra
 "tcp": {"inCapsuleDataSize": 8192, "maxQueueDepth": 128, "maxIoQueues": 8, "mdtsBytes": 131072},
 "bdevs": [{"name": "malloc0", "type": "malloc", "blockSize": $BS, "numBlocks": $((MALLOC_MB * 1048576 / BS))}],
 "subsystems": [{"nqn": "$NQN", "allowAnyHost": true, "serial": "ENGINESBENCH0001",
   "namespaces": [{"nsid": 1, "bdev": "malloc0"}],
   "listeners": [{"transport": "tcp", "address": "127.0.0.1", "port": $PORT}]}],
 "api": {"port": 0}}
EOF
  if [ "$engine" = java ]; then # the whole JVM on core 0: one core, like the SPDK targets' reactor
    taskset -c 0 "$ROOT/bin/nvmf4j-target" --state-dir "$state" --config "$state/config.json" >> "$LOG" 2>&1 &
  else
    "$ROOT/bin/nvmf4j-target" --state-dir "$state" --config "$state/config.json" >> "$LOG" 2>&1 &
  fi
  TPID=$!; PIDS+=("$TPID")      # bin/nvmf4j-target and taskset exec: this is the JVM
  wait_for "$TPID" 60 grep -q "listening on tcp 127.0.0.1:$PORT " "$LOG"
}

# perf rw size qd seconds warmup : one spdk_nvme_perf run on core 1; sets RES to "iops mib_s mean_us"
# (empty when it failed)
perf() {
  local p rc
  RES=""
  "$PERF" -c 0x2 "${MEM_ARGS[@]}" -s "$PERF_MEM_MB" -w "$1" -o "$2" -q "$3" -t "$4" -a "$5" \
    -r "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$PORT subnqn:$NQN" > "$TMP/perf.out" 2>&1 &
  p=$!; PIDS+=("$p")
  wait "$p"; rc=$?
  forget_pid "$p"
  cat "$TMP/perf.out" >> "$LOG"
  [ $rc = 0 ] || return 0
  RES=$(awk '$1 == "Total" && $2 == ":" && $3 > 0 {printf "%.2f %.2f %.2f\n", $3, $4, $5; exit}' "$TMP/perf.out")
}

# ---------------------------------------------------------------------------------------------- measure
log "SPDK $SPDK; memory: $MEMORY ($MEM_MB MiB per target, $PERF_MEM_MB MiB for spdk_nvme_perf)"
log "$ROUNDS round(s) x ${#TARGET_LIST[@]} target(s) x ${#ROW_LIST[@]} row(s), ${TIME} s each after ${WARMUP} s warm-up; malloc $MALLOC_MB MiB, ${BS}-byte blocks"
printf 'round\ttarget\trow\tiops\tmib_s\tmean_us\n' > "$OUT/raw.tsv"
FAILED=0
for ((round = 1; round <= ROUNDS; round++)); do
  n=${#TARGET_LIST[@]}
  for ((i = 0; i < n; i++)); do
    t=${TARGET_LIST[$(( (i + round - 1) % n ))]}    # the order rotates: each target leads a round
    LOG=$OUT/logs/round$round-$t.log PORT=$(free_port) TPID=""
    : > "$LOG"
    log "round $round: ${TARGET_LABEL[$t]} on 127.0.0.1:$PORT"
    if [ "$t" = nvmf_tgt ]; then start_nvmf_tgt; else start_nvmf4j "$t"; fi
    up=$?
    for r in "${ROW_LIST[@]}"; do
      RES=""
      # shellcheck disable=SC2086 # ROW_ARGS holds three words
      [ $up = 0 ] && perf ${ROW_ARGS[$r]} "$TIME" "$WARMUP"
      res=$RES
      if [ -z "$res" ]; then
        FAILED=1
        [ $up = 0 ] && log "  $r: spdk_nvme_perf gave no number (see $LOG)"
        res="- - -"
      else
        read -r iops mibs lat <<< "$res"
        log "  $(printf '%-20s %12s IOPS %10s MiB/s %10s us mean' "${ROW_LABEL[$r]}" "$iops" "$mibs" "$lat")"
      fi
      printf '%s\t%s\t%s\t%s\n' "$round" "$t" "$r" "${res// /$'\t'}" >> "$OUT/raw.tsv"
    done
    if [ $up != 0 ]; then
      log "  ${TARGET_LABEL[$t]} did not start; the end of $LOG:"; tail -n 8 "$LOG" | sed 's/^/    /'
    fi
    [ -n "$TPID" ] && stop_pid "$TPID"
  done
done
[ -n "$LOCK" ] && exec {LOCK_FD}>&-

# ---------------------------------------------------------------------------------------------- table
# per target, row and column: the median of the rounds (the mean of the middle two for an even count),
# then the best round (highest IOPS and MiB/s, lowest mean latency): on a shared machine interference only
# ever slows a run, so the best round estimates what a target can do and the median what it typically did
stat_table() { # median|best
  awk -F'\t' -v stat="$1" -v rows="$ROWS" -v targets="$TARGETS" -v lrows="$(for r in "${ROW_LIST[@]}"; do printf '%s,' "${ROW_LABEL[$r]}"; done)" '
    function median(k,   n, v, i, j, x) {
      n = split(vals[k], v, " "); if (n == 0) return ""
      for (i = 2; i <= n; i++) { x = v[i] + 0; for (j = i - 1; j >= 1 && v[j] + 0 > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
      if (stat == "best") return lowest ? v[1] : v[n]
      return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }
    NR > 1 { for (c = 4; c <= 6; c++) if ($c != "-") vals[$2 SUBSEP $3 SUBSEP c] = vals[$2 SUBSEP $3 SUBSEP c] " " $c }
    END {
      nr = split(rows, R, ","); nt = split(targets, T, ","); split(lrows, L, ",")
      name["nvmf_tgt"] = "nvmf_tgt"; name["spdk"] = "spdk engine"; name["java"] = "java engine"
      printf "%-20s", "row"
      for (t = 1; t <= nt; t++) printf " | %-34s", name[T[t]] " IOPS, MiB/s, mean us"
      for (t = 1; t <= nt; t++) if (T[t] != "nvmf_tgt") printf " | %-9s", T[t] "/tgt"
      printf " | spdk within 5 %%\n"
      for (r = 1; r <= nr; r++) {
        printf "%-20s", L[r]
        for (t = 1; t <= nt; t++) {
          lowest = 0; i = median(T[t] SUBSEP R[r] SUBSEP 4); m = median(T[t] SUBSEP R[r] SUBSEP 5)
          lowest = 1; l = median(T[t] SUBSEP R[r] SUBSEP 6); lowest = 0
          iops[T[t]] = i
          if (i == "") printf " | %-34s", "-"
          else printf " | %11.0f %10.1f %11.1f", i, m, l
        }
        base = iops["nvmf_tgt"]
        for (t = 1; t <= nt; t++) if (T[t] != "nvmf_tgt")
          printf " | %-9s", (base > 0 && iops[T[t]] != "") ? sprintf("%.3f", iops[T[t]] / base) : "-"
        if (base > 0 && iops["spdk"] != "") {
          q = iops["spdk"] / base
          if (q < 0.95) verdict = sprintf("NO (%.1f %% slower)", (1 - q) * 100)
          else if (q > 1.05) verdict = sprintf("yes (%.1f %% faster)", (q - 1) * 100)
          else verdict = "yes"
          printf " | %s\n", verdict
        } else printf " | -\n"
      }
    }' "$OUT/raw.tsv"
}
{
  echo
  echo "spdk_nvme_perf on core 1 over NVMe/TCP 127.0.0.1, each target on core 0; memory: $MEMORY"
  echo "median of $ROUNDS round(s), ${TIME} s each; ratios are IOPS target/nvmf_tgt (MiB/s gives the same)"
  stat_table median
  echo
  echo "best of $ROUNDS round(s) (highest IOPS and MiB/s, lowest mean latency; interference only slows a run)"
  stat_table best
  echo
  echo "raw numbers (IOPS of rounds 1 to $ROUNDS; each round starts a different target first):"
  for r in "${ROW_LIST[@]}"; do
    for t in "${TARGET_LIST[@]}"; do
      printf '  %-20s %-12s %s\n' "${ROW_LABEL[$r]}" "${TARGET_LABEL[$t]}" \
        "$(awk -F'\t' -v t="$t" -v r="$r" '$2 == t && $3 == r {printf "%s ", $4}' "$OUT/raw.tsv")"
    done
  done
} | tee "$OUT/table.txt"
echo
log "results in $OUT (raw.tsv, table.txt, logs/)"
exit $FAILED
