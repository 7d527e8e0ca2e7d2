# Helpers for suite.sh (sourced): result recording, controller lookup, the
# nvme-cli checks (run the same way against nvmet and nvmf4j) and fio jobs.
#
# A target under test is described by globals (see suite.sh):
#   T (nvmet|nvmf4j) TR (tcp|rdma) ADDR PORT NQN SERIAL MODEL
#   NS_IDS ("1 2"), NS_BLOCKS[nsid] NS_BS[nsid] NS_NGUID[nsid] NS_UUID[nsid], NS_EUI64[nsid] (empty: not checked)
#   optional expectations (empty = not checked): X_NN X_MDTS X_IOCCSZ X_MAXIOQ
# and connect fills CTRL (nvmeX) and DEV[nsid] (/dev/nvmeXnY).

RES=${E2E_RES:?}
NVME_T=60                       # timeout of one nvme-cli command, seconds
FAILS=0
: > "$RES/results.tsv"; : > "$RES/metrics.tsv"; : > "$RES/bench.tsv"
mkdir -p "$RES/cli"
# The JVM of the guest's Java helpers (rdma-cm self-test, BadConnect, RdmaHost): C1 only, as the service
# (run.sh --jvm-opts): under multi-threaded TCG, C2 replacing C1 code has crashed the JVM (SIGABRT, 134);
# a crash report lands in the results share, and verdict() names its problematic frame.
GUEST_JAVA=(java -XX:TieredStopAtLevel=1 "-XX:ErrorFile=$RES/hs_err_pid%p.log")

