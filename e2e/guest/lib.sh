# Helpers for suite.sh (sourced): result recording, controller lookup, the
# nvme-cli checks (run the same way against nvmet and nvmf4j) and fio jobs.
#
# A target under test is described by globals (see suite.sh):
#   T (nvmet|nvmf4j) TR (tcp|rdma) ADDR PORT NQN SERIAL MODEL
#   NS_IDS ("1 2"), NS_BLOCKS[nsid] NS_BS[nsid] NS_NGUID[nsid] NS_UUID[nsid]
#   optional expectations (empty = not checked): X_NN X_MDTS X_IOCCSZ X_MAXIOQ
# and connect fills CTRL (nvmeX) and DEV[nsid] (/dev/nvmeXnY).

RES=${E2E_RES:?}
NVME_T=60                       # timeout of one nvme-cli command, seconds
FAILS=0
: > "$RES/results.tsv"; : > "$RES/metrics.tsv"; : > "$RES/bench.tsv"
mkdir -p "$RES/cli"

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
verdict() { # rc pass-detail ; on rc != 0 the detail is the tail of $ERRF (default $OUTF)
  if [ "$1" != 0 ]; then fail "$C" "rc=$1: $(tail -n 3 "${ERRF:-$OUTF}" | tr '\n' ' ')"
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
wait_for() { # seconds command... : polls every 0.1 s
  local n=$(($1 * 10)); shift
  while [ $n -gt 0 ]; do "$@" && return 0; sleep 0.1; n=$((n - 1)); done
  return 1
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
  mapfile -t v < <(jqf '.sn, .mn, .subnqn, .fr, .cntlid, .nn, .vwc, .mdts, .ioccsz, .iorcsz, .ver')
  expect sn "$(trim "${v[0]:-}")" "$SERIAL"
  expect mn "$(trim "${v[1]:-}")" "$MODEL"
  expect subnqn "${v[2]:-}" "$NQN"
  FR=$(trim "${v[3]:-}") VWC=${v[6]:-0}
  [ -z "$X_NN" ] || expect nn "${v[5]:-}" "$X_NN"
  [ -z "$X_MDTS" ] || expect mdts "${v[7]:-}" "$X_MDTS"
  [ -z "$X_IOCCSZ" ] || expect ioccsz "${v[8]:-}" "$X_IOCCSZ"
  verdict $rc "sn=$SERIAL mn=$MODEL subnqn ok; fr=$FR cntlid=${v[4]:-} nn=${v[5]:-} mdts=${v[7]:-} ioccsz=${v[8]:-} iorcsz=${v[9]:-} ver=${v[10]:-} vwc=$VWC; host max_hw_sectors_kb=$(cat "/sys/block/${DEV[${NS_IDS%% *}]#/dev/}/queue/max_hw_sectors_kb" 2>/dev/null)"

  for n in $NS_IDS; do
    cli "$p/id-ns-$n" nvme id-ns "/dev/$CTRL" -n "$n" -o json; rc=$?
    mapfile -t v < <(jqf '.nsze, .ncap, (.flbas % 16) as $f | (.lbafs[$f].ds), .nguid, .eui64')
    expect nsze "${v[0]:-}" "${NS_BLOCKS[$n]}"
    expect ncap "${v[1]:-}" "${NS_BLOCKS[$n]}"
    expect "lba data size" "$((1 << ${v[2]:-0}))" "${NS_BS[$n]}"
    expect nguid "$(lc "${v[3]:-}")" "$(lc "${NS_NGUID[$n]}")"
    verdict $rc "nsid $n: nsze=ncap=${v[0]:-} blocks of ${NS_BS[$n]} B, nguid=${v[3]:-}"

    cli "$p/ns-descs-$n" nvme ns-descs "/dev/$CTRL" -n "$n" -o json; rc=$?
    # {"ns-descs": [{"type": "uuid", "uuid": ...}, {"type": "nguid", "nguid": ...}, ...]}
    mapfile -t v < <(jqf '[."ns-descs"[]?] | (map(select(.type == "nguid"))[0].nguid // ""), (map(select(.type == "uuid"))[0].uuid // "")')
    expect nguid "$(lc "${v[0]:-}")" "$(lc "${NS_NGUID[$n]}")"
    expect uuid "$(lc "${v[1]:-}")" "$(lc "${NS_UUID[$n]}")"
    verdict $rc "nsid $n: nguid=${v[0]:-} uuid=${v[1]:-}"
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
      0x0f) # Keep Alive Timer in ms: connect asked for --keep-alive-tmo=5
        detail="KATO ${val} ms"; expect kato_ms "$val" 5000 ;;
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
fio_verify() { # check-name dev
  local name=$1 dev=$2 total q t rc v f
  total=$(blockdev --getsize64 "$dev"); q=$((total / 4 / 131072 * 131072))
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
