#!/bin/bash
# fio benchmark runner: connects this Linux host to an NVMe-oF target with nvme-cli, runs the job files
# of fio-jobs/jobs/ against one namespace, writes fio's JSON and a summary, and disconnects. Given a
# peer (another target, e.g. the kernel's nvmet exporting the same kind of device), it runs the same
# jobs there in the same run and prints the ratios target/peer: on shared or noisy machines only a
# ratio measured side by side means anything.
#
# usage: fio-jobs/run.sh -t tcp|rdma -a TRADDR -s TRSVCID -n NQN [options]
#        fio-jobs/run.sh --device /dev/nvmeXnY [options]        (already connected: no connect)
#   --nsid N              namespace to measure (default 1)
#   --jobs LIST           comma-separated job files of fio-jobs/jobs: latency (default), iops, mixed, verify
#   --runtime S           seconds per fio job (default 30; verify runs until it has checked everything)
#   --label NAME          name of the target in the results (default nvmf4j)
#   --peer-transport T, --peer-traddr A, --peer-trsvcid P, --peer-nqn N, --peer-nsid N
#                         the peer target (transport, nsid default to the target's), or
#   --peer-device DEV     a peer block device that is already there
#   --peer-label NAME     (default peer)
#   --connect-opts "..."  extra nvme connect options (e.g. "--nr-io-queues=4 --queue-size=128")
#   --out DIR             results (default fio-jobs/out; wiped unless --keep)
#   --destroy-data        needed for iops, mixed and verify: they WRITE to the namespace
# Results in OUT: <label>-<job>.json (fio), <label>-<job>.tsv (job op iops p50_us p99_us mean_us
# errors), ratio-<job>.tsv (metric target peer ratio), summary.tsv (all rows with their label).
# Exit status: 0 when every job ran without fio errors; 1 otherwise; 2 for usage errors.
# Needs root (nvme connect), nvme-cli, fio and jq; run it on the host (initiator), not on the target.
set -uo pipefail
HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
. "$HERE/lib/fio.sh"

usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit "${1:-0}"; }
die() { echo "run.sh: $*" >&2; exit 2; }