pass() { printf '%s\tPASS\t%s\n' "$1" "${2:-}" | tee -a "$RES/results.tsv"; }
skip() { printf '%s\tSKIP\t%s\n' "$1" "${2:-}" | tee -a "$RES/results.tsv"; }
fail() {
  printf '%s\tFAIL\t%s\n' "$1" "${2:-}" | tee -a "$RES/results.tsv"; FAILS=$((FAILS + 1))
  echo "----- last kernel messages after FAIL $1:"; dmesg | tail -n 12
}
metric() { printf '%s\t%s\t%s\n' "$1" "$2" "${3:-}" >> "$RES/metrics.tsv"; }
now_us() { local t=$EPOCHREALTIME; echo $(( ${t%.*} * 1000000 + 10#${t#*.} )); }
secs_since() { local d=$(( $(now_us) - $1 )); printf '%d.%03d' $((d / 1000000)) $(((d % 1000000) / 1000)); }
hdr() { echo; echo "===== $* (uptime $(cut -d' ' -f1 /proc/uptime)s)"; }
lc() { tr 'A-F' 'a-f' <<< "$1"; }
trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; echo "${s%"${s##*[![:space:]]}"}"; }

# ---------------------------------------------------------------- checks
# A check runs one command into $RES/cli/<name>.txt, then compares fields
# with expect(); verdict() turns rc + mismatches into one PASS/FAIL row.
C="" OUTF="" BAD="" ERRF=""
cli() { # check-name command... : runs the command with a timeout, output kept
  C=$1; shift
  OUTF=$RES/cli/$(tr '/' '_' <<< "$C").txt
  BAD=""
  echo "+ $*"
  timeout "$NVME_T" "$@" > "$OUTF" 2>&1
  local rc=$?
  head -n 12 "$OUTF"
  return $rc
}
expect() { # label actual expected
  [ "$2" = "$3" ] || BAD+="${BAD:+; }$1='$2' expected '$3'"
}
contains() { [[ $1 == *"$2"* ]]; }
expect_true() { # label condition-text test-args...
  local l=$1 what=$2; shift 2
  "$@" || BAD+="${BAD:+; }$l: $what"
}
jvm_crash() { # file : the problematic frame and report of a JVM crash printed into file; false when none
  grep -q '^# A fatal error has been detected by the Java Runtime' "$1" 2> /dev/null || return 1
  printf 'JVM crash: %s %s; %s' "$(grep -m1 -E '^#  (SIG[A-Z]+|Internal Error)' "$1" | tr -s ' #' ' ')" \
    "$(grep -m1 -A1 '^# Problematic frame:' "$1" | tail -n 1 | tr -s ' #' ' ')" \
    "$(grep -m1 -E 'hs_err_pid[0-9]+\.log' "$1" | sed 's|.*/||')"
}
verdict() { # rc pass-detail ; on rc != 0 the detail is the tail of $ERRF (default $OUTF), or a JVM crash's frame
  if [ "$1" != 0 ]; then fail "$C" "rc=$1: $(jvm_crash "${ERRF:-$OUTF}" || tail -n 3 "${ERRF:-$OUTF}" | tr '\n' ' ')"
  elif [ -n "$BAD" ]; then fail "$C" "$BAD"
  else pass "$C" "$2"; fi
  ERRF=""
}
jqf() { jq -r "$@" "$OUTF" 2>/dev/null; }   # filter [args] over the last output

# ---------------------------------------------------------------- controller lookup
# fio-jobs/lib/fio.sh: nvme_ctrl, nvme_ns_devs, fio_summary, fio_ratio (shared with fio-jobs/run.sh)
FIO_JOBS=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../fio-jobs" && pwd)
. "$FIO_JOBS/lib/fio.sh"
find_ctrl() { nvme_ctrl "$TR" "$ADDR" "$PORT" "$NQN"; } # prints nvmeX of $NQN over $TR $ADDR:$PORT
ctrl_of_host() { # subnqn hostnqn : prints the controller (nvmeX) of that host NQN in that subsystem; false when none
  local c
  for c in /sys/class/nvme/nvme*; do
    [ "$(cat "$c/subsysnqn" 2> /dev/null)" = "$1" ] && [ "$(cat "$c/hostnqn" 2> /dev/null)" = "$2" ] &&
      { echo "${c##*/}"; return 0; }
  done
  return 1
}
map_namespaces() { # fills DEV[nsid] for the subsystem of $NQN; true when every nsid in NS_IDS has a block device
  local nsid dev n
  DEV=()
  while read -r nsid dev; do DEV[$nsid]=$dev; done < <(nvme_ns_devs "$NQN")
  for n in $NS_IDS; do [ -n "${DEV[$n]:-}" ] || return 1; done
}
# kernel tracepoints nvme_setup_cmd / nvme_complete_rq: every command the host
# sent and its status, kept for the connect and nvme-cli phase
TRACE=/sys/kernel/tracing
trace_on() {
  mountpoint -q $TRACE || mount -t tracefs tracefs $TRACE 2> /dev/null
  [ -d $TRACE/events/nvme ] || return 0
  echo 0 > $TRACE/tracing_on; : > $TRACE/trace
  echo 1 > $TRACE/events/nvme/nvme_setup_cmd/enable; echo 1 > $TRACE/events/nvme/nvme_complete_rq/enable
  echo 1 > $TRACE/tracing_on
}
trace_off() { # name : trace into $RES/nvme-trace-<name>.txt
  [ -d $TRACE/events/nvme ] || return 0
  echo 0 > $TRACE/tracing_on
  echo 0 > $TRACE/events/nvme/nvme_setup_cmd/enable; echo 0 > $TRACE/events/nvme/nvme_complete_rq/enable
  grep -v '^#' $TRACE/trace > "$RES/nvme-trace-$1.txt"
  echo "nvme trace: $(grep -c nvme_setup_cmd "$RES/nvme-trace-$1.txt") commands, $(grep nvme_complete_rq "$RES/nvme-trace-$1.txt" | grep -vc 'status=0x0$') completed with an error -> nvme-trace-$1.txt"
}
ctrl_state() { cat "/sys/class/nvme/$CTRL/state" 2>/dev/null || echo gone; }
wait_for() { # seconds command... : polls every 0.1 s, for that many seconds of wall-clock time (counting
  # polls instead made 90 s last many minutes when each poll took a second, under TCG on a loaded machine)
  local end=$(( $(now_us) + $1 * 1000000 )); shift
  until "$@"; do [ "$(now_us)" -lt "$end" ] || return 1; sleep 0.1; done
}

# ---------------------------------------------------------------- discover / connect / disconnect
check_discover() {
  cli "$T/$TR/discover" nvme discover -t "$TR" -a "$ADDR" -s "$PORT" -o json; local rc=$?
  local v; mapfile -t v < <(jqf --arg n "$NQN" --arg tr "$TR" 'def t: if type == "string" then gsub("^\\s+|\\s+$"; "") else . end;
      [.records[] | select(.subnqn == $n and (.trtype | t) == $tr)] | length, (.[0] | (.trtype, .traddr, .trsvcid, .subtype) | t)')
  expect "records for $NQN" "${v[0]:-}" 1
  expect trtype "${v[1]:-}" "$TR"
  expect traddr "${v[2]:-}" "$ADDR"
  expect trsvcid "${v[3]:-}" "$PORT"
  verdict $rc "discovery log lists $NQN at $TR $ADDR:$PORT (${v[4]:-})"
}
connect() { # check-name extra-nvme-connect-args... ; sets CTRL and DEV
  local name=$1 t rc; shift
  t=$(now_us)
  cli "$name" nvme connect -t "$TR" -a "$ADDR" -s "$PORT" -n "$NQN" "$@"; rc=$?
  CTRL=""
  if [ $rc = 0 ] && wait_for 20 map_namespaces && CTRL=$(find_ctrl); then
    local d; d=$(secs_since "$t")
    metric "${name//\//_}_s" "$d" s
    pass "$name" "$CTRL live, namespaces $(for n in $NS_IDS; do printf '%s=%s ' "$n" "${DEV[$n]}"; done)in ${d}s"
    return 0
  fi
  BAD="controller or namespace block devices not found (ctrl=${CTRL:-none}, devs=${DEV[*]:-none})"
  verdict $rc ""
  return 1
}
disconnect() { # check-name
  cli "$1" nvme disconnect -n "$NQN"; local rc=$?
  wait_for 10 eval '! find_ctrl > /dev/null' || BAD="controller still present"
  verdict $rc "$(head -n 1 "$OUTF")"
}

# ---------------------------------------------------------------- identity checks
# Every command must succeed and show the values the target was configured with.
check_identity() {
  local p="$T/$TR" v rc n line dev model sn size bs
  hdr "$T over $TR: nvme-cli identity checks on $CTRL"

  cli "$p/list" nvme list -o json; rc=$?
  for n in $NS_IDS; do
    line=$(jqf --arg d "${DEV[$n]}" '.Devices[] | select(.DevicePath == $d) | [.ModelNumber, .SerialNumber, .PhysicalSize, .SectorSize] | map(tostring) | join("|")')
    IFS='|' read -r model sn size bs <<< "$line"
    expect "ns$n ModelNumber" "$(trim "$model")" "$MODEL"
    expect "ns$n SerialNumber" "$(trim "$sn")" "$SERIAL"
    expect "ns$n PhysicalSize" "$size" $((NS_BLOCKS[n] * NS_BS[n]))
    expect "ns$n SectorSize" "$bs" "${NS_BS[$n]}"
  done
  verdict $rc "model, serial, size and sector size of $(for n in $NS_IDS; do printf '%s ' "${DEV[$n]}"; done)"

  cli "$p/list-subsys" nvme list-subsys -o json; rc=$?
  mapfile -t v < <(jqf --arg n "$NQN" '[.. | objects | select(.NQN? == $n) | .Paths[]?] | length, (.[0] | .Name, .Transport, .Address, .State)')
  expect paths "${v[0]:-}" 1
  expect path "${v[1]:-}" "$CTRL"
  expect transport "${v[2]:-}" "$TR"
  expect_true address "'${v[3]:-}' lacks traddr=$ADDR,trsvcid=$PORT" contains "${v[3]:-}" "traddr=$ADDR,trsvcid=$PORT"
  expect state "${v[4]:-}" live
  verdict $rc "$NQN: ${v[1]:-} ${v[2]:-} ${v[3]:-} ${v[4]:-}"

  cli "$p/id-ctrl" nvme id-ctrl "/dev/$CTRL" -o json; rc=$?
  mapfile -t v < <(jqf '.sn, .mn, .subnqn, .fr, .cntlid, .nn, .vwc, .mdts, .ioccsz, .iorcsz, .ver, .kas')
  expect sn "$(trim "${v[0]:-}")" "$SERIAL"
  expect mn "$(trim "${v[1]:-}")" "$MODEL"
  expect subnqn "${v[2]:-}" "$NQN"
  FR=$(trim "${v[3]:-}") VWC=${v[6]:-0} KAS=${v[11]:-0}
  [ -z "$X_NN" ] || expect nn "${v[5]:-}" "$X_NN"
  [ -z "$X_MDTS" ] || expect mdts "${v[7]:-}" "$X_MDTS"
  [ -z "$X_IOCCSZ" ] || expect ioccsz "${v[8]:-}" "$X_IOCCSZ"
  verdict $rc "sn=$SERIAL mn=$MODEL subnqn ok; fr=$FR cntlid=${v[4]:-} nn=${v[5]:-} mdts=${v[7]:-} ioccsz=${v[8]:-} iorcsz=${v[9]:-} ver=${v[10]:-} vwc=$VWC kas=$KAS; host max_hw_sectors_kb=$(cat "/sys/block/${DEV[${NS_IDS%% *}]#/dev/}/queue/max_hw_sectors_kb" 2>/dev/null)"

  for n in $NS_IDS; do
    cli "$p/id-ns-$n" nvme id-ns "/dev/$CTRL" -n "$n" -o json; rc=$?
    mapfile -t v < <(jqf '.nsze, .ncap, (.flbas % 16) as $f | (.lbafs[$f].ds), .nguid, .eui64')
    expect nsze "${v[0]:-}" "${NS_BLOCKS[$n]}"
    expect ncap "${v[1]:-}" "${NS_BLOCKS[$n]}"
    expect "lba data size" "$((1 << ${v[2]:-0}))" "${NS_BS[$n]}"
    expect nguid "$(lc "${v[3]:-}")" "$(lc "${NS_NGUID[$n]}")"
    [ -z "${NS_EUI64[$n]:-}" ] || expect eui64 "$(lc "${v[4]:-}")" "$(lc "${NS_EUI64[$n]}")"
    verdict $rc "nsid $n: nsze=ncap=${v[0]:-} blocks of ${NS_BS[$n]} B, nguid=${v[3]:-}${NS_EUI64[$n]:+, eui64=${v[4]:-}}"

    cli "$p/ns-descs-$n" nvme ns-descs "/dev/$CTRL" -n "$n" -o json; rc=$?
    # {"ns-descs": [{"type": "uuid", "uuid": ...}, {"type": "nguid", "nguid": ...}, ...]} ("Type" in nvme-cli 2.11+)
    mapfile -t v < <(jqf '[."ns-descs"[]? | .t = (.type // .Type)] | (map(select(.t == "nguid"))[0].nguid // ""),
        (map(select(.t == "uuid"))[0].uuid // ""), (map(select(.t == "eui64"))[0].eui64 // "")')
    expect nguid "$(lc "${v[0]:-}")" "$(lc "${NS_NGUID[$n]}")"
    expect uuid "$(lc "${v[1]:-}")" "$(lc "${NS_UUID[$n]}")"
    [ -z "${NS_EUI64[$n]:-}" ] || expect eui64 "$(lc "${v[2]:-}")" "$(lc "${NS_EUI64[$n]}")"
    verdict $rc "nsid $n: nguid=${v[0]:-} uuid=${v[1]:-}${NS_EUI64[$n]:+ eui64=${v[2]:-}}"
  done

  cli "$p/smart-log" nvme smart-log "/dev/$CTRL" -o json; rc=$?
  mapfile -t v < <(jqf '.critical_warning, .temperature, .avail_spare, .data_units_read, .data_units_written, .power_on_hours')
  expect critical_warning "${v[0]:-}" 0
  verdict $rc "critical_warning=0 temperature=${v[1]:-} avail_spare=${v[2]:-} data_units_read=${v[3]:-} written=${v[4]:-} power_on_hours=${v[5]:-}"

  cli "$p/error-log" nvme error-log "/dev/$CTRL" -e 8 -o json; rc=$?
  mapfile -t v < <(jqf '(.errors | length), ([.errors[] | select(.error_count > 0)] | length),
      ([.errors[] | select(.error_count > 0) | (.status_field / 2 | floor) as $sf
        | "#\(.error_count) sqid \(.sqid) cmdid \(.cmdid) status sct \(($sf / 256 | floor) % 8) sc \($sf % 256) dnr \(($sf / 16384 | floor) % 2) parm_error_location \(.parm_error_location) nsid \(.nsid)"] | join(", "))')
  expect_true errors "no 'errors' array in the JSON output" [ "${v[0]:-0}" -ge 1 ]
  verdict $rc "${v[0]:-} entries read, ${v[1]:-} non-empty${v[2]:+: ${v[2]}}"

  # get-feature has no JSON output in nvme-cli 2.3: "...Current value:0x..." (printf %#x: "00000000" for 0)
  local fid val detail=""
  for fid in 0x07 0x0b 0x0f 0x06; do
    if [ $fid = 0x06 ] && [ $((VWC & 1)) = 0 ]; then detail+=" 0x06 not asked (id-ctrl vwc=0);"; continue; fi
    cli "$p/get-feature-$fid" nvme get-feature "/dev/$CTRL" -f $fid; rc=$?
    val=$(sed -n 's/.*[Cc]urrent value: *\(0x\)\{0,1\}\([0-9a-fA-F][0-9a-fA-F]*\).*/0x\2/p' "$OUTF" | head -n 1)
    expect_true value "no 'Current value' in the output" [ -n "$val" ]
    val=$((${val:-0}))
    case $fid in
      0x07) # Number of Queues: NSQA/NCQA, 0-based
        detail="$(( (val & 0xffff) + 1 )) SQs / $(( (val >> 16) + 1 )) CQs allocated"
        [ -z "$X_MAXIOQ" ] || expect_true queues "$detail, more than maxIoQueues=$X_MAXIOQ" \
          [ $(( (val & 0xffff) + 1 )) -le "$X_MAXIOQ" -a $(( (val >> 16) + 1 )) -le "$X_MAXIOQ" ] ;;
      0x0f) # Keep Alive Timer in ms: connect asked for --keep-alive-tmo=5, rounded up to a multiple of
        # id-ctrl KAS x 100 ms (SPDK's KAS is 10 s: 10000; nvmet's and nvmf4j's 1 s: 5000)
        local g=$((KAS > 0 ? KAS * 100 : 1))
        detail="KATO ${val} ms (5000 asked, granularity $g ms)"; expect kato_ms "$val" $(((5000 + g - 1) / g * g)) ;;
      0x0b) detail="async event config $(printf '0x%x' "$val")" ;;
      0x06) detail="volatile write cache $((val & 1))" ;;
    esac
    verdict $rc "$detail"
  done

  cli "$p/fw-log" nvme fw-log "/dev/$CTRL" -o json; rc=$?
  # {"nvmeX": {"Active Firmware Slot (afi)": N, "Firmware Rev Slot S": "<u64> (<text>)"}}; the
  # text shows spaces as '.', so the revision is decoded from the u64 (8 bytes, little-endian)
  mapfile -t v < <(jqf '.[] | .["Active Firmware Slot (afi)"] as $a | ($a // ""),
      (if $a == null then "" else (.["Firmware Rev Slot \($a % 8)"] // "") | (capture("^(?<n>[0-9]+) ").n // "") end)')
  expect_true afi "no 'Active Firmware Slot (afi)' in the output" [ -n "${v[0]:-}" ]
  if [ $(( ${v[0]:-0} & 7 )) != 0 ]; then
    local frs="" i b
    for i in 0 1 2 3 4 5 6 7; do
      b=$(( (${v[1]:-0} >> (8 * i)) & 255 )); [ $b = 0 ] && break
      frs+=$(printf "\\x$(printf %02x $b)")
    done
    expect "revision in the active slot" "$(trim "$frs")" "$FR"
    detail="active slot $(( ${v[0]:-0} & 7 )) holds '$(trim "$frs")' = id-ctrl fr"
  else detail="afi=${v[0]:-} (no active slot reported)"; fi
  verdict $rc "$detail"
}

# ---------------------------------------------------------------- fio
fio_json() { # name timeout fio-args... : JSON into $RES/fio-<name>.json, rc returned
  local name=$1 to=$2; shift 2
  echo "+ fio $*"
  timeout "$to" fio --output-format=json --output="$RES/fio-$name.out" "$@" > "$RES/fio-$name.stderr" 2>&1
  local rc=$?
  # fio puts its warnings in front of the JSON document
  sed -n '/^{/,$p' "$RES/fio-$name.out" > "$RES/fio-$name.json"
  sed '/^{/,$d' "$RES/fio-$name.out" >> "$RES/fio-$name.stderr"; rm -f "$RES/fio-$name.out"
  [ $rc = 0 ] || tail -n 20 "$RES/fio-$name.stderr"
  return $rc
}
# fio-jobs/jobs/verify.fio: random writes with crc32c verify over a whole block device, 4 jobs on
# disjoint quarters, QD 16 each, mixed block sizes 4k-128k.
fio_verify() { # check-name dev [bytes] : over the whole device, or its first bytes
  local name=$1 dev=$2 total q t rc v f
  total=$(blockdev --getsize64 "$dev"); [ -z "${3:-}" ] || [ "$3" -ge "$total" ] || total=$3
  q=$((total / 4 / 131072 * 131072))
  f=${name//\//_}
  t=$(now_us)
  DEV=$dev QUARTER=$q fio_json "$f" 600 "$FIO_JOBS/jobs/verify.fio"; rc=$?
  mapfile -t v < <(jq -r '([.jobs[].error] | add), ([.jobs[].write.io_bytes] | add), ([.jobs[].read.io_bytes] | add)' "$RES/fio-$f.json" 2>/dev/null)
  C=$name OUTF=$RES/fio-$f.json BAD="" ERRF=$RES/fio-$f.stderr
  expect errors "${v[0]:-}" 0
  expect_true verified "only ${v[2]:-0} of $((4 * q)) bytes read back" [ "${v[2]:-0}" -ge $((4 * q * 9 / 10)) ]
  verdict $rc "4 jobs x $((q >> 20)) MiB of $dev, QD16, bs 4k-128k: $(( ${v[1]:-0} >> 20 )) MiB written, $(( ${v[2]:-0} >> 20 )) MiB read back and crc32c-verified, 0 errors, $(secs_since "$t")s"
}
# fio-jobs/jobs/latency.fio: 4 KiB random reads at QD1 and QD32, FIO_RUNTIME s each (after 1 s ramp).
# Leaves fio_summary rows (job op iops p50_us p99_us mean_us errors) in $RES/lat-<label>.tsv.
fio_latency() { # check-name dev label
  local name=$1 dev=$2 label=$3 rc
  DEV=$dev RUNTIME=$E2E_FIO_RUNTIME fio_json "lat-$label" $((2 * E2E_FIO_RUNTIME + 300)) "$FIO_JOBS/jobs/latency.fio"; rc=$?
  fio_summary "$RES/fio-lat-$label.json" > "$RES/lat-$label.tsv" 2>/dev/null
  C=$name OUTF=$RES/fio-lat-$label.json BAD="" ERRF=$RES/fio-lat-$label.stderr
  expect_true jobs "no results" [ "$(wc -l < "$RES/lat-$label.tsv")" = 2 ]
  expect errors "$(awk -F'\t' '{e += $7} END {print e + 0}' "$RES/lat-$label.tsv")" 0
  verdict $rc "$(awk -F'\t' '{printf "%s %.0f IOPS p50 %.1f us p99 %.1f us; ", toupper($1), $3, $4, $5}' "$RES/lat-$label.tsv")${E2E_FIO_RUNTIME}s each"
}

# ---------------------------------------------------------------- the nvmf4j service
# Globals of the caller: LAUNCHER, WORK (its working directory), SVC_STATE (its state dir, default
# $WORK/state), SVC_CONFIG (default $WORK/config.json), SVC_LOG, SVC_PORT (its TCP listener, default NVMF4J_PORT),
# SVC_START_TIMEOUT, SVC_STOP_TIMEOUT (default 120), E2E_JVM_OPTS, SVC_EXIT_OK (the exit statuses a SIGTERM may give, default "0 143").
# Sets SVC_PID and JPID.
java_pid() { # the java process: the launcher itself when it execs java, else its java child
  local parent=$1 c st state ppid
  [ "$(cat "/proc/$parent/comm" 2>/dev/null)" = java ] && { echo "$parent"; return; }
  for c in /proc/[0-9]*; do
    st=$(cat "$c/stat" 2>/dev/null) || continue
    read -r state ppid _ <<< "${st##*) }"
    [ "$ppid" = "$parent" ] && [ "$(cat "$c/comm" 2>/dev/null)" = java ] && { echo "${c#/proc/}"; return; }
  done
  echo "$parent"
}
svc_log_now() { # the service log since the last start
  sed -n "$(grep -n '^=====' "$SVC_LOG" | tail -n 1 | cut -d: -f1),\$p" "$SVC_LOG"
}
port_open() { (exec 3<> "/dev/tcp/127.0.0.1/$1") 2> /dev/null; }
svc_api_port() { # the management API's port in a config document (8420 when it sets none)
  local p
  p=$(grep -o '"api": *{ *"port": *[0-9]*' "$1" 2> /dev/null | grep -o '[0-9]*$')
  echo "${p:-8420}"
}
ports_free() { local p; for p; do ! port_open "$p" || return 1; done; }
svc_abort() { # stops what svc_start started after a failed start: SIGTERM, then SIGKILL after SVC_STOP_TIMEOUT
  local j
  [ -n "$SVC_PID" ] || return 0
  j=$(java_pid "$SVC_PID")
  kill -TERM "$j" "$SVC_PID" 2> /dev/null
  wait_for "${SVC_STOP_TIMEOUT:-120}" gone "$j" || kill -KILL "$j" "$SVC_PID" 2> /dev/null
  wait "$SVC_PID" 2> /dev/null; SVC_PID="" JPID=""
}
svc_start() { # check-name : starts the service, PASS when its TCP listener accepts
  # The bound, SVC_START_TIMEOUT, only decides a failure: a start on a loaded machine under TCG may take
  # several times the usual ~35 s. A start that fails stops what it started, so that the next start is
  # not refused by a port the failed instance still holds.
  local t rc holders
  local state=${SVC_STATE:-$WORK/state} config=${SVC_CONFIG:-$WORK/config.json} port=${SVC_PORT:-$NVMF4J_PORT} api
  api=$(svc_api_port "$config")
  echo "===== $(date -u +%T) e2e: $LAUNCHER --state-dir $state --config $config (NVMF4J_JAVA_OPTS=$E2E_JVM_OPTS)" >> "$SVC_LOG"
  SVC_PID="" JPID=""
  if [ ! -x "$LAUNCHER" ]; then fail "$1" "$LAUNCHER does not exist: the service is not built yet"; return 1; fi
  t=$(now_us)
  # the previous instance is gone (svc_stop waited for it), but its sockets may linger for a moment
  if ! wait_for 30 ports_free "$port" "$api"; then
    holders=$(ss -Hltnp "( sport = :$port or sport = :$api )" 2> /dev/null | tr -s ' ' | tr '\n' ';')
    fail "$1" "127.0.0.1:$port or :$api is still in use before the start: ${holders:-?}"; return 1
  fi
  # a JVM crash report (hs_err) lands in the results share
  (cd "$WORK" && NVMF4J_JAVA_OPTS="$E2E_JVM_OPTS -XX:ErrorFile=$RES/hs_err_pid%p.log" \
    exec "$LAUNCHER" --state-dir "$state" --config "$config") >> "$SVC_LOG" 2>&1 < /dev/null &
  SVC_PID=$!
  # ready once its TCP listener accepts and it has announced its listeners (after the management API is up)
  until port_open "$port" && svc_log_now | grep -q 'nvme connect'; do
    if ! kill -0 "$SVC_PID" 2> /dev/null; then
      wait "$SVC_PID"; rc=$?; SVC_PID=""
      fail "$1" "service exited with rc=$rc before listening: $(grep -v '^=====' "$SVC_LOG" | tail -n 3 | tr '\n' ' ')"; return 1
    fi
    if [ $(($(now_us) - t)) -gt $((SVC_START_TIMEOUT * 1000000)) ]; then
      svc_abort
      fail "$1" "$(port_open "$port" && echo "no listener announcement in the service log" || echo "127.0.0.1:$port not accepting") ${SVC_START_TIMEOUT}s after start (stopped)"
      return 1
    fi
    sleep 0.2
  done
  JPID=$(java_pid "$SVC_PID")
  metric "${1//\//_}_s" "$(secs_since "$t")" s
  pass "$1" "pid $JPID$([ "$JPID" = "$SVC_PID" ] || echo " (child of launcher pid $SVC_PID)") accepting on 127.0.0.1:$port $(secs_since "$t")s after start"
}
gone() { local s; s=$(cat "/proc/$1/stat" 2> /dev/null) || return 0; s=${s##*) }; [ "${s%% *}" = Z ]; }
svc_alive() { # check-name : the service is still running; else FAIL with its exit status
  local rc
  [ -n "$SVC_PID" ] && ! gone "$JPID" && return 0
  [ -z "$SVC_PID" ] || { wait "$SVC_PID"; rc=$?; SVC_PID=""; }
  fail "$1" "the service died (exit status ${rc:-?}$([ "${rc:-0}" -gt 128 ] && echo ", signal $((rc - 128))")): $(grep -v '^=====' "$SVC_LOG" | grep -m3 -E 'SIGSEGV|Problematic frame|Exception|ERROR' | tr '\n' ' ')$(ls "$RES"/hs_err_pid*.log 2> /dev/null | sed 's|.*/| see |')"
  return 1
}
svc_stop() { # check-name : SIGTERM to the java process, PASS when it exits within SVC_STOP_TIMEOUT (120 s)
  # with one of SVC_EXIT_OK (a bound for a failure only: a stop takes ~1 s, the spdk engine's ~8 s, under TCG)
  local t rc ok=" ${SVC_EXIT_OK:-0 143} " bound=${SVC_STOP_TIMEOUT:-120}
  svc_alive "$1" || return 1
  t=$(now_us)
  kill -TERM "$JPID"
  if wait_for "$bound" gone "$JPID"; then
    wait "$SVC_PID"; rc=$?; SVC_PID=""
    C=$1 OUTF=$SVC_LOG BAD=""
    [[ $ok == *" $rc "* ]] || BAD="exit status $rc after SIGTERM (want${ok% })"
    verdict 0 "SIGTERM: pid $JPID exited in $(secs_since "$t")s, exit status $rc"
  else
    kill -KILL "$JPID" "$SVC_PID" 2> /dev/null; wait "$SVC_PID"; SVC_PID=""
    fail "$1" "pid $JPID still running $bound s after SIGTERM (killed)"; return 1
  fi
}

# ---------------------------------------------------------------- discards and a filesystem
# What a Linux host does with a namespace besides reads and writes: BLKDISCARD of all of it, an ext4
# with fstrim, fsck. For a file bdev the image must stay sparse: deallocated blocks are holes again.
alloc_bytes() { # file : its allocated bytes (du --block-size=1; st_blocks x 512 is the same figure)
  du --block-size=1 "$1" 2> /dev/null | cut -f1
}
alloc_text() { # file : "<du> B (st_blocks N)" for a detail
  echo "$(alloc_bytes "$1") B (st_blocks $(stat -c %b "$1" 2> /dev/null))"
}
discard_checks() { # check-prefix nsid kind(malloc|file) [image-file] : needs DEV[nsid]; image for a file bdev
  local p=$1 n=$2 kind=$3 img=${4:-} dev=${DEV[$2]} size rc a0="" a1="" a2="" a3="" a4="" t
  local mnt=$WORK/mnt-$kind out=$RES/cli/${1//\//_}-discard-$kind.txt files=16 kept=8 i trimmed
  size=$(blockdev --getsize64 "$dev")
  : > "$out"
  hdr "$p: discards and ext4 on $dev ($kind, $((size >> 20)) MiB)"

  # 1. the whole namespace written, then discarded with one BLKDISCARD
  [ -z "$img" ] || a0=$(alloc_bytes "$img")
  C=$p/blkdiscard-$kind OUTF=$out BAD=""
  echo "+ dd if=/dev/urandom of=$dev bs=1M count=$((size >> 20)) oflag=direct conv=fsync" | tee -a "$out"
  timeout 300 dd if=/dev/urandom of="$dev" bs=1M count=$((size >> 20)) oflag=direct conv=fsync status=none >> "$out" 2>&1 ||
    BAD="writing the whole namespace failed: $(tail -n 1 "$out")"
  [ -z "$img" ] || a1=$(alloc_bytes "$img")
  t=$(now_us)
  echo "+ blkdiscard -v $dev" | tee -a "$out"
  timeout 300 blkdiscard -v "$dev" >> "$out" 2>&1; rc=$?
  tail -n 2 "$out"
  [ -z "$img" ] || a2=$(alloc_bytes "$img")
  ERRF=$out verdict $rc "blkdiscard of all $size bytes of $dev in $(secs_since "$t")s: $(tail -n 1 "$out")"
  if [ -n "$img" ]; then
    # written: at least 90 % of the namespace allocated, else the measurement says nothing;
    # discarded: back to at most 1/64 of it (holes punched, not zeros written)
    C=$p/sparse-after-blkdiscard-$kind OUTF=$out BAD=""
    expect_true "allocated after writing" "${a1:-?} B, less than 90 % of $size" [ "${a1:-0}" -ge $((size * 9 / 10)) ]
    expect_true "allocated after blkdiscard" "${a2:-?} B, more than $((size / 64)) B (1/64 of the namespace)" \
      [ "${a2:-$size}" -le $((size / 64)) ]
    metric "${p//\//_}_${kind}_alloc_after_blkdiscard" "${a2:-}" B
    t="$img allocated: before writing $a0 B, after writing $a1 B, after blkdiscard $(alloc_text "$img")"
    [ -z "$BAD" ] || BAD+=" ($t)"
    verdict 0 "$t"
  fi

  # 2. ext4: mkfs (which discards too), files written with fsync, half of them deleted, fstrim
  C=$p/fstrim-$kind OUTF=$out BAD=""
  mkdir -p "$mnt"
  { echo "+ mkfs.ext4 -F $dev"; timeout 300 mkfs.ext4 -F "$dev" 2>&1; } >> "$out"; rc=$?
  if [ $rc = 0 ]; then
    timeout 60 mount -t ext4 "$dev" "$mnt" >> "$out" 2>&1; rc=$?
  fi
  if [ $rc = 0 ]; then
    for ((i = 0; i < files; i++)); do
      timeout 60 dd if=/dev/urandom of="$mnt/f$i" bs=64k count=16 conv=fsync status=none >> "$out" 2>&1 ||
        { BAD="writing $mnt/f$i with fsync failed"; break; }
    done
    (cd "$mnt" && sha256sum $(for ((i = 0; i < kept; i++)); do echo "f$i"; done)) > "$WORK/ext4-$kind.sha256"
    for ((i = kept; i < files; i++)); do rm -f "$mnt/f$i"; done
    sync -f "$mnt"
    [ -z "$img" ] || a3=$(alloc_bytes "$img")
    echo "+ fstrim -v $mnt" | tee -a "$out"
    timeout 300 fstrim -v "$mnt" >> "$out" 2>&1; rc=$?
    tail -n 1 "$out"
    [ -z "$img" ] || a4=$(alloc_bytes "$img")
    trimmed=$(sed -n 's/.*(\([0-9]*\) bytes) trimmed.*/\1/p' "$out" | tail -n 1)
    [ $rc != 0 ] || expect_true trimmed "fstrim reports no bytes trimmed" [ "${trimmed:-0}" -gt 0 ]
  else
    BAD="mkfs.ext4 or mount failed: $(tail -n 2 "$out" | tr '\n' ' ')"; rc=0
  fi
  ERRF=$out verdict $rc "mkfs.ext4 + mount, $files x 1 MiB written with fsync, $((files - kept)) deleted; fstrim: $(tail -n 1 "$out")"
  if [ -n "$img" ] && [ -n "$a3" ]; then
    # fstrim frees at least half of what the deleted files held (it trims all free space: more)
    C=$p/sparse-after-fstrim-$kind OUTF=$out BAD=""
    expect_true "allocated after fstrim" "${a4:-?} B, not at least $(((files - kept) << 19)) B below ${a3} B" \
      [ "${a4:-$a3}" -le $((a3 - ((files - kept) << 19))) ]
    t="$img allocated: after writing the files $a3 B, after fstrim $(alloc_text "$img")"
    [ -z "$BAD" ] || BAD+=" ($t)"
    verdict 0 "$t"
  fi

  # 3. unmounted, fsck finds nothing; the kept files are intact
  C=$p/ext4-fsck-$kind OUTF=$out BAD=""
  if mountpoint -q "$mnt"; then
    timeout 60 umount "$mnt" >> "$out" 2>&1 || BAD="umount failed"
    { echo "+ fsck.ext4 -fn $dev"; timeout 300 fsck.ext4 -fn "$dev" 2>&1; } >> "$out"; rc=$?
    tail -n 1 "$out"
    if [ $rc = 0 ] && timeout 60 mount -t ext4 -o ro "$dev" "$mnt" >> "$out" 2>&1; then
      (cd "$mnt" && sha256sum -c --quiet "$WORK/ext4-$kind.sha256") >> "$out" 2>&1 || BAD="${BAD:+$BAD; }kept files differ after remount"
      timeout 60 umount "$mnt" >> "$out" 2>&1
    else
      [ $rc != 0 ] || BAD="${BAD:+$BAD; }read-only remount failed"
    fi
  else
    rc=0 BAD="no ext4 mounted (see $p/fstrim-$kind)"
  fi
  ERRF=$out verdict $rc "unmounted; fsck.ext4 -fn clean: $(grep -E '^[^ ]+: [0-9]+/[0-9]+ files' "$out" | tail -n 1); remounted, $kept files match sha256"

  # 4. the namespace still holds what is written after all of this
  fio_verify "$p/fio-verify-after-discard-$kind" "$dev"
}