declare -A A=([transport]="" [traddr]="" [trsvcid]="" [nqn]="" [nsid]=1 [device]="" [label]=nvmf4j)
declare -A P=([transport]="" [traddr]="" [trsvcid]="" [nqn]="" [nsid]="" [device]="" [label]=peer)
JOBS=latency RUNTIME=30 OUT=$HERE/out DESTROY=0 CONNECT_OPTS=""
while [ $# -gt 0 ]; do
  case $1 in
    -t|--transport) A[transport]=$2; shift ;;
    -a|--traddr) A[traddr]=$2; shift ;;
    -s|--trsvcid) A[trsvcid]=$2; shift ;;
    -n|--nqn) A[nqn]=$2; shift ;;
    --nsid) A[nsid]=$2; shift ;;
    --device) A[device]=$2; shift ;;
    --label) A[label]=$2; shift ;;
    --peer-transport) P[transport]=$2; shift ;;
    --peer-traddr) P[traddr]=$2; shift ;;
    --peer-trsvcid) P[trsvcid]=$2; shift ;;
    --peer-nqn) P[nqn]=$2; shift ;;
    --peer-nsid) P[nsid]=$2; shift ;;
    --peer-device) P[device]=$2; shift ;;
    --peer-label) P[label]=$2; shift ;;
    --jobs) JOBS=$2; shift ;;
    --runtime) RUNTIME=$2; shift ;;
    --connect-opts) CONNECT_OPTS=$2; shift ;;
    --out) OUT=$2; shift ;;
    --destroy-data) DESTROY=1 ;;
    -h|--help) usage 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
  [ $# -gt 0 ] && shift
done

[[ $RUNTIME =~ ^[1-9][0-9]*$ ]] || die "--runtime takes whole seconds, not '$RUNTIME'"
for j in ${JOBS//,/ }; do
  [ -f "$HERE/jobs/$j.fio" ] || die "no job file jobs/$j.fio (there are: $(cd "$HERE/jobs" && ls *.fio | sed 's/\.fio$//' | tr '\n' ' '))"
  [ "$j" = latency ] || [ "$DESTROY" = 1 ] || die "job '$j' writes to the namespace: add --destroy-data if its data may go"
done
spec_ok() { # array-name : a device, or a full connect spec
  local -n t=$1
  [ -n "${t[device]}" ] && return 0
  [ -n "${t[transport]}" ] && [ -n "${t[traddr]}" ] && [ -n "${t[trsvcid]}" ] && [ -n "${t[nqn]}" ]
}
spec_ok A || die "give -t, -a, -s and -n (or --device)"
HAVE_PEER=0
if [ -n "${P[traddr]}${P[nqn]}${P[device]}" ]; then
  P[transport]=${P[transport]:-${A[transport]}} P[trsvcid]=${P[trsvcid]:-${A[trsvcid]}} P[nsid]=${P[nsid]:-${A[nsid]}}
  spec_ok P || die "the peer needs --peer-traddr, --peer-nqn (transport and port default to the target's) or --peer-device"
  HAVE_PEER=1
fi
for c in fio jq; do command -v $c > /dev/null || die "$c is not installed (apt-get install $c)"; done

mkdir -p "$OUT" || die "cannot create $OUT"
rm -f "$OUT"/*.json "$OUT"/*.tsv "$OUT"/*.stderr
FAILED=0
log() { printf '[fio-jobs %(%H:%M:%S)T] %s\n' -1 "$*"; }

# attach array-name : sets DEVICE (connects first unless a device was given); CONNECTED=1 when we connected
attach() {
  local -n t=$1
  local n=0 nsid dev
  CONNECTED=0 DEVICE=${t[device]}
  if [ -n "$DEVICE" ]; then
    [ -b "$DEVICE" ] || { log "${t[label]}: $DEVICE is not a block device"; return 1; }
    return 0
  fi
  command -v nvme > /dev/null || { log "nvme-cli is not installed (apt-get install nvme-cli)"; return 1; }
  if ! nvme_ctrl "${t[transport]}" "${t[traddr]}" "${t[trsvcid]}" "${t[nqn]}" > /dev/null; then
    log "${t[label]}: nvme connect -t ${t[transport]} -a ${t[traddr]} -s ${t[trsvcid]} -n ${t[nqn]} $CONNECT_OPTS"
    # shellcheck disable=SC2086 # CONNECT_OPTS is a list of options
    nvme connect -t "${t[transport]}" -a "${t[traddr]}" -s "${t[trsvcid]}" -n "${t[nqn]}" $CONNECT_OPTS ||
      { log "${t[label]}: nvme connect failed"; return 1; }
    CONNECTED=1
  fi
  while [ $n -lt 200 ]; do # the namespace's block device appears shortly after the connect
    while read -r nsid dev; do [ "$nsid" = "${t[nsid]}" ] && DEVICE=$dev; done < <(nvme_ns_devs "${t[nqn]}")
    [ -n "$DEVICE" ] && return 0
    sleep 0.1; n=$((n + 1))
  done
  log "${t[label]}: no block device for nsid ${t[nsid]} of ${t[nqn]} (namespaces: $(nvme_ns_devs "${t[nqn]}" | tr '\n' ' '))"
  return 1
}
detach() { # array-name
  local -n t=$1
  [ "$CONNECTED" = 1 ] && nvme disconnect -n "${t[nqn]}" > /dev/null && log "${t[label]}: disconnected"
}

# run_jobs array-name : every job against the attached device
run_jobs() {
  local -n t=$1
  local j size q rc f
  size=$(blockdev --getsize64 "$DEVICE") || return 1
  q=$((size / 4 / 131072 * 131072))
  for j in ${JOBS//,/ }; do
    f=$OUT/${t[label]}-$j
    log "${t[label]}: $j on $DEVICE ($((size >> 20)) MiB)"
    DEV=$DEVICE RUNTIME=$RUNTIME QUARTER=$q fio --output-format=json --output="$f.out" "$HERE/jobs/$j.fio" 2> "$f.stderr"
    rc=$?
    sed -n '/^{/,$p' "$f.out" > "$f.json"; sed '/^{/,$d' "$f.out" >> "$f.stderr"; rm -f "$f.out"
    [ -s "$f.stderr" ] || rm -f "$f.stderr"
    fio_summary "$f.json" > "$f.tsv" 2> /dev/null
    if [ $rc != 0 ] || [ ! -s "$f.tsv" ] || awk -F'\t' '$7 != 0 {e = 1} END {exit !e}' "$f.tsv"; then
      log "${t[label]}: $j FAILED (fio rc=$rc; see $f.json${rc:+ and $f.stderr})"; FAILED=1
    fi
    awk -F'\t' -v OFS='\t' -v l="${t[label]}" '{print l, $0}' "$f.tsv" >> "$OUT/summary.tsv"
    awk -F'\t' '{printf "    %-14s %-5s %10.0f IOPS  p50 %9.1f us  p99 %9.1f us  mean %9.1f us  errors %s\n", $1, $2, $3, $4, $5, $6, $7}' "$f.tsv"
  done
}

for side in A P; do
  [ $side = P ] && [ $HAVE_PEER = 0 ] && continue
  attach $side || { FAILED=1; continue; }
  run_jobs $side || FAILED=1
  detach $side
done

if [ $HAVE_PEER = 1 ]; then
  for j in ${JOBS//,/ }; do
    a=$OUT/${A[label]}-$j.tsv b=$OUT/${P[label]}-$j.tsv
    [ -s "$a" ] && [ -s "$b" ] || continue
    fio_ratio "$a" "$b" "$j-" "${A[label]}" "${P[label]}" > "$OUT/ratio-$j.tsv"
    echo; echo "$j: ${A[label]} / ${P[label]} (IOPS above 1 and latency below 1 favour ${A[label]})"
    awk -F'\t' '{printf "  %-36s %12s %12s %10s\n", $1, $2, $3, $4}' "$OUT/ratio-$j.tsv"
  done
fi
echo; log "results in $OUT"
exit $FAILED
